/* Flows between machines (issue 33.2): each FLOW_IN paired with the FLOW_OUT of its
 * id on another machine, and what the pairs say of the machines' clocks, as NTP's
 * four timestamps do. A flow from machine a to b, sent at s (a's time) and received
 * at r (b's), says that b's times must move by at least s - r for it to arrive after
 * it left; one from b to a, by at most r - s. Flows both ways bound b's offset from
 * a on both sides: the window, whose middle places b (--align flows), within half
 * its width. A flow that arrives before it left, as the machines are placed, is
 * counted. Memory grows with the flows begun and not yet ended. */
#include <stdlib.h>

#include "report.h"

static struct tt_flow_pair tt_flow_pair_empty(void)
{
	return (struct tt_flow_pair){.lo = INT64_MIN, .hi = INT64_MAX};
}

/* Differences of two times within TT_TIME_LIMIT: no overflow. */
void tt_flow_pair_add(struct tt_flow_pair *p, bool a_to_b, int64_t sent, int64_t received)
{
	int64_t late = received - sent; /* how long it took, as placed */
	if (late < 0) {
		p->early++;
		if (-late > p->earliest)
			p->earliest = -late;
	}
	if (a_to_b) {
		p->a_to_b++;
		if (-late > p->lo)
			p->lo = -late;
	} else {
		p->b_to_a++;
		if (late < p->hi)
			p->hi = late;
	}
}

bool tt_flow_pair_bounded(const struct tt_flow_pair *p)
{
	return p->a_to_b && p->b_to_a && p->lo <= p->hi;
}

/* The window pairs (a, b) leave b's offset from a, seen from the other side when b
 * is the one known: [-hi, -lo]. */
static bool tt_flow_window(const struct tt_flow_pair *pairs, size_t n, size_t known, size_t k,
			   int64_t *lo, int64_t *hi)
{
	const struct tt_flow_pair *p = &pairs[known < k ? known * n + k : k * n + known];
	if (!tt_flow_pair_bounded(p))
		return false;
	*lo = known < k ? p->lo : -p->hi;
	*hi = known < k ? p->hi : -p->lo;
	return true;
}

void tt_flow_align(const struct tt_flow_pair *pairs, size_t n, const bool *fixed,
		   struct tt_flow_place *place)
{
	for (size_t k = 0; k < n; k++) {
		place[k] = (struct tt_flow_place){.by = TT_FLOW_NOT_PLACED};
		place[k].known = k == 0 || (fixed && fixed[k]);
	}
	for (bool more = true; more;) {
		more = false;
		for (size_t k = 1; k < n; k++) {
			int64_t lo, hi;
			size_t j = 0;
			if (place[k].by != TT_FLOW_NOT_PLACED)
				continue;
			while (j < n && (j == k || !place[j].known || !tt_flow_window(pairs, n, j, k, &lo, &hi)))
				j++;
			if (j == n)
				continue;
			bool exact = place[k].known; /* (fixed: it stays, its window said) */
			/* (halves first: the bounds may be as far apart as two TT_TIME_LIMITs) */
			int64_t middle = lo / 2 + hi / 2 + (lo % 2 + hi % 2) / 2;
			int64_t shift = exact ? 0 : place[j].shift_ns + middle;
			struct tt_flow_place *pl = &place[k];
			*pl = (struct tt_flow_place){.by = (uint32_t)j, .known = true, .shift_ns = shift,
						     .lo_ns = place[j].shift_ns + lo - shift,
						     .hi_ns = place[j].shift_ns + hi - shift};
			if (!exact)
				pl->uncertainty_ns = place[j].uncertainty_ns + (pl->hi_ns / 2 - pl->lo_ns / 2);
			more = true;
		}
	}
}

/* ---- the sink: flows paired by id over the machines ---- */

/* A flow's end waiting for its other end. */
struct tt_flow_end {
	uint64_t id;
	int64_t ts;
	uint32_t machine;
	bool out;
};

struct tt_flow_bounds {
	struct tt_sink sink;
	size_t nmachines;
	struct tt_flow_pair *pairs; /* [a * nmachines + b], a < b */
	struct tt_map waiting;      /* id -> its end in ends */
	struct tt_flow_end *ends;
	uint32_t *free_ends;        /* indexes in ends not in use */
	size_t nends, cap, nfree;
};

static int tt_flow_wait(struct tt_flow_bounds *fb, const struct tt_event *e, uint32_t machine)
{
	uint32_t i;
	if (fb->nfree) {
		i = fb->free_ends[--fb->nfree];
	} else {
		if (fb->nends == fb->cap) {
			size_t cap = fb->cap ? 2 * fb->cap : 256;
			struct tt_flow_end *ends = realloc(fb->ends, cap * sizeof(*ends));
			uint32_t *free_ends = ends ? realloc(fb->free_ends, cap * sizeof(*free_ends)) : NULL;
			if (ends)
				fb->ends = ends;
			if (!ends || !free_ends)
				return tt_error("out of memory for %zu flows in flight", fb->nends);
			fb->free_ends = free_ends;
			fb->cap = cap;
		}
		i = (uint32_t)fb->nends++;
	}
	fb->ends[i] = (struct tt_flow_end){e->value, e->ts, machine, (e->flags & TT_EV_FLOW_OUT) != 0};
	return tt_map_put(&fb->waiting, e->value, i) < 0 ? tt_error("out of memory") : 0;
}

static int tt_flow_bounds_flow(struct tt_sink *sink, const struct tt_event *e)
{
	struct tt_flow_bounds *fb = (struct tt_flow_bounds *)sink;
	uint32_t machine = e->thread->file->machine_index, i;
	bool out = e->flags & TT_EV_FLOW_OUT;
	if (!tt_map_get(&fb->waiting, e->value, &i) || fb->ends[i].out == out) {
		/* the first end of its id, or a later FLOW_OUT of it (the latest is the one
		 * that the next FLOW_IN ends): it waits for the other end */
		if (tt_map_get(&fb->waiting, e->value, &i)) {
			fb->ends[i] = (struct tt_flow_end){e->value, e->ts, machine, out};
			return 0;
		}
		return tt_flow_wait(fb, e, machine);
	}
	const struct tt_flow_end *other = &fb->ends[i];
	if (other->machine != machine) {
		uint32_t from = out ? machine : other->machine, to = out ? other->machine : machine;
		int64_t sent = out ? e->ts : other->ts, received = out ? other->ts : e->ts;
		bool a_to_b = from < to;
		uint32_t a = a_to_b ? from : to, b = a_to_b ? to : from;
		tt_flow_pair_add(&fb->pairs[a * fb->nmachines + b], a_to_b, sent, received);
	}
	tt_map_del(&fb->waiting, e->value);
	fb->free_ends[fb->nfree++] = i;
	return 0;
}

static void tt_flow_bounds_destroy(struct tt_sink *sink)
{
	struct tt_flow_bounds *fb = (struct tt_flow_bounds *)sink;
	tt_map_free(&fb->waiting);
	free(fb->ends);
	free(fb->free_ends);
	free(fb->pairs);
	free(fb);
}

static const struct tt_sink_ops tt_flow_bounds_ops = {
	.flow = tt_flow_bounds_flow,
	.destroy = tt_flow_bounds_destroy,
};

struct tt_sink *tt_flow_bounds_new(size_t nmachines)
{
	struct tt_flow_bounds *fb = calloc(1, sizeof(*fb));
	if (!fb)
		return NULL;
	fb->sink.ops = &tt_flow_bounds_ops;
	fb->nmachines = nmachines;
	fb->pairs = malloc((nmachines ? nmachines * nmachines : 1) * sizeof(*fb->pairs));
	if (!fb->pairs) {
		free(fb);
		return NULL;
	}
	for (size_t i = 0; i < nmachines * nmachines; i++)
		fb->pairs[i] = tt_flow_pair_empty();
	return &fb->sink;
}

const struct tt_flow_pair *tt_flow_bounds_pairs(const struct tt_sink *sink)
{
	return ((const struct tt_flow_bounds *)sink)->pairs;
}
