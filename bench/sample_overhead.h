/* The benchmark key sample_overhead_pct: how much slower a loop runs while the
 * self-profiler samples it at the default interval (time, 1 ms, this thread), and on
 * Linux with perf sample_kernel_floor_pct and sample_above_floor_pct: what the
 * kernel's sampling alone costs the same loop, and what ticktrace adds to it. For
 * ticktrace-bench to embed: compile bench/sample_overhead.c with the profiler. */
#ifndef TT_BENCH_SAMPLE_OVERHEAD_H
#define TT_BENCH_SAMPLE_OVERHEAD_H

#include <stdint.h>

#include "ticktrace/profile.h"

struct tt_bench_overhead {
	double pct;                /* sample_overhead_pct: median profiled/unprofiled - 1, in % */
	double pct_lo, pct_hi;     /* where that median lies, 95 % sure */
	double floor_pct;          /* sample_kernel_floor_pct: median bare event/unprofiled - 1,
	                            * in %; NAN where not measured (no perf) */
	double above_floor_pct;    /* sample_above_floor_pct: median (profiled - bare
	                            * event)/unprofiled, in %; NAN likewise */
	uint64_t baseline_ns;      /* median process CPU time of an unprofiled run */
	uint64_t profiled_ns;      /* median process CPU time of a profiled run */
	uint64_t floor_ns;         /* median process CPU time of a run under the bare event */
	unsigned turns;            /* turns measured, a run of each kind each */
	uint64_t samples;          /* samples taken over all profiled runs */
	uint64_t floor_samples;    /* samples the bare event took over its runs */
	double sample_cost_us;     /* (median profiled - median unprofiled) / samples a run */
	enum tt_profile_mechanism mechanism;
};

/* Measure, in this process, in about 2 to 3 s of CPU time: turns of runs of the same
 * loop, unprofiled, profiled and (Linux, perf) under the bare event, each kind first
 * in turn; process CPU time, so the drain thread and the kernel's sampling work count
 * as overhead. Returns 0, or a negative errno from tt_profile_create/start/stop. */
int tt_bench_sample_overhead(struct tt_bench_overhead *out);

#endif
