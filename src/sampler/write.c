/* tt_profile_write: a profile's buckets as text that `ticktrace lines` names by
 * function and file:line. The first line says what it is, the second which
 * executable segment holds the range (its file, run-time bounds and file offset, as
 * the raw file's MODULES section has them); then one line per bucket that has
 * samples: its run-time address and its count.
 *
 *   ticktrace profile 1
 *   module 0x55d0c4a01000 0x55d0c4a05000 0x1000 /path/to/program
 *   0x55d0c4a01230 17
 */
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sampler/sampler.h"

struct tt__segment {
	uintptr_t address; /* in: an address of the range */
	uintptr_t start, end, file_offset;
	char path[4096];
	bool found;
};

static int tt__find_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct tt__segment *s = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || s->address < start ||
		    s->address >= start + ph->p_memsz)
			continue;
		s->start = start;
		s->end = start + ph->p_memsz;
		s->file_offset = ph->p_offset;
		if (info->dlpi_name[0]) { /* the executable has none: its file is /proc/self/exe */
			snprintf(s->path, sizeof(s->path), "%s", info->dlpi_name);
		} else {
			ssize_t n = readlink("/proc/self/exe", s->path, sizeof(s->path) - 1);
			s->path[n > 0 ? n : 0] = 0;
		}
		s->found = true;
		return 1;
	}
	return 0;
}

int tt_profile_write(struct tt_profile *p, FILE *out)
{
	struct tt__segment seg = {.address = p->start};
	dl_iterate_phdr(tt__find_segment, &seg);
	if (!seg.found)
		return -ENOENT;
	if (p->mechanism == TT_PROFILE_PERF)
		tt__perf_collect(p);
	fprintf(out, "ticktrace profile 1\nmodule %#" PRIxPTR " %#" PRIxPTR " %#" PRIxPTR " %s\n",
		seg.start, seg.end, seg.file_offset, seg.path);
	for (size_t i = 0; i < p->nbuckets; i++) {
		uint64_t c = __atomic_load_n(&p->counts[i], __ATOMIC_RELAXED);
		if (c)
			fprintf(out, "%#" PRIxPTR " %" PRIu64 "\n", p->start + (i << p->shift), c);
	}
	return fflush(out) == 0 && !ferror(out) ? 0 : -EIO;
}
