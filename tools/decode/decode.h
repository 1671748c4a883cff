/* The one decoder: turns each thread's records into logical events (complete slices,
 * instants, counters, flows) and drives any number of sinks through callbacks. Every
 * output format and report is a sink; none of them reads records itself.
 *
 *   struct tt_trace t;  tt_trace_open(&t, paths, n);   // read and validate the files
 *   struct tt_sink *sinks[] = {&json.sink, &summary.sink};
 *   tt_decode(&t, sinks, 2);                           // start, events..., finish
 *
 * Each thread's events reach the sinks in its time order. Threads (of all files)
 * are merged by time in windows of 100 us: within a window one thread after the
 * other, and the window's flows last, in time order over all threads, so that a
 * FLOW_OUT comes before its FLOW_IN in any output.
 * Memory grows with threads, sites, nesting depth and flows begun but not yet ended,
 * never with events. */
#ifndef TT_TOOLS_DECODE_H
#define TT_TOOLS_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../read/read.h"

enum tt_event_flags {
	TT_EV_ARG = 1u << 0,          /* value holds the BEGIN_ARG / INSTANT_ARG argument */
	TT_EV_UNTERMINATED = 1u << 1, /* a slice closed by the decoder, not by its END */
	TT_EV_FUNC = 1u << 2,         /* a function slice: func, not site */
	TT_EV_FLOW_OUT = 1u << 3,     /* a flow: the arrow starts here */
	TT_EV_FLOW_IN = 1u << 4,      /* a flow: the arrow ends here */
	/* Notes on the innermost open scope (the note callback), one flag each: */
	TT_EV_THRESHOLD = 1u << 5,          /* TT_THRESHOLD_NS: value holds the ns */
	TT_EV_CHILDREN_THRESHOLD = 1u << 6, /* TT_CHILDREN_THRESHOLD_NS: value holds the ns */
	TT_EV_IGNORE = 1u << 7,             /* TT_IGNORE */
	TT_EV_IGNORE_CHILDREN = 1u << 8,    /* TT_IGNORE_CHILDREN */
	TT_EV_DESCRIBE = 1u << 9,           /* TT_DESCRIBE: text, value bytes of it */
	TT_EV_NAMED = 1u << 10,             /* an instant with no site: text is its name (a
	                                     * spike's mark, added by the spike sink) */
	/* A slice whose beginning was not recorded: it was open before the thread's
	 * oldest kept event (mode ring) or began among lost events; ts is the first time
	 * it is known to be open. */
	TT_EV_UNBEGUN = 1u << 11,
	TT_EV_GAP = 1u << 12,         /* a run of lost events: value holds how many */
	/* slice_end: its TT_DESCRIBE (the last), text_len bytes of text */
	TT_EV_DESCRIBED = 1u << 13,
	TT_EV_SCOPE_VALUE = 1u << 14, /* slice_end: scope_value holds its TT_SCOPE_VALUE */
	TT_EV_PARENTS_THRESHOLD = 1u << 15, /* a note: TT_PARENTS_THRESHOLD_NS, value the ns */
	/* convert --clip: a slice cut at the window's start (it began before: ts is the
	 * window's start) or at its end (it ended after: ts + dur is the window's end) */
	TT_EV_CLIPPED_BEGIN = 1u << 16,
	TT_EV_CLIPPED_END = 1u << 17,
};

/* The thread id that the frames numbered `track` are shown on: down from the largest
 * (no kernel gives a thread an id near 2^32), in both formats alike. */
#define TT_FRAMES_TID(track) (UINT32_MAX - (uint32_t)(track))
/* The thread id that the states of thread `tid` (TT_SEC_SCHED) are shown on in JSON:
 * above any the kernel gives (pid_max is at most 2^22), below the frames'. */
#define TT_STATES_TID(tid) ((uint32_t)(tid) | UINT32_C(0x40000000))

/* One logical event, valid only during the callback. Times are nanoseconds since the
 * trace start (tt_trace.base_ns). */
struct tt_event {
	const struct tt_thread *thread;
	const struct tt_site *site; /* slices, instants, counters; NULL with TT_EV_FUNC, flows */
	uint64_t func;              /* TT_EV_FUNC: the function's address */
	int64_t ts;
	int64_t dur;                /* slice_end */
	uint64_t value;             /* argument, counter value (as int64), or flow id */
	uint32_t depth;             /* scopes open around it on its thread */
	uint32_t flags;             /* enum tt_event_flags */
	uint64_t offset;            /* file offset of its record */
	const char *text;           /* TT_EV_DESCRIBE: value bytes; TT_EV_NAMED: a C string;
	                             * TT_EV_DESCRIBED: text_len bytes */
	uint32_t text_len;
	int64_t scope_value;        /* TT_EV_SCOPE_VALUE */
	/* slice_end, TT_EV_UNTERMINATED: where its end was among lost events, it ended up
	 * to this after ts + dur (at the next record, the thread's exit, or the end of the
	 * recording); -1: how much later not known; 0: its end not lost */
	int64_t late;
	/* TT_EV_UNBEGUN: it began up to this before ts (among lost events: from their
	 * first); -1: how much earlier not known (before its thread's oldest record kept:
	 * a ring's window, or a fork's parent began it). Unset without the flag. */
	int64_t early;
	/* Flows: the arrow's id in the output, unique in the trace. Each FLOW_OUT starts a
	 * new one; a FLOW_IN ends the one of the latest FLOW_OUT of its process with the
	 * same id (value) before it, or has an id no FLOW_OUT has when there is none. So
	 * an id passed on through several hops draws each hop, and processes that number
	 * their items alike are not linked to each other. */
	uint64_t link;
	/* One or the other, by the flags (an event is never both; the event stays as
	 * small as the decoder builds it fastest): */
	union {
		/* Slices of a function no FUNCS section lists (TT_EV_FUNC, no site): its
		 * name, from the symbols or "0x...", named here once so that no sink asks
		 * the input. */
		struct tt_str func_name;
		/* TT_EV_NAMED: its arguments up to one with no key, or NULL: none. They
		 * (strings included) stay valid until tt_decode returns, so that a sink may
		 * hold the event until its thread's time moves on. */
		const struct tt_an_arg *args;
	};
};

struct tt_summary {
	uint64_t events;       /* logical events: records that are not PAD, VALUE or DROPPED */
	uint64_t threads;
	uint64_t dropped;      /* events the runtime lost */
	uint64_t unmatched;    /* END / FUNC_EXIT with no open scope to close */
	uint64_t clamped;      /* timestamps that went backwards */
	uint64_t unterminated; /* slices closed by the decoder */
	uint64_t unbegun;      /* slices opened by the decoder (TT_EV_UNBEGUN) */
	uint64_t gaps;         /* runs of lost events shown on their thread */
	uint64_t warnings;
	uint64_t slices;       /* slices ended (slice_end's, before any filter) */
	uint64_t points;       /* instants, flows' ends and frames (before any filter): slices
				* too in trace_processor's table */
};

/* One thread's totals, when its records end. */
struct tt_thread_summary {
	uint64_t events, unmatched, clamped, unterminated, unbegun;
	uint64_t gaps, gap_events; /* runs of lost events and the events they lost */
	int64_t first_ts, last_ts; /* of its first and last events; 0 when it has none */
};

struct tt_sink;

/* Every callback may be NULL. One that returns < 0 stops the decoding, which then
 * fails; the sink has reported why. */
struct tt_sink_ops {
	/* Before any event: processes and threads are all known (metadata goes first). */
	int (*start)(struct tt_sink *s, const struct tt_trace *t);
	/* A scope opens: site or func, ts, depth, value with TT_EV_ARG. For sinks that
	 * need begin and end in time order (Perfetto); JSON waits for slice_end. */
	int (*slice_begin)(struct tt_sink *s, const struct tt_event *e);
	/* A scope closes: everything, dur included; children close before parents. */
	int (*slice_end)(struct tt_sink *s, const struct tt_event *e);
	int (*instant)(struct tt_sink *s, const struct tt_event *e);
	int (*counter)(struct tt_sink *s, const struct tt_event *e);
	/* One end of an arrow between threads: value is the id recorded, link the
	 * arrow's, flags the direction (TT_EV_FLOW_OUT or _IN), depth as for an event
	 * inside the innermost open scope. FLOW_OUT comes before its FLOW_IN when they
	 * happened in that order. */
	int (*flow)(struct tt_sink *s, const struct tt_event *e);
	/* A note on the innermost open scope (depth: how many are open; 0, none): one of
	 * the flags TT_EV_THRESHOLD to TT_EV_DESCRIBE. For the spike detector. */
	int (*note)(struct tt_sink *s, const struct tt_event *e);
	/* A frame boundary (TT_FRAME_MARK): frame number `value` of the frames named by
	 * site begins at ts, and the one before it lasted dur (0: it is the first). The
	 * frames of a name are the process's, from all its threads; func numbers them
	 * (their track) from 0 over the trace, for sinks that keep state per track. The
	 * trace writers show them as slices on a thread of their own, TT_FRAMES_TID. */
	int (*frame)(struct tt_sink *s, const struct tt_event *e);
	/* Every event at or before `ts` has come: after each of the decoder's windows
	 * (instants, counters, flows and slice begins at `ts` or before; ends of slices
	 * begun then may come later); so_far: the run's totals up to here. For a sink that
	 * cuts the run by time as it goes (convert --split). */
	int (*advance)(struct tt_sink *s, int64_t ts, const struct tt_summary *so_far);
	/* A thread's records ended (its open scopes are closed by then). */
	int (*thread_end)(struct tt_sink *s, const struct tt_thread *t,
			  const struct tt_thread_summary *sum);
	/* Something was lost or repaired; the message is complete and ends in no newline. */
	void (*warning)(struct tt_sink *s, const char *message);
	/* After the last event. */
	int (*finish)(struct tt_sink *s, const struct tt_summary *sum);
	/* Frees the sink (tt_sink_free). */
	void (*destroy)(struct tt_sink *s);
};

struct tt_sink {
	const struct tt_sink_ops *ops;
};

/* Decodes every file of the trace into the sinks (at most TT_MAX_SINKS). 0, or -1
 * after an error was reported (a malformed record, or a sink failing). */
#define TT_MAX_SINKS 8
int tt_decode(const struct tt_trace *t, struct tt_sink *const *sinks, size_t nsinks);

/* Frees a sink through its destroy callback; NULL is nothing. */
static inline void tt_sink_free(struct tt_sink *s)
{
	if (s)
		s->ops->destroy(s);
}

/* ---- the pipeline (pipeline.c): how every command reads a run ---- */

struct tt_session_opts {
	char *const *inputs;
	size_t ninputs;
	const char *debug_dir; /* searched for debug info first (NULL: the system's only) */
	const char *output;    /* the output file ("-": stdout), or NULL: none */
	bool force;            /* replace an existing output file */
	bool quiet;            /* no summary line nor progress bar (warnings are still printed) */
	/* --offset HOST=TIME: the files of host offset_hosts[i] moved by offset_ns[i] */
	const char *const *offset_hosts;
	const int64_t *offset_ns;
	size_t noffsets;
};

struct tt_session {
	const struct tt_session_opts *opts;
	struct tt_trace trace;
	struct tt_symbols *symbols;
	struct tt_out out;     /* after tt_session_output */
	bool out_open;
	struct tt_summary sum; /* after tt_session_decode */
	char what[128];        /* the summary's word for what was made ("flat profile"), or "" */
};

/* Opens the inputs, moves them by the offsets given, and names their functions; a
 * trace whose times span more than a timeline holds (tt_trace_check_span) is refused.
 * 0, or -1 after reporting the problem; tt_session_close either way. */
int tt_session_open(struct tt_session *r, const struct tt_session_opts *o);
/* Opens r->opts->output into r->out; 0, or -1 after reporting why. */
int tt_session_output(struct tt_session *r);
/* Opens the output and has `write` print text into it (tt_out_text); committed or
 * aborted by tt_session_close. 0, or -1 after reporting why. */
int tt_session_text(struct tt_session *r, int (*write)(void *ctx, FILE *out), void *ctx);
/* Decodes the run into the sinks (tt_decode_reported), with a progress bar for large
 * inputs on a terminal unless quiet; the totals in r->sum. */
int tt_session_decode(struct tt_session *r, struct tt_sink *const *sinks, size_t n);
/* The output's name for messages: its path, or "stdout". */
const char *tt_session_output_name(const struct tt_session *r);
/* Ends the run: rc < 0 aborts the output (no file left behind); otherwise commits it
 * and prints the one summary line. Closes everything; returns rc, or -1 when the
 * commit failed (reported). Free the sinks before: they may read the trace. */
int tt_session_close(struct tt_session *r, int rc);
/* Decodes t into the sinks and the pipeline's own, which prints every warning and
 * keeps the totals in *sum (may be NULL). 0, or -1 after reporting. */
int tt_decode_reported(const struct tt_trace *t, struct tt_sink *const *sinks, size_t n,
		       struct tt_summary *sum);

/* ---- times, as the decoder gives them ---- */

/* Nanoseconds since the trace start, within +-TT_TIME_LIMIT. */
static inline int64_t tt_rebase(int64_t ns, int64_t base)
{
	int64_t ts;
	if (__builtin_sub_overflow(ns, base, &ts))
		ts = ns < 0 ? INT64_MIN : INT64_MAX;
	return ts < -TT_TIME_LIMIT ? -TT_TIME_LIMIT : ts > TT_TIME_LIMIT ? TT_TIME_LIMIT : ts;
}

/* Marks (marks.c, and the spikes report/ finds in a snapshot): a snapshot says its
 * spike's begin and end as the runtime's detector had them, which turned the records'
 * TSCs into ns and back at the rate it measured then: within a few hundred ns of the
 * records'. */
#define TT_MARK_SLACK_NS 1000
static inline bool tt_mark_near(int64_t a, int64_t b)
{
	return a - b <= TT_MARK_SLACK_NS && b - a <= TT_MARK_SLACK_NS;
}

#endif
