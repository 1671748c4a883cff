/* TSC ticks to nanoseconds (common.h): a multiply and a shift, corrected to the exact
 * floor of the division. */
#include "common.h"

typedef unsigned __int128 tt_u128;

#define TT_NS_PER_S UINT64_C(1000000000)

int tt_clock_set(struct tt_clock *c, uint64_t tsc0, int64_t ns0, uint64_t hz)
{
	*c = (struct tt_clock){.tsc0 = tsc0, .ns0 = ns0};
	/* Above 2^62 ticks per second the remainder in tt_clock_span could wrap; no
	 * clock runs at 4.6 EHz. */
	if (hz == 0 || hz > (UINT64_C(1) << 62))
		return -1;
	/* The widest shift whose multiplier still fits 64 bits keeps the error of the
	 * multiply below one nanosecond, which tt_clock_span then corrects. */
	c->hz = hz;
	c->exact_div = 1;
	for (c->shift = 98; c->shift > 0; c->shift--) {
		tt_u128 m = ((tt_u128)TT_NS_PER_S << c->shift) / c->hz;
		if ((m >> 64) == 0) {
			c->mult = (uint64_t)m;
			break;
		}
	}
	return 0;
}

int tt_clock_init(struct tt_clock *c, const struct tt_file_header *h, const char **why)
{
	switch (h->tsc_source) {
	case TT_TSC_ANCHORS:
		if (tt_clock_set(c, h->start.tsc, h->start.monotonic_ns, h->tsc_hz) < 0) {
			*why = "tsc_hz is 0 or beyond any clock";
			return -1;
		}
		return 0;
	default:
		*c = (struct tt_clock){.tsc0 = h->start.tsc, .ns0 = h->start.monotonic_ns};
		*why = "unknown tsc_source";
		return -1;
	}
}
