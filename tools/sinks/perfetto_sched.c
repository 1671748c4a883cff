/* The threads' states in the Perfetto sink (perfetto.c): ftrace sched_switch events,
 * which Perfetto shows as its own thread states and CPU tracks. */
#include "sinks.h"

/* Field numbers (Perfetto's). */
enum {
	PKT_FTRACE_EVENTS = 1, FEB_CPU = 1, FEB_EVENT = 2, FE_TIMESTAMP = 1, FE_PID = 2,
	FE_SCHED_SWITCH = 4, SS_PREV_COMM = 1, SS_PREV_PID = 2, SS_PREV_PRIO = 3, SS_PREV_STATE = 4,
	SS_NEXT_COMM = 5, SS_NEXT_PID = 6, SS_NEXT_PRIO = 7,
};
/* sched_switch's prev_state, as the kernel reports a task's state */
enum { TASK_RUNNING = 0, TASK_INTERRUPTIBLE = 1 };
#define TT_PF_PRIO 120 /* a normal task's, which Perfetto shows; the file has none */

/* One sched_switch of a thread's states into bundle q: it leaves its CPU (to a state
 * of `what`) or comes back to it. A process sees its own threads' switches only: the
 * other side of each is unknown to it, shown as the idle task (pid 0, "swapper"),
 * so Perfetto's CPU tracks show the runs of the trace's threads with gaps between. */
static uint8_t *tt_pf_switch(uint8_t *q, int64_t ns, const struct tt_thread *th, uint32_t what)
{
	static const struct tt_str idle = {"swapper", 7};
	bool out = what != TT_SCHED_RUNNING;
	uint8_t *ev = q, *sw;
	q = pb_open(q);
	q = pb_uint(q, FE_TIMESTAMP, (uint64_t)ns);
	q = pb_uint(q, FE_PID, out ? th->tid : 0);
	sw = q;
	q = pb_open(q);
	q = pb_text(q, SS_PREV_COMM, out ? th->name : idle);
	q = pb_uint(q, SS_PREV_PID, out ? th->tid : 0);
	q = pb_uint(q, SS_PREV_PRIO, TT_PF_PRIO);
	/* (the idle task, switched out, stays runnable) */
	q = pb_uint(q, SS_PREV_STATE, what == TT_SCHED_BLOCKED ? TASK_INTERRUPTIBLE : TASK_RUNNING);
	q = pb_text(q, SS_NEXT_COMM, out ? idle : th->name);
	q = pb_uint(q, SS_NEXT_PID, out ? 0 : th->tid);
	q = pb_uint(q, SS_NEXT_PRIO, TT_PF_PRIO);
	q = pb_close(sw, q, FE_SCHED_SWITCH);
	return pb_close(ev, q, FEB_EVENT);
}

/* The threads' states as Perfetto's own (thread_state and sched tables, each thread
 * Running, Runnable or Sleeping): ftrace sched_switch events, a bundle per run of a
 * thread's states on one CPU. Their times are BOOTTIME, Perfetto's ftrace clock: the
 * states' CLOCK_MONOTONIC moved by the offset of the one clock snapshot. */
#define TT_PF_BUNDLE_STATES 64
int tt_pf_states(struct tt_out *out, struct tt_pb_buf *scratch, const struct tt_thread *th, int64_t boot_offset)
{
	size_t room = 32 + TT_PF_BUNDLE_STATES * (64 + 2 * tt_str_room(th->name));
	for (size_t i = 0; i < th->nstates;) {
		/* (what no switch says, or where it ran unsaid: nothing to say of it) */
		if (th->states[i].what == TT_SCHED_UNKNOWN || th->states[i].cpu == TT__NO_CPU) {
			i++;
			continue;
		}
		uint8_t *b = tt_pb_room(scratch, room);
		if (!b)
			return tt_error("out of memory");
		uint32_t cpu = th->states[i].cpu;
		uint8_t *q = b, *bundle = q;
		q = pb_open(q);
		q = pb_uint(q, FEB_CPU, cpu);
		for (size_t n = 0; i < th->nstates && th->states[i].cpu == cpu && n < TT_PF_BUNDLE_STATES;
		     i++, n++) {
			const struct tt_sched_state *st = &th->states[i];
			if (st->what != TT_SCHED_UNKNOWN)
				q = tt_pf_switch(q, st->ns + boot_offset, th, st->what);
		}
		q = pb_close(bundle, q, PKT_FTRACE_EVENTS);
		tt_pb_packet(out, b, (size_t)(q - b));
	}
	return 0;
}
