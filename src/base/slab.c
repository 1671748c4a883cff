/* Memory for the slow path, which must not call malloc: bump allocation from slabs of
 * the platform's pages (base.h); and how much address space the process may still map. */
#ifdef TT_LEAK_CHECKED
#include <sanitizer/lsan_interface.h>
#endif

#include "base/base.h"

void *tt__slab_alloc(struct tt__slab *slab, size_t size)
{
	size = (size + 63) & ~(size_t)63; /* cache-line aligned: slots are written hot */
	if ((size_t)(slab->end - slab->next) < size) {
		void *p = tt_os_alloc(slab->slab_size);
		if (!p)
			return NULL;
		slab->next = p;
		slab->end = slab->next + slab->slab_size;
	}
	void *block = slab->next;
	slab->next += size;
	return block;
}

uint64_t tt__address_room(void)
{
	uint64_t limit = tt_os_address_limit();
	if (limit == UINT64_MAX)
		return UINT64_MAX;
	uint64_t mapped = tt_os_address_mapped();
	return limit > mapped ? limit - mapped : 0;
}

void tt__arena_holds(const void *p)
{
#ifdef TT_LEAK_CHECKED
	__lsan_ignore_object(p);
#else
	(void)p;
#endif
}
