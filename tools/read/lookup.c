/* Lookups in a file read: what an address named when a record was made (the one
 * way to a site or a module), the modules that overlap, whether its writer still runs;
 * and the helpers the reader grows its arrays with. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read_internal.h"

int tt_reserve(void *pp, size_t *cap, size_t count, size_t elem)
{
	return tt_reserve_n(pp, cap, count, 1, elem);
}

int tt_reserve_n(void *pp, size_t *cap, size_t count, size_t more, size_t elem)
{
	if (more <= *cap && count <= *cap - more)
		return 0;
	size_t n = *cap ? *cap * 2 : 16;
	while (n - count < more) {
		if (n > SIZE_MAX / 2 / elem)
			return -1;
		n *= 2;
	}
	if (n > SIZE_MAX / elem)
		return -1;
	void *p = realloc(*(void **)pp, n * elem);
	if (!p)
		return -1;
	*(void **)pp = p;
	*cap = n;
	return 0;
}

/* The description of `address` whose span ends at `until`, or NULL. */
struct tt_site *tt_file_site_until(const struct tt_file *f, uint64_t address, uint64_t until)
{
	uint32_t pos;
	if (!tt_map_get(&f->site_map, address, &pos))
		return NULL;
	for (uint32_t p = pos + 1; p; p = f->sites[p - 1].next_same)
		if (f->sites[p - 1].until == until)
			return &f->sites[p - 1];
	return NULL;
}

const struct tt_site *tt_file_site(const struct tt_file *f, uint64_t address, uint64_t tsc)
{
	uint32_t pos;
	if (!tt_map_get(&f->site_map, address, &pos))
		return NULL;
	for (uint32_t p = pos + 1; p; p = f->sites[p - 1].next_same) {
		const struct tt_site *s = &f->sites[p - 1];
		if (tsc >= s->since && tsc < s->until)
			return s;
	}
	return NULL;
}

const struct tt_site *tt_file_site_last(const struct tt_file *f, uint64_t address)
{
	const struct tt_site *last = NULL;
	uint32_t pos;
	if (!tt_map_get(&f->site_map, address, &pos))
		return NULL;
	for (uint32_t p = pos + 1; p; p = f->sites[p - 1].next_same)
		if (!last || f->sites[p - 1].until > last->until)
			last = &f->sites[p - 1];
	return last;
}

const struct tt_module *tt_file_module(const struct tt_file *f, uint64_t address, uint64_t tsc)
{
	const struct tt_module *found = NULL;
	for (size_t i = 0; i < f->nmodules; i++) {
		const struct tt_module *m = &f->modules[i];
		if (address >= m->start && address < m->end && tsc < m->until &&
		    (!found || m->until < found->until))
			found = m;
	}
	return found;
}

bool tt_file_stopped_by_signal(const struct tt_file *f)
{
	uint32_t sig = f->header.crash_signal;
	return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGPIPE;
}

const char *tt_file_erased_missing(const struct tt_file *f)
{
	if (!(f->header.flags & TT_FILE_MIN_DUR))
		return NULL;
	if (f->header.flags & TT_FILE_LIVE)
		return "the calls TICKTRACE_MIN_DUR erased are not counted (a live file has no "
		       "count of them)";
	if (f->cut_short)
		return "the calls TICKTRACE_MIN_DUR erased on threads that had not exited are not "
		       "counted (a streamed file counts a thread's as it exits, and the rest at the end)";
	return NULL;
}

bool tt_file_writer_running(const struct tt_file *f)
{
	char path[64], comm[32];
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/comm", f->process.pid);
	FILE *p = f->process.pid ? fopen(path, "re") : NULL;
	if (!p)
		return false;
	bool named = fgets(comm, sizeof(comm), p) != NULL;
	fclose(p);
	if (!named)
		return false;
	/* The kernel keeps 15 bytes of a name. */
	size_t len = strcspn(comm, "\n");
	size_t want = f->process.name.len < 15 ? f->process.name.len : 15;
	return len == want && memcmp(comm, f->process.name.ptr, len) == 0;
}

bool tt_file_modules_overlap(const struct tt_file *f, const struct tt_module **a,
			     const struct tt_module **b)
{
	for (size_t i = 0; i < f->nmodules; i++)
		for (size_t k = i + 1; k < f->nmodules; k++) {
			const struct tt_module *x = &f->modules[i], *y = &f->modules[k];
			bool same = x->until != y->until || (x->path.len == y->path.len &&
				    memcmp(x->path.ptr, y->path.ptr, x->path.len) == 0 &&
				    x->build_id.len == y->build_id.len &&
				    memcmp(x->build_id.ptr, y->build_id.ptr, x->build_id.len) == 0);
			if (!same && x->start < y->end && y->start < x->end) {
				*a = x;
				*b = y;
				return true;
			}
		}
	return false;
}
