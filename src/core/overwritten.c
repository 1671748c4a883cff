/* Mode ring with snapshots (report/snapshots.c): a thread's records that the ring
 * overwrote lately, by time, so that a snapshot whose window reaches back past a
 * thread's oldest record says how many events of it are gone and from when, rather
 * than leave a silent hole. tt-clean (or a thread whose cleaning queue
 * was full) notes each recycled chunk as it counts its events; entries merge chunks
 * whose times are close together, and once they are all used, the two neighbours
 * that span the least time merge: the latest stay fine, the older coarser, and a
 * snapshot written late still finds its window, said with the span of the entries
 * that reach into it. */
#include <string.h>

#include "core/core_internal.h"

uint64_t tt__overwrite_grain;

/* The full history's two neighbouring entries that together span the least time
 * become one: older entries grow coarser, none is forgotten. */
static void tt__merge_closest(struct tt__overwrites *o)
{
	uint32_t best = 0;
	for (uint32_t i = 1; i + 1 < o->n; i++)
		if (o->at[i + 1].last_tsc - o->at[i].first_tsc <
		    o->at[best + 1].last_tsc - o->at[best].first_tsc)
			best = i;
	struct tt__overwrite *a = &o->at[best], *b = &o->at[best + 1];
	if (b->last_tsc > a->last_tsc)
		a->last_tsc = b->last_tsc;
	a->after = b->after;
	memmove(b, b + 1, (size_t)(o->n - best - 2) * sizeof *b);
	o->n--;
}

void tt__note_overwritten(struct tt__slot *slot, uint64_t events, uint64_t first_tsc, uint64_t last_tsc)
{
	struct tt__overwrites *o = &slot->overwrites;
	if (!tt__overwrite_grain || !events)
		return;
	/* A chunk may be noted after newer ones (those a reader kept whole, cleaned after
	 * it; a thread whose cleaning queue was full): it goes to the entry of its time,
	 * the entries after it moved on by its events, so that they stay in time order
	 * and each counts what was overwritten in its span. */
	int64_t i = (int64_t)o->n - 1;
	while (i >= 0 && o->at[i].first_tsc > first_tsc)
		i--;
	if (i < 0 || (i == (int64_t)o->n - 1 && first_tsc >= o->at[i].first_tsc + tt__overwrite_grain)) {
		if (i >= 0 || !o->n) {
			if (o->n == TT__OVERWRITES)
				tt__merge_closest(o);
			i = o->n++;
			o->at[i] = (struct tt__overwrite){first_tsc, last_tsc, o->total, o->total};
		} else {
			i = 0; /* older than every entry: the oldest takes it */
		}
	}
	struct tt__overwrite *e = &o->at[i];
	if (first_tsc < e->first_tsc)
		e->first_tsc = first_tsc;
	if (last_tsc > e->last_tsc)
		e->last_tsc = last_tsc;
	e->after += events;
	for (uint32_t k = (uint32_t)i + 1; k < o->n; k++) {
		o->at[k].before += events;
		o->at[k].after += events;
	}
	o->total += events;
}

uint64_t tt__overwritten_in(struct tt__slot *slot, uint64_t from_tsc, uint64_t to_tsc,
			    uint64_t *lost_from_tsc, uint64_t *lost_to_tsc)
{
	uint64_t events = 0;
	tt__core_lock(1);
	const struct tt__overwrites *o = &slot->overwrites;
	/* The entries that reach into the window: after the newest wholly before it, up
	 * to the oldest wholly after it. */
	int64_t newest = (int64_t)o->n - 1;
	while (newest >= 0 && o->at[newest].first_tsc > to_tsc)
		newest--;
	int64_t oldest = newest;
	while (oldest >= 0 && o->at[oldest].last_tsc >= from_tsc)
		oldest--;
	oldest++;
	if (newest >= 0 && oldest <= newest) {
		events = o->at[newest].after - o->at[oldest].before;
		*lost_from_tsc = o->at[oldest].first_tsc;
		*lost_to_tsc = o->at[newest].last_tsc;
	}
	tt__core_lock(0);
	return events;
}
