/* event_during_snapshot_ns and snapshot_ms: what writing a snapshot (TICKTRACE_SNAPSHOTS)
 * costs the threads that record meanwhile, and how long writing one takes. */
#ifndef TT_BENCH_SNAPSHOT_BENCH_H
#define TT_BENCH_SNAPSHOT_BENCH_H

struct tt_bench_snapshot {
	double during_ns;     /* event_during_snapshot_ns: per event, batches recorded while written */
	double quiet_ns;      /* the same threads' batches before the trigger */
	double batches;       /* batches counted as recorded while written, per snapshot */
	double snapshot_ms;   /* writing one: its wall time */
	double window_events; /* events its window holds */
	/* snapshot_overhead_pct: the process's CPU time with snapshots on (tt-spikes reading
	 * every record) against off, the same threads recording, medians in turns */
	double on_ms, off_ms, overhead_pct;
};

/* Runs `repeats` children, each writing a snapshot (another when too few batches are
 * known to lie within its writing): the medians over them. 0, or -1 (said on stderr). */
int tt_bench_snapshot(int repeats, struct tt_bench_snapshot *out);

/* The child's side (TICKTRACE_MODE=ring, TICKTRACE_SNAPSHOTS set): prints its
 * figures; the exit status. */
int tt_bench_snapshot_child(void);
#define TT_BENCH_SNAPSHOT_CHILD "--snapshot-child"
/* The same threads recording a while, with or without snapshots: prints the process's
 * CPU time (ms); the exit status. */
int tt_bench_snapshot_cost_child(void);
#define TT_BENCH_SNAPSHOT_COST_CHILD "--snapshot-cost-child"

#endif
