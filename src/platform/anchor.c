/* The clock anchor, one for both systems on the platform's clocks: a TSC reading and
 * the clocks taken together, which the tools interpolate between. */
#include <x86intrin.h>

#include "platform/platform.h"

/* The TSC at the middle of the tightest of a few (tsc, clock, tsc) brackets. */
void tt_os_anchor(struct tt_anchor *anchor)
{
	uint64_t best_gap = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t before = __rdtsc();
		int64_t mono = tt_os_monotonic_ns();
		uint64_t after = __rdtsc();
		if (after - before < best_gap) {
			best_gap = after - before;
			anchor->tsc = before + (after - before) / 2;
			anchor->monotonic_ns = mono;
		}
	}
	/* The other clocks as offsets from monotonic, read back to back. */
	int64_t mono = tt_os_monotonic_ns();
	anchor->boottime_ns = anchor->monotonic_ns + (tt_os_boottime_ns() - mono);
	anchor->realtime_ns = anchor->monotonic_ns + (tt_os_realtime_ns() - mono);
}
