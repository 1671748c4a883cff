/* libticktrace-wrap: link-time wrappers that record the program's heap. Linked with
 *
 *   -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free -lticktrace-wrap -lticktrace
 *
 * the program's own calls come here; each allocation and free is an instant ("malloc",
 * "calloc", "realloc", "free") with the size as its argument "size" (requested, or freed),
 * and the counter track "heap_live_bytes" follows the heap.
 *
 * The counter is exact for the blocks that pass through the wrappers: each block
 * counts its malloc_usable_size(), added when it is allocated and taken away when it
 * is freed, so that a free needs no header and no table. Its samples are the running
 * total at each call, from one atomic add. Blocks the C library allocates for itself
 * (strdup, getline) are not seen when allocated; when the program frees one, that
 * free is recorded and taken away like any other.
 *
 * Safe before the recorder starts (the first event starts it) and while it allocates
 * (its own calls are not wrapped when it is a shared library; linked statically, they
 * are recorded like the program's). Built without instrumentation, like the runtime.
 * C++'s operator new and delete are wrapped in wrap_cxx.c, on the same counter. */
#include <malloc.h>
#include <stdint.h>

#include "ticktrace.h"
#include "heap.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *ptr, size_t size);
void __real_free(void *ptr);

/* Visible: with --wrap the linker binds the program's calls, and any other object's
 * (a sanitizer's runtime), to these. */
TT_API void *__wrap_malloc(size_t size);
TT_API void *__wrap_calloc(size_t count, size_t size);
TT_API void *__wrap_realloc(void *ptr, size_t size);
TT_API void __wrap_free(void *ptr);

static int64_t tt__heap_live_bytes;

void tt__heap_changed(int64_t delta)
{
	TT_COUNTER("heap_live_bytes", __atomic_add_fetch(&tt__heap_live_bytes, delta, __ATOMIC_RELAXED));
}

void *__wrap_malloc(size_t size)
{
	void *p = __real_malloc(size);
	if (p) {
		TT_INSTANT_NAMED_ARG("malloc", "size", size);
		tt__heap_changed((int64_t)malloc_usable_size(p));
	}
	return p;
}

void *__wrap_calloc(size_t count, size_t size)
{
	void *p = __real_calloc(count, size);
	if (p) {
		TT_INSTANT_NAMED_ARG("calloc", "size", count * size); /* no overflow: p is a block */
		tt__heap_changed((int64_t)malloc_usable_size(p));
	}
	return p;
}

void *__wrap_realloc(void *ptr, size_t size)
{
	int64_t before = ptr ? (int64_t)malloc_usable_size(ptr) : 0;
	void *p = __real_realloc(ptr, size);
	if (p) {
		TT_INSTANT_NAMED_ARG("realloc", "size", size);
		tt__heap_changed((int64_t)malloc_usable_size(p) - before);
	} else if (ptr && size == 0) { /* glibc frees the block */
		TT_INSTANT_NAMED_ARG("realloc", "size", 0);
		tt__heap_changed(-before);
	}
	return p;
}

void __wrap_free(void *ptr)
{
	if (!ptr)
		return;
	int64_t size = (int64_t)malloc_usable_size(ptr);
	__real_free(ptr);
	TT_INSTANT_NAMED_ARG("free", "size", size);
	tt__heap_changed(-size);
}
