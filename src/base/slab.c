/* Memory for the slow path, which must not call malloc: bump allocation from slabs of
 * the platform's pages (base.h). */
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
