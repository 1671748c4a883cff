/* tools/sinks: the output formats tt_decode drives (decode.h): Chrome JSON (json.c),
 * Perfetto protobuf (perfetto.c), the filter that wraps any of them (filter.c), and
 * flame graphs (flame.c). Each constructor returns NULL when out of memory; free with
 * tt_sink_free. */
#ifndef TT_TOOLS_SINKS_H
#define TT_TOOLS_SINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../decode/decode.h"

/* The sinks that tt_decode drives (decode.h). Each returns NULL when out of memory;
 * free with tt_sink_free. */

/* Perfetto nests slices at most this deep (slice_max_depth_exceeded) and then drops
 * deeper ones, whose ends, in protobuf, close the slices around them too early. Both
 * writers leave out what is nested deeper (slices, instants, flow ends), count it
 * and warn, so that what remains shows with its true times. */
#define TT_MAX_SHOWN_DEPTH 512

struct tt_folded {
	uint64_t slices, instants, flows;
};

/* Whether e is nested too deep to show; counts it in *count when it is. */
static inline bool tt_too_deep(const struct tt_event *e, uint64_t *count)
{
	if (__builtin_expect(e->depth < TT_MAX_SHOWN_DEPTH, 1))
		return false;
	++*count;
	return true;
}

/* The warning that counts what was left out, or 0 (and buf "") when nothing was. */
size_t tt_folded_message(const struct tt_folded *f, char *buf, size_t cap);

/* How a slice or an instant is named: the one rule of every sink. */
enum tt_naming {
	TT_NAMED_BY_SITE, /* its call site's name (a function a FUNCS section lists is a site) */
	TT_NAMED_BY_FUNC, /* a function no FUNCS section lists: func_name, the decoder's */
	TT_NAMED_BY_TEXT, /* a mark (TT_EV_NAMED): text, a C string */
	TT_NAMED_FLOW,    /* one end of a flow: "flow_out" or "flow_in" */
};

static inline enum tt_naming tt_event_naming(const struct tt_event *e)
{
	if (e->flags & TT_EV_NAMED)
		return TT_NAMED_BY_TEXT;
	if (e->site)
		return TT_NAMED_BY_SITE;
	return e->flags & (TT_EV_FLOW_OUT | TT_EV_FLOW_IN) ? TT_NAMED_FLOW : TT_NAMED_BY_FUNC;
}

/* A mark's name is cut at this many bytes. */
#define TT_MARK_NAME_MAX 512

/* The event's name, whichever way it is named. */
static inline struct tt_str tt_event_name(const struct tt_event *e)
{
	switch (tt_event_naming(e)) {
	case TT_NAMED_BY_SITE:
		return e->site->name;
	case TT_NAMED_BY_FUNC:
		return e->func_name;
	case TT_NAMED_BY_TEXT:
		return (struct tt_str){e->text, (uint32_t)strnlen(e->text, TT_MARK_NAME_MAX)};
	case TT_NAMED_FLOW:
		break;
	}
	return e->flags & TT_EV_FLOW_OUT ? (struct tt_str){"flow_out", 8} :
					   (struct tt_str){"flow_in", 7};
}

/* Chrome trace JSON (FORMATS.md), streamed into `out`. */
/* `source`: each slice and instant carries its "file:line" as args.src (a third of
 * the file's bytes; Perfetto's format interns source locations instead). */
struct tt_sink *tt_json_sink_new(struct tt_out *out, bool source);
/* The pid each file's process has in the JSON (viewers join by pid): its own, or past
 * every recorded pid where another process had it: on another machine, or on the same
 * one at the same time (another PID namespace). Files of one process (an exec, the same
 * pid on its machine one after the other) share it. */
void tt_json_pids(const struct tt_trace *t, uint32_t *pid_of);

/* Perfetto's protobuf TrackEvent format (FORMATS.md, tools/perfetto_trace.proto). */
struct tt_sink *tt_perfetto_sink_new(struct tt_out *out);
/* The Perfetto writer's output (before anything is written to it) packed: its packets
 * deflated in bundles of about TT_PB_BUNDLE bytes (TracePacket.compressed_packets,
 * which trace_processor and the UI read), by the output's writer thread: a trace of
 * a megabyte or more (TT_PACK_LARGE, the default: what a smaller one saves is not
 * worth a reader that must inflate), any (TT_PACK_ALWAYS, harder), or none. 0, or -1
 * after reporting (no memory). */
enum tt_packing { TT_PACK_LARGE, TT_PACK_ALWAYS, TT_PACK_NEVER };
int tt_perfetto_compress(struct tt_out *out, enum tt_packing how);

/* What the filter sink keeps: events of the named threads (tid or name; none named:
 * all) in [from, to] (ns since the trace start), slices of min_dur ns or more
 * (overlapping the window, or with by_begin begun in it). */
struct tt_filter {
	const char *const *threads;
	size_t nthreads;
	bool has_from, has_to; /* without them, no bound: zero is no filter at all */
	int64_t from, to;
	int64_t min_dur;
	bool clip; /* cut slices at [from, to] (flagged TT_EV_CLIPPED_*), not keep them whole */
	bool by_begin; /* keep the slices that begin in [from, to], not those overlapping it */
	/* The threads' states too (convert's writers, which show them at their start):
	 * each chosen thread's cut at the window's edges, none of the others' */
	bool cut_states;
	/* A --split shard's, whose end is known only later (tt_filter_set_end): the
	 * trace it shows says its states come at the finish (tt_trace.states_at_finish) */
	bool open_end;
	/* With cut_states, by thread id: when each thread was gone for good
	 * (tt_states_gone), so that a window past it shows none of its states; NULL: the
	 * filter finds them (a --split gives the same to every shard's) */
	const int64_t *gone;
};

/* Passes to `inner` only what the filter keeps (filter.c); `inner` stays the
 * caller's to free. */
struct tt_sink *tt_filter_sink_new(struct tt_sink *inner, const struct tt_filter *f);
/* Ends a filter's window at `to` (ns since the trace start, the last kept), its
 * threads' states cut there: a --split shard's, once the next shard begins. */
void tt_filter_set_end(struct tt_sink *filter, int64_t to);
/* Whether the filter keeps less than everything. */
bool tt_filter_active(const struct tt_filter *f);
/* Whether thread t is one the filter keeps the events of (--thread). */
bool tt_filter_keeps_thread(const struct tt_filter *f, const struct tt_thread *t);

/* The flame graph (flame.c): each slice's self time added to its path of scopes and
 * functions, under its thread's name. After decoding, tt_flame_write writes it: an
 * SVG titled `title`, or folded stacks ("thread;outer;inner NANOSECONDS" a line);
 * the distinct names and paths in *frames and *stacks. 0, or -1 after reporting. */
struct tt_sink *tt_flame_sink_new(void);
int tt_flame_write(struct tt_sink *flame, FILE *out, bool svg, const char *title, size_t *frames,
		   size_t *stacks);

/* The CPU of th->states[i]: its own, or, for a RUNNING state no switch in gives
 * (TT_NO_CPU: running since its switches were asked for), that of the switch out
 * that ends it, since every switch from then on is there; TT_NO_CPU when neither
 * says (perfetto_sched.c). */
uint32_t tt_state_cpu(const struct tt_thread *th, size_t i);

/* Whether the writers show th->states[i] (a slice on its thread's states track in
 * JSON, a thread_state row of trace_processor's from a .pftrace): it has an end, and a
 * state and CPU the switches say (perfetto_sched.c). */
bool tt_state_shown(const struct tt_thread *th, size_t i);
/* Whether th->states[i] is its thread's last, a run on a CPU the switches say, that
 * the thread's exit ends (tt_sched_info.exited_ns): shown up to the exit, which both
 * writers take for its end (perfetto_sched.c). */
bool tt_state_exits(const struct tt_thread *th, size_t i);

/* How many of a trace's states the writers show, whole (perfetto_sched.c). */
uint64_t tt_states_shown(const struct tt_trace *t);

/* The rows trace_processor holds of thread th's states in a window that begins at
 * `at` (tt_filter's cut) that no state begun in it gives: the state across `at`, and
 * the run of no length before the state out of its CPU that the window begins with
 * (a thread's state is Perfetto's only by its switch out of a CPU it came on): 0 to 2
 * (perfetto_sched.c). At the window's end a thread gives at most TT_STATE_ROWS_AT_END
 * more: a run cut there is switched out to an unknown state, a thread's last state
 * (which nothing ends) is a row, and its death another. */
unsigned tt_state_rows_at(const struct tt_thread *th, int64_t at);
#define TT_STATE_ROWS_AT_END 2

/* By thread id, into gone[t->nthreads]: when each thread that exited left its CPU
 * for good, as the .pftrace of the whole trace shows it (the next run on the CPU of
 * its last, which nothing else ends: there it is dead), or its last state's time
 * where that is not a run; INT64_MAX for the others and where nothing came on its
 * CPU after it. 0, or -1 after reporting (perfetto_sched.c). */
int tt_states_gone(const struct tt_trace *t, int64_t *gone);
#endif
