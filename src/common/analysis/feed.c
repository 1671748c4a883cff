/* Raw records into a thread's analysis (analysis.h), for the runtime, which has no
 * decoder: the scopes open and close by the decoder's rules, the scope machine
 * (common.h), on trusted records. */
#include <string.h>

#include "analysis_internal.h"

/* A scope opens, if the machine keeps it. */
static int tt_an_feed_open(struct tt_an_feed *f, uint64_t key, int64_t ts)
{
	int kept = tt_scopes_open(&f->scopes, key, 0);
	if (kept < 0)
		f->th->an->oom = true;
	return kept <= 0 ? kept : tt_an_scope_open(f->th, key, ts);
}

/* The innermost n scopes close. */
static int tt_an_feed_close(struct tt_an_feed *f, uint32_t n, int64_t ts)
{
	for (; n > 0; n--)
		if (tt_an_scope_close(f->th, ts) < 0)
			return -1;
	return 0;
}

/* One record that has a time. */
static int tt_an_feed_one(struct tt_an_feed *f, unsigned kind, uint64_t payload, int64_t ts)
{
	struct tt_an_thread *th = f->th;
	switch (kind) {
	case TT_REC_END:
	case TT_REC_ENDBEGIN:
		if (tt_an_feed_close(f, tt_scopes_end(&f->scopes, 0), ts) < 0)
			return -1;
		return kind == TT_REC_END ? 0 : tt_an_feed_open(f, payload, ts);
	case TT_REC_BEGIN:
		return tt_an_feed_open(f, payload, ts);
	case TT_REC_BEGIN_ARG:
		f->pending = TT_REC_VALUE;
		return tt_an_feed_open(f, payload, ts);
	case TT_REC_FUNC_ENTER:
		return tt_an_feed_open(f, payload | TT_KEY_FUNC, ts);
	case TT_REC_FUNC_EXIT:
		return tt_an_feed_close(f, tt_scopes_func_exit(&f->scopes, payload | TT_KEY_FUNC, 0, 0), ts);
	case TT_REC_THRESHOLD:
	case TT_REC_CHILDREN_THRESHOLD:
	case TT_REC_IGNORE:
	case TT_REC_IGNORE_CHILDREN:
	case TT_REC_PARENTS_THRESHOLD:
		return tt_an_scope_note(th, kind, payload, NULL, 0);
	case TT_REC_FRAME:
		tt_an_frame_mark(th->an, payload, ts);
		return 0;
	case TT_REC_DESCRIBE:
		f->text_want = payload > TT_DESCRIBE_MAX ? TT_DESCRIBE_MAX : (uint32_t)payload;
		f->text_len = 0;
		if (f->text_want == 0)
			return tt_an_scope_note(th, kind, 0, "", 0);
		f->pending = TT_REC_TEXT;
		return 0;
	default:
		if (TT_RECORD_HAS_VALUE(kind))
			f->pending = TT_REC_VALUE;
		return 0;
	}
}

/* The least threshold a scope opened now with no note of its own could have: the
 * least rule's, or the children's threshold in force, or the global one (-1: none). */
static int64_t tt_an_feed_least_threshold(struct tt_an_feed *f)
{
	const struct tt_an_thread *th = f->th;
	const struct tt_an_frame *parent = th->depth ? &th->stack[th->depth - 1] : NULL;
	if (!th->an->find_spikes || (parent && (parent->flags & TT_AN_IGNORE_BELOW)))
		return TT_AN_NO_THRESHOLD;
	if (!f->rules_least_known) {
		f->rules_least = TT_AN_NO_THRESHOLD;
		for (size_t i = 0; i < th->an->nrules; i++)
			if (f->rules_least == TT_AN_NO_THRESHOLD || th->an->rules[i].ns < f->rules_least)
				f->rules_least = th->an->rules[i].ns;
		f->rules_least_known = true;
	}
	int64_t least = parent && parent->inherited != TT_AN_NO_THRESHOLD ? parent->inherited : th->an->threshold;
	if (f->rules_least != TT_AN_NO_THRESHOLD && (least == TT_AN_NO_THRESHOLD || f->rules_least < least))
		least = f->rules_least;
	return least;
}

/* The fewest ticks a scope opened now with no note of its own lasts for a threshold to
 * make it a spike (UINT64_MAX: none could): known until the analysis's innermost scope
 * or the clock changes. A scope shorter in ticks is shorter than the least threshold
 * by a ns at least, so no threshold finds it (a difference of two times may be a ns
 * longer than the time of the difference). */
static uint64_t tt_an_feed_least_ticks(struct tt_an_feed *f)
{
	if (f->least_known)
		return f->least_ticks;
	int64_t least = tt_an_feed_least_threshold(f);
	uint64_t ticks = UINT64_MAX;
	unsigned __int128 guess = least == TT_AN_NO_THRESHOLD ? 0 :
				  (unsigned __int128)(uint64_t)least * f->clock->hz / 1000000000u;
	if (least != TT_AN_NO_THRESHOLD && guess < (UINT64_C(1) << 62)) {
		/* (the guess within a tick or two of it, as the clock's rounding goes) */
		ticks = (uint64_t)guess;
		while (ticks > 0 && tt_clock_span(f->clock, ticks - 1) >= least)
			ticks--;
		while (tt_clock_span(f->clock, ticks) < least)
			ticks++;
	}
	f->least_ticks = ticks;
	f->least_known = true;
	return ticks;
}

/* The held scopes told to the analysis, outermost first, at the times they opened: 0,
 * or -1 when out of memory. */
static int tt_an_feed_tell_held(struct tt_an_feed *f)
{
	for (uint32_t i = 0; i < f->nheld; i++) {
		const struct tt_an_held *h = &f->held[i];
		unsigned kind = TT_RECORD_KIND(h->word);
		uint64_t payload = TT_RECORD_PAYLOAD(h->word);
		if (f->key && payload)
			payload = f->key(payload, h->tsc);
		if (tt_an_feed_open(f, kind == TT_REC_FUNC_ENTER ? payload | TT_KEY_FUNC : payload,
				    tt_clock_ns(f->clock, h->at)) < 0)
			return -1;
	}
	f->nheld = 0;
	return 0;
}

/* The records from r on that the analysis need not be told of: how many were taken.
 * Without a profile a scope changes nothing the analysis keeps (a scope's row, its
 * open count, its parent's children's time are the profile's) unless it is a spike:
 * one that ends shorter than any threshold could find (and its scopes with it) is held
 * back and passed over whole, never looked up, with no clock conversion. A note, a long
 * end, an end the held ones do not match, and what needs a time stop it: they go to
 * the analysis, the held scopes told first. Most of a thread's records are small
 * calls' (outside recheck r36 F3: they were most of the live detector's time), so this
 * loop keeps what it changes in registers. */
static size_t tt_an_feed_held(struct tt_an_feed *f, const struct tt_record *r, size_t n)
{
	/* What the analysis is told of whoever holds it: notes, and times of its own. */
	enum {
		TOLD = 1u << TT_REC_THRESHOLD | 1u << TT_REC_CHILDREN_THRESHOLD | 1u << TT_REC_IGNORE |
		       1u << TT_REC_IGNORE_CHILDREN | 1u << TT_REC_PARENTS_THRESHOLD |
		       1u << TT_REC_DESCRIBE | 1u << TT_REC_FRAME
	};
	if (!f->started)
		return 0; /* (the thread's first time: the analysis's) */
	struct tt_an_thread *th = f->th;
	struct tt_an_held *held = f->held;
	uint32_t nheld = f->nheld;
	uint64_t last = f->last_tsc, least = 0, outermost_end = 0;
	bool least_known = false, outermost_ended = false;
	/* (a VALUE's record has no time, passed over as any such is: nothing pending) */
	f->pending = 0;
	size_t i = 0;
	for (; i < n; i++) {
		uint64_t word = r[i].word, tsc = r[i].tsc;
		unsigned kind = TT_RECORD_KIND(word);
		/* (its time as tt_an_feed_records keeps a thread's: never going back) */
		uint64_t at = tsc < last ? last : tsc;
		if (kind == TT_REC_FUNC_ENTER || kind == TT_REC_BEGIN || kind == TT_REC_BEGIN_ARG) {
			if (nheld == TT_AN_FEED_HELD)
				break;
			held[nheld++] = (struct tt_an_held){word, tsc, at};
		} else if (kind == TT_REC_FUNC_EXIT || kind == TT_REC_END || kind == TT_REC_ENDBEGIN) {
			/* (an exit of its function's entry, held last) */
			if (!nheld || (kind == TT_REC_FUNC_EXIT &&
				       held[nheld - 1].word != (TT_RECORD_PAYLOAD(word) |
								(uint64_t)TT_REC_FUNC_ENTER << TT_KIND_SHIFT)))
				break;
			if (!least_known) {
				least = tt_an_feed_least_ticks(f);
				least_known = true;
			}
			if (at - held[nheld - 1].at >= least)
				break;
			if (kind == TT_REC_ENDBEGIN) { /* (it opens a scope at once) */
				held[nheld - 1] = (struct tt_an_held){word, tsc, at};
			} else if (!--nheld) {
				outermost_end = at;
				outermost_ended = true;
			}
		} else if (!TT_RECORD_HAS_TIME(kind)) {
			continue;
		} else if (kind < 32 && ((1u << kind) & TOLD)) {
			break;
		} /* (else an instant, a counter, a flow: nothing of the analysis's) */
		last = at;
	}
	/* An outermost scope ended: the states and readings before it let go, as its end
	 * in the analysis would (once, for the last one: no scope is open from before it). */
	if (outermost_ended && !th->depth &&
	    (th->states.from + 1 < th->states.n || th->counters.from + 1 < th->counters.n))
		tt_an_states_forget_before(th, tt_clock_ns(f->clock, outermost_end));
	f->nheld = nheld;
	f->last_ns_stale |= last != f->last_tsc;
	f->last_tsc = last;
	return i;
}

int tt_an_feed_records(struct tt_an_feed *f, const struct tt_record *r, size_t n)
{
	const struct tt_an_thread *th = f->th;
	bool hold = !th->an->profile && !th->an->closed && !f->scopes.max_depth;
	f->least_known = false; /* (the clock may have been measured again) */
	for (size_t i = 0; i < n; i++) {
		if (hold && f->pending != TT_REC_TEXT && (i += tt_an_feed_held(f, r + i, n - i)) == n)
			break;
		if (f->nheld && tt_an_feed_tell_held(f) < 0)
			return -1;
		f->least_known = false; /* (the innermost scope may change) */
		unsigned kind = TT_RECORD_KIND(r[i].word);
		uint64_t payload = TT_RECORD_PAYLOAD(r[i].word);
		if (f->pending == TT_REC_TEXT && kind == TT_REC_TEXT) {
			memcpy(f->text + f->text_len, &r[i].tsc, 8);
			memcpy(f->text + f->text_len + 8, &payload, TT_TEXT_BYTES - 8);
			f->text_len += TT_TEXT_BYTES;
			if (f->text_len < f->text_want)
				continue;
			f->pending = 0;
			if (tt_an_scope_note(f->th, TT_REC_DESCRIBE, f->text_want, f->text, f->text_want) < 0)
				return -1;
			continue;
		}
		f->pending = 0; /* a VALUE, or what should have been one: passed over */
		if (!TT_RECORD_HAS_TIME(kind))
			continue;
		/* A signal handler that interrupted the hot path can leave a record with an
		 * earlier TSC after a later one: keep the thread's time monotonic. */
		uint64_t tsc = f->started && r[i].tsc < f->last_tsc ? f->last_tsc : r[i].tsc;
		if (!f->started || tsc != f->last_tsc || f->last_ns_stale)
			f->last_ns = tt_clock_ns(f->clock, tsc);
		f->last_ns_stale = false;
		f->last_tsc = tsc;
		f->started = true;
		if (f->key && payload && (TT_RECORD_HAS_SITE(kind) || kind == TT_REC_FUNC_ENTER ||
					  kind == TT_REC_FUNC_EXIT))
			payload = f->key(payload, r[i].tsc);
		if (tt_an_feed_one(f, kind, payload, f->last_ns) < 0)
			return -1;
	}
	return 0;
}

int tt_an_feed_finish(struct tt_an_feed *f, int64_t exit_ns, int64_t dropped_until)
{
	if (f->nheld && tt_an_feed_tell_held(f) < 0)
		return -1;
	if (f->last_ns_stale) /* (records passed over last) */
		f->last_ns = tt_clock_ns(f->clock, f->last_tsc);
	f->last_ns_stale = false;
	if (dropped_until == INT64_MIN)
		return tt_an_feed_close(f, tt_scopes_finish(&f->scopes), exit_ns > f->last_ns ? exit_ns : f->last_ns);
	/* (each may have ended at its last record, or among the events dropped after) */
	f->th->end_late = dropped_until > f->last_ns ? dropped_until - f->last_ns : 0;
	int rc = tt_an_feed_close(f, tt_scopes_finish(&f->scopes), f->last_ns);
	f->th->end_late = 0;
	return rc;
}

void tt_an_feed_free(struct tt_an_feed *f)
{
	tt_scopes_free(&f->scopes);
}
