/* Timing in ticktrace-bench: a clock in nanoseconds, and the begin/end pairs that most
 * of its figures time. */
#ifndef TT_BENCH_TIMING_H
#define TT_BENCH_TIMING_H

#include <stdint.h>
#include <time.h>

#include "ticktrace.h"

static inline int64_t tt_bench_clock_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t tt_bench_now_ns(void)
{
	return tt_bench_clock_ns(CLOCK_MONOTONIC);
}

/* Records `pairs` begin/end pairs, from *from to *to (CLOCK_MONOTONIC): nanoseconds
 * per event. */
static inline double tt_bench_pairs_between(int pairs, int64_t *from, int64_t *to)
{
	*from = tt_bench_now_ns();
	for (int i = 0; i < pairs; i++) {
		TT_BEGIN("pair");
		TT_END();
	}
	*to = tt_bench_now_ns();
	return (double)(*to - *from) / (2.0 * pairs);
}

static inline double tt_bench_pairs(int pairs)
{
	int64_t from, to;
	return tt_bench_pairs_between(pairs, &from, &to);
}

#endif
