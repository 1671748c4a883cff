/* Timing in ticktrace-bench (and ticktrace-bench.exe, bench/windows/): a clock in
 * nanoseconds, a bare RDTSC, and the begin/end pairs that most of its figures time. */
#ifndef TT_BENCH_TIMING_H
#define TT_BENCH_TIMING_H

#include <stdint.h>
#include <time.h>

#include "ticktrace.h"

#ifdef _WIN32
#include <windows.h>
static inline int64_t tt_bench_now_ns(void)
{
	LARGE_INTEGER now, hz;
	QueryPerformanceCounter(&now);
	QueryPerformanceFrequency(&hz);
	return (int64_t)((double)now.QuadPart * 1e9 / (double)hz.QuadPart);
}
#else
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
#endif

/* `reads` bare RDTSCs: nanoseconds per read. */
static inline double tt_bench_rdtsc(int reads)
{
	uint64_t sink = 0;
	int64_t t0 = tt_bench_now_ns();
	for (int i = 0; i < reads; i++) {
		uint32_t lo, hi;
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		sink += lo;
	}
	int64_t t1 = tt_bench_now_ns();
	__asm__ volatile("" : : "r"(sink));
	return (double)(t1 - t0) / reads;
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

/* `pairs` TT_ENDBEGINs: nanoseconds per event (each an end and a begin). */
static inline double tt_bench_endbegin(int pairs)
{
	TT_BEGIN("first");
	int64_t t0 = tt_bench_now_ns();
	for (int i = 0; i < pairs; i++)
		TT_ENDBEGIN("next");
	double ns = (double)(tt_bench_now_ns() - t0) / (2.0 * pairs);
	TT_END();
	return ns;
}

#endif
