/* Memory for the slow path, which must not call malloc: bump allocation from slabs of
 * the platform's pages (base.h); and how much address space the process may still map. */
#include <fcntl.h>
#include <unistd.h>

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
	/* (statm's first field: the pages mapped now, VmSize) */
	unsigned long long pages = 0;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	char text[64] = {0};
	if (fd >= 0) {
		ssize_t got = read(fd, text, sizeof text - 1);
		close(fd);
		for (ssize_t i = 0; i < got && text[i] >= '0' && text[i] <= '9'; i++)
			pages = pages * 10 + (unsigned long long)(text[i] - '0');
	}
	uint64_t mapped = (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
	return limit > mapped ? limit - mapped : 0;
}
