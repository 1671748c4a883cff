/* sched_overhead_pct: what thread states (TICKTRACE_SCHED) cost a program that switches
 * threads about 100,000 times a second: two threads handing a byte back and forth
 * through pipes, each recording an event per hop, with thread states on and off
 * (TICKTRACE_SCHED=0). sched_kernel_floor_pct: what the kernel alone charges for the
 * same switch records: the same ping-pong without ticktrace (TICKTRACE=0), each thread
 * opening the same perf event for itself and a thread of the benchmark's draining
 * them, against none. thread_start_us: what ticktrace adds to pthread_create and the
 * new thread's first event (its switches asked for as it starts), against TICKTRACE=0. */
#ifndef TT_BENCH_SCHED_OVERHEAD_H
#define TT_BENCH_SCHED_OVERHEAD_H

struct tt_bench_sched {
	double pct;          /* sched_overhead_pct: CPU per hop, on over off, - 1, in %: the
	                      * median of the turns' */
	double on_ns;        /* median process CPU time per hop, thread states on */
	double off_ns;       /* the same, TICKTRACE_SCHED=0 */
	double switches_per_s; /* median switches (a thread leaving its CPU) a second, states on */
	double floor_pct;    /* sched_kernel_floor_pct: the same, the kernel's records alone */
	double floor_on_ns;  /* median CPU per hop, no ticktrace, the benchmark's own perf events */
	double floor_off_ns; /* the same without them */
	double above_floor_pct; /* sched_above_floor_pct: what states add a hop beyond what the
	                         * kernel's records add, over the hop without states, in %: the
	                         * median of the turns' */
	double above_floor_lo, above_floor_hi; /* where that median lies, 95 % sure */
};

/* Runs `repeats` children of each kind, in alternating order: 0, or -1 if a child
 * failed (said on stderr). */
int tt_bench_sched_overhead(int repeats, struct tt_bench_sched *out);

/* The child's side, `work` the loop count of each thread's work per hop, `own_events`
 * (sched_kernel_floor_pct) whether each thread opens its switch records itself:
 * prints its figures; the exit status. */
int tt_bench_sched_child(long work, int own_events);
#define TT_BENCH_SCHED_CHILD "--sched-child"

/* A fixed piece of CPU work, `n` loops; the loop count for about 9 us of it here. */
void tt_bench_sched_work(long n);
long tt_bench_sched_calibrate(void);

struct tt_bench_thread_start {
	double us;     /* thread_start_us: on_us - off_us */
	double on_us;  /* median over children of each's median, ticktrace on */
	double off_us; /* the same, TICKTRACE=0 */
};
int tt_bench_thread_start(int repeats, struct tt_bench_thread_start *out);
/* The child's side: pthread_create until the new thread's first event returns, a few
 * hundred times: prints the median in microseconds; the exit status. */
int tt_bench_thread_start_child(void);
#define TT_BENCH_THREAD_START_CHILD "--thread-start-child"

#endif
