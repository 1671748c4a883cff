/* sched_overhead_pct: what thread states (TICKTRACE_SCHED) cost a program that switches
 * threads about 100,000 times a second: two threads handing a byte back and forth
 * through pipes, each recording an event per hop, with thread states on and off
 * (TICKTRACE_SCHED=0). */
#ifndef TT_BENCH_SCHED_OVERHEAD_H
#define TT_BENCH_SCHED_OVERHEAD_H

struct tt_bench_sched {
	double pct;          /* sched_overhead_pct: median CPU per hop, on over off, - 1, in % */
	double on_ns;        /* median process CPU time per hop, thread states on */
	double off_ns;       /* the same, TICKTRACE_SCHED=0 */
	double switches_per_s; /* median switches (a thread leaving its CPU) a second, states on */
};

/* Runs `repeats` children of each kind, in alternating order: 0, or -1 if a child
 * failed (said on stderr). */
int tt_bench_sched_overhead(int repeats, struct tt_bench_sched *out);

/* The child's side, `work` the loop count of each thread's work per hop: prints its
 * figures; the exit status. */
int tt_bench_sched_child(long work);
#define TT_BENCH_SCHED_CHILD "--sched-child"

#endif
