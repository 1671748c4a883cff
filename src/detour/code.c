/* What the patcher's parts share below them: memory for stubs near the code they
 * serve, code written while it may run, and where the functions patched so far start
 * (at start and at each dlopen: a library call into one is not recorded again). */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "detour.h"

void *tt__detour_near(uintptr_t low, uintptr_t high, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const uintptr_t step = 1u << 20, reach = (uintptr_t)1 << 31;
	for (uintptr_t off = step; off < reach - (high - low) - size; off += step) {
		uintptr_t tries[2] = {low > off + size ? (low - off - size) & ~(page - 1) : 0,
				      (high + off + page - 1) & ~(page - 1)};
		for (int t = 0; t < 2; t++) {
			if (!tries[t])
				continue;
			void *p = mmap((void *)tries[t], size, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (p == MAP_FAILED)
				continue;
			if ((uintptr_t)p != tries[t]) { /* an old kernel took it as a hint */
				munmap(p, size);
				continue;
			}
			return p;
		}
	}
	return NULL;
}

int tt__detour_keep_area(struct tt__detour *d, uintptr_t owner, void *at, size_t size)
{
	struct tt__detour_area *more = realloc(d->areas, (d->nareas + 1) * sizeof *more);
	if (!more)
		return -ENOMEM;
	d->areas = more;
	d->areas[d->nareas++] = (struct tt__detour_area){owner, (uintptr_t)at, size};
	return 0;
}

int tt__detour_write_code(uintptr_t at, const uint8_t *bytes, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t first = at & ~(page - 1), last = (at + len + page - 1) & ~(page - 1);
	if (mprotect((void *)first, last - first, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
		return -errno;
	memcpy((void *)at, bytes, len);
	if (mprotect((void *)first, last - first, PROT_READ | PROT_EXEC) != 0)
		return -errno;
	__builtin___clear_cache((char *)at, (char *)at + len);
	return 0;
}

/* Sorted; changed under dlopen.c's lock, or before main. */
static uintptr_t *tt__patched_at;
static size_t tt__npatched_at;

static int tt__patched_cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return (x > y) - (x < y);
}

void tt__detour_add_patched(const struct tt__detour *d)
{
	uintptr_t *more = realloc(tt__patched_at, (tt__npatched_at + 2 * d->nfns + 1) * sizeof *more);
	if (!more)
		return; /* (a library call into one may then be recorded twice) */
	tt__patched_at = more;
	for (size_t i = 0; i < d->nfns; i++)
		if (d->fns[i].patched) {
			more[tt__npatched_at++] = d->fns[i].addr;
			if (d->fns[i].entry != d->fns[i].addr)
				more[tt__npatched_at++] = d->fns[i].entry;
		}
	qsort(more, tt__npatched_at, sizeof *more, tt__patched_cmp);
}

int tt__detour_patched_before(uintptr_t target)
{
	return tt__npatched_at &&
	       bsearch(&target, tt__patched_at, tt__npatched_at, sizeof *tt__patched_at, tt__patched_cmp);
}

void tt__detour_forget_patched(uintptr_t low, uintptr_t high)
{
	size_t kept = 0;
	for (size_t i = 0; i < tt__npatched_at; i++)
		if (tt__patched_at[i] < low || tt__patched_at[i] >= high)
			tt__patched_at[kept++] = tt__patched_at[i];
	tt__npatched_at = kept;
}
