/* A thread's states (format.h: TT_SEC_SCHED), the spike detector's second input:
 * how a scope's time split between running, waiting for a CPU (preempted) and
 * waiting for something else (blocked). The thread runs at every event it records,
 * so a scope begins and ends on CPU; between, the states say. */
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

/* Room for `more` items after the n of *at (items of `size` bytes), those before
 * `*from` (no open scope needs them any more) let go first once they are half: 0, or
 * -1 with an->oom set. */
static int tt_an_room(struct tt_an *an, void **at, size_t *from, size_t *n, size_t *cap, size_t more,
		      size_t size)
{
	if (*from > *n / 2) {
		memmove(*at, (char *)*at + *from * size, (*n - *from) * size);
		*n -= *from;
		*from = 0;
	}
	if (*n + more <= *cap)
		return 0;
	size_t grown_cap = *cap ? 2 * *cap : 256;
	while (grown_cap < *n + more)
		grown_cap *= 2;
	void *grown = realloc(*at, grown_cap * size);
	if (!grown) {
		an->oom = true;
		return -1;
	}
	*at = grown;
	*cap = grown_cap;
	return 0;
}

int tt_an_thread_states(struct tt_an_thread *th, const struct tt_sched_state *states,
			size_t n, int64_t offset_ns)
{
	struct tt_an_states *h = &th->states;
	h->known = true;
	if (tt_an_room(th->an, (void **)&h->at, &h->from, &h->n, &h->cap, n, sizeof *h->at) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct tt_sched_state s = states[i];
		/* (not known since one already: a live reader is told of a loss at each look
		 * until the kernel says how many) */
		if (s.what == TT_SCHED_UNKNOWN && h->n && h->at[h->n - 1].what == TT_SCHED_UNKNOWN) {
			uint32_t *lost = &h->at[h->n - 1].cpu; /* (those it lost, all told) */
			*lost = s.cpu > UINT32_MAX - *lost ? UINT32_MAX : *lost + s.cpu;
			continue;
		}
		if (s.ns != INT64_MIN) /* (not known from the very start) */
			s.ns -= offset_ns;
		if (h->n && s.ns < h->at[h->n - 1].ns) /* never from the kernel */
			s.ns = h->at[h->n - 1].ns;
		h->at[h->n++] = s;
	}
	return 0;
}

int tt_an_thread_sched_section(struct tt_an_thread *th, uint64_t lost, int64_t since_ns,
			       const struct tt_sched_state *states, size_t n, int64_t offset_ns)
{
	struct tt_sched_state head[2];
	size_t k = tt_sched_head(&th->states.last_ns, lost, since_ns, states, n, head);
	if (tt_an_thread_states(th, head, k, offset_ns) < 0)
		return -1;
	return tt_an_thread_states(th, states, n, offset_ns);
}

/* The first state after `ns` (h->n: none). */
static size_t tt_an_states_after(const struct tt_an_states *h, int64_t ns)
{
	size_t lo = h->from, hi = h->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->at[mid].ns <= ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool tt_an_split(const struct tt_an_thread *th, int64_t start, int64_t end,
		 struct tt_an_split *split)
{
	const struct tt_an_states *h = &th->states;
	*split = (struct tt_an_split){0};
	if (!h->known)
		return false;
	size_t i = tt_an_states_after(h, start);
	/* (before the first state: not known) */
	uint32_t what = i > h->from ? h->at[i - 1].what : TT_SCHED_UNKNOWN;
	int64_t at = start;
	for (;; i++) {
		int64_t next = i < h->n && h->at[i].ns < end ? h->at[i].ns : end;
		int64_t *into = what == TT_SCHED_PREEMPTED ? &split->preempted
			      : what == TT_SCHED_BLOCKED   ? &split->blocked
			      : what == TT_SCHED_UNKNOWN   ? &split->unknown
							   : &split->on_cpu;
		*into += next - at;
		at = next;
		if (at >= end)
			break;
		what = h->at[i].what;
	}
	return true;
}

/* ---- the counters: the second source ---- */

void tt_an_thread_tick(struct tt_an_thread *th, const struct tt_machine_info *machine)
{
	th->counters.tick_ns = machine->flags & TT_MACHINE_TICK ? machine->tick_ns : 0;
	th->counters.tick_each = th->counters.tick_ns && (machine->flags & TT_MACHINE_TICK_EACH);
}

int tt_an_thread_counters(struct tt_an_thread *th, const struct tt_schedstat_sample *readings,
			  size_t n, uint32_t flags, int64_t offset_ns)
{
	struct tt_an_counters *c = &th->counters;
	c->source = true;
	c->steal = flags & TT_SCHEDSTAT_STEAL;
	c->run_only = flags & TT_SCHEDSTAT_RUN_ONLY;
	c->tick_steps = flags & TT_SCHEDSTAT_TICK_STEPS;
	c->switch_count = c->run_only && (flags & TT_SCHEDSTAT_SWITCH_COUNT);
	c->budget |= (flags & TT_SCHEDSTAT_BUDGET) != 0; /* (unread since the thread's start) */
	c->blind |= (flags & TT_SCHEDSTAT_BLIND) != 0; /* (as budget) */
	if (tt_an_room(th->an, (void **)&c->at, &c->from, &c->n, &c->cap, n, sizeof *c->at) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct tt_schedstat_sample r = readings[i];
		r.ns -= offset_ns;
		if (c->n && r.ns < c->at[c->n - 1].ns) /* never from the kernel */
			r.ns = c->at[c->n - 1].ns;
		c->at[c->n++] = r;
	}
	if (n && (flags & TT_SCHEDSTAT_OWN_FIRST))
		c->own_ns[c->owns++ % 4] = c->at[c->n - n].ns;
	if (n && (flags & TT_SCHEDSTAT_OWN_LAST))
		c->own_ns[c->owns++ % 4] = c->at[c->n - 1].ns;
	return 0;
}

/* Whether r was read by the thread itself (it ran as its values were read). */
static bool tt_an_counters_own(const struct tt_an_counters *c, const struct tt_schedstat_sample *r)
{
	for (unsigned i = 0; r && i < c->owns && i < 4; i++)
		if (c->own_ns[i] == r->ns)
			return true;
	return false;
}

/* The first reading at or after `ns` (c->n: none). */
static size_t tt_an_counters_from(const struct tt_an_counters *c, int64_t ns)
{
	size_t lo = c->from, hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->at[mid].ns < ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The thread's CPU time r and run-queue wait w at a moment `x` it ran (it recorded an
 * event then), from the readings before (`lo`) and after (`hi`) it: what they allow.
 * Both only grow, from 0. Its CPU time grows at most as fast as the clock. Its wait is
 * counted as each wait ends: since the thread ran at x, a wait counted after x began
 * after x, and with the time it ran after x it fits between x and hi (r + w is at
 * most hi's by hi - x); a wait counted before x may have begun before lo (which bounds
 * nothing of it). A reading's values were read within TT_SCHEDSTAT_SPAN_NS before it
 * (format.h), so one less than that after x may have read w before x, and lack a wait
 * that ended between: the upper bounds are those of the first reading that much after
 * x (`hi_up`), and r is at most lo's by the span more. The three intervals, of r, w
 * and r + w, make a hexagon (or less). */
struct tt_an_edge {
	int64_t lo[3], hi[3]; /* [0] r, [1] w, [2] r + w */
	int64_t at[3];        /* the estimate: the hexagon's centre (below) */
	int64_t err[3];       /* how far each of the three may be from it */
};

/* The thread's CPU time over a spike, for its stolen time: its value and twice how far
 * it may be from the kernel's. */
struct tt_an_estimate {
	int64_t value, width;
};

#define TT_AN_NO_GUESS INT64_MIN
#define TT_AN_UNBOUNDED (INT64_MAX / 4)

/* `since`: a moment the thread is known to have run at or after, before lo's wait was
 * read (for its end: the spike's start, or a reading inside it its CPU time grew
 * after), or TT_AN_NO_GUESS. */
static void tt_an_edge_bounds(struct tt_an_edge *e, const struct tt_schedstat_sample *lo,
			      const struct tt_schedstat_sample *hi, const struct tt_schedstat_sample *hi_up,
			      bool hi_own, int64_t x, int64_t since, bool run_only)
{
	for (int i = 0; i < 3; i++) {
		e->lo[i] = 0;
		e->hi[i] = TT_AN_UNBOUNDED;
	}
	for (const struct tt_schedstat_sample *after = hi; after; after = after == hi_up ? NULL : hi_up) {
		int64_t gap = after->ns - x > 0 ? after->ns - x : 0;
		int64_t v[3] = {(int64_t)after->run_ns, (int64_t)after->wait_ns,
				(int64_t)(after->run_ns + after->wait_ns)};
		for (int i = 0; i < 3; i++)
			e->lo[i] = v[i] - gap > e->lo[i] ? v[i] - gap : e->lo[i];
	}
	if (hi_up) {
		e->hi[0] = (int64_t)hi_up->run_ns;
		e->hi[1] = (int64_t)hi_up->wait_ns;
		e->hi[2] = (int64_t)(hi_up->run_ns + hi_up->wait_ns);
	}
	if (hi && hi != hi_up) { /* (its CPU time read before x by less than the span) */
		int64_t before = TT_SCHEDSTAT_SPAN_NS - (hi->ns - x);
		before = before > 0 ? before : 0;
		int64_t v[3] = {(int64_t)hi->run_ns, (int64_t)hi->wait_ns, (int64_t)(hi->run_ns + hi->wait_ns)};
		/* (read by the thread itself: a wait counted between its reading and x lies
		 * between them too, the span at most; another thread's bounds no wait) */
		for (int i = 0; i < (hi_own ? 3 : 1); i++)
			e->hi[i] = v[i] + before < e->hi[i] ? v[i] + before : e->hi[i];
	}
	if (lo) {
		int64_t r = (int64_t)lo->run_ns, w = (int64_t)lo->wait_ns;
		int64_t past = x - lo->ns > 0 ? x - lo->ns : 0;
		e->lo[0] = r > e->lo[0] ? r : e->lo[0];
		int64_t most = tt_an_plus_sat(tt_an_plus_sat(r, past), TT_SCHEDSTAT_SPAN_NS);
		e->hi[0] = most < e->hi[0] ? most : e->hi[0];
		e->lo[1] = w > e->lo[1] ? w : e->lo[1];
		e->lo[2] = r + w > e->lo[2] ? r + w : e->lo[2];
		if (since != TT_AN_NO_GUESS) { /* (its waits since lo began after since) */
			int64_t span = x - since;
			e->hi[1] = w + span < e->hi[1] ? w + span : e->hi[1];
			e->hi[2] = r + w + span < e->hi[2] ? r + w + span : e->hi[2];
		}
	}
	if (run_only) { /* (no wait read: r alone) */
		e->lo[1] = e->hi[1] = 0;
		e->lo[2] = e->lo[0], e->hi[2] = e->hi[0];
	}
}

/* Each of the edge's intervals as narrow as the other two allow; false (and nothing
 * changed) where they leave nothing: readings that disagree (a kernel's rounding). */
static bool tt_an_edge_tighten(struct tt_an_edge *e)
{
	int64_t r_lo = e->lo[2] - e->hi[1] > e->lo[0] ? e->lo[2] - e->hi[1] : e->lo[0];
	int64_t r_hi = e->hi[2] - e->lo[1] < e->hi[0] ? e->hi[2] - e->lo[1] : e->hi[0];
	int64_t w_lo = e->lo[2] - e->hi[0] > e->lo[1] ? e->lo[2] - e->hi[0] : e->lo[1];
	int64_t w_hi = e->hi[2] - e->lo[0] < e->hi[1] ? e->hi[2] - e->lo[0] : e->hi[1];
	int64_t s_lo = e->lo[0] + e->lo[1] > e->lo[2] ? e->lo[0] + e->lo[1] : e->lo[2];
	int64_t s_hi = e->hi[0] + e->hi[1] < e->hi[2] ? e->hi[0] + e->hi[1] : e->hi[2];
	if (r_lo > r_hi || w_lo > w_hi || s_lo > s_hi)
		return false;
	e->lo[0] = r_lo, e->hi[0] = r_hi;
	e->lo[1] = w_lo, e->hi[1] = w_hi;
	e->lo[2] = s_lo, e->hi[2] = s_hi;
	return true;
}

/* The two edges of a spike `dur` long, each narrowed by the other: r, w and r + w
 * grow by 0 to dur across it (a thread that never slept in it has its start's r + w
 * pinned by its end's, however late its first reading came). */
static void tt_an_edges_tighten(struct tt_an_edge *s, struct tt_an_edge *e, int64_t dur)
{
	struct tt_an_edge *edge[2] = {s, e};
	for (int k = 0; k < 2; k++) {
		if (tt_an_edge_tighten(edge[k]))
			continue;
		/* (the sum's interval left out; a reading's clocks taken a moment apart) */
		for (int i = 0; i < 2; i++)
			if (edge[k]->hi[i] < edge[k]->lo[i])
				edge[k]->hi[i] = edge[k]->lo[i];
		edge[k]->lo[2] = edge[k]->lo[0] + edge[k]->lo[1];
		edge[k]->hi[2] = edge[k]->hi[0] + edge[k]->hi[1];
	}
	struct tt_an_edge s2 = *s, e2 = *e;
	for (int i = 0; i < 3; i++) {
		s2.lo[i] = e->lo[i] - dur > s->lo[i] ? e->lo[i] - dur : s->lo[i];
		s2.hi[i] = e->hi[i] < s->hi[i] ? e->hi[i] : s->hi[i];
		e2.lo[i] = s->lo[i] > e->lo[i] ? s->lo[i] : e->lo[i];
		e2.hi[i] = s->hi[i] + dur < e->hi[i] ? s->hi[i] + dur : e->hi[i];
	}
	if (tt_an_edge_tighten(&s2) && tt_an_edge_tighten(&e2))
		*s = s2, *e = e2;
}

static int64_t tt_an_clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* The estimate whose farthest point of the hexagon is nearest, each of r, w and r + w
 * counted (the three parts of a split are their differences across the spike): the
 * least radius R such that r's interval lies within R of it, w's and r + w's too;
 * among the estimates that reach it, the nearest to `guess` (r and w: the counters'
 * pace inside the spike carried to its edge), else the middle. A reading long after
 * x leaves each of r and w anywhere in [0, gap] but their sum too: R is two thirds
 * of the gap, where the intervals alone would say all of it. */
static void tt_an_edge_estimate(struct tt_an_edge *e, int64_t guess_r, int64_t guess_w)
{
	int64_t R = 0;
	for (int i = 0; i < 3; i++)
		R = (e->hi[i] - e->lo[i] + 1) / 2 > R ? (e->hi[i] - e->lo[i] + 1) / 2 : R;
	int64_t a = (e->hi[0] + e->hi[1] - e->lo[2] + 2) / 3, b = (e->hi[2] - e->lo[0] - e->lo[1] + 2) / 3;
	R = a > R ? a : R;
	R = b > R ? b : R;
	/* r + w within R of every sum, r and w each of theirs */
	int64_t sum_lo = e->hi[0] + e->hi[1] - 2 * R, sum_hi = e->lo[0] + e->lo[1] + 2 * R;
	sum_lo = e->hi[2] - R > sum_lo ? e->hi[2] - R : sum_lo;
	sum_hi = e->lo[2] + R < sum_hi ? e->lo[2] + R : sum_hi;
	bool guessed = guess_r != TT_AN_NO_GUESS && guess_w != TT_AN_NO_GUESS;
	int64_t sum = tt_an_clamp(guessed ? guess_r + guess_w : sum_lo + (sum_hi - sum_lo) / 2, sum_lo, sum_hi);
	int64_t r_lo = e->hi[0] - R > sum - (e->lo[1] + R) ? e->hi[0] - R : sum - (e->lo[1] + R);
	int64_t r_hi = e->lo[0] + R < sum - (e->hi[1] - R) ? e->lo[0] + R : sum - (e->hi[1] - R);
	int64_t r = tt_an_clamp(guessed ? guess_r : r_lo + (r_hi - r_lo) / 2, r_lo, r_hi);
	e->at[0] = r, e->at[1] = sum - r, e->at[2] = sum;
	for (int i = 0; i < 3; i++)
		e->err[i] = e->at[i] - e->lo[i] > e->hi[i] - e->at[i] ? e->at[i] - e->lo[i] : e->hi[i] - e->at[i];
}

/* A counter at x at the pace it had from reading a to reading b (inside the spike),
 * carried from `from` (a or b); TT_AN_NO_GUESS without two readings. */
static int64_t tt_an_paced(const struct tt_schedstat_sample *a, const struct tt_schedstat_sample *b,
			   size_t field, bool from_b, int64_t x)
{
	if (!a || !b || b->ns <= a->ns)
		return TT_AN_NO_GUESS;
	int64_t va = (int64_t) * (const uint64_t *)((const char *)a + field);
	int64_t vb = (int64_t) * (const uint64_t *)((const char *)b + field);
	double pace = (double)(vb - va) / (double)(b->ns - a->ns);
	return from_b ? vb - (int64_t)(pace * (double)(b->ns - x)) : va + (int64_t)(pace * (double)(x - a->ns));
}

/* How [start, end) split by the counters read around it; false: no reading after its
 * start, or none before its end. causes->miss: why it would say nothing (where any
 * was read); miss_start_ns and miss_end_ns: how far from its edges the readings that
 * bound them are (inside it where there are, else outside). */
static bool tt_an_counters_split(const struct tt_an_counters *c, int64_t start, int64_t end,
				 struct tt_an_split *split, struct tt_an_causes *causes,
				 struct tt_an_estimate *cpu)
{
	size_t i = tt_an_counters_from(c, start), k = tt_an_counters_from(c, end);
	size_t i_up = tt_an_counters_from(c, tt_an_plus_sat(start, TT_SCHEDSTAT_SPAN_NS));
	size_t k_up = tt_an_counters_from(c, tt_an_plus_sat(end, TT_SCHEDSTAT_SPAN_NS));
	const struct tt_schedstat_sample *s_lo = i > c->from ? &c->at[i - 1] : NULL;
	const struct tt_schedstat_sample *s_hi = i < c->n ? &c->at[i] : NULL;
	const struct tt_schedstat_sample *e_lo = k > c->from ? &c->at[k - 1] : NULL;
	const struct tt_schedstat_sample *e_hi = k < c->n ? &c->at[k] : NULL;
	if (!s_hi || !e_lo || (!s_lo && s_hi->ns > end)) {
		causes->miss = !c->n ? TT_AN_MISS_NONE : !s_hi ? TT_AN_MISS_NOT_AFTER : TT_AN_MISS_NOT_BEFORE;
		return false;
	}
	bool inside = s_hi->ns < end;
	causes->miss = inside ? TT_AN_MISS_TOO_FAR : TT_AN_MISS_NOT_INSIDE; /* (if too coarse) */
	causes->miss_start_ns = inside || !s_lo ? s_hi->ns - start : start - s_lo->ns;
	causes->miss_end_ns = inside || !e_hi ? end - e_lo->ns : e_hi->ns - end;
	/* (the readings on the far side of each edge, how late the first came, and the
	 * thread's own wait for a CPU meanwhile: the load tt-sched, in its process, had too) */
	struct tt_an_miss_detail *said = &causes->miss_detail;
	if (end - start > TT_COUNTERS_AFTER_NS && s_hi->ns - start >= 2 * TT_COUNTERS_AFTER_NS)
		said->late_ns = s_hi->ns - start - TT_COUNTERS_AFTER_NS;
	said->before_ns = s_lo ? start - s_lo->ns : TT_AN_MISS_FAR_NONE;
	said->after_ns = e_hi ? e_hi->ns - end : TT_AN_MISS_FAR_NONE;
	if (s_lo && !c->run_only && s_hi->ns > s_lo->ns && s_hi->wait_ns >= s_lo->wait_ns) {
		said->waited_ns = (int64_t)(s_hi->wait_ns - s_lo->wait_ns);
		said->over_ns = s_hi->ns - s_lo->ns;
	}
	/* The pace inside it: from its first reading to the next one (before its end, or
	 * the one after it), back to its start; from the reading before its last to its
	 * last, on to its end. */
	const struct tt_schedstat_sample *s_next = i + 1 < c->n && s_hi->ns < end ? &c->at[i + 1] : NULL;
	const struct tt_schedstat_sample *e_prev = k >= c->from + 2 && e_lo->ns > start ? &c->at[k - 2] : NULL;
#define TT_AN_FIELD(field) offsetof(struct tt_schedstat_sample, field)
	struct tt_an_edge s, e;
	/* (a reading the thread took itself: it ran then, so the waits it counted after
	 * began after; one just outside the spike bounds each part within its distance) */
	bool own_lo = tt_an_counters_own(c, s_lo);
	tt_an_edge_bounds(&s, s_lo, s_hi, i_up < c->n ? &c->at[i_up] : NULL, tt_an_counters_own(c, s_hi), start,
			  own_lo ? s_lo->ns - TT_SCHEDSTAT_SPAN_NS : TT_AN_NO_GUESS, c->run_only);
	/* The thread ran at its start, and between a reading and the next where its CPU
	 * time grew (read first: before the next one's wait): the later of the two, where
	 * before its last reading's wait was read, bounds the waits counted after it (a
	 * wait then under way began after it). */
	int64_t ran = e_lo->ns - start >= TT_SCHEDSTAT_SPAN_NS ? start : TT_AN_NO_GUESS;
	if (e_prev && e_lo->run_ns > e_prev->run_ns && e_prev->ns - TT_SCHEDSTAT_SPAN_NS > ran)
		ran = e_prev->ns - TT_SCHEDSTAT_SPAN_NS;
	if (tt_an_counters_own(c, e_lo) && e_lo->ns - TT_SCHEDSTAT_SPAN_NS > ran)
		ran = e_lo->ns - TT_SCHEDSTAT_SPAN_NS;
	tt_an_edge_bounds(&e, e_lo, e_hi, k_up < c->n ? &c->at[k_up] : NULL, tt_an_counters_own(c, e_hi), end, ran,
			  c->run_only);
	tt_an_edges_tighten(&s, &e, end - start);
	tt_an_edge_estimate(&s, tt_an_paced(s_hi, s_next, TT_AN_FIELD(run_ns), false, start),
			    c->run_only ? 0 : tt_an_paced(s_hi, s_next, TT_AN_FIELD(wait_ns), false, start));
	tt_an_edge_estimate(&e, tt_an_paced(e_prev, e_lo, TT_AN_FIELD(run_ns), true, end),
			    c->run_only ? 0 : tt_an_paced(e_prev, e_lo, TT_AN_FIELD(wait_ns), true, end));
#undef TT_AN_FIELD
	int64_t dur = end - start;
	int64_t on = e.at[0] - s.at[0], pre = e.at[1] - s.at[1];
	/* Which edges no reading bounds within a quarter of its length: where the split
	 * says nothing (its error half its length), one at least, or the tick's steps. */
	int64_t edge_err[2] = {0, 0};
	for (int p = 0; p < (c->run_only ? 1 : 3); p++) {
		edge_err[0] = s.err[p] > edge_err[0] ? s.err[p] : edge_err[0];
		edge_err[1] = e.err[p] > edge_err[1] ? e.err[p] : edge_err[1];
	}
	said->edges = (4 * edge_err[0] >= dur ? TT_AN_EDGE_START : 0u) | (4 * edge_err[1] >= dur ? TT_AN_EDGE_END : 0u);
	said->tick = c->tick_steps && !said->edges;
	if (c->tick_steps) {
		causes->tick_ns = c->tick_ns ? c->tick_ns : TT_SCHEDSTAT_TICK_NS;
		causes->tick_behind_ns = c->tick_each ? 2 * causes->tick_ns : causes->tick_ns;
		causes->tick_said = c->tick_ns != 0;
	}
	if (c->run_only) { /* (off CPU, not told apart: unknown) */
		/* On CPU within the edges' errors and the tick's steps, and within [0, dur]:
		 * the middle of both (a blocked spike's CPU time still across it, its readings
		 * either side, on CPU is none to one behind, not none within two) */
		int64_t err = s.err[0] + e.err[0] + causes->tick_behind_ns;
		int64_t lo = tt_an_clamp(tt_an_plus_sat(on, -err), 0, dur), hi = tt_an_clamp(tt_an_plus_sat(on, err), 0, dur);
		on = lo + (hi - lo) / 2;
		*cpu = (struct tt_an_estimate){on, 2 * (s.err[0] + e.err[0])};
		*split = (struct tt_an_split){on, 0, 0, dur - on};
		causes->error_ns = hi - on;
		/* Its switches in from the readings inside it (at least) to those around it
		 * (at most). None: it ran at both edges and was never switched out between,
		 * on CPU throughout by the scheduler; what its CPU time lacks, the
		 * hypervisor's or the interrupts'. */
		if (c->switch_count && s_lo && e_hi) {
			causes->switches_counted = true;
			causes->switches_max = e_hi->timeslices - s_lo->timeslices;
			causes->switches_min = s_hi->ns <= e_lo->ns ? e_lo->timeslices - s_hi->timeslices : 0;
			if (!causes->switches_max) {
				*split = (struct tt_an_split){dur, 0, 0, 0};
				causes->stolen_known = true;
				causes->stolen_ns = dur - on;
				causes->stolen_error_ns = causes->error_ns;
			}
		}
		return true;
	}
	on = on < 0 ? 0 : on > dur ? dur : on;
	*cpu = (struct tt_an_estimate){on, 2 * (s.err[0] + e.err[0])};
	pre = pre < 0 ? 0 : pre > dur - on ? dur - on : pre;
	*split = (struct tt_an_split){on, pre, dur - on - pre, 0}; /* (the counters cover it all) */
	/* On CPU is r's difference, preempted w's, blocked (the rest) r + w's: each within
	 * its two edges' errors (clamping into [0, dur] brings none farther). */
	causes->error_ns = s.err[0] + e.err[0];
	for (int p = 1; p < 3; p++)
		if (s.err[p] + e.err[p] > causes->error_ns)
			causes->error_ns = s.err[p] + e.err[p];
	return true;
}

/* The page faults of [start, end): all of them from the reading at or before its
 * start to the one at or after its end (at most, where those reach outside it);
 * else at least those between two readings
 * inside it; else
 * none known. (The nearest readings, one the same for both edges at times, or both
 * inside it, made a measured-looking 0 or too few: outside recheck r40, F1.) */
static void tt_an_counters_faults(const struct tt_an_counters *c, int64_t start, int64_t end,
				  struct tt_an_causes *causes)
{
	size_t i = tt_an_counters_from(c, tt_an_plus_sat(start, 1)), k = tt_an_counters_from(c, end);
	const struct tt_schedstat_sample *from = i > c->from ? &c->at[i - 1] : NULL, *to = k < c->n ? &c->at[k] : NULL;
	causes->faults_at_least = !from || !to;
	if (causes->faults_at_least) { /* (inside it: the first and the last, two of them) */
		from = i < c->n && c->at[i].ns < end ? &c->at[i] : NULL;
		to = k > c->from && k - 1 > i ? &c->at[k - 1] : NULL;
	}
	if (!from || !to)
		return;
	causes->faults = true;
	causes->minor_faults = to->minflt - from->minflt;
	causes->major_faults = to->majflt - from->majflt;
	causes->faults_at_most = !causes->faults_at_least && (from->ns < start || to->ns > end) &&
				 (causes->minor_faults || causes->major_faults);
	causes->faults_read_ns = causes->faults_at_most ? to->ns - from->ns : 0;
}

/* ---- the wait for a CPU after a wake-up: the switches and the counters together ---- */

/* A reading's moment (tt_os_counters_read: the monotonic clock, the switches' too, read
 * just after the file): a switch in this long before it may have come after the read. */
#define TT_AN_READ_NEAR_NS 20000
/* But one switch in now and then is recorded far later than its pick: 1.31 ms seen, on
 * a loaded VM (sched_lost's pp_late: 1 run in ~900 at load 25-55, the thread charged
 * CPU time from the pick, its record held, no loss). Readings around it show it (the
 * kernel's move); where none measured the switches in of a spike four times this long
 * or more (one tt-sched was to read), one of them is taken as up to this late. A
 * shorter one keeps TT_AN_READ_NEAR_NS each: this would be a quarter of it or more, up
 * to a split whose parts say nothing, for what is one switch in of a great many. */
#define TT_AN_IN_LATE_MOST_NS 2000000

/* Whether a wait that began at state `out` and ended at `in` (NULL: not known yet)
 * may be counted in parts: the thread came back on another CPU (or one not said). The
 * kernel counts a wait as it ends, and the wait so far as the thread moves to another
 * CPU's run queue (outside recheck r42 N6: a 44 ms wait counted 2.4 ms before its
 * end, the thread back on the other CPU; of 1,076 preemptions of its thread, 3 so). */
static bool tt_an_moved_queues(const struct tt_sched_state *out, const struct tt_sched_state *in)
{
	return !in || in->what != TT_SCHED_RUNNING || in->cpu != out->cpu || in->cpu == TT_NO_CPU;
}

/* What of the wait under way at `to` (h->at[j - 1]'s, h->at[j] the state after it)
 * since `since` the kernel may have counted by then: none but where it moves queues. */
static int64_t tt_an_counted_midway(const struct tt_an_states *h, size_t j, int64_t since, int64_t to)
{
	const struct tt_sched_state *now = &h->at[j - 1];
	if (now->what == TT_SCHED_RUNNING || now->what == TT_SCHED_UNKNOWN ||
	    !tt_an_moved_queues(now, j < h->n ? &h->at[j] : NULL))
		return 0;
	int64_t from = now->ns > since ? now->ns : since;
	return to > from ? to - from : 0;
}

/* How far the thread's switches are all known: to its last state, or past it as far
 * as the states say they are complete (a file's: its thread's exit; a live reader's:
 * its last drain). */
static int64_t tt_an_states_known(const struct tt_an_states *h)
{
	return h->n && h->at[h->n - 1].ns > h->complete_ns ? h->at[h->n - 1].ns : h->complete_ns;
}

/* The thread's run-queue wait at a moment x it ran, bounded by reading r and the
 * switches between them: the kernel adds each wait as it ends, the thread switched
 * in: a preempted stretch all of it, a blocked one the part after its wake-up (none to
 * all of it). False where a state between is not known. A reading after the switches
 * known (the thread's own at its exit, after its last drain; the live detector's, its
 * next drain not come yet): the waits counted after them lie between them and r,
 * and so does one under way there, from its start (each began after x, where the
 * thread ran). (Before, such a reading bounded nothing, and a thread whose readings
 * after a spike all came so had its waits after wake-ups unbounded, error all of
 * blocked: outside test r48 F3, 2 ms mutex waits that the kernel's figures put right
 * to 20 us.) */
static bool tt_an_wait_at(const struct tt_an_thread *th, const struct tt_schedstat_sample *r, int64_t x,
			  int64_t *lo, int64_t *hi)
{
	const struct tt_an_states *h = &th->states;
	bool after = r->ns > x;
	if (after && !h->n)
		return false;
	int64_t from = after ? x : r->ns - TT_AN_READ_NEAR_NS, to = after ? r->ns : x;
	size_t j = tt_an_states_after(h, from);
	if (j == h->from || h->at[j - 1].what == TT_SCHED_UNKNOWN)
		return false;
	int64_t add_lo = 0, add_hi = 0;
	for (; j < h->n && h->at[j].ns <= to; j++) {
		const struct tt_sched_state *in = &h->at[j], *out = &h->at[j - 1];
		if (in->what == TT_SCHED_UNKNOWN)
			return false;
		if (in->what != TT_SCHED_RUNNING || out->what == TT_SCHED_RUNNING)
			continue;
		int64_t len = in->ns - out->ns;
		bool near = in->ns > r->ns - TT_AN_READ_NEAR_NS && in->ns <= r->ns;
		/* (a wait that moved queues: what it had before r may be in r's) */
		int64_t counted = !after && tt_an_moved_queues(out, in) && r->ns > out->ns ? r->ns - out->ns : 0;
		add_lo += out->what == TT_SCHED_PREEMPTED && !near && counted < len ? len - counted : 0;
		add_hi += len;
	}
	int64_t known = tt_an_states_known(h);
	if (after && known < r->ns) { /* (the tail after the switches known) */
		const struct tt_sched_state *last = &h->at[h->n - 1];
		int64_t since = last->what == TT_SCHED_RUNNING ? known : last->ns > x ? last->ns : x;
		add_hi = tt_an_plus_sat(add_hi, r->ns - since);
	} else if (after) { /* (the wait under way at r, where it moved queues) */
		add_hi += tt_an_counted_midway(h, j, x, r->ns);
	}
	int64_t w = (int64_t)r->wait_ns;
	*lo = after ? w - add_hi : w + add_lo;
	*hi = after ? w - add_lo : w + add_hi;
	return true;
}

/* The run-queue wait at x from the readings either side of it, each bounding it: the
 * narrower where they disagree (the kernel's rounding). */
static bool tt_an_wait_edge(const struct tt_an_thread *th, int64_t x, int64_t *lo, int64_t *hi)
{
	const struct tt_an_counters *c = &th->counters;
	size_t i = tt_an_counters_from(c, x);
	int64_t l[2], h[2];
	bool got[2] = {i > c->from && tt_an_wait_at(th, &c->at[i - 1], x, &l[0], &h[0]),
		       i < c->n && tt_an_wait_at(th, &c->at[i], x, &l[1], &h[1])};
	if (!got[0] && !got[1])
		return false;
	int k = !got[0] || (got[1] && h[1] - l[1] < h[0] - l[0]);
	*lo = l[k], *hi = h[k];
	if (got[0] && got[1] && (l[!k] > *lo ? l[!k] : *lo) <= (h[!k] < *hi ? h[!k] : *hi)) {
		*lo = l[!k] > *lo ? l[!k] : *lo;
		*hi = h[!k] < *hi ? h[!k] : *hi;
	}
	return true;
}

/* ---- the kernel's accounting against the switches ---- */

/* How far a reading at x may hold time its thread's switch in just after x has on the
 * other side: the kernel charges the thread's CPU time and ends its wait as it picks
 * it, before the context switch its record comes after (TT_AN_READ_NEAR_NS at most,
 * less how far after x it came); 0: none came so near. */
static int64_t tt_an_switched_in_late(const struct tt_an_states *h, int64_t x)
{
	for (size_t j = tt_an_states_after(h, x); j < h->n && h->at[j].ns <= tt_an_plus_sat(x, TT_AN_READ_NEAR_NS); j++)
		if (j > h->from && h->at[j].what == TT_SCHED_RUNNING && h->at[j - 1].what != TT_SCHED_RUNNING)
			return TT_AN_READ_NEAR_NS - (h->at[j].ns - x);
	return 0;
}

/* How much of the switches' time on CPU the kernel's own figures count as waiting for
 * a CPU (negative: the other way): lo to hi. */
struct tt_an_moved {
	int64_t lo, hi;
	int64_t measured; /* (a sum's: the preemptions inside the readings that measured it) */
	/* The switches' on CPU less the CPU time, from the CPU time alone: what the
	 * hypervisor stole (which the CPU clock leaves out), less what the kernel counts
	 * beyond the switches' (it charges a thread from when it picks it, its switch in
	 * recorded after the context switch), run_lo to run_hi. The wait's bounds above
	 * may miss the latter: three threads spinning on one CPU, on CPU up to 12 us a
	 * spike below the CPU clock past them. */
	int64_t run_lo, run_hi;
	int64_t ins; /* (a sum's: the switches in inside the readings that measured it) */
	int64_t unmeasured_ins; /* (a sum's: its switches in where none was measured) */
};

/* Waits a reading may hold or not (a switch in within a reading's span of it), each
 * whole: the kernel adds a wait as it ends. Told apart up to TT_AN_EITHER_MAX; the
 * rest, and what may hold any part (wake-ups' waits, a tail not known yet), spread. */
#define TT_AN_EITHER_MAX 8
struct tt_an_either {
	int64_t len[TT_AN_EITHER_MAX];
	int n;
	int64_t spread;
};

static void tt_an_either_add(struct tt_an_either *e, int64_t len)
{
	if (e->n < TT_AN_EITHER_MAX)
		e->len[e->n++] = len;
	else
		e->spread = tt_an_plus_sat(e->spread, len);
}

/* The move `base` (the wait's growth less the waits the readings surely hold) leaves,
 * lo to hi: less those of e's waits the readings hold and none to e->spread. Of the
 * choices of which they hold, those whose move comes within [near_lo, near_hi]: the
 * kernel's clock and the switches' differ by a context switch's few microseconds each,
 * and a move beyond those shows in the CPU time as well (less what the hypervisor
 * stole); none such (readings that disagree): all of them. Each whole wait taken as
 * none to all of it made the move as large as the waits themselves (outside recheck
 * r43 R1: a 16.7 ms wait ended 12 us after a reading, taken for 16.7 ms the kernel
 * might have moved, where the next reading showed it: "within 16.7 ms" of a 31.8 ms
 * spike, the switches within 9 us of schedstat read inside it). */
static void tt_an_either_bounds(const struct tt_an_either *e, int64_t base, int64_t near_lo, int64_t near_hi,
				int64_t *lo, int64_t *hi)
{
	int64_t all = 0;
	for (int i = 0; i < e->n; i++)
		all = tt_an_plus_sat(all, e->len[i]);
	*lo = tt_an_plus_sat(base, -tt_an_plus_sat(all, e->spread));
	*hi = base;
	bool agree = false;
	int64_t l = 0, h = 0;
	for (unsigned held = 0; held < 1u << e->n; held++) {
		int64_t sum = 0;
		for (int i = 0; i < e->n; i++)
			sum = held >> i & 1 ? tt_an_plus_sat(sum, e->len[i]) : sum;
		int64_t top = tt_an_plus_sat(base, -sum), bottom = tt_an_plus_sat(top, -e->spread);
		if (bottom > near_hi || top < near_lo)
			continue;
		l = agree && l < bottom ? l : bottom;
		h = agree && h > top ? h : top;
		agree = true;
	}
	if (agree)
		*lo = l, *hi = h;
}

/* The kernel's move between readings p and q, from its CPU time and run-queue wait
 * against the switches between them (each value read within TT_SCHEDSTAT_SPAN_NS
 * before its reading's moment: a switch that near is counted either way). Its wait
 * grows as each wait ends (the thread switched in): by the preempted stretches and by
 * the waits after wake-ups inside the blocked ones (none to all of each); what it
 * grows by beyond those the kernel counted as waiting where the switches say on CPU.
 * And as the thread moves to another CPU's run queue while it waits
 * (tt_an_moved_queues): a stretch begun before p may be in p's in part, one still
 * under way at q in q's (outside recheck r42 N6: 44 ms of a wait counted before p,
 * the rest after it, taken for 22 ms the kernel put on CPU inside an 8.2 ms spike).
 * Its CPU time then lacks as much, and the time stolen
 * from the thread too (none where the kernel does not account steal); the other
 * way, the kernel counts no more on CPU than its CPU time grew. A blocked stretch
 * ended between them leaves the move unbounded below: none is taken but what the CPU
 * time shows (the kernel counted more on CPU than the switches). False: not known (a
 * state not known). */
static bool tt_an_moved_between(const struct tt_an_thread *th, const struct tt_schedstat_sample *p,
				const struct tt_schedstat_sample *q, bool steal, struct tt_an_moved *m, bool *woken)
{
	const struct tt_an_states *h = &th->states;
	/* (after the states known, a live reader's next drain may add switches: none to
	 * all of that tail on CPU, or waiting) */
	int64_t known = tt_an_states_known(h);
	int64_t to = q->ns < known ? q->ns : known;
	/* (a hostile file's: a stretch or a counter's growth no clock allows, not weighed; a
	 * wait counted as it ends may have begun long before) */
	int64_t far = tt_an_plus_sat(q->ns, -TT_AN_UNBOUNDED / 2), span;
	int64_t p_near = tt_an_plus_sat(p->ns, -TT_SCHEDSTAT_SPAN_NS), q_near = tt_an_plus_sat(q->ns, -TT_SCHEDSTAT_SPAN_NS);
	if (p->ns < far || to <= p->ns || __builtin_sub_overflow(q->ns, p->ns, &span) ||
	    q->run_ns - p->run_ns > (uint64_t)span + TT_SCHEDSTAT_SPAN_NS ||
	    q->wait_ns - p->wait_ns > (uint64_t)TT_AN_UNBOUNDED)
		return false;
	int64_t tail = q->ns - to;
	struct tt_an_split all, near_p, near_q;
	if (!tt_an_split(th, p->ns, to, &all) || all.unknown)
		return false;
	tt_an_split(th, p_near, p->ns, &near_p);
	tt_an_split(th, q_near < to ? q_near : to, to, &near_q);
	int64_t ran = (int64_t)(q->run_ns - p->run_ns);
	/* (a switch in recorded just after a reading may have begun before it: q's CPU
	 * time may hold some of its run, p's too; outside recheck r41 F1, a reading 2.8 us
	 * before a switch in's record, on CPU 3.3 us below the CPU clock past the bound) */
	int64_t late_p = tt_an_switched_in_late(h, p->ns), late_q = tt_an_switched_in_late(h, q->ns);
	int64_t run_lo = all.on_cpu - near_q.on_cpu - near_q.unknown - late_q - ran;
	int64_t run_hi = all.on_cpu + tail + near_p.on_cpu + near_p.unknown + late_p - ran;
	size_t j = tt_an_states_after(h, p_near);
	if (j == h->from)
		return false;
	int64_t sure = 0, woke = 0, ins = 0;
	struct tt_an_either maybe = {0};
	for (; j < h->n && h->at[j].ns <= to; j++) {
		const struct tt_sched_state *in = &h->at[j], *out = &h->at[j - 1];
		if (in->what == TT_SCHED_UNKNOWN || out->what == TT_SCHED_UNKNOWN || out->ns < far)
			return false;
		if (in->what != TT_SCHED_RUNNING || out->what == TT_SCHED_RUNNING)
			continue;
		int64_t len = in->ns - out->ns;
		ins++;
		/* (where it moved queues, what it had before p may be in p's) */
		int64_t before = tt_an_moved_queues(out, in) && p->ns > out->ns ? p->ns - out->ns : 0;
		before = before < len ? before : len;
		if (out->what == TT_SCHED_BLOCKED)
			woke += len;
		else if (in->ns <= p->ns + (late_p ? TT_AN_READ_NEAR_NS : 0) || in->ns > q_near)
			tt_an_either_add(&maybe, len);
		else
			sure += len - before, maybe.spread += before;
	}
	const struct tt_sched_state *last = &h->at[j - 1];
	if (tail) { /* (the last state known may end in it: none to all of it) */
		if (last->what == TT_SCHED_UNKNOWN || last->ns < far)
			return false;
		*(last->what == TT_SCHED_BLOCKED ? &woke : &maybe.spread) +=
			last->what == TT_SCHED_RUNNING ? tail : q->ns - last->ns;
	}
	/* (the wait a switch in just after q ended may be counted in q's; one still under
	 * way, as far as it moved queues) */
	size_t k = late_q ? tt_an_states_after(h, q->ns) : h->n;
	for (; k < h->n; k++)
		if (h->at[k].what == TT_SCHED_RUNNING && h->at[k - 1].what != TT_SCHED_RUNNING) {
			int64_t len = h->at[k].ns - h->at[k - 1].ns;
			ins++;
			if (h->at[k - 1].what == TT_SCHED_BLOCKED)
				woke += len;
			else if (h->at[k - 1].what != TT_SCHED_UNKNOWN)
				tt_an_either_add(&maybe, len);
			break;
		}
	if (!tail && k == h->n)
		*(last->what == TT_SCHED_BLOCKED ? &woke : &maybe.spread) += tt_an_counted_midway(h, j, p->ns, to);
	int64_t waited = (int64_t)(q->wait_ns - p->wait_ns);
	m->run_lo = run_lo, m->run_hi = run_hi;
	maybe.spread = tt_an_plus_sat(maybe.spread, woke);
	int64_t lag = ins * TT_AN_READ_NEAR_NS;
	tt_an_either_bounds(&maybe, waited - sure, (run_lo < 0 ? run_lo : 0) - lag, (run_hi > 0 ? run_hi : 0) + lag,
			    &m->lo, &m->hi);
	/* (what it counts on CPU, the switches waiting: in its CPU time, read within the
	 * span of each moment) */
	m->lo = m->lo > -(ran + TT_SCHEDSTAT_SPAN_NS) ? m->lo : -(ran + TT_SCHEDSTAT_SPAN_NS);
	/* (stolen time is never negative; without steal accounted, the CPU time's lack is
	 * all of the move) */
	m->hi = run_hi < m->hi ? run_hi : m->hi;
	if (!steal)
		m->lo = run_lo > m->lo ? run_lo : m->lo;
	if (m->lo > m->hi) { /* (the CPU time and the wait disagree a little: between them) */
		int64_t lo = m->hi;
		m->hi = m->lo;
		m->lo = lo;
	}
	/* With steal accounted and a wake-up between, the wait's growth beyond the
	 * preemptions is the wake-ups' waits (tt_an_wakeups) or the move, and the CPU
	 * time's lack the move or stolen time: the move lies from none (or what is
	 * certain) to what both allow, not none (a stop-mode buffer full early, read again
	 * at the exit: 6 ms of 1453 preemptions under the kernel's wait, stated within 3.6
	 * ms, the move called stolen). */
	if (woke && steal)
		m->lo = m->lo > 0 ? m->lo : m->hi < 0 ? m->hi : 0;
	*woken = woke;
	return true;
}

/* A set of states, for tt_an_switches. */
#define TT_AN_SET(what) (1u << (what))
#define TT_AN_NOT_RUNNING (TT_AN_SET(TT_SCHED_PREEMPTED) | TT_AN_SET(TT_SCHED_BLOCKED) | TT_AN_SET(TT_SCHED_UNKNOWN))

/* The thread's switches from a state in `left` to one in `entered` in [from, to). */
static int64_t tt_an_switches(const struct tt_an_states *h, int64_t from, int64_t to, unsigned left,
			      unsigned entered)
{
	int64_t n = 0;
	for (size_t j = tt_an_states_after(h, from); j < h->n && h->at[j].ns < to; j++)
		n += j > h->from && (TT_AN_SET(h->at[j - 1].what) & left) && (TT_AN_SET(h->at[j].what) & entered);
	return n;
}

/* The thread's preemptions that ended in [from, to): where the kernel's accounting
 * moves. */
static int64_t tt_an_preemptions(const struct tt_an_states *h, int64_t from, int64_t to)
{
	return tt_an_switches(h, from, to, TT_AN_SET(TT_SCHED_PREEMPTED), TT_AN_SET(TT_SCHED_RUNNING));
}

/* The thread's switches in (preempted or blocked, then running) in [from, to). */
static int64_t tt_an_switches_in(const struct tt_an_states *h, int64_t from, int64_t to)
{
	return tt_an_switches(h, from, to, TT_AN_SET(TT_SCHED_PREEMPTED) | TT_AN_SET(TT_SCHED_BLOCKED),
			      TT_AN_SET(TT_SCHED_RUNNING));
}

/* `m`, between readings p and q, added to `sum`, the move over [start, end): all of it
 * where p and q are inside, else none to all of it (a move is at switches: one across
 * an edge whose switches are all on one side of it is on that side). */
static void tt_an_moved_add(const struct tt_an_thread *th, const struct tt_schedstat_sample *p,
			    const struct tt_schedstat_sample *q, struct tt_an_moved m, int64_t start, int64_t end,
			    struct tt_an_moved *sum)
{
	const struct tt_an_states *h = &th->states;
	size_t a = tt_an_states_after(h, p->ns), b = tt_an_states_after(h, q->ns);
	if (a < b && (h->at[a].ns >= end || h->at[b - 1].ns < start))
		return;
	bool inside = (p->ns >= start || (a < b && h->at[a].ns >= start)) &&
		      (q->ns <= end || (a < b && h->at[b - 1].ns < end));
	/* (held within TT_AN_UNBOUNDED: a hostile file's many stretches) */
	sum->lo = tt_an_clamp(tt_an_plus_sat(sum->lo, inside || m.lo < 0 ? m.lo : 0), -TT_AN_UNBOUNDED, TT_AN_UNBOUNDED);
	sum->hi = tt_an_clamp(tt_an_plus_sat(sum->hi, inside || m.hi > 0 ? m.hi : 0), -TT_AN_UNBOUNDED, TT_AN_UNBOUNDED);
	/* (the CPU time's lack across an edge: its switches out on the other side, each
	 * recorded after the kernel stopped the CPU time, may hide as much of the switches
	 * in's on this one, TT_AN_READ_NEAR_NS each at most, and no more than the time on
	 * CPU there) */
	int64_t hidden = 0;
	if (!inside) {
		struct tt_an_split before = {0}, after = {0};
		if (p->ns < start)
			tt_an_split(th, p->ns, start, &before);
		if (q->ns > end)
			tt_an_split(th, end, q->ns, &after);
		int64_t outs = tt_an_switches(h, p->ns, start, TT_AN_SET(TT_SCHED_RUNNING), TT_AN_NOT_RUNNING) +
			       tt_an_switches(h, end, q->ns, TT_AN_SET(TT_SCHED_RUNNING), TT_AN_NOT_RUNNING);
		int64_t there = before.on_cpu + before.unknown + after.on_cpu + after.unknown;
		hidden = outs * TT_AN_READ_NEAR_NS < there ? outs * TT_AN_READ_NEAR_NS : there;
	}
	sum->run_lo = tt_an_clamp(tt_an_plus_sat(sum->run_lo, (inside || m.run_lo < 0 ? m.run_lo : 0) - hidden),
				  -TT_AN_UNBOUNDED, TT_AN_UNBOUNDED);
	sum->run_hi = tt_an_clamp(tt_an_plus_sat(sum->run_hi, inside || m.run_hi > 0 ? m.run_hi : 0), -TT_AN_UNBOUNDED,
				  TT_AN_UNBOUNDED);
	sum->measured += tt_an_preemptions(h, p->ns > start ? p->ns : start, q->ns < end ? q->ns : end);
	sum->ins += tt_an_switches_in(h, p->ns > start ? p->ns : start, q->ns < end ? q->ns : end);
}

/* The move between readings `from` and `to` (a run of stretches inside [start, end),
 * none with a wake-up: SIZE_MAX, none), taken whole: a reading's span bounds it at its
 * ends alone. */
static void tt_an_moved_run(const struct tt_an_thread *th, size_t from, size_t to, int64_t start, int64_t end,
			    struct tt_an_moved *sum)
{
	const struct tt_an_counters *c = &th->counters;
	struct tt_an_moved m;
	bool woken;
	if (from < to && tt_an_moved_between(th, &c->at[from], &c->at[to], c->steal, &m, &woken))
		tt_an_moved_add(th, &c->at[from], &c->at[to], m, start, end, sum);
}

/* The kernel's move over [start, end) ({0, 0}: none known), from the readings around
 * and inside it: each run of them inside it with no wake-up between taken whole, each
 * stretch across an edge or with a wake-up alone. */
static struct tt_an_moved tt_an_moved_over(const struct tt_an_thread *th, int64_t start, int64_t end)
{
	const struct tt_an_counters *c = &th->counters;
	struct tt_an_moved sum = {0};
	if (c->run_only || c->tick_steps)
		return sum;
	size_t i = tt_an_counters_from(c, start), k = tt_an_counters_from(c, end);
	size_t first = i > c->from ? i - 1 : i, last = k < c->n || !k ? k : k - 1, from = SIZE_MAX;
	for (size_t j = first; j < last; j++) {
		struct tt_an_moved m;
		bool woken, known = tt_an_moved_between(th, &c->at[j], &c->at[j + 1], c->steal, &m, &woken);
		if (known && !woken && c->at[j].ns >= start && c->at[j + 1].ns <= end) {
			from = from == SIZE_MAX ? j : from;
			continue;
		}
		tt_an_moved_run(th, from, j, start, end, &sum);
		from = SIZE_MAX;
		if (known)
			tt_an_moved_add(th, &c->at[j], &c->at[j + 1], m, start, end, &sum);
	}
	tt_an_moved_run(th, from, last, start, end, &sum);
	/* The preemptions no two readings measured (before the first, past tt-sched's
	 * budget, or across a stretch not known) moved as much again as the measured did
	 * each, at most: none to twice that. */
	int64_t all = tt_an_preemptions(&th->states, start, end);
	if (sum.measured && all > sum.measured) {
		double more = 2.0 * (double)(sum.lo + sum.hi) / 2 / (double)sum.measured * (double)(all - sum.measured);
		more = more < -(double)TT_AN_UNBOUNDED ? -(double)TT_AN_UNBOUNDED
		     : more > (double)TT_AN_UNBOUNDED ? (double)TT_AN_UNBOUNDED : more;
		sum.lo = tt_an_clamp(sum.lo + (more < 0 ? (int64_t)more : 0), -TT_AN_UNBOUNDED, TT_AN_UNBOUNDED);
		sum.hi = tt_an_clamp(sum.hi + (more > 0 ? (int64_t)more : 0), -TT_AN_UNBOUNDED, TT_AN_UNBOUNDED);
	}
	/* The switches in no two readings measured ran the CPU time ahead of the switches'
	 * on CPU as much again as the measured did each, at most twice that; where none
	 * was, counted (tt_an_causes: cpu_ahead_most_ns). */
	int64_t ins = tt_an_switches_in(&th->states, start, end);
	if (ins > sum.ins && sum.ins) {
		double lack = 2.0 * (double)(sum.run_lo < 0 ? -sum.run_lo : 0) / (double)sum.ins * (double)(ins - sum.ins);
		lack = lack > (double)TT_AN_UNBOUNDED ? (double)TT_AN_UNBOUNDED : lack;
		sum.run_lo = tt_an_clamp(sum.run_lo - (int64_t)lack, -TT_AN_UNBOUNDED, TT_AN_UNBOUNDED);
	} else if (ins > sum.ins) {
		sum.unmeasured_ins = ins;
	}
	/* (of [start, end) no more than all of it: readings far outside it measure a
	 * stretch's move, none to all of which may be inside) */
	sum.lo = tt_an_clamp(sum.lo, start - end, end - start), sum.hi = tt_an_clamp(sum.hi, start - end, end - start);
	sum.run_lo = tt_an_clamp(sum.run_lo, start - end, end - start);
	sum.run_hi = tt_an_clamp(sum.run_hi, start - end, end - start);
	return sum;
}

/* The switches' split of [start, end) with its waits for a CPU after wake-ups moved
 * from blocked into preempted, as the readings bound them (their run-queue wait across
 * it, less all its preempted time), or said unbounded: of the `switched` ns of blocked
 * the switches say (the rest, spans without them split from the counters, holds
 * none: their preempted has them). */
static void tt_an_wakeups(const struct tt_an_thread *th, int64_t start, int64_t end, struct tt_an_split *split,
			  int64_t switched, struct tt_an_causes *causes)
{
	if (!switched)
		return;
	int64_t s_lo, s_hi, e_lo, e_hi;
	const struct tt_an_counters *c = &th->counters;
	if (c->run_only || c->tick_steps || !tt_an_wait_edge(th, start, &s_lo, &s_hi) ||
	    !tt_an_wait_edge(th, end, &e_lo, &e_hi))
		goto unbounded;
	int64_t lo = tt_an_clamp(e_lo - s_hi - split->preempted, 0, switched);
	int64_t hi = tt_an_clamp(e_hi - s_lo - split->preempted, 0, switched);
	if (lo > hi) /* (readings that disagree) */
		lo = hi = tt_an_clamp((e_lo - s_hi + e_hi - s_lo) / 2 - split->preempted, 0, switched);
	/* A bound wider than half the time blocked says little: its middle would be made
	 * up (a shell waiting 4.8 s for its child shown 2.4 s preempted, the kernel's wait
	 * 11 ms: outside recheck r39 F2). What it holds for certain moves, lo; where that
	 * is nothing (or it bounds nothing), blocked may hold them. */
	bool loose = 2 * (hi - lo) > switched;
	if (loose && lo == 0)
		goto unbounded;
	int64_t woke = loose ? lo : lo + (hi - lo) / 2;
	causes->wakeups_known = true;
	causes->wakeups_ns = woke;
	/* (never exact: a reading's moment is known within TT_AN_READ_NEAR_NS) */
	causes->error_ns = hi - woke > TT_AN_READ_NEAR_NS ? hi - woke
			 : TT_AN_READ_NEAR_NS < switched ? TT_AN_READ_NEAR_NS : switched;
	split->preempted += woke;
	split->blocked -= woke;
	return;
unbounded:
	causes->wakeups_unbounded = true;
	causes->error_ns = switched;
}

/* ---- the switches' spans not known: the counters where they cover them ---- */

/* The tick's steps the counters' split or miss was of, as theirs said them. */
static void tt_an_tick_of(const struct tt_an_causes *counted, struct tt_an_causes *causes)
{
	causes->tick_ns = counted->tick_ns;
	causes->tick_behind_ns = counted->tick_behind_ns;
	causes->tick_said = counted->tick_said;
}

/* Why the counters say nothing of [start, end): their miss, or none read at all. */
static void tt_an_miss(const struct tt_an_thread *th, const struct tt_an_causes *counted,
		       struct tt_an_causes *causes)
{
	causes->miss = counted->miss == TT_AN_MISS_NONE && th->counters.source ? TT_AN_MISS_NEVER_READ
									      : counted->miss;
	causes->miss_start_ns = counted->miss_start_ns;
	causes->miss_end_ns = counted->miss_end_ns;
	causes->miss_budget = th->counters.budget;
	causes->miss_blind = th->counters.blind;
	causes->miss_detail = counted->miss_detail;
	tt_an_tick_of(counted, causes);
}

/* The spans of [start, end) its states leave unknown (a TT_SCHED_UNKNOWN state, up to
 * the next), each split from the counters read around it where they bound it within
 * half its length (the thread ran at its edges: the spike's, or a switch's); *error:
 * the covered parts' errors, summed. */
static void tt_an_cover_unknown(const struct tt_an_thread *th, int64_t start, int64_t end,
				struct tt_an_split *split, struct tt_an_causes *causes, int64_t *error)
{
	const struct tt_an_states *h = &th->states;
	*error = 0;
	size_t i = tt_an_states_after(h, start);
	const struct tt_sched_state *now = i > h->from ? &h->at[i - 1] : NULL; /* (NULL: before the first) */
	for (int64_t at = start; at < end; i++) {
		int64_t next = i < h->n && h->at[i].ns < end ? h->at[i].ns : end;
		if ((!now || now->what == TT_SCHED_UNKNOWN) && next > at) {
			causes->lost += now ? now->cpu : 0;
			causes->lost_ns += next - at;
			struct tt_an_split part;
			struct tt_an_causes counted = {0};
			struct tt_an_estimate cpu;
			if (!th->counters.run_only &&
			    tt_an_counters_split(&th->counters, at, next, &part, &counted, &cpu) &&
			    2 * counted.error_ns < next - at) {
				split->on_cpu += part.on_cpu;
				split->preempted += part.preempted;
				split->blocked += part.blocked;
				split->unknown -= next - at;
				causes->covered_ns += next - at;
				*error += counted.error_ns;
			}
		}
		at = next;
		if (i < h->n)
			now = &h->at[i];
	}
}

/* The switches' split of [start, end) with what they leave unknown split from the
 * counters: span by span (tt_an_cover_unknown), or, where that leaves some unknown
 * and the counters' split of the whole (`whole`, within whole_causes->error_ns; NULL:
 * none) is nearer than the unknown left, all of it from theirs; else why the rest
 * is unknown, as the counters read for the whole say it. The blocked time the
 * switches say, or -1 (all from the counters); *error: what the counters add to it. */
static int64_t tt_an_fill_unknown(const struct tt_an_thread *th, int64_t start, int64_t end,
				  struct tt_an_split *split, struct tt_an_causes *causes,
				  const struct tt_an_split *whole, const struct tt_an_causes *whole_causes,
				  int64_t *error)
{
	int64_t switched = split->blocked;
	*error = 0;
	if (!split->unknown)
		return switched;
	tt_an_cover_unknown(th, start, end, split, causes, error);
	if (!split->unknown)
		return switched;
	if (!whole || 2 * whole_causes->error_ns >= end - start || whole_causes->error_ns >= split->unknown) {
		tt_an_miss(th, whole_causes, causes);
		return switched;
	}
	*split = *whole;
	*error = whole_causes->error_ns;
	causes->covered_ns = causes->lost_ns;
	return -1;
}

/* The time stolen from the thread from reading a to reading b: the switches' time on
 * CPU between them less its CPU time's growth; false where a state between is not
 * known. */
static bool tt_an_stolen_between(const struct tt_an_thread *th, const struct tt_schedstat_sample *a,
				 const struct tt_schedstat_sample *b, int64_t *stolen)
{
	struct tt_an_split s;
	if (b->ns <= a->ns || !tt_an_split(th, a->ns, b->ns, &s) || s.unknown)
		return false;
	*stolen = s.on_cpu - (int64_t)(b->run_ns - a->run_ns);
	return true;
}

/* The switches' time on CPU in [from, to) (none where to <= from), or -1: not known. */
static int64_t tt_an_on_between(const struct tt_an_thread *th, int64_t from, int64_t to)
{
	struct tt_an_split s;
	if (to <= from)
		return 0;
	return tt_an_split(th, from, to, &s) && !s.unknown ? s.on_cpu : -1;
}

/* Stolen time where the readings are far from a spike's edges (a stop-mode buffer
 * full: tt-sched reads no scope it cannot see, so none between the buffer's filling
 * and the thread's exit; outside recheck r39 F1, a whole run's on CPU 20-52 ms over
 * its CPU time, error 0, no stolen_ns): at least what the readings inside it saw
 * stolen between them, at most what those around it saw (steal is never negative) and
 * what it ran past them, each with the kernel's move over its own stretch left out
 * (the spike's, taken from both, called the CPU time's lack at the switches in over
 * the rest of the stretch stolen: outside recheck r41 F1, three threads spinning on
 * one CPU, "stolen ~55 us (within 45 us)" where their CPU clocks left none). False
 * where no reading bounds it. */
static bool tt_an_stolen_bracket(const struct tt_an_thread *th, int64_t start, int64_t end, int64_t on_cpu,
				 int64_t *stolen, int64_t *error)
{
	const struct tt_an_counters *c = &th->counters;
	size_t i = tt_an_counters_from(c, start), k = tt_an_counters_from(c, end);
	const struct tt_schedstat_sample *in_a = i < c->n && c->at[i].ns < end ? &c->at[i] : NULL;
	const struct tt_schedstat_sample *in_b = k > c->from && c->at[k - 1].ns > start ? &c->at[k - 1] : NULL;
	const struct tt_schedstat_sample *a = i > c->from ? &c->at[i - 1] : in_a;
	const struct tt_schedstat_sample *b = k < c->n ? &c->at[k] : in_b;
	int64_t hi, lo = 0;
	if (!a || !b || !tt_an_stolen_between(th, a, b, &hi))
		return false;
	int64_t head = tt_an_on_between(th, start, a->ns), tail = tt_an_on_between(th, b->ns, end);
	if (head < 0 || tail < 0)
		return false;
	hi = tt_an_plus_sat(hi + head + tail, -tt_an_moved_over(th, a->ns, b->ns).lo);
	if (in_a && in_b && tt_an_stolen_between(th, in_a, in_b, &lo))
		lo = tt_an_plus_sat(lo, -tt_an_moved_over(th, in_a->ns, in_b->ns).hi);
	else
		lo = 0;
	/* (each reading's CPU time read within the span of its moment) */
	hi = tt_an_clamp(hi + 2 * TT_SCHEDSTAT_SPAN_NS, 0, on_cpu);
	lo = tt_an_clamp(lo - 2 * TT_SCHEDSTAT_SPAN_NS, 0, hi);
	*stolen = lo + (hi - lo) / 2;
	*error = hi - *stolen;
	return true;
}

/* The most the kernel's run-queue wait over [start, end) may exceed `preempted` (the
 * switches', wake-ups' waits moved in), from the first reading after it: what it had
 * counted by then since the last reading before it, or since the first at or after its
 * start and the time from its start to that one, the less (each wait inside it ends
 * inside it: the thread ran at its end), or all it had counted (every wait the thread
 * had only grew it); 0: none after it, or no preemption in it, where nothing moves.
 * (All it had counted said a ping-pong thread's 0.27 s of waits before its 15 ms
 * spike, read first 2 ms into it.) */
static int64_t tt_an_wait_beyond(const struct tt_an_thread *th, int64_t start, int64_t end, int64_t preempted)
{
	const struct tt_an_counters *c = &th->counters;
	size_t k = tt_an_counters_from(c, tt_an_plus_sat(end, TT_SCHEDSTAT_SPAN_NS));
	if (c->run_only || c->tick_steps || k == c->n || !tt_an_preemptions(&th->states, start, end))
		return 0;
	size_t j = tt_an_counters_from(c, start); /* (at most k) */
	uint64_t grown = c->at[k].wait_ns;
	if (j > c->from && c->at[j - 1].wait_ns <= grown)
		grown -= c->at[j - 1].wait_ns;
	uint64_t since = (uint64_t)c->at[j].ns - (uint64_t)start, after = c->at[k].wait_ns - c->at[j].wait_ns;
	if (c->at[j].wait_ns <= c->at[k].wait_ns && after < UINT64_MAX - since && after + since < grown)
		grown = after + since;
	int64_t waited = grown < (uint64_t)TT_AN_UNBOUNDED ? (int64_t)grown : TT_AN_UNBOUNDED;
	/* (and no more than the spike: each wait counted inside it began and ended inside
	 * it, the thread ran at both edges; a reading long after it held more: outside test
	 * r48 F3, main's first scope of 13.9 ms, its first reading 8.4 ms past its end, "may
	 * have waited" 9.99 ms beyond its 12.36 ms preempted, the kernel's wait 12.36 ms) */
	waited = waited < end - start ? waited : end - start;
	return waited > preempted ? waited - preempted : 0;
}

/* Why no reading bounds [start, end)'s stolen time. */
static enum tt_an_stolen_miss tt_an_stolen_miss_of(const struct tt_an_counters *c, int64_t start, int64_t end)
{
	if (c->n == c->from)
		return TT_AN_STOLEN_NEVER_READ;
	if (c->at[c->n - 1].ns <= start)
		return TT_AN_STOLEN_NOT_AFTER;
	return c->at[c->from].ns >= end ? TT_AN_STOLEN_NOT_BEFORE : TT_AN_STOLEN_NOT_BOUNDED;
}

void tt_an_causes(const struct tt_an_thread *th, int64_t start, int64_t end, bool *has_split,
		  struct tt_an_split *split, struct tt_an_causes *causes)
{
	*causes = (struct tt_an_causes){0};
	struct tt_an_split by_counters;
	struct tt_an_causes counted = {0};
	struct tt_an_estimate cpu;
	bool counters = tt_an_counters_split(&th->counters, start, end, &by_counters, &counted, &cpu);
	if (*has_split) {
		causes->from = TT_AN_CAUSES_SWITCHES;
		int64_t covered_error;
		int64_t switched = tt_an_fill_unknown(th, start, end, split, causes, counters && !th->counters.run_only
						      ? &by_counters : NULL, &counted, &covered_error);
		if (causes->covered_ns)
			causes->from = TT_AN_CAUSES_SCHEDSTAT;
		if (switched < 0) { /* (all from the counters: their preempted holds those waits) */
			causes->error_ns = covered_error;
			goto faults;
		}
		struct tt_an_moved moved = tt_an_moved_over(th, start, end);
		tt_an_wakeups(th, start, end, split, switched, causes);
		/* The switches count as on CPU what the hypervisor took; the CPU time not.
		 * (Said where the readings bound it within half the time on CPU.) Nor what the
		 * kernel's own accounting moved into its wait. */
		if (counters && th->counters.steal && cpu.width <= split->on_cpu) {
			int64_t stolen = split->on_cpu - cpu.value - (moved.lo + moved.hi) / 2;
			causes->stolen_known = true;
			causes->stolen_ns = stolen < 0 ? 0 : stolen > split->on_cpu ? split->on_cpu : stolen;
			/* (the switches' parts: exact but for the kernel's move; those from the
			 * counters within theirs) */
			causes->stolen_error_ns = tt_an_plus_sat(tt_an_plus_sat(cpu.width / 2, (moved.hi - moved.lo + 1) / 2),
							       covered_error);
		}
		/* Where the readings lie far from its edges: between what those inside it saw
		 * stolen and what those around it did. */
		int64_t stolen, error;
		if (th->counters.steal && tt_an_stolen_bracket(th, start, end, split->on_cpu, &stolen, &error)) {
			error = tt_an_plus_sat(error, covered_error);
			if (!causes->stolen_known || error < causes->stolen_error_ns) {
				causes->stolen_known = true;
				causes->stolen_ns = stolen;
				causes->stolen_error_ns = error;
			}
		}
		/* Where the run tells stolen time apart and this spike's is not said: why
		 * (silent before, a thread killed with none read after its spike), and that
		 * its time on CPU may hold it, all of it: no two readings of its CPU time
		 * bound any of it (a stop-mode buffer full before tt-sched read the thread,
		 * read again at its exit alone: on CPU 4.5-5.3 ms over the kernel's CPU time,
		 * stated within 3.7 ms). */
		if (th->counters.steal && !causes->stolen_known && split->on_cpu > 0) {
			causes->stolen_miss = tt_an_stolen_miss_of(&th->counters, start, end);
			causes->stolen_error_ns = split->on_cpu;
		}
		/* Each part is the kernel's within the move, where its readings show one
		 * (the few microseconds a switch the kernel's clock and the records' differ
		 * by, as the context switch itself takes them: each spike's tens of them put
		 * on CPU below the thread's CPU clock, beyond an error of 0; outside recheck
		 * r41 F1), and within the wake-ups' error besides: a wait's growth the wake-ups took
		 * for theirs may be the move's, and the move's theirs (a stop-mode buffer
		 * full, read again at the exit: preempted 6 ms under the kernel's wait, stated
		 * within the larger of the two, 3.6 ms). */
		int64_t most = -moved.lo > moved.hi ? -moved.lo : moved.hi;
		most = -moved.run_lo > most ? -moved.run_lo : most; /* (on CPU: never below the CPU clock) */
		if (most > 0) {
			causes->moved_known = true;
			causes->moved_ns = (moved.lo + moved.hi) / 2;
			causes->error_ns = tt_an_plus_sat(causes->error_ns, most);
		}
		/* No two readings measured it (none before its end: a stop-mode buffer full
		 * before tt-sched read the thread, read at its exit alone): a reading after it
		 * still bounds the move and the wake-ups' waits, the kernel's wait over it
		 * being at most all it had counted by then (there, preempted 6.7 ms under the
		 * kernel's wait, stated within 3.7 ms). */
		int64_t beyond = moved.measured ? 0 : tt_an_wait_beyond(th, start, end, split->preempted);
		int64_t wakeups_error = causes->error_ns;
		if (beyond > causes->error_ns)
			causes->error_ns = causes->moved_most_ns = beyond;
		/* Switches in no two readings measured (a spike without readings around it, a
		 * short one: on CPU below the CPU clock, error 0): TT_AN_READ_NEAR_NS each, at
		 * most, one of them TT_AN_IN_LATE_MOST_NS in a long one, no more than its time
		 * off CPU. */
		if (moved.unmeasured_ins) {
			int64_t off = end - start - split->on_cpu;
			int64_t one = end - start >= 4 * TT_AN_IN_LATE_MOST_NS ? TT_AN_IN_LATE_MOST_NS : TT_AN_READ_NEAR_NS;
			int64_t most = moved.unmeasured_ins > (TT_AN_UNBOUNDED - one) / TT_AN_READ_NEAR_NS
					       ? TT_AN_UNBOUNDED
					       : (moved.unmeasured_ins - 1) * TT_AN_READ_NEAR_NS + one;
			causes->cpu_ahead_most_ns = most < off ? most : off;
			/* Where the switches say nothing blocked, what moves runs between on CPU
			 * and preempted alone: the CPU time ahead takes from the wait what the wait
			 * beyond preempted takes from on CPU, opposite ways, each part within the
			 * larger of the two (before, their sum: outside test r48 F3, main's first
			 * scope, 13.9 ms "within 11.99 ms", the kernel's wait 1.4 us off) */
			int64_t ahead = tt_an_plus_sat(switched ? causes->error_ns : wakeups_error, causes->cpu_ahead_most_ns);
			causes->error_ns = switched || ahead > causes->error_ns ? ahead : causes->error_ns;
		}
		/* (each part: the switches' error and the counters'; no part farther than the
		 * spike is long, nor stolen time than its time on CPU) */
		causes->error_ns = tt_an_clamp(tt_an_plus_sat(causes->error_ns, covered_error), 0, end - start);
		causes->stolen_error_ns = tt_an_clamp(causes->stolen_error_ns, 0, split->on_cpu);
	} else if (!counters || 2 * counted.error_ns >= end - start) {
		/* It says nothing, or parts each as uncertain as half the spike: three near
		 * equal thirds that read as measured (an outside check: a spin "blocked ~27
		 * ms" of 82). Why, instead. */
		tt_an_miss(th, &counted, causes);
	} else {
		*has_split = true;
		*split = by_counters;
		causes->from = th->counters.run_only ? TT_AN_CAUSES_THREAD_TIMES : TT_AN_CAUSES_SCHEDSTAT;
		causes->error_ns = counted.error_ns;
		tt_an_tick_of(&counted, causes);
		causes->switches_counted = counted.switches_counted;
		causes->switches_min = counted.switches_min;
		causes->switches_max = counted.switches_max;
		causes->stolen_known = counted.stolen_known;
		causes->stolen_ns = counted.stolen_ns;
		causes->stolen_error_ns = counted.stolen_error_ns;
	}
faults:
	tt_an_counters_faults(&th->counters, start, end, causes);
}

bool tt_an_call_split(const struct tt_an_thread *th, int64_t start, int64_t end,
		      struct tt_an_split *split, bool *approximate)
{
	bool has = tt_an_split(th, start, end, split);
	*approximate = false;
	if ((has && !split->unknown) || !th->counters.n)
		return has;
	struct tt_an_causes causes;
	if (has) { /* (switches lost, or not asked for yet: the counters there) */
		causes = (struct tt_an_causes){0};
		struct tt_an_split whole;
		struct tt_an_estimate cpu;
		int64_t error;
		bool counters = !th->counters.run_only &&
				tt_an_counters_split(&th->counters, start, end, &whole, &causes, &cpu);
		struct tt_an_causes filled = {0};
		tt_an_fill_unknown(th, start, end, split, &filled, counters ? &whole : NULL, &causes, &error);
		*approximate = filled.covered_ns > 0;
		return true;
	}
	tt_an_causes(th, start, end, &has, split, &causes);
	*approximate = has;
	if (!has) /* (no reading near enough: not covered) */
		*split = (struct tt_an_split){.unknown = end - start};
	return true;
}

const char *tt_an_causes_from_name(enum tt_an_causes_from from)
{
	switch (from) {
	case TT_AN_CAUSES_SWITCHES: return "switches";
	case TT_AN_CAUSES_SCHEDSTAT: return "schedstat";
	case TT_AN_CAUSES_THREAD_TIMES: return "thread-times";
	default: return NULL;
	}
}

void tt_an_states_forget_before(struct tt_an_thread *th, int64_t ns)
{
	/* Step by step, not a search: called at every outermost scope's end (a million a
	 * second of a thread recording hard), it mostly finds nothing to forget, and each
	 * state and reading is passed once (two binary searches were a quarter of the live
	 * detector's time, outside recheck r35 finding 9). */
	struct tt_an_states *h = &th->states;
	/* keep the state in force at ns */
	while (h->from + 1 < h->n && h->at[h->from + 1].ns <= ns)
		h->from++;
	/* and the reading before ns */
	struct tt_an_counters *c = &th->counters;
	while (c->from + 1 < c->n && c->at[c->from + 1].ns < ns)
		c->from++;
}

void tt_an_states_free(struct tt_an_thread *th)
{
	free(th->states.at);
	th->states = (struct tt_an_states){.last_ns = INT64_MIN, .complete_ns = INT64_MIN};
	free(th->counters.at);
	th->counters = (struct tt_an_counters){0};
}
