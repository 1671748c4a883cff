/* The benchmark key sample_overhead_pct: how much slower a loop runs while the
 * self-profiler samples it at the default interval (time, 1 ms, this thread). For
 * ticktrace-bench to embed: compile bench/sample_overhead.c with the profiler. */
#ifndef TT_BENCH_SAMPLE_OVERHEAD_H
#define TT_BENCH_SAMPLE_OVERHEAD_H

#include <stdint.h>

#include "ticktrace/profile.h"

struct tt_bench_overhead {
	double pct;                /* sample_overhead_pct: median profiled/unprofiled - 1, in % */
	uint64_t baseline_ns;      /* median process CPU time of an unprofiled run */
	uint64_t profiled_ns;      /* median process CPU time of a profiled run */
	unsigned pairs;            /* unprofiled/profiled pairs measured */
	uint64_t samples;          /* samples taken over all profiled runs */
	enum tt_profile_mechanism mechanism;
};

/* Measure, in this process, in about 2 s of CPU time: pairs of runs of the same loop,
 * one unprofiled and one profiled, in alternating order; process CPU time, so the
 * drain thread and the kernel's sampling work count as overhead. Returns 0, or a
 * negative errno from tt_profile_create/start/stop. */
int tt_bench_sample_overhead(struct tt_bench_overhead *out);

#endif
