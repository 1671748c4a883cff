/* Memory for the slow path, which must not call malloc: bump allocation from private
 * mmap'd slabs (base.h). */
#include <sys/mman.h>

#include "base/base.h"

void *tt__slab_alloc(struct tt__slab *slab, size_t size)
{
	size = (size + 63) & ~(size_t)63; /* cache-line aligned: slots are written hot */
	if ((size_t)(slab->end - slab->next) < size) {
		void *p = mmap(NULL, slab->slab_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		slab->next = p;
		slab->end = slab->next + slab->slab_size;
	}
	void *block = slab->next;
	slab->next += size;
	return block;
}
