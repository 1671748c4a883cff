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

/* A leaf scope, its two records r[0] and r[1]: a BEGIN and its END, or a function's
 * entry and its exit, nothing between. Where no threshold could make it a spike, it
 * changes nothing the runtime's analysis keeps (no profile: a scope's row, its open
 * count, its parent's children's time, all for the profile), so it is passed over
 * whole, its name never looked up: most of the records of a thread that calls small
 * functions, which were most of the live detector's time (outside recheck r35
 * finding 9). True when it was. */
static bool tt_an_feed_leaf(struct tt_an_feed *f, const struct tt_record *r)
{
	const struct tt_an_thread *th = f->th;
	unsigned kind = TT_RECORD_KIND(r[0].word), next = TT_RECORD_KIND(r[1].word);
	if (th->an->profile || th->an->closed || f->pending ||
	    !((kind == TT_REC_BEGIN && next == TT_REC_END) ||
	      (kind == TT_REC_FUNC_ENTER && next == TT_REC_FUNC_EXIT &&
	       TT_RECORD_PAYLOAD(r[0].word) == TT_RECORD_PAYLOAD(r[1].word))))
		return false;
	/* (its times as tt_an_feed_records keeps a thread's: never going back; its length
	 * from the ticks, one conversion, its end's time only where it is needed) */
	uint64_t begin = f->started && r[0].tsc < f->last_tsc ? f->last_tsc : r[0].tsc;
	uint64_t end = r[1].tsc < begin ? begin : r[1].tsc;
	int64_t least = tt_an_feed_least_threshold(f);
	/* (a difference of two times may be a ns longer than the time of the difference) */
	if (least != TT_AN_NO_THRESHOLD && tt_clock_span(f->clock, end - begin) >= least)
		return false;
	f->last_ns_stale |= end != f->last_tsc;
	f->last_tsc = end;
	f->started = true;
	/* (as its end would: the states and readings before it let go, where there are) */
	const struct tt_an_thread *t = f->th;
	if (th->depth == 0 && (t->states.from + 1 < t->states.n || t->counters.from + 1 < t->counters.n))
		tt_an_states_forget_before(f->th, tt_clock_ns(f->clock, end));
	return true;
}

int tt_an_feed_records(struct tt_an_feed *f, const struct tt_record *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && tt_an_feed_leaf(f, r + i)) {
			i++;
			continue;
		}
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

int tt_an_feed_finish(struct tt_an_feed *f, int64_t exit_ns)
{
	if (f->last_ns_stale) /* (a leaf passed over last) */
		f->last_ns = tt_clock_ns(f->clock, f->last_tsc);
	f->last_ns_stale = false;
	return tt_an_feed_close(f, tt_scopes_finish(&f->scopes), exit_ns > f->last_ns ? exit_ns : f->last_ns);
}

void tt_an_feed_free(struct tt_an_feed *f)
{
	tt_scopes_free(&f->scopes);
}
