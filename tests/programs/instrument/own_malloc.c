/* A program with its own malloc, instrumented like the rest: ticktrace's start-up
 * (its background thread's stack and TLS) calls it through the C library before
 * ticktrace can record, and must neither wait on itself nor crash. */
#include <stddef.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *ptr, size_t size);
void __libc_free(void *ptr);

void *malloc(size_t size)
{
	return __libc_malloc(size);
}

void *calloc(size_t count, size_t size)
{
	return __libc_calloc(count, size);
}

void *realloc(void *ptr, size_t size)
{
	return __libc_realloc(ptr, size);
}

void free(void *ptr)
{
	__libc_free(ptr);
}

int main(void)
{
	void *volatile block = malloc(10);
	free(block);
	return 0;
}
