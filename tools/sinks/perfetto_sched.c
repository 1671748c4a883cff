/* The threads' states in the Perfetto sink (perfetto.c): ftrace sched_switch events,
 * which Perfetto shows as its own thread states and CPU tracks. */
#include "protobuf_internal.h"

/* Field numbers (Perfetto's). */
enum {
	PKT_FTRACE_EVENTS = 1, FEB_CPU = 1, FEB_EVENT = 2, FE_TIMESTAMP = 1, FE_PID = 2,
	FE_SCHED_SWITCH = 4, SS_PREV_COMM = 1, SS_PREV_PID = 2, SS_PREV_PRIO = 3, SS_PREV_STATE = 4,
	SS_NEXT_COMM = 5, SS_NEXT_PID = 6, SS_NEXT_PRIO = 7,
};
/* sched_switch's prev_state, as the kernel reports a task's state (the bits of the
 * kernels before 4.14, which Perfetto assumes of a trace that names no kernel). */
enum {
	TASK_RUNNING = 0,        /* R: left its CPU able to run on (preempted) */
	TASK_INTERRUPTIBLE = 1,  /* S: left it to wait (blocked) */
	TASK_EXIT_DEAD = 0x10,   /* X: it had exited */
	/* I: TASK_UNINTERRUPTIBLE | TASK_NOLOAD, the kernel's TASK_IDLE, which no switch
	 * of the file records: a thread whose switches say nothing of why it left */
	TASK_IDLE = 0x402,
};
#define TT_PF_PRIO 120 /* a normal task's, which Perfetto shows; the file has none */

static bool tt_pf_is_out(const struct tt_sched_state *st)
{
	return st->what == TT_SCHED_PREEMPTED || st->what == TT_SCHED_BLOCKED;
}

uint32_t tt_state_cpu(const struct tt_thread *th, size_t i)
{
	const struct tt_sched_state *st = &th->states[i];
	if (st->cpu != TT_NO_CPU || st->what != TT_SCHED_RUNNING || i + 1 >= th->nstates)
		return st->cpu;
	return tt_pf_is_out(&th->states[i + 1]) ? th->states[i + 1].cpu : TT_NO_CPU;
}

bool tt_state_exits(const struct tt_thread *th, size_t i)
{
	const struct tt_sched_state *st = &th->states[i];
	return i + 1 == th->nstates && th->exited_ns && th->exited_ns >= st->ns &&
	       st->what == TT_SCHED_RUNNING && tt_state_cpu(th, i) != TT_NO_CPU;
}

bool tt_state_shown(const struct tt_thread *th, size_t i)
{
	return i + 1 < th->nstates && th->states[i].what != TT_SCHED_UNKNOWN &&
	       tt_state_cpu(th, i) != TT_NO_CPU;
}

uint64_t tt_states_shown(const struct tt_trace *t)
{
	uint64_t n = 0;
	for (size_t i = 0; i < t->nfiles; i++)
		for (size_t k = 0; k < t->files[i].nthreads; k++) {
			const struct tt_thread *th = &t->files[i].threads[k];
			for (size_t s = 0; (th->flags & TT_THREAD_SCHED) && s < th->nstates; s++)
				n += tt_state_shown(th, s);
		}
	return n;
}

/* One sched_switch into bundle w, on its CPU at `ns`: `prev` leaves it (to `prev_state`)
 * and `next` comes on; NULL is the idle task (pid 0, "swapper"), which stands for
 * whatever ran that is not in the trace. */
static void tt_pf_switch(struct tt_buf *w, int64_t ns, const struct tt_thread *prev,
			 uint32_t prev_state, const struct tt_thread *next)
{
	static const struct tt_str idle = {"swapper", 7};
	size_t ev = tt_pb_open(w);
	tt_pb_uint(w, FE_TIMESTAMP, (uint64_t)ns);
	tt_pb_uint(w, FE_PID, prev ? prev->tid : 0);
	size_t sw = tt_pb_open(w);
	tt_pb_text(w, SS_PREV_COMM, prev ? prev->name : idle);
	tt_pb_uint(w, SS_PREV_PID, prev ? prev->tid : 0);
	tt_pb_uint(w, SS_PREV_PRIO, TT_PF_PRIO);
	tt_pb_uint(w, SS_PREV_STATE, prev_state);
	tt_pb_text(w, SS_NEXT_COMM, next ? next->name : idle);
	tt_pb_uint(w, SS_NEXT_PID, next ? next->tid : 0);
	tt_pb_uint(w, SS_NEXT_PRIO, TT_PF_PRIO);
	tt_pb_close(w, sw, FE_SCHED_SWITCH);
	tt_pb_close(w, ev, FEB_EVENT);
}

/* How a run on a CPU ends, as its thread's next state says. */
enum tt_pf_end {
	TT_PF_OUT,   /* a switch out of that CPU, preempted or blocked: `end`, `what` */
	TT_PF_UNSAID, /* some other state at `end` (lost switches: it left by then) */
	TT_PF_OPEN,  /* its thread's last state */
	TT_PF_EXIT,  /* its thread's last state, the thread gone at `end` (exited_ns) */
};

/* A thread's run on a CPU: from a switch in (or, for the run that its first switch
 * out ends, from when its switches were first asked for: it ran there since) to its
 * end (tt_pf_run). */
struct tt_pf_run {
	int64_t in, end;
	const struct tt_thread *th;
	uint32_t cpu;
	uint8_t ends; /* enum tt_pf_end */
	uint8_t what; /* TT_PF_OUT: PREEMPTED or BLOCKED */
};

/* A run of no length (tt_pf_run) first among those that begin at one ns: it holds its
 * CPU for none of it, so that the run that does (a shard's start moves many to it) is
 * not taken off at once. */
static int tt_pf_run_order(const void *a, const void *b)
{
	const struct tt_pf_run *x = a, *y = b;
	uint32_t xm = x->th->file->machine_index, ym = y->th->file->machine_index;
	if (xm != ym)
		return xm < ym ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->in != y->in)
		return x->in < y->in ? -1 : 1;
	bool x_none = x->ends == TT_PF_OUT && x->end == x->in, y_none = y->ends == TT_PF_OUT && y->end == y->in;
	if (x_none != y_none)
		return x_none ? -1 : 1;
	return (x->th->id > y->th->id) - (x->th->id < y->th->id);
}

static bool tt_pf_same_cpu(const struct tt_pf_run *a, const struct tt_pf_run *b)
{
	return a->cpu == b->cpu && a->th->file->machine_index == b->th->file->machine_index;
}

/* What a thread is when its run ends, by its switch out or before (another comes on
 * its CPU): the state of its own switch out, which comes then or later; dead when it
 * exited while it ran; else nothing known (TASK_IDLE). */
static uint32_t tt_pf_left(const struct tt_pf_run *r)
{
	if (r->ends == TT_PF_OUT)
		return r->what == TT_SCHED_BLOCKED ? TASK_INTERRUPTIBLE : TASK_RUNNING;
	if (r->ends == TT_PF_EXIT || (r->ends == TT_PF_OPEN && (r->th->flags & TT_THREAD_EXITED)))
		return TASK_EXIT_DEAD;
	return TASK_IDLE;
}

/* Thread th's run that its state i begins, into *r; false when it begins none. A
 * switch out that no switch in on its CPU comes before (its thread's switches were
 * asked for at that very ns, or those before it were lost) says the thread ran there
 * until then: a run of no length, so that Perfetto has the state it left in. */
static bool tt_pf_run(const struct tt_thread *th, size_t i, struct tt_pf_run *r)
{
	const struct tt_sched_state *st = &th->states[i];
	uint32_t cpu = tt_state_cpu(th, i);
	*r = (struct tt_pf_run){.in = st->ns, .th = th, .cpu = cpu, .ends = TT_PF_OPEN};
	if (tt_pf_is_out(st)) {
		const struct tt_sched_state *before = i ? &th->states[i - 1] : NULL;
		if (before && before->what == TT_SCHED_RUNNING && tt_state_cpu(th, i - 1) == cpu)
			return false;
		r->end = st->ns;
		r->ends = TT_PF_OUT;
		r->what = (uint8_t)st->what;
		return true;
	}
	if (st->what != TT_SCHED_RUNNING || cpu == TT_NO_CPU)
		return false;
	if (i + 1 < th->nstates) {
		const struct tt_sched_state *next = &th->states[i + 1];
		bool out = next->cpu == cpu && tt_pf_is_out(next);
		r->end = next->ns;
		/* Switches lost, the thread next on another CPU: it left this one by then.
		 * Taken off 1 ns before, as Perfetto orders switches of one ns by CPU, not
		 * by thread: else its switch on the other, if that CPU came first, would be
		 * undone by this one (its state then this run's end). */
		if (next->cpu != cpu && next->cpu != TT_NO_CPU && next->ns > st->ns)
			r->end--;
		r->ends = out ? TT_PF_OUT : TT_PF_UNSAID;
		r->what = out ? (uint8_t)next->what : 0;
	} else if (tt_state_exits(th, i)) {
		r->end = th->exited_ns;
		r->ends = TT_PF_EXIT;
	}
	return true;
}

/* Every thread's runs on CPUs, into *runs; their number, or -1 when out of memory. */
static ptrdiff_t tt_pf_runs(const struct tt_trace *t, struct tt_pf_run **runs)
{
	size_t n = 0, cap = 0;
	*runs = NULL;
	for (size_t f = 0; f < t->nfiles; f++)
		for (size_t k = 0; k < t->files[f].nthreads; k++) {
			const struct tt_thread *th = &t->files[f].threads[k];
			if (!(th->flags & TT_THREAD_SCHED))
				continue;
			for (size_t i = 0; i < th->nstates; i++) {
				if (n == cap) {
					cap = cap ? 2 * cap : 256;
					struct tt_pf_run *grown = realloc(*runs, cap * sizeof(**runs));
					if (!grown)
						return -1;
					*runs = grown;
				}
				n += tt_pf_run(th, i, &(*runs)[n]);
			}
		}
	return (ptrdiff_t)n;
}

unsigned tt_state_rows_at(const struct tt_thread *th, int64_t at)
{
	size_t lo = 0, hi = th->nstates; /* the first state that begins at `at` or after */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (th->states[mid].ns < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!(th->flags & TT_THREAD_SCHED) || th->nstates == 0)
		return 0;
	/* the window's first: the state across `at`, else the first after it */
	bool across = lo > 0 && (lo == th->nstates || th->states[lo].ns > at);
	size_t first = across ? lo - 1 : lo;
	if (first == th->nstates)
		return 0;
	/* (a thread's last run, that its exit ends, is shown cut at the window's edges) */
	return (across && (tt_state_shown(th, first) || tt_state_exits(th, first))) +
	       tt_pf_is_out(&th->states[first]);
}

int tt_states_gone(const struct tt_trace *t, int64_t *gone)
{
	for (size_t f = 0; f < t->nfiles; f++)
		for (size_t k = 0; k < t->files[f].nthreads; k++) {
			const struct tt_thread *th = &t->files[f].threads[k];
			bool exited = (th->flags & TT_THREAD_SCHED) && (th->flags & TT_THREAD_EXITED) && th->nstates;
			gone[th->id] = exited ? th->states[th->nstates - 1].ns : INT64_MAX;
		}
	struct tt_pf_run *runs;
	ptrdiff_t n = tt_pf_runs(t, &runs);
	if (n > 0)
		qsort(runs, (size_t)n, sizeof(*runs), tt_pf_run_order);
	/* the last state a run: it ends at the exit, or (not said) where the next on its
	 * CPU begins (tt_pf_states) */
	for (ptrdiff_t i = 0; i < n; i++)
		if (runs[i].ends == TT_PF_EXIT)
			gone[runs[i].th->id] = runs[i].end;
		else if (runs[i].ends == TT_PF_OPEN && (runs[i].th->flags & TT_THREAD_EXITED))
			gone[runs[i].th->id] = i + 1 < n && tt_pf_same_cpu(&runs[i + 1], &runs[i]) ?
						       runs[i + 1].in : INT64_MAX;
	free(runs);
	return n < 0 ? tt_error("out of memory for the threads' states") : 0;
}

/* The threads' states as Perfetto's own (thread_state and sched tables, each thread
 * Running, Runnable or Sleeping): ftrace sched_switch events, a bundle per CPU of up
 * to TT_PF_BUNDLE_EVENTS. Their times are BOOTTIME, Perfetto's ftrace clock: the
 * states' CLOCK_MONOTONIC moved by the offset of the one clock snapshot.
 *
 * Perfetto requires of each CPU's switches that each one's prev_pid be the one before's
 * next_pid (else mismatched_sched_switch_tids, an error, and the run left unended).
 * Each thread's states say only its own side of a switch: the other is the idle task,
 * and a thread's switches need not agree with another's on one CPU: one that exits
 * while it runs has no switch out, switches lost (tt_sched_info.lost) leave a run
 * without its end, and two threads' records may tie or overlap. So the runs of every
 * thread are merged per CPU by time, and where a thread comes on a CPU that another
 * has not left, or a run ends in something other than a switch out (lost switches),
 * a synthetic switch takes the one still there off, at the time the next comes on (or
 * its own next state is), as what the least that is true says (tt_pf_left). */
#define TT_PF_BUNDLE_EVENTS 64
int tt_pf_states(struct tt_out *out, struct tt_buf *w, const struct tt_trace *t,
		 int64_t boot_offset)
{
	struct tt_pf_run *runs;
	ptrdiff_t n = tt_pf_runs(t, &runs);
	if (n <= 0) { /* (none: no states, or no memory) */
		free(runs);
		return n < 0 ? tt_error("out of memory for the threads' states") : 0;
	}
	qsort(runs, (size_t)n, sizeof(*runs), tt_pf_run_order);
	int rc = 0;
	for (ptrdiff_t i = 0; i < n && rc == 0;) {
		/* a CPU of a machine: each machine's switches on its own (TracePacket.machine_id) */
		const struct tt_pf_run *first = &runs[i];
		uint32_t cpu = first->cpu, machine = first->th->file->machine_index;
		const struct tt_pf_run *on = NULL; /* the run on the CPU, not yet switched out */
		while (i < n && tt_pf_same_cpu(&runs[i], first) && rc == 0) {
			tt_pb_reset(w);
			size_t bundle = tt_pb_open(w);
			tt_pb_uint(w, FEB_CPU, cpu);
			for (size_t events = 0; i < n && tt_pf_same_cpu(&runs[i], first) && events < TT_PF_BUNDLE_EVENTS;
			     i++, events += 2) {
				const struct tt_pf_run *r = &runs[i];
				if (on && on->ends != TT_PF_OPEN && on->end <= r->in) {
					tt_pf_switch(w, on->end + boot_offset, on->th, tt_pf_left(on),
						     NULL);
					on = NULL;
				}
				tt_pf_switch(w, r->in + boot_offset, on ? on->th : NULL,
					     on ? tt_pf_left(on) : TASK_RUNNING, r->th);
				on = r;
			}
			if (on && on->ends != TT_PF_OPEN && (i == n || !tt_pf_same_cpu(&runs[i], first))) {
				tt_pf_switch(w, on->end + boot_offset, on->th, tt_pf_left(on), NULL);
				on = NULL;
			}
			tt_pb_close(w, bundle, PKT_FTRACE_EVENTS);
			if (machine)
				tt_pb_uint(w, PB_PACKET_MACHINE_ID, machine);
			rc = tt_pb_write_packet(out, w);
		}
	}
	free(runs);
	return rc;
}
