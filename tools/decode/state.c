/* One thread's records into events given to the sinks: scopes opened and closed as
 * the scope machine (src/common/common.h) decides (ENDBEGIN, unmatched ends, scopes
 * begun before the thread's first kept record, runs of lost events), each with its
 * event kept here; instants, counters, flows, notes, descriptions, frames. */
#include "decode_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TT_PRINTF(2, 3) void tt_decoder_warn(struct tt_decoder *d, const char *fmt, ...)
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

/* Names the function of a slice that no site names (a file with no FUNCS section). */
static void tt_name_func(struct tt_decoder *d, struct tt_event *e)
{
	if (__builtin_expect(e->site || !(e->flags & TT_EV_FUNC), 1))
		return;
	size_t n = tt_trace_func_name(d->trace, e->thread->file, e->func, d->func_name,
				      sizeof(d->func_name));
	e->func_name = (struct tt_str){d->func_name, (uint32_t)n};
}

/* Opens a scope, if the machine keeps it: its event pushed, and given to the sinks
 * from there. Its key is its function's (TT_EV_FUNC), else TT_KEY_UNBEGUN
 * (TT_EV_UNBEGUN), else its site's. Inline: every slice's, its callers' constant
 * arguments folded away. */
static inline __attribute__((always_inline)) int
tt_open_scope(struct tt_decoder *d, struct tt_thread_state *st, const struct tt_thread *t,
	      int64_t ts, const struct tt_site *site, uint64_t func, uint64_t value, uint32_t flags,
	      uint64_t offset)
{
	uint64_t key = flags & TT_EV_FUNC ? func | TT_KEY_FUNC :
		       flags & TT_EV_UNBEGUN ? TT_KEY_UNBEGUN : (uint64_t)(uintptr_t)site;
	int kept = flags & TT_EV_UNBEGUN ? tt_scopes_unbegun(&st->scopes, key, offset) :
					   tt_scopes_open(&st->scopes, key, offset);
	if (kept <= 0)
		return kept < 0 ? tt_error("out of memory for %u nested scopes", st->depth + 1) : 0;
	if (st->depth == st->cap) {
		uint32_t cap = st->cap ? st->cap * 2 : 64;
		struct tt_event *p = realloc(st->stack, cap * sizeof(*p));
		if (!p)
			return tt_error("out of memory for %u nested scopes", cap);
		st->stack = p;
		st->cap = cap;
	}
	/* field by field, each a store of its own: a struct assigned whole is built apart
	 * and copied in wide loads of the fields just stored, which stall, and the sinks'
	 * loads of them then wait on the copy */
	struct tt_event *e = &st->stack[st->depth];
	e->thread = t;
	e->site = site;
	e->func = func;
	e->ts = ts;
	e->dur = 0;
	e->value = value;
	e->depth = st->depth++;
	e->flags = flags;
	e->offset = offset;
	e->text = NULL;
	e->text_len = 0;
	e->scope_value = 0;
	e->link = 0;
	e->func_name = (struct tt_str){NULL, 0}; /* (and args) */
	if (flags & TT_EV_UNBEGUN)
		e->early = st->start_early;
	tt_name_func(d, e);
	return tt_dispatch(&d->slice_begin, e);
}

/* Closes the innermost scope at `ts`: its event, with its duration, to the sinks.
 * Inline, as tt_open_scope. */
static inline __attribute__((always_inline)) int
tt_close_scope(struct tt_decoder *d, struct tt_thread_state *st, int64_t ts, uint32_t flags)
{
	struct tt_event *e = &st->stack[--st->depth];
	e->dur = ts - e->ts;
	e->flags |= flags;
	if (e->flags & TT_EV_DESCRIBED)
		e->text = st->described + (size_t)st->depth * TT_DESCRIBE_MAX;
	if (flags & TT_EV_UNTERMINATED) {
		d->sum.unterminated++;
		st->unterminated++;
		e->late = st->end_late;
	}
	d->sum.slices++;
	tt_name_func(d, e);
	return tt_dispatch(&d->slice_end, e);
}

/* Closes the innermost n scopes at `ts`, the last as `flags` says and the others
 * unterminated (their ends were not recorded). */
static int tt_close_scopes(struct tt_decoder *d, struct tt_thread_state *st, uint32_t n,
			   int64_t ts, uint32_t flags)
{
	for (; n > 1; n--)
		if (tt_close_scope(d, st, ts, TT_EV_UNTERMINATED) < 0)
			return -1;
	return n ? tt_close_scope(d, st, ts, flags) : 0;
}

/* A note's event flag, by kind from TT_REC_THRESHOLD on. */
static const uint32_t tt_note_flags[] = {
	TT_EV_THRESHOLD, TT_EV_CHILDREN_THRESHOLD, TT_EV_IGNORE, TT_EV_IGNORE_CHILDREN,
	TT_EV_DESCRIBE,
};

/* A description stays with its scope, for the slice's args in the trace. */
static int tt_describe_scope(struct tt_thread_state *st, const char *text, uint32_t len)
{
	if (st->depth == 0 || tt_scopes_left_out(&st->scopes))
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
		struct tt_frame_series *grown = realloc(d->frames, (d->nframes + 1) * sizeof *grown);
		if (!grown)
			return tt_error("out of memory for frames");
		d->frames = grown;
		d->frames[d->nframes++] = (struct tt_frame_series){.file = file, .name = site->name};
		*of = (uint32_t)d->nframes;
	}
	struct tt_frame_series *f = &d->frames[*of - 1];
	/* marks of two threads can come a little out of order within a merge window */
	int64_t dur = f->count && ts > f->last_ts ? ts - f->last_ts : 0;
	f->count++;
	f->last_ts = ts > f->last_ts || f->count == 1 ? ts : f->last_ts;
	struct tt_event e = {.thread = st->thread, .site = site, .func = *of - 1, .ts = f->last_ts,
			     .dur = dur, .value = f->count, .depth = st->depth, .offset = offset};
	if (f->count > 1)
		d->sum.points++; /* the frame that ended: a slice */
	return tt_dispatch(&d->frame, &e);
}

static int tt_note(struct tt_decoder *d, struct tt_thread_state *st, unsigned kind,
		   uint64_t value, int64_t ts, uint64_t offset)
{
	if (tt_scopes_left_out(&st->scopes))
		return 0; /* on a scope left out */
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
 * be open, `early` at most after it began (tt_event.early): `func` names it (FUNC_EXIT
 * closes it), or 0 for the file's unbegun site. */
static int tt_open_unbegun(struct tt_decoder *d, struct tt_thread_state *st,
			   const struct tt_thread *t, int64_t ts, int64_t early, uint64_t func, uint64_t offset)
{
	d->sum.unbegun++;
	st->start_early = early;
	return func ? tt_open_scope(d, st, t, ts, NULL, func, 0, TT_EV_FUNC | TT_EV_UNBEGUN, offset) :
		      tt_open_scope(d, st, t, ts, t->file->unbegun_site, 0, 0, TT_EV_UNBEGUN, offset);
}

/* How much after `ts` a scope whose end was lost ended at the latest: by `next_tsc`
 * (UINT64_MAX: none), else the thread's exit where its states say it, else the end
 * of the recording (its file's end anchor); -1: none known (a killed run's file). */
static int64_t tt_gap_bound(const struct tt_decoder *d, const struct tt_thread *t, uint64_t next_tsc, int64_t ts)
{
	const struct tt_file *f = t->file;
	int64_t bound;
	if (next_tsc != UINT64_MAX)
		bound = tt_rebase(tt_clock_ns(&f->clock, next_tsc), d->trace->base_ns);
	else if (t->exited_ns)
		bound = tt_rebase(t->exited_ns, d->trace->base_ns);
	else if (f->header.end.tsc > f->header.start.tsc)
		bound = tt_rebase(tt_clock_ns(&f->clock, f->header.end.tsc), d->trace->base_ns);
	else
		return -1;
	return bound > ts ? bound - ts : 0;
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
	/* (each lost event ends one scope and begins one at most: an ENDBEGIN both) */
	if (TT_GAP_CLOSES(depths) > lost || TT_GAP_OPENS(depths) > lost)
		return tt_error_at(f->path, offset, "a run of %" PRIu64 " lost events said to end %" PRIu32
				   " scopes and begin %" PRIu32 ": more than it holds (a damaged record)",
				   lost, TT_GAP_CLOSES(depths), TT_GAP_OPENS(depths));
	uint32_t closes = tt_scopes_gap(&st->scopes, TT_GAP_CLOSES(depths));
	/* (they ended among the lost events: by the next record, else the thread's exit
	 * or the end of the recording) */
	st->end_late = tt_gap_bound(d, t, st->gap_next_tsc ? st->gap_next_tsc : UINT64_MAX, ts);
	int rc = tt_close_scopes(d, st, closes, ts, TT_EV_UNTERMINATED);
	st->end_late = 0;
	if (rc < 0)
		return -1;
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
	st->gap_last_tsc = st->last_tsc;
	d->sum.gaps++;
	if (tt_open_scope(d, st, t, ts, f->gap_site, 0, lost, TT_EV_ARG | TT_EV_GAP, offset) < 0 ||
	    (tt_scopes_end(&st->scopes, offset) && tt_close_scope(d, st, end, 0) < 0))
		return -1;
	for (uint32_t i = TT_GAP_OPENS(depths); i > 0; i--)
		if (tt_open_unbegun(d, st, t, end, end - ts, 0, offset) < 0) /* (begun among them) */
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
	/* the kept event of a point with a value: its fields set, not a struct cleared */
	struct tt_event *e = &st->valued;
	switch (kind) {
	case TT_REC_BEGIN_ARG:
		return tt_open_scope(d, st, t, ts, site, 0, value, TT_EV_ARG, offset);
	case TT_REC_INSTANT_ARG:
	case TT_REC_COUNTER:
		e->site = site;
		e->ts = ts;
		e->value = value;
		e->depth = st->depth;
		e->flags = kind == TT_REC_COUNTER ? 0 : TT_EV_ARG;
		e->offset = offset;
		return kind == TT_REC_COUNTER ? tt_dispatch(&d->counter, e) : tt_dispatch_instant(d, e);
	case TT_REC_FLOW_OUT:
		return tt_decoder_flow(d, st, t, TT_EV_FLOW_OUT, value, ts, offset);
	case TT_REC_SCOPE_VALUE:
		if (st->depth > 0 && !tt_scopes_left_out(&st->scopes)) {
			st->stack[st->depth - 1].scope_value = (int64_t)value;
			st->stack[st->depth - 1].flags |= TT_EV_SCOPE_VALUE;
		}
		return 0;
	case TT_REC_DROPPED:
		return tt_gap(d, st, t, st->pending_payload, ts, value, TT_RECORD_PAYLOAD(second->word),
			      offset);
	default:
		return tt_decoder_flow(d, st, t, TT_EV_FLOW_IN, value, ts, offset);
	}
}

/* The site (call site or function) at `address` for a record made at `tsc`, through
 * the thread's cache. */
static inline __attribute__((always_inline)) const struct tt_site *
tt_cached_site(struct tt_thread_state *st, uint64_t address, uint64_t tsc)
{
	/* Fibonacci hashing: the high bits of the product, which every bit of the
	 * address moves (sites a few bytes apart, or 2^k apart, land apart) */
	const struct tt_site **slot =
		&st->site_cache[(address * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - TT_SITE_CACHE_BITS)];
	if (__builtin_expect(*slot && (*slot)->address == address && tsc >= (*slot)->since &&
			     tsc < (*slot)->until, 1))
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
		if (tt_scopes_end(&st->scopes, offset))
			rc = tt_close_scope(d, st, ts, 0);
		if (kind == TT_REC_END || rc < 0)
			break;
		/* ENDBEGIN opens its scope at the same time */
		__attribute__((fallthrough));
	case TT_REC_BEGIN:
		rc = tt_open_scope(d, st, t, ts, site, 0, 0, 0, offset);
		break;
	case TT_REC_INSTANT: {
		struct tt_event *e = &st->instant;
		e->site = site;
		e->ts = ts;
		e->depth = st->depth;
		e->offset = offset;
		rc = tt_dispatch_instant(d, e);
		break;
	}
	case TT_REC_FUNC_ENTER:
		rc = tt_open_scope(d, st, t, ts, tt_func_site(st, payload, st->last_tsc), payload, 0, TT_EV_FUNC,
				   offset);
		break;
	case TT_REC_FUNC_EXIT:
		rc = tt_close_scopes(d, st, tt_scopes_func_exit(&st->scopes, payload | TT_KEY_FUNC,
								   offset, st->last_tsc), ts, 0);
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

/* The kinds that stand alone with a time (TT_RECORD_KNOWN but PAD, VALUE and TEXT),
 * as bits: one test tells a record the loop decodes from one it refuses or skips. */
#define TT_KIND_BIT(k) (UINT32_C(1) << (k))
#define TT_KIND_BITS(from, to) ((TT_KIND_BIT(to) << 1) - TT_KIND_BIT(from)) /* from..to */
#define TT_TIMED_KINDS                                                            \
	(TT_KIND_BITS(TT_REC_BEGIN, TT_REC_FUNC_EXIT) |                            \
	 (TT_KIND_BITS(TT_REC_THRESHOLD, TT_REC_PARENTS_THRESHOLD) & ~TT_KIND_BIT(TT_REC_TEXT)))
_Static_assert(TT_REC_PARENTS_THRESHOLD < 31 && TT_REC_VALUE > TT_REC_FUNC_EXIT &&
	       TT_REC_VALUE < TT_REC_THRESHOLD && TT_REC_PAD < TT_REC_BEGIN,
	       "TT_TIMED_KINDS: the kinds' numbers changed");

void tt_decoder_fast_clock(struct tt_thread_state *st, int64_t base)
{
	const struct tt_file *f = st->thread->file;
	const struct tt_clock *c = &f->clock;
	/* the span only grows with the ticks: what holds at both ends holds between */
	int64_t last = tt_clock_ns(c, f->tsc_max), first = c->ns0, rel;
	st->fast_clock = f->tsc_max >= c->tsc0 && last != INT64_MAX &&
			 !__builtin_sub_overflow(last, base, &rel) && rel < TT_TIME_LIMIT &&
			 rel > -TT_TIME_LIMIT && !__builtin_sub_overflow(first, base, &rel) &&
			 rel < TT_TIME_LIMIT && rel > -TT_TIME_LIMIT;
	st->fast_ns0 = st->fast_clock ? first - base : 0;
}

/* Decodes one thread's records until its next timed record is later than `limit`
 * (then st->next_ts holds that time and the cursor stays on it), or its records end
 * (st->done). The cursor, the section's records and where they are in the file stay
 * in locals (the sinks' calls could change anything behind a pointer, so the
 * compiler would reload them every record). */
/* A run's events added to the thread's and the trace's counts, when it returns (not
 * a store each record); a progress report where the trace's passed a multiple of
 * TT_PROGRESS_EVENTS. */
static void tt_count_events(struct tt_decoder *d, struct tt_thread_state *st, uint64_t events)
{
	uint64_t before = d->sum.events;
	st->events += events;
	d->sum.events += events;
	if ((before ^ d->sum.events) >= TT_PROGRESS_EVENTS && d->trace->progress)
		d->trace->progress(d->trace->progress_ctx, d->sum.events, d->records);
}

/* Keeps the reader's thread a step (TT_RELEASE_RECORDS) of the thread's records ahead
 * of the step that holds its record `record` of its section st->section: asked for a
 * step, or a section's records, at a time, each before the decoder reads it. */
static void tt_read_ahead(struct tt_decoder *d, struct tt_thread_state *st, size_t record)
{
	const struct tt_thread *t = st->thread;
	uint64_t at = st->passed + record;
	while (st->asked < at + 2 * TT_RELEASE_RECORDS && st->ahead_section < t->nsections) {
		const struct tt_events *ev = &t->sections[st->ahead_section];
		size_t n = ev->count - st->ahead_record;
		if (n > TT_RELEASE_RECORDS)
			n = TT_RELEASE_RECORDS;
		/* (a packed section is read whole when its records are asked for) */
		if (ev->records && n >= TT_AHEAD_MIN_RECORDS)
			tt_file_read_ahead(d->ahead, t->file, tt_record_offset(ev, st->ahead_record),
					   tt_record_offset(ev, st->ahead_record + n));
		st->asked += n;
		st->ahead_record += n;
		if (st->ahead_record == ev->count) {
			st->ahead_section++;
			st->ahead_record = 0;
		}
	}
}

/* The TSC of the first of `n` records that has a time; 0: none. */
static uint64_t tt_next_timed_tsc(const struct tt_record *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned kind = TT_RECORD_KIND(r[i].word);
		if (kind < 32 && (TT_TIMED_KINDS >> kind & 1))
			return r[i].tsc;
	}
	return 0;
}

int tt_decoder_run(struct tt_decoder *d, struct tt_thread_state *st, int64_t limit)
{
	uint64_t events = 0; /* decoded in this run: counted at its end */
	const struct tt_thread *t = st->thread;
	const struct tt_file *f = t->file;
	const int64_t base = d->trace->base_ns;
	const uint64_t tsc_min = f->tsc_min, tsc_max = f->tsc_max;
	for (; st->section < t->nsections; st->section++, st->record = 0) {
		const struct tt_events *ev = &t->sections[st->section];
		const struct tt_record *records = tt_section_records(t, st->section);
		const size_t count = ev->count;
		/* a packed section's records all have its offset */
		const uint64_t at = ev->offset, stride = ev->records ? sizeof(struct tt_record) : 0;
		if (d->ahead && st->record == 0)
			tt_read_ahead(d, st, 0);
		for (size_t i = st->record; i < count; i++) {
			if (__builtin_expect((i & (TT_RELEASE_RECORDS - 1)) == 0, 0) && i) {
				tt_file_release(d->ahead, f, at + (i - TT_RELEASE_RECORDS) * stride, at + i * stride);
				if (d->ahead)
					tt_read_ahead(d, st, i);
			}
			const struct tt_record *r = &records[i];
			__builtin_prefetch(r + TT_PREFETCH_RECORDS);
			unsigned kind = TT_RECORD_KIND(r->word);
			uint64_t payload = TT_RECORD_PAYLOAD(r->word);
			uint64_t offset = at + i * stride;
			if (__builtin_expect(st->pending != 0, 0)) {
				if (st->pending == TT_REC_DESCRIBE) {
					if (kind != TT_REC_TEXT)
						return tt_error_at(f->path, st->pending_offset,
								   "DESCRIBE record without its TEXT records");
					if (tt_describe_text(d, st, r) < 0)
						return -1;
					continue;
				}
				if (kind != TT_REC_VALUE)
					return tt_error_at(f->path, st->pending_offset,
							   "%s record without its VALUE record",
							   tt_kind_name(st->pending));
				if (st->pending == TT_REC_DROPPED)
					st->gap_next_tsc = tt_next_timed_tsc(records + i + 1, count - i - 1);
				if (tt_complete(d, st, t, r) < 0)
					return -1;
				continue;
			}
			if (__builtin_expect(kind >= 32 || !(TT_TIMED_KINDS >> kind & 1), 0)) {
				if (kind == TT_REC_PAD)
					continue;
				if (kind == TT_REC_VALUE || kind == TT_REC_TEXT)
					return tt_error_at(f->path, offset, "%s record with no record "
							   "before it that takes one",
							   kind == TT_REC_VALUE ? "VALUE" : "TEXT");
				return tt_error_at(f->path, offset, "unknown record kind %u", kind);
			}
			uint64_t tsc = r->tsc;
			if (tsc < tsc_min || tsc > tsc_max)
				return tt_error_at(f->path, offset, "a record (kind %u) at TSC %" PRIu64
						   ", %s the run (TSC %" PRIu64 " to %" PRIu64 "): a "
						   "damaged record", kind, tsc,
						   tsc < tsc_min ? "long before" : "long after",
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
				     tt_decoder_ts(st, &f->clock, tsc, base);
			}
			if (ts > limit) {
				st->record = i;
				st->next_ts = ts; /* another thread's events come first */
				st->next_known = true;
				tt_count_events(d, st, events);
				return 0;
			}
			if (clamped && st->clamped++ == 0)
				st->first_clamped = offset;
			if (__builtin_expect(!st->started, 0)) {
				st->first_ts = ts;
				for (uint32_t u = st->unbegun.n; u > 0; u--)
					if (tt_open_unbegun(d, st, t, ts, -1, st->unbegun.keys[u - 1], offset) < 0)
						return -1;
				st->started = true;
			}
			st->last_tsc = tsc;
			st->last_ts = ts;
			/* (a run of lost events is counted among the dropped, not again here) */
			events += kind != TT_REC_DROPPED;
			if (tt_decode_record(d, st, kind, payload, ts, offset) < 0)
				return -1;
		}
		tt_file_release(d->ahead, f, ev->offset,
				ev->offset + (ev->records ? ev->count * sizeof(struct tt_record) : ev->packed_size));
		st->passed += count;
	}
	st->done = true;
	tt_count_events(d, st, events);
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
int tt_decoder_finish_thread(struct tt_decoder *d, const struct tt_thread *t)
{
	struct tt_thread_state *st = &d->threads[t->id];
	const struct tt_scopes *sc = &st->scopes;
	char who[160];
	if (st->pending)
		return tt_error_at(t->file->path, st->pending_offset,
				   "%s record without its %s (the thread's records end)",
				   tt_kind_name(st->pending),
				   st->pending == TT_REC_DESCRIBE ? "TEXT records" : "VALUE record");
	/* A thread that exited with scopes open (pthread_exit, cancelled) was in them until
	 * its exit, where its states say it (tt_sched_info.exited_ns); else all that is
	 * known is its last event. */
	int64_t exit_ts = t->exited_ns ? tt_rebase(t->exited_ns, d->trace->base_ns) : INT64_MIN;
	bool at_exit = st->started && exit_ts > st->last_ts;
	int64_t close_ts = at_exit ? exit_ts : st->last_ts;
	if (st->depth > 0) {
		const struct tt_event *in = &st->stack[st->depth - 1];
		char fn[32];
		int len = in->site ? (int)(in->site->name.len > 64 ? 64 : in->site->name.len) :
			  (int)tt_trace_func_name(d->trace, t->file, in->func, fn, sizeof(fn));
		tt_decoder_warn(d, "%s: %" PRIu32 " scopes left open at its last event, closed %s "
				"and flagged \"unterminated\" (innermost: %.*s, opened at offset %" PRIu64 ")",
				tt_thread_label(t, who, sizeof(who)), st->depth,
				at_exit ? "at its exit (its states say when)" : "there", len,
				in->site ? in->site->name.ptr : fn, in->offset);
	}
	/* Records that end among lost events leave the scopes open after them open to the
	 * thread's exit (exact, where its states say it), else to the end of the recording
	 * at the latest. */
	if (st->gaps && st->last_tsc == st->gap_last_tsc)
		st->end_late = at_exit ? 0 : tt_gap_bound(d, t, UINT64_MAX, close_ts);
	for (uint32_t n = tt_scopes_finish(&st->scopes); n > 0; n--)
		if (tt_close_scope(d, st, close_ts, TT_EV_UNTERMINATED) < 0)
			return -1;
	st->end_late = 0;
	/* at or after its last event (the runs stopped at each): what is left */
	if (tt_decoder_emit_marks(d, st, INT64_MAX) < 0)
		return -1;
	if (sc->too_deep_total)
		tt_decoder_warn(d, "%s: %" PRIu64 " scopes nested deeper than %u levels left out "
				"(first at offset %" PRIu64 "); the scopes around them keep their times",
				tt_thread_label(t, who, sizeof(who)), sc->too_deep_total, TT_MAX_DEPTH,
				sc->first_too_deep);
	if (sc->unmatched > sc->unmatched_exits)
		tt_decoder_warn(d, "%s: %" PRIu64 " ends with no open scope, ignored (first at offset %"
				PRIu64 ")", tt_thread_label(t, who, sizeof(who)),
				sc->unmatched - sc->unmatched_exits, sc->first_unmatched);
	if (sc->unmatched_exits) {
		char fn[512];
		size_t len = tt_func_label(d->trace, st, sc->unmatched_exit_key & ~TT_KEY_FUNC,
					   sc->unmatched_exit_tsc, fn, sizeof(fn));
		tt_decoder_warn(d, "%s: %" PRIu64 " function exits with no entry, ignored (first: %.*s "
				"at offset %" PRIu64 ")", tt_thread_label(t, who, sizeof(who)),
				sc->unmatched_exits, (int)len, fn, sc->first_unmatched_exit);
	}
	if (st->clamped)
		tt_decoder_warn(d, "%s: %" PRIu64 " timestamps went backwards and were clamped "
				"(first at offset %" PRIu64 ")", tt_thread_label(t, who, sizeof(who)),
				st->clamped, st->first_clamped);
	/* a ring overwriting its oldest events is what it is for: said once for the run */
	uint64_t overwritten = t->dropped[TT_DROP_OVERWRITTEN];
	bool snapshot = t->file->snapshot; /* what it lost is a hole in the window */
	d->overwritten[snapshot] += overwritten;
	d->overwriting_threads[snapshot] += overwritten > 0;
	if (t->dropped_total > overwritten)
		tt_decoder_warn(d, "%s: %" PRIu64 " events dropped (buffer full: %" PRIu64
				", no memory: %" PRIu64 ", disk behind: %" PRIu64 ", recorded from inside "
				"the recorder: %" PRIu64 ", cut in half where the file ends: %" PRIu64 ")",
				tt_thread_label(t, who, sizeof(who)), t->dropped_total - overwritten,
				t->dropped[TT_DROP_FULL], t->dropped[TT_DROP_NO_MEMORY],
				t->dropped[TT_DROP_BEHIND], t->dropped[TT_DROP_REENTERED], t->cut_events);
	if (t->states_lost)
		tt_decoder_warn(d, "%s: %" PRIu64 " of its thread-state switches lost (the kernel's "
				"buffer for the thread full before tt-sched read it: a thread that switches "
				"fast, or a loaded machine; or ticktrace's store for the thread let go): "
				"where they were, its states are not known, and its spikes there are split "
				"from its counters where they were read, else say so (ticktrace spikes)",
				tt_thread_label(t, who, sizeof(who)), t->states_lost);
	if (t->cut_events == 1)
		tt_decoder_warn(d, "%s: its last event, at offset %" PRIu64 ", has only part of its "
				"records (the run ended, or the file was written, while it was recorded): left out",
				tt_thread_label(t, who, sizeof(who)), t->cut_offset);
	else if (t->cut_events)
		tt_decoder_warn(d, "%s: %" PRIu64 " events, the first at offset %" PRIu64 ", have only "
				"part of their records (the file was read while its run wrote them): left out",
				tt_thread_label(t, who, sizeof(who)), t->cut_events, t->cut_offset);
	if (st->gaps)
		tt_decoder_warn(d, "%s: %" PRIu64 " runs of dropped events (%" PRIu64 " events) shown "
				"as slices \"%s\"; %" PRIu64 " scopes that ended in them closed at their "
				"start and flagged \"unterminated\"", tt_thread_label(t, who, sizeof(who)),
				st->gaps, st->gap_events, t->file->gap_site->name.ptr, sc->gap_closed);
	if (sc->unbegun)
		tt_decoder_warn(d, "%s: %" PRIu64 " scopes whose beginning was not recorded (before "
				"its oldest kept event, among dropped events, or in the process it was forked from) shown from the first time "
				"they are known open and flagged \"unbegun\"",
				tt_thread_label(t, who, sizeof(who)), sc->unbegun);
	d->sum.unmatched += sc->unmatched;
	d->sum.clamped += st->clamped;
	struct tt_thread_summary ts = {
		.events = st->events, .unmatched = sc->unmatched, .clamped = st->clamped,
		.unterminated = st->unterminated, .unbegun = sc->unbegun, .gaps = st->gaps,
		.gap_events = st->gap_events, .first_ts = st->first_ts,
		.last_ts = st->started ? st->last_ts : 0,
	};
	return TT_EMIT(d, thread_end, t, &ts);
}

/* Mode ring: the scopes a wrapped thread's records close without opening them, from
 * one pass over its records before decoding them. */
int tt_decoder_scan_unbegun(struct tt_thread_state *st)
{
	const struct tt_thread *t = st->thread;
	/* (past as deep as the decoder keeps, the rest are unmatched ends) */
	st->unbegun.max = TT_MAX_DEPTH;
	for (size_t s = 0; s < t->nsections; s++)
		if (tt_unbegun_scan(&st->unbegun, tt_section_records(t, s), t->sections[s].count) < 0)
			return tt_error("out of memory for %u scopes", 2 * st->unbegun.cap);
	return 0;
}
