#include "tt_clock.h"

#include <ticktrace/format.h>

typedef unsigned __int128 tt_u128;

#define TT_NS_PER_S UINT64_C(1000000000)

int tt_clock_init(struct tt_clock *c, const struct tt_file_header *h, const char **why)
{
	*c = (struct tt_clock){.tsc0 = h->start.tsc, .ns0 = h->start.monotonic_ns};
	switch (h->tsc_source) {
	case TT_TSC_ANCHORS:
		/* Above 2^62 ticks per second the remainder in tt_clock_span could wrap;
		 * no clock runs at 4.6 EHz. */
		if (h->tsc_hz == 0 || h->tsc_hz > (UINT64_C(1) << 62)) {
			*why = "tsc_hz is 0 or beyond any clock";
			return -1;
		}
		/* The widest shift whose multiplier still fits 64 bits keeps the error of
		 * the multiply below one nanosecond, which tt_clock_ns then corrects. */
		c->hz = h->tsc_hz;
		c->exact_div = 1;
		for (c->shift = 98; c->shift > 0; c->shift--) {
			tt_u128 m = ((tt_u128)TT_NS_PER_S << c->shift) / c->hz;
			if ((m >> 64) == 0) {
				c->mult = (uint64_t)m;
				break;
			}
		}
		return 0;
	default:
		*why = "unknown tsc_source";
		return -1;
	}
}

/* Nanoseconds in `ticks` ticks, saturated at INT64_MAX (a hostile file may hold any
 * TSC). */
static int64_t tt_clock_span(const struct tt_clock *c, uint64_t ticks)
{
	tt_u128 q = ((tt_u128)ticks * c->mult) >> c->shift;
	if (q > INT64_MAX)
		return INT64_MAX;
	if (c->exact_div) {
		/* q is floor(ticks * 1e9 / hz) or at most two less, so the remainder
		 * ticks * 1e9 - q * hz is below 3 * hz and exact in 64-bit arithmetic
		 * modulo 2^64: step up to the exact floor. */
		uint64_t r = ticks * TT_NS_PER_S - (uint64_t)q * c->hz;
		for (int i = 0; i < 2 && r >= c->hz; i++) {
			q++;
			r -= c->hz;
		}
	}
	return (int64_t)q;
}

int64_t tt_clock_ns(const struct tt_clock *c, uint64_t tsc)
{
	int64_t ns;
	if (tsc >= c->tsc0) {
		if (__builtin_add_overflow(c->ns0, tt_clock_span(c, tsc - c->tsc0), &ns))
			return INT64_MAX;
	} else if (__builtin_sub_overflow(c->ns0, tt_clock_span(c, c->tsc0 - tsc), &ns)) {
		return INT64_MIN;
	}
	return ns;
}
