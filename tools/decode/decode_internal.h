/* What only decode/'s files share (decode.h is its face, what the layers above call):
 * the decoder's state per thread and over the trace, and its files' functions. */
#ifndef TT_TOOLS_DECODE_INTERNAL_H
#define TT_TOOLS_DECODE_INTERNAL_H

#include "decode.h"

/* The decoder keeps this many nested scopes per thread: a deep recursion or a hostile
 * file nests deeper, and what is nested deeper is left out and counted, so that
 * memory stays bounded and the rest of the file is kept. As deep as `ticktrace record`
 * records (its shadow stack's 1,048,576 calls, src/detour/detour.c): a recursion it
 * recorded whole converts whole. */
#define TT_MAX_DEPTH (1u << 20)

/* The decoder runs each thread through a window of this many nanoseconds at a time
 * (a few thousand records), threads one after the other, so that merging costs
 * nothing per record; flows are held back to the window's end and sorted. */
#define TT_WINDOW_NS 100000
/* At most this many flows held back: a window full of flows is flushed early. */
#define TT_FLOW_BATCH 65536

/* Entries in a thread's cache of call sites. */
#define TT_SITE_CACHE_BITS 6
#define TT_SITE_CACHE (1u << TT_SITE_CACHE_BITS)

/* Records ahead of the one decoded that the decoder asks the memory for (a
 * prefetch): the mapped input's pages are in memory, not in the caches. */
#define TT_PREFETCH_RECORDS 64

/* Events between two progress reports. */
#define TT_PROGRESS_EVENTS (1u << 20)

/* Records decoded between two releases of the input they came from (1 MiB): memory
 * stays flat however large the file. */
#define TT_RELEASE_RECORDS 65536u
/* Mapped input from which the reader's thread (tt_ahead) maps pages ahead and gives
 * them back: below, a thread is not worth starting. */
#define TT_AHEAD_MIN_BYTES (8u << 20)
/* A thread's records asked for ahead at once at least: smaller sections are left to
 * the decoder's reads (the kernel maps 64 KiB around each fault). */
#define TT_AHEAD_MIN_RECORDS 1024u
/* Events between two releases of everything behind the threads' positions in each
 * file, and how far back each reaches: the kernel maps pages around each fault
 * (fault-around, large folios), among them pages of other threads' sections that
 * were released already, which their threads never release again. In a file whose
 * threads' sections interleave (mode stream) that kept 40% of the file resident. */
#define TT_RELEASE_BEHIND_EVENTS (1u << 18)
#define TT_RELEASE_BEHIND_MARGIN (8u << 20)

/* The frames of one name in one file (TT_FRAME_MARK): few, looked up by site. */
struct tt_frame_series {
	const struct tt_file *file;
	struct tt_str name;
	uint64_t count;  /* marks so far */
	int64_t last_ts; /* of the last mark */
};

/* An instant the decoder adds where a file says something of a thread that no record
 * says: a snapshot's spike or trigger, a window the ring cut (marks.c). */
#define TT_MARK_ARGS (10 + TT_AN_CAUSES_ARGS)
struct tt_mark {
	int64_t ts;
	char *name;
	char *no_split;  /* a spike's without a split: why; with one, why some is unknown (its argument's text) */
	uint64_t offset; /* of what the file says it in */
	struct tt_an_arg args[TT_MARK_ARGS + 1]; /* (the last with no key) */
	uint32_t nargs;
};

/* What the decoder keeps per thread between records and sections. */
struct tt_thread_state {
	const struct tt_thread *thread;
	size_t section, record; /* the next record to decode */
	int64_t next_ts;        /* its time */
	bool done;              /* no records left */
	bool next_known;        /* next_ts is that record's exact time, not an estimate */
	/* The scope machine (src/common/common.h) decides, with TT_MAX_DEPTH its
	 * max_depth; the stack holds each open scope's event, as its begin was given to
	 * the sinks: its end is the same event with its duration, handed over in place
	 * (no copy per scope; TT_EV_DESCRIBED's text_len and TT_EV_SCOPE_VALUE's value are
	 * set on it while it is open). */
	struct tt_scopes scopes;
	struct tt_event *stack;
	uint32_t depth, cap;
	/* An INSTANT record's event, kept: only its site, time, depth and offset change
	 * (the rest stays as set up, not cleared each time) */
	struct tt_event instant;
	/* An INSTANT_ARG's or a COUNTER's, kept alike: its flags and value change too */
	struct tt_event valued;
	uint64_t last_tsc;
	int64_t last_ts;
	bool started;
	/* TSCs from the clock's anchor up to its file's tsc_max, as far as its records may
	 * go, convert with nothing to saturate (tt_decoder_ts). */
	bool fast_clock;
	int64_t fast_ns0; /* the anchor's time since the trace start */
	/* A two-record kind waiting for its VALUE, or a DESCRIBE for its TEXT records. */
	unsigned pending;
	const struct tt_site *pending_site;
	uint64_t pending_payload;
	int64_t pending_ts;
	uint64_t pending_offset;
	/* Mode ring: scopes open before its oldest kept record (tt_unbegun_scan), opened
	 * at its first record. */
	struct tt_unbegun_scan unbegun;
	uint64_t gaps, gap_events;
	/* Where the scopes a run of lost events closes may have ended at the latest: the
	 * first timed record after its two (0: none in its section); the last lost event's
	 * TSC of the latest run (its thread's records end in it where it is their last);
	 * the lateness the scopes closed unterminated now carry (tt_event.late). */
	uint64_t gap_next_tsc, gap_last_tsc;
	int64_t end_late;
	int64_t start_early; /* the earliness the scope opened unbegun now carries (tt_event.early) */
	uint32_t text_len, text_want; /* DESCRIBE: bytes of text so far, and in all */
	char text[TT_DESCRIBE_MAX + TT_TEXT_BYTES];
	uint64_t clamped, first_clamped;
	uint64_t events, unterminated;
	int64_t first_ts;
	/* The descriptions of the open scopes: TT_DESCRIBE_MAX bytes per depth, as far
	 * as a description was given. */
	char *described;
	uint32_t described_cap; /* depths it has room for */
	/* The sites this thread used last, by address bits: most lookups end here. */
	const struct tt_site *site_cache[TT_SITE_CACHE];
	/* What the reader's thread was asked to map of its records (tt_read_ahead): up
	 * to record ahead_record of section ahead_section, `asked` records in all; of
	 * the sections before st->section, `passed` records. */
	size_t ahead_section, ahead_record;
	uint64_t asked, passed;
	/* Its marks, in time order: each given to the sinks after the thread's events at
	 * its time and before any later one; next_mark: the first not given yet. */
	struct tt_mark *marks;
	uint32_t nmarks, next_mark;
};

/* A thread in the merge, with its key beside it so that ordering touches only the
 * heap. */
struct tt_heap_entry {
	int64_t ts; /* the thread's next_ts */
	uint32_t id;
};

/* The latest FLOW_OUT of an id waiting for its FLOW_IN: in its process (file: the
 * sender), and in any process (file NULL) */
struct tt_flow_link {
	const struct tt_file *file;
	uint64_t id;
	uint64_t link;
	const struct tt_file *sender;
};

/* The sinks that take one kind of event, gathered at the start so that each event
 * costs a call per sink that wants it and nothing for the others. */
typedef int (*tt_event_fn)(struct tt_sink *s, const struct tt_event *e);
struct tt_dispatch {
	struct tt_sink *sink[TT_MAX_SINKS];
	tt_event_fn fn[TT_MAX_SINKS];
	size_t n;
};

struct tt_decoder {
	const struct tt_trace *trace;
	struct tt_sink *const *sinks;
	size_t nsinks;
	struct tt_dispatch slice_begin, slice_end, instant, counter, flow, note, frame;
	struct tt_frame_series *frames;        /* by name and file */
	size_t nframes;
	uint32_t *frames_of;             /* by site id: index in frames + 1, 0 not yet */
	struct tt_thread_state *threads; /* by thread id */
	struct tt_heap_entry *heap;      /* the earliest next_ts on top */
	size_t nheap;
	uint64_t records;                /* in all files, for progress reports */
	struct tt_event *flows;          /* the window's flows, until it ends */
	size_t nflows, flows_cap;
	/* Flows begun and not yet ended, by process and id: the link of the latest
	 * FLOW_OUT (tt_event.link). Open addressing, linear probing, link 0 empty. */
	struct tt_flow_link *links;
	size_t nlinks, links_cap;
	uint64_t last_link;
	struct tt_summary sum;
	/* mode ring: older events overwritten by newer; [1]: in a snapshot's window */
	uint64_t overwritten[2];
	uint64_t overwriting_threads[2];
	struct tt_ahead *ahead;          /* the reader's thread, or NULL */
	uint64_t *released;              /* by file: released below this offset */
	uint64_t released_at;            /* sum.events then */
	char func_name[512];             /* tt_event.func_name, during its callback */
};

/* Gives an event to every sink that takes it; stops at the first failure. */
static inline int tt_dispatch(const struct tt_dispatch *to, const struct tt_event *e)
{
	size_t n = to->n; /* (read once: the calls could change it, as far as the compiler knows) */
	if (__builtin_expect(n == 1, 1)) /* one writer, as convert has: no loop around it */
		return to->fn[0](to->sink[0], e);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = to->fn[i](to->sink[i], e);
	return rc;
}

/* An instant to the sinks, counted: trace_processor holds it as a slice. */
static inline int tt_dispatch_instant(struct tt_decoder *d, const struct tt_event *e)
{
	d->sum.points++;
	return tt_dispatch(&d->instant, e);
}

/* Calls one callback of every sink that has it; stops at the first failure. */
#define TT_EMIT(d, op, ...)                                                        \
	({                                                                             \
		int tt__rc = 0;                                                            \
		for (size_t tt__i = 0; tt__i < (d)->nsinks && tt__rc == 0; tt__i++) {      \
			struct tt_sink *tt__s = (d)->sinks[tt__i];                             \
			if (tt__s->ops->op)                                                    \
				tt__rc = tt__s->ops->op(tt__s, __VA_ARGS__);                       \
		}                                                                          \
		tt__rc;                                                                    \
	})


/* The time of a record at `tsc` (at most its file's tsc_max: the decoder's range check)
 * on the thread, in ns since the trace start: within its fast range the span from the
 * anchor alone, else saturated as a hostile clock needs. Inline: every record's. */
static inline int64_t tt_decoder_ts(const struct tt_thread_state *st, const struct tt_clock *c,
				    uint64_t tsc, int64_t base)
{
	if (__builtin_expect(st->fast_clock && tsc >= c->tsc0, 1))
		return st->fast_ns0 + tt_clock_span_fits(c, tsc - c->tsc0);
	return tt_rebase(tt_clock_ns(c, tsc), base);
}
/* Sets the thread's fast range (merge.c, at the start). */
void tt_decoder_fast_clock(struct tt_thread_state *st, int64_t base);

/* state.c: one thread's state machine. Runs a thread until its next timed record is
 * later than `limit` (st->next_ts then holds that time) or its records end
 * (st->done); after its last record, closes what it left open and reports. */
int tt_decoder_run(struct tt_decoder *d, struct tt_thread_state *st, int64_t limit);
int tt_decoder_finish_thread(struct tt_decoder *d, const struct tt_thread *t);
/* Mode ring: the scopes a wrapped thread's records close without opening them. */
int tt_decoder_scan_unbegun(struct tt_thread_state *st);
/* A warning to every sink, counted in the summary. */
TT_PRINTF(2, 3) void tt_decoder_warn(struct tt_decoder *d, const char *fmt, ...);

/* marks.c: each thread's marks, from what its file says (a snapshot's section), when
 * the decoder starts; the time of a thread's next mark (INT64_MAX: none); its marks
 * up to `until`, given to the sinks; freed. */
int tt_decoder_add_marks(struct tt_decoder *d);
/* The time of the thread's next mark (INT64_MAX: none). */
static inline int64_t tt_decoder_next_mark(const struct tt_thread_state *st)
{
	return st->next_mark < st->nmarks ? st->marks[st->next_mark].ts : INT64_MAX;
}
int tt_decoder_emit_marks(struct tt_decoder *d, struct tt_thread_state *st, int64_t until);
void tt_decoder_free_marks(struct tt_thread_state *st);

/* flows.c: a flow held back to its window's end; the window's flows, linked and
 * given to the sinks in time order. */
int tt_decoder_flow(struct tt_decoder *d, struct tt_thread_state *st, const struct tt_thread *t,
		    uint32_t dir, uint64_t id, int64_t ts, uint64_t offset);
int tt_decoder_flush_flows(struct tt_decoder *d);

/* release.c: releases each file below the earliest section a thread still reads. */
void tt_decoder_release_behind(struct tt_decoder *d);

#endif /* TT_TOOLS_DECODE_INTERNAL_H */
