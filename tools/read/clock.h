/* TSC ticks to integer nanoseconds of CLOCK_MONOTONIC, as the file header says:
 * exact integer arithmetic in 128 bits, never a double. */
#ifndef TT_CLOCK_H
#define TT_CLOCK_H

#include <stdint.h>

struct tt_file_header;

struct tt_clock {
	uint64_t tsc0;  /* the start anchor's TSC */
	int64_t ns0;    /* its CLOCK_MONOTONIC reading */
	uint64_t hz;    /* TT_TSC_ANCHORS: ticks per second */
	uint64_t mult;  /* floor(1e9 * 2^shift / hz) */
	unsigned shift;
	int exact_div;  /* TT_TSC_ANCHORS: correct the multiply to the exact floor */
};

/* Sets up the conversion from a validated header; 0, or -1 with *why set when the
 * header's clock fields cannot be used. */
int tt_clock_init(struct tt_clock *c, const struct tt_file_header *h, const char **why);

/* Nanoseconds in `ticks` ticks, saturated at INT64_MAX (a hostile file may hold any
 * TSC). */
static inline int64_t tt_clock_span(const struct tt_clock *c, uint64_t ticks)
{
	unsigned __int128 q = ((unsigned __int128)ticks * c->mult) >> c->shift;
	if (q > INT64_MAX)
		return INT64_MAX;
	if (c->exact_div) {
		/* q is floor(ticks * 1e9 / hz) or at most two less, so the remainder
		 * ticks * 1e9 - q * hz is below 3 * hz and exact in 64-bit arithmetic
		 * modulo 2^64: step up to the exact floor. */
		uint64_t r = ticks * UINT64_C(1000000000) - (uint64_t)q * c->hz;
		for (int i = 0; i < 2 && r >= c->hz; i++) {
			q++;
			r -= c->hz;
		}
	}
	return (int64_t)q;
}

/* Nanoseconds of CLOCK_MONOTONIC at `tsc`; inline, as the converter calls it for
 * every record. */
static inline int64_t tt_clock_ns(const struct tt_clock *c, uint64_t tsc)
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

#endif
