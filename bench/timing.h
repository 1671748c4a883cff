/* Timing in ticktrace-bench (and ticktrace-bench.exe, bench/windows/): a clock in
 * nanoseconds, a bare RDTSC, and the begin/end pairs that most of its figures time. */
#ifndef TT_BENCH_TIMING_H
#define TT_BENCH_TIMING_H

#include <stdint.h>
#include <stdio.h>
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

#define TT_BENCH_PAIRS 500000        /* begin/end pairs per warm measurement */
#define TT_BENCH_COLD_EVENTS 4194304 /* the first events of a new thread */

/* What each measurement on a thread of its own times, on that thread: */
enum tt_bench_kind {
	TT_BENCH_WARM,     /* begin/end pairs once its buffer is in use: ns per event */
	TT_BENCH_COLD,     /* its first events, its registration with them: ns per event */
	TT_BENCH_FIRST,    /* its first event: microseconds */
	TT_BENCH_ENDBEGIN, /* TT_ENDBEGIN: ns per event */
	TT_BENCH_PAUSED,   /* pairs after tt_pause: ns per event */
	TT_BENCH_DYNAMIC_NAME, /* TT_INSTANT_DYN, 16 script-like names in turn: the name's
	                        * lookup and one event, ns per event */
};

static inline double tt_bench_kind_run(enum tt_bench_kind kind)
{
	double result = 0;
	switch (kind) {
	case TT_BENCH_WARM:
		tt_bench_pairs(TT_BENCH_PAIRS / 10); /* the thread's buffer is in use */
		result = tt_bench_pairs(TT_BENCH_PAIRS);
		break;
	case TT_BENCH_COLD:
		result = tt_bench_pairs(TT_BENCH_COLD_EVENTS / 2);
		break;
	case TT_BENCH_FIRST: {
		int64_t t0 = tt_bench_now_ns();
		TT_INSTANT("first");
		result = (double)(tt_bench_now_ns() - t0) / 1000.0;
		break;
	}
	case TT_BENCH_ENDBEGIN:
		tt_bench_pairs(TT_BENCH_PAIRS / 10);
		result = tt_bench_endbegin(TT_BENCH_PAIRS);
		break;
	case TT_BENCH_PAUSED:
		tt_bench_pairs(TT_BENCH_PAIRS / 10);
		tt_pause();
		result = tt_bench_pairs(TT_BENCH_PAIRS);
		tt_resume();
		break;
	case TT_BENCH_DYNAMIC_NAME: {
		char names[16][32];
		for (int i = 0; i < 16; i++)
			snprintf(names[i], sizeof names[i], "script_function_%d", i);
		int64_t t0 = tt_bench_now_ns();
		for (int i = 0; i < 2 * TT_BENCH_PAIRS; i++)
			TT_INSTANT_DYN(names[i & 15]);
		result = (double)(tt_bench_now_ns() - t0) / (2 * TT_BENCH_PAIRS);
		break;
	}
	}
	return result;
}

#endif
