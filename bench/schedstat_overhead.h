/* schedstat_overhead_pct: what thread states' second source (the threads' own
 * counters, TICKTRACE_SCHED=schedstat: tt-sched looks at every thread's last record
 * each millisecond and reads the counters of those inside a scope open a millisecond
 * or more) costs a program of 64 recording threads, against no thread states
 * (TICKTRACE_SCHED=0). */
#ifndef TT_BENCH_SCHEDSTAT_OVERHEAD_H
#define TT_BENCH_SCHEDSTAT_OVERHEAD_H

struct tt_bench_schedstat {
	double pct;    /* the median of the turns' process CPU time, on over off, - 1, in % */
	double lo, hi; /* where that median lies, 95 % sure */
	double on_ms;  /* the median CPU time of a child's work, the counters on */
	double off_ms; /* the same, TICKTRACE_SCHED=0 */
	double tt_sched_pct; /* the median of the turns' tt-sched CPU time over the CPU time off, in % */
	double tt_sched_ms;  /* its CPU time in a child, ms */
	double tt_sched_wall_pct; /* and over the child's wall time, in % of one CPU */
	int turns;
};

/* A child of each kind a turn, `repeats` turns or more: 0, or -1 (said on stderr). */
int tt_bench_schedstat_overhead(int repeats, struct tt_bench_schedstat *out);

/* The child's side, `work` the loop count of tt_bench_sched_work per short scope:
 * prints the process CPU time of the threads' work, tt-sched's CPU time in it and its
 * wall time, in ms; the exit status. */
int tt_bench_schedstat_child(long work);
#define TT_BENCH_SCHEDSTAT_CHILD "--schedstat-child"

#endif
