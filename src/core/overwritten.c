/* Mode ring with snapshots (report/snapshots.c): a thread's records that the ring
 * overwrote lately, by time, so that a snapshot whose window reaches back past a
 * thread's oldest record says how many events of it are gone and from when, rather
 * than leave a silent hole. The background thread (or a thread whose cleaning queue
 * was full) notes each recycled chunk as it counts its events; entries merge chunks
 * whose times are close together, so that the few kept reach back about twice a
 * window. */
#include "core/core.h"

uint64_t tt__overwrite_grain;

void tt__note_overwritten(struct tt__slot *slot, uint64_t events, uint64_t first_tsc, uint64_t last_tsc)
{
	struct tt__overwrites *o = &slot->overwrites;
	if (!tt__overwrite_grain || !events)
		return;
	uint64_t kept = o->made < TT__OVERWRITES ? o->made : TT__OVERWRITES;
#define TT__ENTRY(i) (&o->at[(o->made - 1 - (i)) % TT__OVERWRITES]) /* i: 0 the newest */
	/* A chunk may be noted after newer ones (those a reader kept whole, cleaned after
	 * it; a thread whose cleaning queue was full): it goes to the entry of its time,
	 * the entries after it moved on by its events, so that they stay in time order
	 * and each counts what was overwritten in its span. */
	uint64_t i = 0;
	while (i < kept && TT__ENTRY(i)->first_tsc > first_tsc)
		i++;
	if (i == kept && kept)
		i = kept - 1; /* older than every entry kept: the oldest takes it */
	struct tt__overwrite *e = kept ? TT__ENTRY(i) : NULL;
	if (!e || (i == 0 && first_tsc >= e->first_tsc + tt__overwrite_grain)) {
		e = &o->at[o->made++ % TT__OVERWRITES];
		*e = (struct tt__overwrite){first_tsc, last_tsc, o->total, o->total};
		i = 0;
	}
	if (first_tsc < e->first_tsc)
		e->first_tsc = first_tsc;
	if (last_tsc > e->last_tsc)
		e->last_tsc = last_tsc;
	e->after += events;
	for (uint64_t k = 0; k < i; k++) {
		TT__ENTRY(k)->before += events;
		TT__ENTRY(k)->after += events;
	}
#undef TT__ENTRY
	o->total += events;
}

uint64_t tt__overwritten_in(struct tt__slot *slot, uint64_t from_tsc, uint64_t to_tsc,
			    uint64_t *lost_from_tsc, uint64_t *lost_to_tsc)
{
	uint64_t events = 0;
	tt__arena_lock(1);
	const struct tt__overwrites *o = &slot->overwrites;
	uint64_t kept = o->made < TT__OVERWRITES ? o->made : TT__OVERWRITES;
#define TT__NEWEST(i) (&o->at[(o->made - 1 - (i)) % TT__OVERWRITES]) /* i: 0 the newest */
	/* The entries that reach into the window: after the newest wholly before it, up
	 * to the oldest wholly after it. */
	uint64_t after = 0;
	while (after < kept && TT__NEWEST(after)->first_tsc > to_tsc)
		after++;
	uint64_t before = after;
	while (before < kept && TT__NEWEST(before)->last_tsc >= from_tsc)
		before++;
	if (before > after) {
		const struct tt__overwrite *oldest = TT__NEWEST(before - 1), *newest = TT__NEWEST(after);
		events = newest->after - oldest->before;
		/* Not back to the window's start, with older entries forgotten: at least. */
		*lost_from_tsc = before == kept && oldest->before && oldest->first_tsc > from_tsc ?
					 0 : oldest->first_tsc;
		*lost_to_tsc = newest->last_tsc;
	}
#undef TT__NEWEST
	tt__arena_lock(0);
	return events;
}
