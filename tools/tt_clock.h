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

/* Nanoseconds of CLOCK_MONOTONIC at `tsc`. */
int64_t tt_clock_ns(const struct tt_clock *c, uint64_t tsc);

#endif
