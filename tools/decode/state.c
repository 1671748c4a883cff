#include "decode.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Deeper nesting than this is a corrupt file, not a program: refuse it rather than
 * let a hostile file take memory without bound. */
#define TT_MAX_DEPTH (1u << 18)

/* The decoder runs each thread through a window of this many nanoseconds at a time
 * (a few thousand records), threads one after the other, so that merging costs
 * nothing per record; flows are held back to the window's end and sorted. */
#define TT_WINDOW_NS 100000
/* At most this many flows held back: a window full of flows is flushed early. */
#define TT_FLOW_BATCH 65536

/* Entries in a thread's cache of call sites (a power of two). */
#define TT_SITE_CACHE 64

/* Events between two progress reports. */
#define TT_PROGRESS_EVENTS (1u << 20)

/* Records decoded between two releases of the input they came from (1 MiB): memory
 * stays flat however large the file. */
#define TT_RELEASE_RECORDS 65536u
/* Events between two releases of everything behind the threads' positions in each
 * file, and how far back each reaches: the kernel maps pages around each fault
 * (fault-around, large folios), among them pages of other threads' sections that
 * were released already, which their threads never release again. In a file whose
 * threads' sections interleave (mode stream) that kept 40% of the file resident. */
#define TT_RELEASE_BEHIND_EVENTS (1u << 18)
#define TT_RELEASE_BEHIND_MARGIN (8u << 20)

struct tt_frame {
	int64_t ts;
	const struct tt_site *site;
	uint64_t func;
	uint64_t value;
	uint64_t offset;
	uint32_t flags;
	uint32_t text_len;   /* TT_EV_DESCRIBED: its text, in the thread's descriptions */
	int64_t scope_value; /* TT_EV_SCOPE_VALUE */
};

/* The frames of one name in one file (TT_FRAME_MARK): few, looked up by site. */
struct tt_frames {
	const struct tt_file *file;
	struct tt_str name;
	uint64_t count;  /* marks so far */
	int64_t last_ts; /* of the last mark */
};

/* What the decoder keeps per thread between records and sections. */
struct tt_thread_state {
	const struct tt_thread *thread;
	size_t section, record; /* the next record to decode */
	int64_t next_ts;        /* its time */
	bool done;              /* no records left */
	bool next_known;        /* next_ts is that record's exact time, not an estimate */
	struct tt_frame *stack;
	uint32_t depth, cap;
	uint64_t last_tsc;
	int64_t last_ts;
	bool started;
	/* A two-record kind waiting for its VALUE, or a DESCRIBE for its TEXT records. */
	unsigned pending;
	const struct tt_site *pending_site;
	uint64_t pending_payload;
	int64_t pending_ts;
	uint64_t pending_offset;
	/* Mode ring: scopes open before its oldest kept record, innermost first, each by
	 * the function its FUNC_EXIT names, or 0 for an END; opened at its first record. */
	uint64_t *unbegun;
	uint32_t nunbegun;
	uint64_t unbegun_opened;
	uint64_t gaps, gap_events, gap_closed;
	uint32_t text_len, text_want; /* DESCRIBE: bytes of text so far, and in all */
	char text[TT_DESCRIBE_MAX + TT_TEXT_BYTES];
	uint64_t unmatched, first_unmatched; /* ENDs and FUNC_EXITs */
	uint64_t unmatched_exits, first_unmatched_exit, unmatched_exit_func; /* FUNC_EXITs */
	uint64_t unmatched_exit_tsc;
	uint64_t clamped, first_clamped;
	uint64_t events, unterminated;
	int64_t first_ts;
	/* The descriptions of the open scopes: TT_DESCRIBE_MAX bytes per depth, as far
	 * as a description was given. */
	char *described;
	uint32_t described_cap; /* depths it has room for */
	/* The sites this thread used last, by address bits: most lookups end here. */
	const struct tt_site *site_cache[TT_SITE_CACHE];
};

/* A thread in the merge, with its key beside it so that ordering touches only the
 * heap. */
struct tt_heap_entry {
	int64_t ts; /* the thread's next_ts */
	uint32_t id;
};

struct tt_flow_link {
	const struct tt_file *file;
	uint64_t id;
	uint64_t link;
};

/* The sinks that take one kind of event, gathered at the start so that each event
 * costs a call per sink that wants it and nothing for the others. */
#define TT_MAX_SINKS 8
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
	struct tt_frames *frames;        /* by name and file */
	size_t nframes;
	uint32_t *frames_of;             /* by site id: index in frames + 1, 0 not yet */
	struct tt_thread_state *threads; /* by thread id */
	struct tt_heap_entry *heap;      /* the earliest next_ts on top */
	size_t nheap;
	uint64_t records;                /* in all files, for progress reports */
	struct tt_event *flows;          /* the window's flows, until it ends */
	size_t nflows;
	/* Flows begun and not yet ended, by process and id: the link of the latest
	 * FLOW_OUT (tt_event.link). Open addressing, linear probing, link 0 empty. */
	struct tt_flow_link *links;
	size_t nlinks, links_cap;
	uint64_t last_link;
	struct tt_summary sum;
	uint64_t *released;              /* by file: released below this offset */
	uint64_t released_at;            /* sum.events then */
};

/* Gives an event to every sink that takes it; stops at the first failure. */
static inline int tt_dispatch(const struct tt_dispatch *to, const struct tt_event *e)
{
	int rc = 0;
	for (size_t i = 0; i < to->n && rc == 0; i++)
		rc = to->fn[i](to->sink[i], e);
	return rc;
}

static void tt_dispatch_add(struct tt_dispatch *to, struct tt_sink *s, tt_event_fn fn)
{
	if (fn) {
		to->sink[to->n] = s;
		to->fn[to->n++] = fn;
	}
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

TT_PRINTF(2, 3) static void tt_decoder_warn(struct tt_decoder *d, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	d->sum.warnings++;
	for (size_t i = 0; i < d->nsinks; i++)
		if (d->sinks[i]->ops->warning)
			d->sinks[i]->ops->warning(d->sinks[i], msg);
}

/* "tid 1234 (worker-1)" for messages. */
static const char *tt_thread_label(const struct tt_thread *t, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s: tid %" PRIu32 " (%.*s)", t->file->path, t->tid,
		 (int)(t->name.len > 64 ? 64 : t->name.len), t->name.ptr);
	return buf;
}

/* Nanoseconds since the trace start, within +-2^61 (73 years): a hostile file's clock
 * can put events at either end of time, and sinks add and subtract times freely. */
#define TT_TIME_LIMIT (INT64_C(1) << 61)

static int64_t tt_rebase(int64_t ns, int64_t base)
{
	int64_t ts;
	if (__builtin_sub_overflow(ns, base, &ts))
		ts = ns < 0 ? INT64_MIN : INT64_MAX;
	return ts < -TT_TIME_LIMIT ? -TT_TIME_LIMIT : ts > TT_TIME_LIMIT ? TT_TIME_LIMIT : ts;
}

/* Opens a scope: pushes it and tells the sinks. */
/* Opens a scope: pushes it and tells the sinks. The fields come as values, written
 * once into the frame and once into the event, never copied from one to the other
 * (a wide load of fields just stored stalls). */
static int tt_open_scope(struct tt_decoder *d, struct tt_thread_state *st,
			 const struct tt_thread *t, int64_t ts, const struct tt_site *site,
			 uint64_t func, uint64_t value, uint32_t flags, uint64_t offset)
{
	if (st->depth == st->cap) {
		if (st->cap >= TT_MAX_DEPTH)
			return tt_error_at(t->file->path, offset, "scopes nested deeper than %u",
					   TT_MAX_DEPTH);
		uint32_t cap = st->cap ? st->cap * 2 : 64;
		struct tt_frame *p = realloc(st->stack, cap * sizeof(*p));
		if (!p)
			return tt_error("out of memory for %u nested scopes", cap);
		st->stack = p;
		st->cap = cap;
	}
	struct tt_frame *fr = &st->stack[st->depth++];
	fr->ts = ts;
	fr->site = site;
	fr->func = func;
	fr->value = value;
	fr->flags = flags;
	fr->offset = offset;
	fr->text_len = 0;
	struct tt_event e = {
		.thread = t, .site = site, .func = func, .ts = ts, .value = value,
		.depth = st->depth - 1, .flags = flags, .offset = offset,
	};
	return tt_dispatch(&d->slice_begin, &e);
}

/* Closes the innermost scope at `ts`. */
static int tt_close_scope(struct tt_decoder *d, struct tt_thread_state *st,
			  const struct tt_thread *t, int64_t ts, uint32_t flags)
{
	const struct tt_frame *fr = &st->stack[--st->depth];
	struct tt_event e = {
		.thread = t, .site = fr->site, .func = fr->func, .ts = fr->ts,
		.dur = ts - fr->ts, .value = fr->value, .depth = st->depth,
		.flags = fr->flags | flags, .offset = fr->offset, .scope_value = fr->scope_value,
	};
	if (fr->flags & TT_EV_DESCRIBED) {
		e.text = st->described + (size_t)st->depth * TT_DESCRIBE_MAX;
		e.text_len = fr->text_len;
	}
	if (flags & TT_EV_UNTERMINATED) {
		d->sum.unterminated++;
		st->unterminated++;
	}
	return tt_dispatch(&d->slice_end, &e);
}

static void tt_count_unmatched(struct tt_thread_state *st, uint64_t offset)
{
	if (st->unmatched++ == 0)
		st->first_unmatched = offset;
}

/* FUNC_EXIT closes its FUNC_ENTER and whatever was left open inside it (a longjmp, an
 * exception); without one open, it is unmatched. */
static int tt_func_exit(struct tt_decoder *d, struct tt_thread_state *st,
			const struct tt_thread *t, uint64_t func, int64_t ts, uint64_t offset)
{
	uint32_t i = st->depth;
	while (i > 0 && !((st->stack[i - 1].flags & TT_EV_FUNC) && st->stack[i - 1].func == func))
		i--;
	if (i == 0) {
		/* recording began inside the function, or its entry was lost */
		if (st->unmatched_exits++ == 0) {
			st->first_unmatched_exit = offset;
			st->unmatched_exit_func = func;
			st->unmatched_exit_tsc = st->last_tsc;
		}
		tt_count_unmatched(st, offset);
		return 0;
	}
	while (st->depth > i)
		if (tt_close_scope(d, st, t, ts, TT_EV_UNTERMINATED) < 0)
			return -1;
	return tt_close_scope(d, st, t, ts, 0);
}

/* Flows of a window, in time order over all threads: the DevTools engine pairs flow
 * events in file order, so every FLOW_OUT must reach the sinks before its FLOW_IN. */
static int tt_flow_cmp(const void *a, const void *b)
{
	const struct tt_event *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->thread->id != y->thread->id)
		return x->thread->id < y->thread->id ? -1 : 1;
	return (x->offset > y->offset) - (x->offset < y->offset);
}

static size_t tt_link_home(const struct tt_decoder *d, const struct tt_file *f, uint64_t id)
{
	uint64_t h = (id ^ (uint64_t)(uintptr_t)f) * UINT64_C(0x9E3779B97F4A7C15);
	return (size_t)(h >> 32) & (d->links_cap - 1);
}

static size_t tt_link_slot(const struct tt_decoder *d, const struct tt_file *f, uint64_t id)
{
	size_t i = tt_link_home(d, f, id);
	while (d->links[i].link && !(d->links[i].id == id && d->links[i].file == f))
		i = (i + 1) & (d->links_cap - 1);
	return i;
}

static int tt_links_grow(struct tt_decoder *d)
{
	struct tt_flow_link *old = d->links;
	size_t old_cap = d->links_cap;
	d->links_cap = old_cap ? 2 * old_cap : 64;
	d->links = calloc(d->links_cap, sizeof(*d->links));
	if (!d->links) {
		d->links = old;
		d->links_cap = old_cap;
		return tt_error("out of memory for %zu flows in flight", d->nlinks);
	}
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].link)
			d->links[tt_link_slot(d, old[i].file, old[i].id)] = old[i];
	free(old);
	return 0;
}

/* Empties slot i, moving back the entries after it that probing would not find. */
static void tt_link_erase(struct tt_decoder *d, size_t i)
{
	size_t mask = d->links_cap - 1;
	d->links[i].link = 0;
	d->nlinks--;
	for (size_t j = (i + 1) & mask; d->links[j].link; j = (j + 1) & mask) {
		size_t home = tt_link_home(d, d->links[j].file, d->links[j].id);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			d->links[i] = d->links[j];
			d->links[j].link = 0;
			i = j;
		}
	}
}

/* Gives a flow its link (tt_event.link), in time order. */
static int tt_flow_link(struct tt_decoder *d, struct tt_event *e)
{
	if ((d->nlinks + 1) * 2 > d->links_cap && tt_links_grow(d) < 0)
		return -1;
	const struct tt_file *f = e->thread->file;
	size_t i = tt_link_slot(d, f, e->value);
	struct tt_flow_link *l = &d->links[i];
	if (e->flags & TT_EV_FLOW_OUT) {
		e->link = ++d->last_link;
		if (!l->link)
			d->nlinks++;
		*l = (struct tt_flow_link){f, e->value, e->link};
	} else if (l->link) {
		e->link = l->link;
		tt_link_erase(d, i);
	} else {
		e->link = ++d->last_link; /* no FLOW_OUT before it: an arrow with no start */
	}
	return 0;
}

static int tt_flush_flows(struct tt_decoder *d)
{
	qsort(d->flows, d->nflows, sizeof(*d->flows), tt_flow_cmp);
	int rc = 0;
	for (size_t i = 0; i < d->nflows && rc == 0; i++)
		if ((rc = tt_flow_link(d, &d->flows[i])) == 0)
			rc = tt_dispatch(&d->flow, &d->flows[i]);
	d->nflows = 0;
	return rc;
}

/* A flow is a point in time on its thread, inside its innermost open scope; sinks
 * draw the arrow from there (JSON: a zero-length slice; Perfetto: an instant). */
static int tt_flow(struct tt_decoder *d, struct tt_thread_state *st, const struct tt_thread *t,
		   uint32_t dir, uint64_t id, int64_t ts, uint64_t offset)
{
	if (d->nflows == TT_FLOW_BATCH && tt_flush_flows(d) < 0)
		return -1;
	d->flows[d->nflows++] = (struct tt_event){
		.thread = t, .ts = ts, .value = id, .depth = st->depth, .flags = dir, .offset = offset,
	};
	return 0;
}

static const char *const tt_kind_names[TT_REC_KIND_MAX + 1] = {
	[TT_REC_BEGIN_ARG] = "BEGIN_ARG", [TT_REC_INSTANT_ARG] = "INSTANT_ARG",
	[TT_REC_COUNTER] = "COUNTER", [TT_REC_FLOW_OUT] = "FLOW_OUT", [TT_REC_FLOW_IN] = "FLOW_IN",
	[TT_REC_DESCRIBE] = "DESCRIBE", [TT_REC_DROPPED] = "DROPPED",
	[TT_REC_SCOPE_VALUE] = "SCOPE_VALUE",
};

/* The kinds this decoder reads; any other is an error. */
static bool tt_kind_known(unsigned kind)
{
	return kind <= TT_REC_FUNC_EXIT ||
	       (kind >= TT_REC_THRESHOLD && kind <= TT_REC_PARENTS_THRESHOLD);
}

/* A note's event flag, by kind from TT_REC_THRESHOLD on. */
static const uint32_t tt_note_flags[] = {
	TT_EV_THRESHOLD, TT_EV_CHILDREN_THRESHOLD, TT_EV_IGNORE, TT_EV_IGNORE_CHILDREN,
	TT_EV_DESCRIBE,
};

/* A description stays with its scope, for the slice's args in the trace. */
static int tt_describe_scope(struct tt_thread_state *st, const char *text, uint32_t len)
{
	if (st->depth == 0)
		return 0;
	uint32_t at = st->depth - 1;
	if (at >= st->described_cap) {
		uint32_t cap = st->depth > 2 * st->described_cap ? st->depth : 2 * st->described_cap;
		char *grown = realloc(st->described, (size_t)cap * TT_DESCRIBE_MAX);
		if (!grown)
			return tt_error("out of memory for the descriptions of %u nested scopes", cap);
		st->described = grown;
		st->described_cap = cap;
	}
	memcpy(st->described + (size_t)at * TT_DESCRIBE_MAX, text, len);
	st->stack[at].text_len = len;
	st->stack[at].flags |= TT_EV_DESCRIBED;
	return 0;
}

/* A frame boundary: the frames of its site's name in its file count one more. */
static int tt_frame_mark(struct tt_decoder *d, struct tt_thread_state *st, const struct tt_site *site,
			 int64_t ts, uint64_t offset)
{
	const struct tt_file *file = st->thread->file;
	uint32_t *of = &d->frames_of[site->id];
	for (size_t i = 0; i < d->nframes && !*of; i++)
		if (d->frames[i].file == file && d->frames[i].name.len == site->name.len &&
		    memcmp(d->frames[i].name.ptr, site->name.ptr, site->name.len) == 0)
			*of = (uint32_t)i + 1;
	if (!*of) {
		struct tt_frames *grown = realloc(d->frames, (d->nframes + 1) * sizeof *grown);
		if (!grown)
			return tt_error("out of memory for frames");
		d->frames = grown;
		d->frames[d->nframes++] = (struct tt_frames){.file = file, .name = site->name};
		*of = (uint32_t)d->nframes;
	}
	struct tt_frames *f = &d->frames[*of - 1];
	/* marks of two threads can come a little out of order within a merge window */
	int64_t dur = f->count && ts > f->last_ts ? ts - f->last_ts : 0;
	f->count++;
	f->last_ts = ts > f->last_ts || f->count == 1 ? ts : f->last_ts;
	struct tt_event e = {.thread = st->thread, .site = site, .func = *of - 1, .ts = f->last_ts,
			     .dur = dur, .value = f->count, .depth = st->depth, .offset = offset};
	return tt_dispatch(&d->frame, &e);
}

static int tt_note(struct tt_decoder *d, struct tt_thread_state *st, unsigned kind,
		   uint64_t value, int64_t ts, uint64_t offset)
{
	if (kind == TT_REC_DESCRIBE && tt_describe_scope(st, st->text, (uint32_t)value) < 0)
		return -1;
	struct tt_event e = {
		.thread = st->thread, .ts = ts, .value = value, .depth = st->depth,
		.flags = kind == TT_REC_PARENTS_THRESHOLD ? TT_EV_PARENTS_THRESHOLD :
							    tt_note_flags[kind - TT_REC_THRESHOLD],
		.offset = offset,
		.text = kind == TT_REC_DESCRIBE ? st->text : NULL,
	};
	return tt_dispatch(&d->note, &e);
}

/* One TEXT record of the pending DESCRIBE: its 15 bytes; the note after the last. */
static int tt_describe_text(struct tt_decoder *d, struct tt_thread_state *st,
			    const struct tt_record *r)
{
	memcpy(st->text + st->text_len, &r->tsc, 8);
	uint64_t rest = TT_RECORD_PAYLOAD(r->word);
	memcpy(st->text + st->text_len + 8, &rest, TT_TEXT_BYTES - 8);
	st->text_len += TT_TEXT_BYTES;
	if (st->text_len < st->text_want)
		return 0;
	st->pending = 0;
	return tt_note(d, st, TT_REC_DESCRIBE, st->text_want, st->pending_ts, st->pending_offset);
}

/* Opens a scope whose beginning was not recorded, at the first time it is known to
 * be open: `func` names it (FUNC_EXIT closes it), or 0 for the file's unbegun site. */
static int tt_open_unbegun(struct tt_decoder *d, struct tt_thread_state *st,
			   const struct tt_thread *t, int64_t ts, uint64_t func, uint64_t offset)
{
	st->unbegun_opened++;
	d->sum.unbegun++;
	return func ? tt_open_scope(d, st, t, ts, NULL, func, 0, TT_EV_FUNC | TT_EV_UNBEGUN, offset) :
		      tt_open_scope(d, st, t, ts, t->file->unbegun_site, 0, 0, TT_EV_UNBEGUN, offset);
}

/* A run of lost events (TT_REC_DROPPED): the scopes that ended among them close at
 * its start, flagged unterminated (their end is not known); the run is a slice of its
 * own, named by the file's gap site; the scopes begun among them and still open after
 * it open at its end, flagged unbegun. */
static int tt_gap(struct tt_decoder *d, struct tt_thread_state *st, const struct tt_thread *t,
		  uint64_t lost, int64_t ts, uint64_t last_tsc, uint64_t depths, uint64_t offset)
{
	const struct tt_file *f = t->file;
	if (!f->gap_site)
		return tt_error_at(f->path, offset, "a DROPPED record in a file that counts no "
				   "dropped events");
	for (uint32_t i = TT_GAP_CLOSES(depths); i > 0 && st->depth > 0; i--) {
		st->gap_closed++;
		if (tt_close_scope(d, st, t, ts, TT_EV_UNTERMINATED) < 0)
			return -1;
	}
	int64_t end = ts;
	if (last_tsc > st->last_tsc) {
		end = tt_rebase(tt_clock_ns(&f->clock, last_tsc), d->trace->base_ns);
		if (end < ts)
			end = ts;
		st->last_tsc = last_tsc;
		st->last_ts = end;
	}
	st->gaps++;
	st->gap_events += lost;
	d->sum.gaps++;
	if (tt_open_scope(d, st, t, ts, f->gap_site, 0, lost, TT_EV_ARG | TT_EV_GAP, offset) < 0 ||
	    tt_close_scope(d, st, t, end, 0) < 0)
		return -1;
	for (uint32_t i = TT_GAP_OPENS(depths); i > 0; i--)
		if (tt_open_unbegun(d, st, t, end, 0, offset) < 0)
			return -1;
	return 0;
}

/* The second record of a two-record event. */
static int tt_complete(struct tt_decoder *d, struct tt_thread_state *st,
		       const struct tt_thread *t, const struct tt_record *second)
{
	uint64_t value = second->tsc;
	int64_t ts = st->pending_ts;
	uint64_t offset = st->pending_offset;
	const struct tt_site *site = st->pending_site;
	unsigned kind = st->pending;
	st->pending = 0;
	struct tt_event e = {
		.thread = t, .site = site, .ts = ts, .value = value, .depth = st->depth,
		.flags = TT_EV_ARG, .offset = offset,
	};
	switch (kind) {
	case TT_REC_BEGIN_ARG: {
		return tt_open_scope(d, st, t, ts, site, 0, value, TT_EV_ARG, offset);
	}
	case TT_REC_INSTANT_ARG:
		return tt_dispatch(&d->instant, &e);
	case TT_REC_COUNTER:
		e.flags = 0;
		return tt_dispatch(&d->counter, &e);
	case TT_REC_FLOW_OUT:
		return tt_flow(d, st, t, TT_EV_FLOW_OUT, value, ts, offset);
	case TT_REC_SCOPE_VALUE:
		if (st->depth > 0) {
			st->stack[st->depth - 1].scope_value = (int64_t)value;
			st->stack[st->depth - 1].flags |= TT_EV_SCOPE_VALUE;
		}
		return 0;
	case TT_REC_DROPPED:
		return tt_gap(d, st, t, st->pending_payload, ts, value, TT_RECORD_PAYLOAD(second->word),
			      offset);
	default:
		return tt_flow(d, st, t, TT_EV_FLOW_IN, value, ts, offset);
	}
}

/* The site (call site or function) at `address` for a record made at `tsc`, through
 * the thread's cache. */
static const struct tt_site *tt_cached_site(struct tt_thread_state *st, uint64_t address,
					    uint64_t tsc)
{
	/* descriptors are static structs of 32 bytes or more, and functions seldom
	 * shorter: their low bits vary little */
	const struct tt_site **slot = &st->site_cache[(address >> 5) & (TT_SITE_CACHE - 1)];
	if (*slot && (*slot)->address == address && tsc >= (*slot)->since && tsc < (*slot)->until)
		return *slot;
	const struct tt_site *s = tt_file_site(st->thread->file, address, tsc);
	if (s)
		*slot = s;
	return s;
}

/* A function's site, or NULL when no FUNCS section lists it (a file written before
 * there were any): then the sinks name the function by its address. */
static const struct tt_site *tt_func_site(struct tt_thread_state *st, uint64_t address,
					 uint64_t tsc)
{
	const struct tt_site *s = tt_cached_site(st, address, tsc);
	return s && s->is_func ? s : NULL;
}

static const struct tt_site *tt_site_for(struct tt_thread_state *st, uint64_t address,
					 uint64_t offset)
{
	const struct tt_thread *t = st->thread;
	const struct tt_site *s = tt_cached_site(st, address, st->last_tsc);
	if (!s || s->is_func) {
		tt_error_at(t->file->path, offset, "call site 0x%" PRIx64 " is not in any SITES section",
			    address);
		return NULL;
	}
	if (s->defined_at > offset) {
		tt_error_at(t->file->path, offset, "call site 0x%" PRIx64
			    " is used before the SITES section at offset %" PRIu64 " describes it",
			    address, s->defined_at);
		return NULL;
	}
	return s;
}

/* One record whose time is known. */
static int tt_decode_record(struct tt_decoder *d, struct tt_thread_state *st, unsigned kind,
			    uint64_t payload, int64_t ts, uint64_t offset)
{
	const struct tt_thread *t = st->thread;
	const struct tt_site *site = NULL;
	if (TT_RECORD_HAS_SITE(kind)) {
		site = tt_site_for(st, payload, offset);
		if (!site)
			return -1;
	}
	int rc = 0;
	switch (kind) {
	case TT_REC_ENDBEGIN:
	case TT_REC_END:
		if (st->depth == 0)
			tt_count_unmatched(st, offset);
		else
			rc = tt_close_scope(d, st, t, ts, 0);
		if (kind == TT_REC_END || rc < 0)
			break;
		/* ENDBEGIN opens its scope at the same time */
		__attribute__((fallthrough));
	case TT_REC_BEGIN:
		rc = tt_open_scope(d, st, t, ts, site, 0, 0, 0, offset);
		break;
	case TT_REC_INSTANT: {
		struct tt_event e = {.thread = t, .site = site, .ts = ts, .depth = st->depth,
				     .offset = offset};
		rc = tt_dispatch(&d->instant, &e);
		break;
	}
	case TT_REC_FUNC_ENTER:
		rc = tt_open_scope(d, st, t, ts, tt_func_site(st, payload, st->last_tsc), payload, 0, TT_EV_FUNC,
				   offset);
		break;
	case TT_REC_FUNC_EXIT:
		rc = tt_func_exit(d, st, t, payload, ts, offset);
		break;
	case TT_REC_FRAME:
		rc = tt_frame_mark(d, st, site, ts, offset);
		break;
	case TT_REC_THRESHOLD:
	case TT_REC_CHILDREN_THRESHOLD:
	case TT_REC_IGNORE:
	case TT_REC_IGNORE_CHILDREN:
	case TT_REC_PARENTS_THRESHOLD:
		rc = tt_note(d, st, kind, payload, ts, offset);
		break;
	case TT_REC_DESCRIBE:
		if (payload > TT_DESCRIBE_MAX)
			return tt_error_at(t->file->path, offset, "DESCRIBE of %" PRIu64
					   " bytes: more than %u", payload, TT_DESCRIBE_MAX);
		if (payload == 0)
			return tt_note(d, st, kind, 0, ts, offset);
		st->pending = kind;
		st->pending_ts = ts;
		st->pending_offset = offset;
		st->text_len = 0;
		st->text_want = (uint32_t)payload;
		break;
	default: /* the two-record kinds wait for their VALUE */
		st->pending = kind;
		st->pending_site = site;
		st->pending_payload = payload;
		st->pending_ts = ts;
		st->pending_offset = offset;
		break;
	}
	return rc;
}

/* Decodes one thread's records until its next timed record is later than `limit`
 * (then st->next_ts holds that time and the cursor stays on it), or its records end
 * (st->done). */
static int tt_decode_run(struct tt_decoder *d, struct tt_thread_state *st, int64_t limit)
{
	const struct tt_thread *t = st->thread;
	const struct tt_file *f = t->file;
	int64_t base = d->trace->base_ns;
	for (; st->section < t->nsections; st->section++, st->record = 0) {
		const struct tt_events *ev = &t->sections[st->section];
		const struct tt_record *records = tt_section_records(t, st->section);
		for (; st->record < ev->count; st->record++) {
			if ((st->record & (TT_RELEASE_RECORDS - 1)) == 0 && st->record)
				tt_file_release(f, tt_record_offset(ev, st->record - TT_RELEASE_RECORDS),
						tt_record_offset(ev, st->record));
			const struct tt_record *r = &records[st->record];
			unsigned kind = TT_RECORD_KIND(r->word);
			uint64_t payload = TT_RECORD_PAYLOAD(r->word);
			uint64_t offset = tt_record_offset(ev, st->record);
			if (st->pending == TT_REC_DESCRIBE) {
				if (kind != TT_REC_TEXT)
					return tt_error_at(f->path, st->pending_offset,
							   "DESCRIBE record without its TEXT records");
				if (tt_describe_text(d, st, r) < 0)
					return -1;
				continue;
			}
			if (st->pending) {
				if (kind != TT_REC_VALUE)
					return tt_error_at(f->path, st->pending_offset,
							   "%s record without its VALUE record",
							   tt_kind_names[st->pending]);
				if (tt_complete(d, st, t, r) < 0)
					return -1;
				continue;
			}
			if (kind == TT_REC_PAD)
				continue;
			if (kind == TT_REC_VALUE || kind == TT_REC_TEXT)
				return tt_error_at(f->path, offset, "%s record with no record before "
						   "it that takes one", kind == TT_REC_VALUE ? "VALUE" : "TEXT");
			if (!tt_kind_known(kind))
				return tt_error_at(f->path, offset, "unknown record kind %u", kind);
			uint64_t tsc = r->tsc;
			if (tsc < f->tsc_min || tsc > f->tsc_max)
				return tt_error_at(f->path, offset, "a record (kind %u) at TSC %" PRIu64
						   ", %s the run (TSC %" PRIu64 " to %" PRIu64 "): a "
						   "damaged record", kind, tsc,
						   tsc < f->tsc_min ? "long before" : "long after",
						   f->header.start.tsc, f->header.end.tsc);
			/* A signal handler that interrupted the hot path can leave a record with
			 * an earlier TSC after a later one: keep the thread's time monotonic. */
			bool clamped = st->started && tsc < st->last_tsc;
			if (clamped)
				tsc = st->last_tsc;
			int64_t ts;
			if (st->next_known) {
				ts = st->next_ts; /* computed when this record stopped the last run */
				st->next_known = false;
			} else {
				ts = st->started && tsc == st->last_tsc ? st->last_ts :
				     tt_rebase(tt_clock_ns(&f->clock, tsc), base);
			}
			if (ts > limit) {
				st->next_ts = ts; /* another thread's events come first */
				st->next_known = true;
				return 0;
			}
			if (clamped && st->clamped++ == 0)
				st->first_clamped = offset;
			if (!st->started) {
				st->first_ts = ts;
				for (uint32_t i = st->nunbegun; i > 0; i--)
					if (tt_open_unbegun(d, st, t, ts, st->unbegun[i - 1], offset) < 0)
						return -1;
			}
			st->started = true;
			st->last_tsc = tsc;
			st->last_ts = ts;
			if ((++d->sum.events & (TT_PROGRESS_EVENTS - 1)) == 0 && d->trace->progress)
				d->trace->progress(d->trace->progress_ctx, d->sum.events, d->records);
			st->events++;
			if (tt_decode_record(d, st, kind, payload, ts, offset) < 0)
				return -1;
		}
		tt_file_release(f, ev->offset, ev->offset + (ev->records ? ev->count * sizeof(struct tt_record) :
									  ev->packed_size));
	}
	st->done = true;
	return 0;
}

/* A function's name for messages: its site's, or the address. */
static size_t tt_func_label(const struct tt_trace *t, struct tt_thread_state *st, uint64_t func,
			    uint64_t tsc, char *buf, size_t cap)
{
	const struct tt_site *s = tt_func_site(st, func, tsc);
	if (!s)
		return tt_trace_func_name(t, st->thread->file, func, buf, cap);
	size_t n = s->name.len < cap - 1 ? s->name.len : cap - 1;
	memcpy(buf, s->name.ptr, n);
	buf[n] = 0;
	return n;
}

/* After a thread's last record: close what it left open, report what went wrong. */
static int tt_finish_thread(struct tt_decoder *d, const struct tt_thread *t)
{
	struct tt_thread_state *st = &d->threads[t->id];
	char who[160];
	if (st->pending)
		return tt_error_at(t->file->path, st->pending_offset,
				   "%s record without its %s (the thread's records end)",
				   tt_kind_names[st->pending],
				   st->pending == TT_REC_DESCRIBE ? "TEXT records" : "VALUE record");
	if (st->depth > 0) {
		const struct tt_frame *in = &st->stack[st->depth - 1];
		char fn[32];
		int len = in->site ? (int)(in->site->name.len > 64 ? 64 : in->site->name.len) :
			  (int)tt_trace_func_name(d->trace, t->file, in->func, fn, sizeof(fn));
		tt_decoder_warn(d, "%s: %" PRIu32 " scopes left open at its last event, closed there "
				"and flagged \"unterminated\" (innermost: %.*s, opened at offset %" PRIu64 ")",
				tt_thread_label(t, who, sizeof(who)), st->depth, len,
				in->site ? in->site->name.ptr : fn, in->offset);
	}
	while (st->depth > 0)
		if (tt_close_scope(d, st, t, st->last_ts, TT_EV_UNTERMINATED) < 0)
			return -1;
	if (st->unmatched > st->unmatched_exits)
		tt_decoder_warn(d, "%s: %" PRIu64 " ends with no open scope, ignored (first at offset %"
				PRIu64 ")", tt_thread_label(t, who, sizeof(who)),
				st->unmatched - st->unmatched_exits, st->first_unmatched);
	if (st->unmatched_exits) {
		char fn[512];
		size_t len = tt_func_label(d->trace, st, st->unmatched_exit_func, st->unmatched_exit_tsc, fn,
					    sizeof(fn));
		tt_decoder_warn(d, "%s: %" PRIu64 " function exits with no entry, ignored (first: %.*s "
				"at offset %" PRIu64 ")", tt_thread_label(t, who, sizeof(who)),
				st->unmatched_exits, (int)len, fn, st->first_unmatched_exit);
	}
	if (st->clamped)
		tt_decoder_warn(d, "%s: %" PRIu64 " timestamps went backwards and were clamped "
				"(first at offset %" PRIu64 ")", tt_thread_label(t, who, sizeof(who)),
				st->clamped, st->first_clamped);
	if (t->dropped_total)
		tt_decoder_warn(d, "%s: %" PRIu64 " events dropped (buffer full: %" PRIu64
				", no memory: %" PRIu64 ", disk behind: %" PRIu64 ", overwritten by newer: %"
				PRIu64 ", recorded from inside the recorder: %" PRIu64 ", cut in half where "
				"the file ends: %" PRIu64 ")",
				tt_thread_label(t, who, sizeof(who)), t->dropped_total,
				t->dropped[TT_DROP_FULL], t->dropped[TT_DROP_NO_MEMORY],
				t->dropped[TT_DROP_BEHIND], t->dropped[TT_DROP_OVERWRITTEN],
				t->dropped[TT_DROP_REENTERED], t->cut_events);
	if (t->cut_events)
		tt_decoder_warn(d, "%s: its last event, at offset %" PRIu64 ", has only part of its "
				"records (the run ended while writing it): left out",
				tt_thread_label(t, who, sizeof(who)), t->cut_offset);
	if (st->gaps)
		tt_decoder_warn(d, "%s: %" PRIu64 " runs of dropped events (%" PRIu64 " events) shown "
				"as slices \"%s\"; %" PRIu64 " scopes that ended in them closed at their "
				"start and flagged \"unterminated\"", tt_thread_label(t, who, sizeof(who)),
				st->gaps, st->gap_events, t->file->gap_site->name.ptr, st->gap_closed);
	if (st->unbegun_opened)
		tt_decoder_warn(d, "%s: %" PRIu64 " scopes whose beginning was not recorded (before "
				"its oldest kept event, or among dropped events) shown from the first time "
				"they are known open and flagged \"unbegun\"",
				tt_thread_label(t, who, sizeof(who)), st->unbegun_opened);
	d->sum.unmatched += st->unmatched;
	d->sum.clamped += st->clamped;
	struct tt_thread_summary ts = {
		.events = st->events, .unmatched = st->unmatched, .clamped = st->clamped,
		.unterminated = st->unterminated, .unbegun = st->unbegun_opened, .gaps = st->gaps,
		.gap_events = st->gap_events, .first_ts = st->first_ts,
		.last_ts = st->started ? st->last_ts : 0,
	};
	return TT_EMIT(d, thread_end, t, &ts);
}

/* The heap orders threads by the time of their next record, then by id. */
static bool tt_heap_before(const struct tt_heap_entry *a, const struct tt_heap_entry *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->id < b->id);
}

static void tt_heap_down(struct tt_decoder *d, size_t i)
{
	struct tt_heap_entry *h = d->heap;
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < d->nheap && tt_heap_before(&h[l], &h[m]))
			m = l;
		if (l + 1 < d->nheap && tt_heap_before(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct tt_heap_entry x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

/* Decodes all threads window by window: every thread whose next record falls in the
 * window runs to the window's end, the earliest first; then the window's flows go
 * out in time order. */
/* Releases each file below the earliest section a thread still reads (from a little
 * before where the last call stopped, for pages mapped again since). */
static void tt_release_behind(struct tt_decoder *d)
{
	const struct tt_trace *t = d->trace;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_file *f = &t->files[i];
		uint64_t low = f->size;
		for (size_t k = 0; k < f->nthreads; k++) {
			const struct tt_thread_state *st = &d->threads[f->threads[k].id];
			if (!st->done && st->section < st->thread->nsections &&
			    st->thread->sections[st->section].offset < low)
				low = st->thread->sections[st->section].offset;
		}
		uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), from = d->released[i];
		low &= ~(page - 1); /* the page that holds it is still read */
		from = from > TT_RELEASE_BEHIND_MARGIN ? from - TT_RELEASE_BEHIND_MARGIN : 0;
		if (low > from)
			tt_file_release(f, from, low);
		d->released[i] = low > d->released[i] ? low : d->released[i];
	}
	d->released_at = d->sum.events;
}

static int tt_decode_merged(struct tt_decoder *d)
{
	while (d->nheap > 0) {
		/* The window's last nanosecond; at the end of time (a hostile clock saturates
		 * there) every thread runs to its end. */
		int64_t last;
		if (__builtin_add_overflow(d->heap[0].ts, TT_WINDOW_NS - 1, &last))
			last = INT64_MAX;
		while (d->nheap > 0 && d->heap[0].ts <= last) {
			struct tt_thread_state *st = &d->threads[d->heap[0].id];
			if (tt_decode_run(d, st, last) < 0)
				return -1;
			if (st->done) {
				if (tt_finish_thread(d, st->thread) < 0)
					return -1;
				d->heap[0] = d->heap[--d->nheap];
			} else {
				d->heap[0].ts = st->next_ts;
			}
			tt_heap_down(d, 0);
		}
		if (tt_flush_flows(d) < 0)
			return -1;
		if (d->sum.events - d->released_at >= TT_RELEASE_BEHIND_EVENTS)
			tt_release_behind(d);
	}
	return 0;
}

/* Mode ring: the scopes a wrapped thread's records close without opening them, from
 * one pass over its records before decoding them. */
static int tt_scan_unbegun(struct tt_thread_state *st)
{
	const struct tt_thread *t = st->thread;
	uint64_t depth = 0;
	uint32_t cap = 0;
	for (size_t s = 0; s < t->nsections; s++) {
		const struct tt_events *ev = &t->sections[s];
		const struct tt_record *records = tt_section_records(t, s);
		for (size_t i = 0; i < ev->count; i++) {
			uint64_t word = records[i].word;
			unsigned kind = TT_RECORD_KIND(word);
			bool opens = kind == TT_REC_BEGIN || kind == TT_REC_BEGIN_ARG ||
				     kind == TT_REC_FUNC_ENTER || kind == TT_REC_ENDBEGIN;
			bool closes = kind == TT_REC_END || kind == TT_REC_ENDBEGIN || kind == TT_REC_FUNC_EXIT;
			if (closes && depth > 0) {
				depth--;
			} else if (closes) {
				if (st->nunbegun == cap) {
					if (cap >= TT_MAX_DEPTH)
						return tt_error_at(t->file->path, tt_record_offset(ev, i),
								   "more than %u scopes end before they begin", TT_MAX_DEPTH);
					cap = cap ? 2 * cap : 16;
					uint64_t *p = realloc(st->unbegun, cap * sizeof(*p));
					if (!p)
						return tt_error("out of memory for %u scopes", cap);
					st->unbegun = p;
				}
				st->unbegun[st->nunbegun++] = kind == TT_REC_FUNC_EXIT ? TT_RECORD_PAYLOAD(word) : 0;
			}
			depth += opens;
		}
	}
	return 0;
}

static int tt_decoder_init(struct tt_decoder *d)
{
	const struct tt_trace *t = d->trace;
	size_t n = t->nthreads ? t->nthreads : 1;
	d->threads = calloc(n, sizeof(*d->threads));
	d->heap = calloc(n, sizeof(*d->heap));
	d->flows = malloc(TT_FLOW_BATCH * sizeof(*d->flows));
	d->frames_of = calloc(t->nsites ? t->nsites : 1, sizeof(*d->frames_of));
	d->released = calloc(t->nfiles ? t->nfiles : 1, sizeof(*d->released));
	if (!d->threads || !d->heap || !d->flows || !d->frames_of || !d->released)
		return tt_error("out of memory for %zu threads", t->nthreads);
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_file *f = &t->files[i];
		for (size_t k = 0; k < f->nthreads; k++) {
			const struct tt_thread *th = &f->threads[k];
			struct tt_thread_state *st = &d->threads[th->id];
			st->thread = th;
			if ((th->flags & TT_THREAD_WRAPPED) && tt_scan_unbegun(st) < 0)
				return -1;
			st->next_ts = th->has_first ? tt_rebase(tt_clock_ns(&f->clock, th->first_tsc), t->base_ns) :
				      INT64_MIN;
			d->heap[d->nheap++] = (struct tt_heap_entry){st->next_ts, th->id};
		}
		d->sum.threads += f->nthreads;
		d->sum.dropped += f->dropped + f->header.unregistered_dropped;
		d->records += f->records;
	}
	for (size_t i = d->nheap / 2; i-- > 0;)
		tt_heap_down(d, i);
	return 0;
}

int tt_decode(const struct tt_trace *t, struct tt_sink *const *sinks, size_t nsinks)
{
	struct tt_decoder d = {.trace = t, .sinks = sinks, .nsinks = nsinks};
	if (nsinks > TT_MAX_SINKS)
		return tt_error("more than %d sinks", TT_MAX_SINKS);
	for (size_t i = 0; i < nsinks; i++) {
		const struct tt_sink_ops *ops = sinks[i]->ops;
		tt_dispatch_add(&d.slice_begin, sinks[i], ops->slice_begin);
		tt_dispatch_add(&d.slice_end, sinks[i], ops->slice_end);
		tt_dispatch_add(&d.instant, sinks[i], ops->instant);
		tt_dispatch_add(&d.counter, sinks[i], ops->counter);
		tt_dispatch_add(&d.flow, sinks[i], ops->flow);
		tt_dispatch_add(&d.note, sinks[i], ops->note);
		tt_dispatch_add(&d.frame, sinks[i], ops->frame);
	}
	int rc = tt_decoder_init(&d);
	if (rc == 0)
		rc = TT_EMIT(&d, start, t);
	for (size_t i = 0; i < t->nfiles && rc == 0; i++) {
		const struct tt_file *f = &t->files[i];
		if (!(f->header.flags & TT_FILE_INVARIANT_TSC))
			tt_decoder_warn(&d, "%s: the TSC is not invariant on the recording machine: "
					"times may drift with CPU frequency changes", f->path);
		if (f->header.unregistered_dropped)
			tt_decoder_warn(&d, "%s: %" PRIu64 " events dropped before their thread had a "
					"buffer (no memory, 65,536 live threads, or recorded from "
					"inside ticktrace's start-up, or in a thread's last round of key "
					"destructors)", f->path,
					f->header.unregistered_dropped);
		const struct tt_module *was, *now;
		if (tt_file_modules_overlap(f, &was, &now))
			tt_decoder_warn(&d, "%s: %.*s and %.*s were loaded at overlapping addresses "
					"(%#" PRIx64 "..%#" PRIx64 "), one after the other was unloaded: "
					"call sites and functions there may be named after the wrong one",
					f->path, (int)was->path.len, was->path.ptr, (int)now->path.len,
					now->path.ptr, was->start > now->start ? was->start : now->start,
					was->end < now->end ? was->end : now->end);
		if (f->header.flags & TT_FILE_CRASHED)
			tt_decoder_warn(&d, "%s: the run crashed: the program died of signal %" PRIu32
					" (%s), and its crash handler wrote this file", f->path,
					f->header.crash_signal, strsignal((int)f->header.crash_signal));
		bool running = (f->cut_short || (f->header.flags & TT_FILE_LIVE)) &&
			       tt_file_writer_running(f);
		if ((f->header.flags & TT_FILE_LIVE) && running)
			tt_decoder_warn(&d, "%s: process %" PRIu32 " is still running: these are its "
					"live buffers as they were when read", f->path, f->process.pid);
		else if (f->header.flags & TT_FILE_LIVE)
			tt_decoder_warn(&d, "%s: the run crashed or was killed before writing its "
					"trace: these are its live buffers, with every event it recorded; "
					"names of threads first used in its last 0.2 s, and dropped counts, "
					"are missing (call sites are named from the binaries)", f->path);
		else if (f->cut_short && running)
			tt_decoder_warn(&d, "%s: process %" PRIu32 " is still writing this file: "
					"this is what it had written when read, up to offset %" PRIu64
					" (tt_dump(path) makes a complete copy)", f->path,
					f->process.pid, f->cut_at);
		else if (f->cut_short)
			tt_decoder_warn(&d, "%s: the run crashed or was killed: the file ends without "
					"its END section, after offset %" PRIu64 "; what was recorded but "
					"not yet written then is lost (mode stream: chunks not yet drained, "
					"and at most the last 0.2 s of each thread)", f->path, f->cut_at);
	}
	if (rc == 0)
		rc = tt_decode_merged(&d);
	if (rc == 0)
		rc = TT_EMIT(&d, finish, &d.sum);
	if (d.threads)
		for (size_t i = 0; i < t->nthreads; i++) {
			free(d.threads[i].stack);
			free(d.threads[i].unbegun);
			free(d.threads[i].described);
		}
	free(d.threads);
	free(d.frames);
	free(d.frames_of);
	free(d.heap);
	free(d.flows);
	free(d.links);
	free(d.released);
	return rc < 0 ? -1 : 0;
}

/* Gives a newly read file's sites and threads their trace-wide ids (sinks keep plain
 * arrays by id) and moves the trace start to its earliest anchor or event. */
static void tt_trace_add(struct tt_trace *t, struct tt_file *f)
{
	for (size_t j = 0; j < f->nsites; j++)
		f->sites[j].id = (uint32_t)t->nsites++;
	int64_t first = f->header.start.monotonic_ns;
	for (size_t j = 0; j < f->nthreads; j++) {
		struct tt_thread *th = &f->threads[j];
		th->id = (uint32_t)t->nthreads++;
		if (th->has_first) {
			int64_t ns = tt_clock_ns(&f->clock, th->first_tsc);
			if (ns < first)
				first = ns;
		}
	}
	if (t->nfiles == 1 || first < t->base_ns)
		t->base_ns = first;
}

int tt_trace_open(struct tt_trace *t, char *const *paths, size_t n)
{
	*t = (struct tt_trace){.files = calloc(n ? n : 1, sizeof(struct tt_file))};
	if (!t->files)
		return tt_error("out of memory");
	for (size_t i = 0; i < n; i++) {
		t->nfiles = i + 1;
		if (tt_file_open(&t->files[i], paths[i]) < 0)
			return -1;
		/* The same file twice, or a copy of it, or a run's tt_dump(path) copy with
		 * its final file: each event would count twice. */
		const struct tt_file_header *h = &t->files[i].header;
		for (size_t k = 0; k < i; k++) {
			const struct tt_file_header *other = &t->files[k].header;
			if (other->pid == h->pid && other->start.tsc == h->start.tsc &&
			    other->start.monotonic_ns == h->start.monotonic_ns)
				return tt_error("%s: offset %zu: the same run as %s (process %" PRIu32
						", same start): merged, its events would count twice",
						paths[i], offsetof(struct tt_file_header, start), paths[k],
						h->pid);
		}
		tt_trace_add(t, &t->files[i]);
	}
	return 0;
}

int tt_trace_load(struct tt_trace *t, const char *name, const uint8_t *data, size_t size)
{
	*t = (struct tt_trace){.files = calloc(1, sizeof(struct tt_file)), .nfiles = 1};
	if (!t->files)
		return tt_error("out of memory");
	if (tt_file_load(&t->files[0], name, data, size) < 0)
		return -1;
	tt_trace_add(t, &t->files[0]);
	return 0;
}

void tt_trace_close(struct tt_trace *t)
{
	for (size_t i = 0; i < t->nfiles; i++)
		tt_file_close(&t->files[i]);
	free(t->files);
	*t = (struct tt_trace){0};
}

static struct tt_str tt_str_of(const char *s)
{
	return (struct tt_str){s ? s : "", s ? (uint32_t)strnlen(s, TT_MAX_STRING) : 0};
}

int tt_trace_symbolize(struct tt_trace *t, tt_symbolize_fn fn, void *ctx)
{
	t->symbolize = fn;
	t->symbolize_ctx = ctx;
	for (size_t i = 0; i < t->nfiles; i++) {
		struct tt_file *f = &t->files[i];
		for (size_t k = 0; k < f->nsites; k++) {
			struct tt_site *s = &f->sites[k];
			struct tt_symbol sym;
			if (!s->is_func)
				continue;
			/* with the module that held it during its span */
			if (fn(ctx, f, s->address, s->until - 1, &sym) < 0)
				return tt_error("out of memory for symbols");
			s->name = s->func = tt_str_of(sym.name);
			s->file = tt_str_of(sym.file);
			s->line = sym.line;
		}
	}
	return tt_trace_name_threads(t);
}

size_t tt_trace_func_name(const struct tt_trace *t, const struct tt_file *file,
			  uint64_t address, char *buf, size_t cap)
{
	struct tt_symbol sym;
	int n = t->symbolize && t->symbolize(t->symbolize_ctx, file, address, UINT64_MAX - 1, &sym) == 0 ?
			snprintf(buf, cap, "%s", sym.name) :
			snprintf(buf, cap, "0x%" PRIx64, address);
	return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}
