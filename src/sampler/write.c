/* tt_profile_write's text: a profile's buckets as text that `ticktrace lines` names by
 * function and file:line. The first line says what it is, the second which
 * executable range holds the profile (its file, run-time bounds and file offset, as
 * the raw file's MODULES section has them); on Windows a third says how it was
 * sampled; then one line per bucket that has samples: its run-time address and its
 * count. Each system finds the range (linux.c, windows.c).
 *
 *   ticktrace profile 1
 *   module 0x55d0c4a01000 0x55d0c4a05000 0x1000 /path/to/program
 *   sampler sampler-thread
 *   0x55d0c4a01230 17
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "sampler/sampler.h"

int tt__profile_emit(struct tt_profile *p, FILE *out, const struct tt__code_range *range,
		     const char *sampler)
{
	tt__profile_collect(p);
	fprintf(out, "ticktrace profile 1\nmodule %#" PRIxPTR " %#" PRIxPTR " %#" PRIxPTR " %s\n",
		range->start, range->end, range->file_offset, range->path);
	if (sampler)
		fprintf(out, "sampler %s\n", sampler);
	for (size_t i = 0; i < p->nbuckets; i++) {
		uint64_t c = __atomic_load_n(&p->counts[i], __ATOMIC_RELAXED);
		if (c)
			fprintf(out, "%#" PRIxPTR " %" PRIu64 "\n", p->start + (i << p->shift), c);
	}
	return fflush(out) == 0 && !ferror(out) ? 0 : -EIO;
}
