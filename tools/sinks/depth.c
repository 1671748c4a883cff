/* What both trace writers leave out when it is nested deeper than Perfetto shows
 * (TT_MAX_SHOWN_DEPTH), said once at the end. */
#include <inttypes.h>
#include <stdio.h>

#include "sinks.h"

size_t tt_folded_message(const struct tt_folded *f, char *buf, size_t cap)
{
	buf[0] = 0;
	if (!f->slices && !f->instants && !f->flows)
		return 0;
	int n = snprintf(buf, cap, "%" PRIu64 " slices, %" PRIu64 " instants and %" PRIu64 " flow ends "
			 "nested deeper than %u levels left out (Perfetto shows no more); the slices "
			 "around them keep their times", f->slices, f->instants, f->flows,
			 TT_MAX_SHOWN_DEPTH);
	return n < 0 ? 0 : (size_t)n;
}
