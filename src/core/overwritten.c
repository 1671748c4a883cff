/* Mode ring with snapshots (report/snapshots.c): a thread's records that the ring
 * overwrote lately, by time, so that a snapshot whose window reaches back past a
 * thread's oldest record says how many events of it are gone and from when, rather
 * than leave a silent hole. The background thread (or a thread whose cleaning queue
 * was full) notes each recycled chunk as it counts its events; entries merge chunks
 * recycled close together, so that the few kept reach back about twice a window. */
#include "core/core.h"

uint64_t tt__overwrite_grain;

void tt__note_overwritten(struct tt__slot *slot, uint64_t events, uint64_t first_tsc, uint64_t last_tsc)
{
	struct tt__overwrites *o = &slot->overwrites;
	if (!tt__overwrite_grain || !events)
		return;
	struct tt__overwrite *newest = o->made ? &o->at[(o->made - 1) % TT__OVERWRITES] : NULL;
	if (newest && first_tsc - newest->first_tsc < tt__overwrite_grain) {
		if (last_tsc > newest->last_tsc)
			newest->last_tsc = last_tsc;
	} else {
		newest = &o->at[o->made++ % TT__OVERWRITES];
		*newest = (struct tt__overwrite){first_tsc, last_tsc, o->total, o->total};
	}
	o->total += events;
	newest->after = o->total;
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
