/* The threads' sections: THREAD with its name and dropped counts, EVENTS with its
 * records as they are or packed (mode stream), from a snapshot of every chunk's
 * extent taken once, so that the counts and the records written agree. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "writer/writer.h"

int tt__snapshot_thread(struct tt__thread_snapshot *snap, struct tt__slot *slot)
{
	size_t cap = 16;
	*snap = (struct tt__thread_snapshot){.slot = slot};
	snap->extents = malloc(cap * sizeof *snap->extents);
	if (!snap->extents)
		return -ENOMEM;
	/* The chunk after each is the one it had before its extent was taken: one the
	 * thread moves to meanwhile would follow a chunk read only up to where it was
	 * then, with the events in between missing. */
	const struct tt__chunk *next, *front = slot->first;
	for (const struct tt__chunk *chunk = front; chunk; chunk = next) {
		if (snap->chunks == cap) {
			struct tt__extent *grown = realloc(snap->extents, 2 * cap * sizeof *grown);
			if (!grown)
				return -ENOMEM;
			snap->extents = grown;
			cap *= 2;
		}
		/* A chunk that cannot say where its records end (its header was lost) is
		 * refused rather than written as an extent of some other length. */
		if (chunk->size < sizeof *chunk || chunk->size > TT__CHUNK_SIZE)
			return -EUCLEAN;
		struct tt__extent *e = &snap->extents[snap->chunks++];
		next = tt__chunk_extent(slot, chunk, &e->begin, &e->end);
		snap->records += (uint64_t)(e->end - e->begin);
	}
	/* (the counts its THREAD says read with its gap: a thread dropping while the file
	 * is written drops more by the time THREAD is, which its records would not hold) */
	struct tt_gap gap;
	tt__drops_now(slot, snap->dropped, &gap);
	snap->gap_records = tt_gap_records(&gap, snap->gap);
	snap->records += snap->gap_records;
	/* Not yet looked for as the thread left its first chunk: it is still in it, the
	 * first extent, whose beginning a window may cut (where the extent begins there:
	 * a stream's drain may have written some) */
	size_t left = TT_FIRST_OPENER_RECORDS;
	const struct tt_record *opener =
		__atomic_load_n(&slot->opener_looked, __ATOMIC_ACQUIRE) ? &slot->opener :
		snap->chunks && snap->extents[0].begin == (const struct tt_record *)(front + 1) ?
			tt_first_opener(snap->extents[0].begin, snap->extents[0].end, &left) : NULL;
	if (opener)
		snap->opener = *opener;
	return 0;
}

/* THREAD for a slot; with `snap`, the counts it was taken with (of its window, where
 * windowed), else those now. */
static void tt__out_thread_info_of(struct tt__out *out, uint32_t type, const struct tt__slot *slot,
				   uint64_t records, const struct tt__thread_snapshot *snap,
				   uint64_t *dropped_total)
{
	uint32_t flags = __atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE);
	struct tt_thread_info info = {
		.index = slot->index,
		.tid = slot->tid,
		.events = records,
		.flags = (flags & TT__SLOT_EXITED ? TT_THREAD_EXITED : 0) |
			 (flags & (TT__SLOT_WRAPPED | TT__SLOT_FORKED) ? TT_THREAD_WRAPPED : 0) |
			 (flags & TT__SLOT_RUNTIME ? TT_THREAD_RUNTIME : 0) |
			 (slot->sched.on ? TT_THREAD_SCHED : 0) | tt__sched_no_states(slot),
	};
	if (snap && snap->windowed) {
		info.flags &= ~(uint32_t)TT_THREAD_WRAPPED;
		info.flags |= snap->begins_inside || (flags & TT__SLOT_FORKED) ? TT_THREAD_WRAPPED : 0;
	}
	if (snap) {
		memcpy(info.dropped, snap->dropped, sizeof info.dropped);
	} else {
		struct tt_gap gap;
		tt__drops_now(slot, info.dropped, &gap);
	}
	for (int i = 0; i < TT_DROP_CAUSES; i++)
		*dropped_total += info.dropped[i];
	tt__out_thread_section(out, type, &info, slot->name, slot->named || (flags & TT__SLOT_EXITED));
}

void tt__out_thread_info(struct tt__out *out, uint32_t type, const struct tt__slot *slot,
			 uint64_t records, uint64_t *dropped_total)
{
	tt__out_thread_info_of(out, type, slot, records, NULL, dropped_total);
}

void tt__out_thread_first(struct tt__out *out, uint32_t thread_index, const struct tt_record *opener)
{
	struct tt_thread_first first = {.thread_index = thread_index, .record = *opener};
	tt__out_section(out, TT_SEC_THREAD_FIRST, sizeof first);
	tt__out(out, &first, sizeof first);
	tt__out_pad(out, sizeof first);
}

void tt__out_counters_source(struct tt__out *out, const struct tt__slot *slot)
{
	if (!tt__sched_counters_stand_in(slot))
		return;
	struct tt_schedstat_info info = {.thread_index = slot->index, .flags = tt__counters_flags(slot, NULL, 0)};
	struct tt_schedstat_budget budget = {0};
	tt__out_counters(out, &info, &budget, NULL, 0);
}

size_t tt__pack_records(uint8_t *buf, const struct tt_record *begin, const struct tt_record *end)
{
	uint64_t words[TT_PACKED_LITERAL] = {0};
	uint64_t last_tsc = 0;
	uint8_t *p = buf;
	for (const struct tt_record *r = begin; r < end; r++) {
		uint64_t word = r->word, field = r->tsc;
		unsigned slot = tt_packed_slot(word);
		if (word && words[slot] == word) {
			*p++ = (uint8_t)slot;
		} else {
			*p++ = TT_PACKED_LITERAL;
			memcpy(p, &word, sizeof word);
			p += sizeof word;
			words[slot] = word;
		}
		if (TT_RECORD_HAS_TIME(TT_RECORD_KIND(word))) {
			uint64_t delta = field - last_tsc;
			last_tsc = field;
			field = tt_zigzag(delta);
		}
		do {
			uint8_t low = field & 0x7f;
			field >>= 7;
			*p++ = (uint8_t)(low | (field ? 0x80 : 0));
		} while (field);
	}
	return (size_t)(p - buf);
}

void tt__out_events_packed(struct tt__out *out, const struct tt__slot *slot, uint64_t first,
			   uint64_t records, const uint8_t *packed, size_t bytes)
{
	struct tt_events_info events = {.thread_index = slot->index, .first_record = first};
	struct tt_packed_info info = {.records = records};
	uint64_t size = sizeof events + sizeof info + bytes;
	tt__out_section(out, TT_SEC_EVENTS_PACKED, size);
	tt__out(out, &events, sizeof events);
	tt__out(out, &info, sizeof info);
	tt__out(out, packed, bytes);
	tt__out_pad(out, size);
}

struct tt__sched_out {
	struct tt__out *out;
	tt__sched_section_fn seen;
	tt__counters_fn seen_counters;
	void *ctx;
	bool exit_said; /* a section of this walk says the thread's exit */
};

static void tt__out_sched_section(void *arg, struct tt__slot *slot, uint64_t lost, int64_t since_ns,
				  const struct tt_sched_state *states, size_t n)
{
	struct tt__sched_out *so = arg;
	struct tt_sched_info info = {.thread_index = slot->index, .lost = lost, .since_ns = since_ns,
				     .exited_ns = slot->sched.exited_ns};
	so->exit_said |= info.exited_ns != 0;
	tt__out_sched_states(so->out, &info, NULL, states, n);
	if (so->seen)
		so->seen(so->ctx, slot, lost, since_ns, states, n);
}

/* One SCHEDSTAT section: a thread's counters, read by tt-sched. */
static void tt__out_counters_section(void *arg, struct tt__slot *slot, uint64_t lost,
				     const struct tt_schedstat_sample *readings, size_t n)
{
	struct tt__sched_out *so = arg;
	struct tt_schedstat_budget budget = {.unread = slot->sched.counters.unread};
	struct tt_schedstat_info info = {
		.thread_index = slot->index,
		.flags = tt__counters_flags(slot, readings, n),
		.lost = lost,
	};
	tt__out_counters(so->out, &info, &budget, readings, n);
	if (so->seen_counters)
		so->seen_counters(so->ctx, slot, lost, readings, n);
}

void tt__out_sched(struct tt__out *out, struct tt__slot *slot, int release, tt__sched_section_fn seen,
		   tt__counters_fn seen_counters, void *ctx)
{
	struct tt_os_signals old;
	tt__sched_lock(&old);
	struct tt__sched_out so = {.out = out, .seen = seen, .seen_counters = seen_counters, .ctx = ctx};
	if (slot->sched.on) {
		tt__sched_drain_slot(slot);
		tt__sched_sections(slot, tt__out_sched_section, &so);
		/* (mode stream: the thread exited with no state since the last written) */
		if (release && slot->sched.exited_ns && !slot->sched.exit_said && !so.exit_said) {
			struct tt_sched_info exit = {.thread_index = slot->index,
						     .since_ns = slot->sched.since_ns,
						     .exited_ns = slot->sched.exited_ns};
			tt__out_sched_states(out, &exit, NULL, NULL, 0);
			so.exit_said = true;
		}
		if (release) {
			slot->sched.exit_said |= so.exit_said;
			slot->sched.said = 1;
			tt__sched_release(&slot->sched);
			slot->sched.lost = 0;
		}
	}
	/* (no switches: its exit said apart, once a stream's) */
	if (!slot->sched.on && slot->sched.exited_ns && !slot->sched.exit_said) {
		struct tt_thread_exit exit = {.thread_index = slot->index,
					      .exited_ns = slot->sched.exited_ns};
		tt__out_section(out, TT_SEC_THREAD_EXIT, sizeof exit);
		tt__out(out, &exit, sizeof exit);
		slot->sched.exit_said |= release;
	}
	uint64_t from = 0;
	tt__counters_read_now(slot);
	tt__counters_sections(slot, &from, tt__out_counters_section, &so);
	if (release)
		tt__counters_written(slot);
	tt__sched_unlock(&old);
}

/* Whether the records written of the thread begin with its first scope or function
 * as the tools look for it: no THREAD_FIRST needed (nor one a reader older than it
 * refuses). */
static bool tt__opener_kept(const struct tt__thread_snapshot *snap)
{
	size_t left = TT_FIRST_OPENER_RECORDS;
	for (size_t c = 0; c < snap->chunks && left; c++) {
		const struct tt_record *r = tt_first_opener(snap->extents[c].begin, snap->extents[c].end, &left);
		if (r)
			return r->word == snap->opener.word && r->tsc == snap->opener.tsc;
	}
	return false;
}

void tt__out_thread(struct tt__out *out, const struct tt__thread_snapshot *snap,
		    uint64_t *dropped_total)
{
	tt__out_thread_info_of(out, TT_SEC_THREAD, snap->slot, snap->records, snap, dropped_total);
	if (snap->opener.word && !tt__opener_kept(snap))
		tt__out_thread_first(out, snap->slot->index, &snap->opener);
	uint64_t first = 0;
	for (size_t c = 0; c < snap->chunks; c++) {
		const struct tt__extent *e = &snap->extents[c];
		if (e->end == e->begin)
			continue;
		tt__out_events(out, snap->slot->index, first, e->begin, e->end);
		first += (uint64_t)(e->end - e->begin);
	}
	if (snap->gap_records)
		tt__out_events(out, snap->slot->index, first, snap->gap, snap->gap + snap->gap_records);
	if (!snap->windowed)
		tt__out_sched(out, snap->slot, 0, NULL, NULL, NULL);
}

static bool tt__timed_after(const struct tt_record *r, uint64_t tsc)
{
	return TT_RECORD_HAS_TIME(TT_RECORD_KIND(r->word)) && r->tsc > tsc;
}

/* Whether the event at r (records up to end) lasts past tsc: a gap of dropped events
 * lasts to its last one, which its VALUE record holds. */
static bool tt__lasts_past(const struct tt_record *r, const struct tt_record *end, uint64_t tsc)
{
	if (TT_RECORD_KIND(r->word) == TT_REC_DROPPED && r + 1 < end)
		return r[1].tsc > tsc;
	return tt__timed_after(r, tsc);
}

/* An extent's first and last records that have a time, [*first, *last); none: equal.
 * An event's records that have no time go with it: a window begins and ends at
 * records that have one. */
static void tt__timed_span(const struct tt__extent *e, const struct tt_record **first,
			   const struct tt_record **last)
{
	*first = e->begin, *last = e->end;
	while (*first < e->end && !TT_RECORD_HAS_TIME(TT_RECORD_KIND((*first)->word)))
		(*first)++;
	while (*last > *first && !TT_RECORD_HAS_TIME(TT_RECORD_KIND((*last)[-1].word)))
		(*last)--;
}

/* Where a window from from_tsc begins in an extent (its end: nothing of it). Only a
 * chunk the window begins in is read record by record. A gap of dropped events that
 * reaches into the window is in it, with its count. */
static const struct tt_record *tt__extent_from(const struct tt__extent *e, uint64_t from_tsc)
{
	const struct tt_record *first, *last, *begin = e->end;
	tt__timed_span(e, &first, &last);
	if (last > first && tt__lasts_past(last - 1, e->end, from_tsc - 1)) {
		begin = first->tsc >= from_tsc ? e->begin : first;
		while (begin < e->end && !tt__lasts_past(begin, e->end, from_tsc - 1))
			begin++;
	}
	return begin;
}

/* What a thread's chunks held as they were taken, before a window narrowed them: its
 * records and the times of the first and last (its rate). */
static void tt__note_held(struct tt__thread_snapshot *snap)
{
	snap->held_records = snap->held_from_tsc = snap->held_to_tsc = 0;
	for (size_t c = 0; c < snap->chunks; c++) {
		const struct tt__extent *e = &snap->extents[c];
		const struct tt_record *first, *last;
		tt__timed_span(e, &first, &last);
		snap->held_records += (uint64_t)(e->end - e->begin);
		if (last > first && !snap->held_from_tsc)
			snap->held_from_tsc = first->tsc;
		if (last > first)
			snap->held_to_tsc = last[-1].tsc;
	}
}

void tt__narrow_thread(struct tt__thread_snapshot *snap, uint64_t from_tsc, uint64_t to_tsc)
{
	const struct tt__slot *slot = snap->slot;
	enum tt_drop_cause cause = slot->drop_cause; /* (a dropping mode's gaps: of its cause) */
	if (!snap->windowed) /* (once: a window that does not fit is narrowed again) */
		tt__note_held(snap);
	snap->windowed = true;
	snap->begins_inside = __atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_WRAPPED;
	memset(snap->dropped, 0, sizeof snap->dropped);
	snap->records = 0;
	for (size_t c = 0; c < snap->chunks; c++) {
		struct tt__extent *e = &snap->extents[c];
		const struct tt_record *first, *last;
		tt__timed_span(e, &first, &last);
		const struct tt_record *begin = tt__extent_from(e, from_tsc);
		snap->begins_inside |= begin != e->begin;
		const struct tt_record *end = begin;
		if (begin < e->end && last[-1].tsc <= to_tsc)
			end = e->end;
		while (end < e->end && !tt__timed_after(end, to_tsc))
			end++;
		for (const struct tt_record *r = begin; r < end; r++)
			if (TT_RECORD_KIND(r->word) == TT_REC_DROPPED)
				snap->dropped[cause] += TT_RECORD_PAYLOAD(r->word);
		*e = (struct tt__extent){begin, end};
		snap->records += (uint64_t)(end - begin);
	}
	/* The events it is dropping now, when they began in the window. */
	if (snap->gap_records && (snap->gap[0].tsc > to_tsc || snap->gap[1].tsc < from_tsc))
		snap->gap_records = 0;
	if (snap->gap_records)
		snap->dropped[cause] += TT_RECORD_PAYLOAD(snap->gap[0].word);
	snap->records += snap->gap_records;
}

void tt__window_cut(struct tt__thread_snapshot *snap, uint64_t from_tsc, uint64_t to_tsc)
{
	/* What the ring had overwritten before the reading began, from its history,
	 * and what it recycled since, before the thread's chunks were found: from the
	 * window's start to the first record copied. */
	const struct tt_record *kept = NULL, *kept_end = NULL;
	if (snap->chunks)
		kept = snap->extents[0].begin, kept_end = snap->extents[0].end;
	while (kept < kept_end && !TT_RECORD_HAS_TIME(TT_RECORD_KIND(kept->word)))
		kept++;
	uint64_t until = kept < kept_end && kept->tsc > from_tsc ? kept->tsc - 1 : to_tsc;
	uint64_t first = 0, last = 0;
	uint64_t recent = tt__deferred_events(snap->slot, from_tsc, until, &first, &last);
	uint64_t events = tt__overwritten_in(snap->slot, from_tsc, to_tsc, &snap->lost_from_tsc,
					     &snap->lost_to_tsc);
	if (!events) {
		snap->lost_from_tsc = first;
		snap->lost_to_tsc = last;
	} else if (recent && last > snap->lost_to_tsc) {
		snap->lost_to_tsc = last;
	}
	snap->dropped[TT_DROP_OVERWRITTEN] = events + recent;
}

/* Chunks a thread may take between the room's making and the reading. */
#define TT__COPY_SPARE_CHUNKS 8

/* Of a thread's chunks now, those that may hold records from from_tsc on: its last, and
 * those whose successor begins after it or holds nothing yet (read as a reader:
 * tt__reading). */
static uint64_t tt__chunks_from(const struct tt__slot *slot, uint64_t from_tsc)
{
	uint64_t chunks = 0;
	for (const struct tt__chunk *c = __atomic_load_n(&slot->first, __ATOMIC_ACQUIRE); c;) {
		const struct tt__chunk *next = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE);
		const struct tt_record *begins = next ? (const struct tt_record *)(next + 1) : NULL;
		chunks += !begins || !__atomic_load_n(&begins->word, __ATOMIC_ACQUIRE) || begins->tsc > from_tsc;
		c = next;
	}
	return chunks;
}

/* The room kept between windows (tt-spikes' alone, under its lock): mapping it and
 * faulting it in for each window, then unmapping it, were a third of tt-spikes' time
 * where spikes came every few tens of ms (outside recheck r38 R2's ring200: 200
 * snapshots in 5 s). Let go once no window used it for TT__COPY_ROOM_IDLE_NS. */
static struct tt__copy_room tt__room_kept;
static int64_t tt__room_used_ns; /* CLOCK_MONOTONIC when a window last gave it back */
#define TT__COPY_ROOM_IDLE_NS 1000000000

static void tt__room_let_go(void)
{
	if (tt__room_kept.cap)
		tt_os_free(tt__room_kept.at, tt__room_kept.cap * sizeof *tt__room_kept.at);
	tt__room_kept = (struct tt__copy_room){0};
}

void tt__copy_room_make(struct tt__copy_room *room, uint64_t from_tsc)
{
	/* At most what the arena set aside of the budget (tt__arena_set_aside): memory
	 * for the copies is address space until they take it. Faulted in before the
	 * reading: what the live threads' chunks from the window's start on might hold
	 * now, and a few more. (Not the chunks before it: a ring's whole buffer, 16 MiB a
	 * thread by default, faulted in and unmapped for each window of a few hundred
	 * KiB was most of what a snapshot cost, outside recheck r36 F3. Nor the threads
	 * gone: their chunks no longer change, their records in a window are few next to
	 * the memory they left; thousands of threads created and joined in turn made every
	 * snapshot fault in 64 KiB for each chunk they left.) Pages a window before
	 * faulted in are in already: faulting them in again changes nothing. */
	size_t bytes = tt__arena_set_aside_bytes(), chunks = 0;
	tt__reading(TT__READING_UNCOUNTED); /* (the window's own reading counts them) */
	for (struct tt__slot *slot = tt__registry_head(); slot;
	     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE))
		if (!(__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_EXITED))
			chunks += tt__chunks_from(slot, from_tsc) + TT__COPY_SPARE_CHUNKS;
	tt__reading(0);
	if (tt__room_kept.cap != bytes / sizeof(struct tt_record))
		tt__room_let_go(); /* (what the arena sets aside changed: a fork's child's arena) */
	if (!tt__room_kept.cap) {
		void *at = bytes ? tt_os_alloc(bytes) : NULL;
		if (at)
			tt__room_kept = (struct tt__copy_room){at, 0, bytes / sizeof(struct tt_record)};
	}
	*room = tt__room_kept;
	if (room->cap)
		tt_os_fault_in(room->at, chunks * TT__CHUNK_SIZE < bytes ? chunks * TT__CHUNK_SIZE : bytes);
}

void tt__copy_room_free(struct tt__copy_room *room)
{
	if (room->cap)
		tt__room_used_ns = tt_os_monotonic_ns();
	*room = (struct tt__copy_room){0};
}

void tt__copy_room_idle(void)
{
	if (tt__room_kept.cap && tt_os_monotonic_ns() - tt__room_used_ns >= TT__COPY_ROOM_IDLE_NS)
		tt__room_let_go();
}

/* The records a window from from_tsc keeps of the threads narrowed to it (or to an
 * earlier start), those copied: without the events being dropped now. */
static uint64_t tt__window_records(const struct tt__thread_snapshot *snaps, size_t threads,
				   uint64_t from_tsc)
{
	uint64_t records = 0;
	for (size_t i = 0; i < threads; i++)
		for (size_t c = 0; c < snaps[i].chunks; c++)
			records += (uint64_t)(snaps[i].extents[c].end -
					      tt__extent_from(&snaps[i].extents[c], from_tsc));
	return records;
}

int tt__window_fit(struct tt__window *w, struct tt__thread_snapshot *snaps, size_t threads,
		   const struct tt__copy_room *room)
{
	uint64_t from = w->info.from_tsc, latest = w->info.begin_tsc;
	if (tt__window_records(snaps, threads, from) <= room->cap)
		return 0;
	if (latest <= from || tt__window_records(snaps, threads, latest) > room->cap)
		return -ENOBUFS;
	/* The earliest start whose records fit: (from, latest] holds it. */
	while (latest - from > 1) {
		uint64_t mid = from + (latest - from) / 2;
		if (tt__window_records(snaps, threads, mid) <= room->cap)
			latest = mid;
		else
			from = mid;
	}
	w->from_ns += (int64_t)((unsigned __int128)(latest - w->info.from_tsc) *
				(uint64_t)(w->to_ns - w->from_ns) / (w->info.to_tsc - w->info.from_tsc));
	w->info.from_tsc = latest;
	w->shortened = true;
	for (size_t i = 0; i < threads; i++) {
		bool begins_inside = snaps[i].begins_inside; /* (left out before the first start) */
		tt__narrow_thread(&snaps[i], w->info.from_tsc, w->info.to_tsc);
		snaps[i].begins_inside |= begins_inside;
	}
	return 0;
}

int tt__copy_thread(struct tt__thread_snapshot *snap, struct tt__copy_room *room)
{
	uint64_t records = snap->records - snap->gap_records;
	if (!records)
		return 0;
	if (records > room->cap - room->used)
		return -ENOBUFS; /* (never after tt__window_fit) */
	struct tt_record *from = room->at + room->used, *to = from;
	room->used += records;
	for (size_t c = 0; c < snap->chunks; c++) {
		size_t n = (size_t)(snap->extents[c].end - snap->extents[c].begin);
		memcpy(to, snap->extents[c].begin, n * sizeof *to);
		to += n;
	}
	snap->extents[0] = (struct tt__extent){from, to};
	snap->chunks = 1;
	return 0;
}

/* Writing a thread's states from from_ns to to_ns: the state it was in at from_ns
 * (carried from the states before), then those in the window. */
struct tt__sched_window {
	struct tt__out *out;
	int64_t from_ns, to_ns;
	struct tt_sched_state carry;
	bool carried, started;
	int64_t seen_ns; /* the last state of the sections so far (INT64_MIN: none) */
	uint64_t lost;   /* switches lost after the state before the window, unsaid yet */
};

static void tt__sched_window_section(void *arg, struct tt__slot *slot, uint64_t lost, int64_t since_ns,
				     const struct tt_sched_state *states, size_t n)
{
	struct tt__sched_window *w = arg;
	int64_t before = w->seen_ns;
	if (n)
		w->seen_ns = states[n - 1].ns;
	size_t first = 0, last;
	while (first < n && states[first].ns < w->from_ns)
		first++;
	for (last = first; last < n && states[last].ns <= w->to_ns;)
		last++;
	if (first > 0) {
		w->carry = states[first - 1];
		w->carried = true;
		w->lost = 0;
	}
	/* A section that begins in the window says what was lost there; one that began
	 * before it, only what it holds from the window on, after the state the thread
	 * was in then. */
	bool since_inside = since_ns > w->from_ns;
	int64_t exited = slot->sched.exited_ns;
	exited = exited >= w->from_ns && exited <= w->to_ns ? exited : 0;
	if (!n && !lost && since_ns <= w->to_ns) { /* it never left its CPU (tt__sched_walk) */
		struct tt_sched_info ran = {.thread_index = slot->index,
					    .since_ns = since_inside ? since_ns : w->from_ns,
					    .exited_ns = exited};
		tt__out_sched_states(w->out, &ran, NULL, NULL, 0);
		w->started = true;
		return;
	}
	if (since_ns > w->to_ns || (first == last && !(since_inside && lost))) {
		/* Switches lost from the state before (or from its last, none kept after)
		 * to this section's first, a span that meets the window: what the thread did
		 * there is not known, never the state before it carried across (a ring's
		 * snapshot showed a ping-pong thread preempted all through a window its
		 * switches were lost in). */
		if (lost && (n ? since_ns > w->to_ns && before <= w->to_ns : since_ns <= w->from_ns)) {
			if (w->started) {
				struct tt_sched_info info = {.thread_index = slot->index, .lost = lost,
							     .since_ns = before > w->from_ns ? before : w->from_ns};
				tt__out_sched_states(w->out, &info, NULL, NULL, 0);
			} else {
				w->carried = false;
				w->lost += lost;
			}
		}
		return;
	}
	struct tt_sched_info info = {
		.thread_index = slot->index, .lost = since_inside ? lost : 0,
		.since_ns = since_inside ? since_ns : w->from_ns, .exited_ns = exited,
	};
	bool carry = w->carried && !since_inside;
	/* (none in the window: no pointer into none, a section of only switches lost has
	 * states NULL, and NULL + 0 is undefined, UBSan's find in shared_process_losses) */
	tt__out_sched_states(w->out, &info, carry ? &w->carry : NULL, last > first ? states + first : NULL,
			     last - first);
	w->carried = false;
	w->started = true;
}

/* A thread's counters' readings in the window, and the last before it and the first
 * after it (what a spike at its edges is split by). */
static void tt__counters_window_section(void *arg, struct tt__slot *slot, uint64_t lost,
					const struct tt_schedstat_sample *readings, size_t n)
{
	(void)lost; /* (of readings before the window) */
	const struct tt__sched_window *w = arg;
	size_t first = 0, last = 0;
	while (first + 1 < n && readings[first + 1].ns <= w->from_ns)
		first++;
	while (last < n && readings[last].ns <= w->to_ns)
		last++;
	last += last < n;
	if (last <= first)
		return;
	struct tt__sched_out so = {.out = w->out};
	tt__out_counters_section(&so, slot, 0, readings + first, last - first);
}

void tt__out_sched_window(struct tt__out *out, struct tt__slot *slot, int64_t from_ns, int64_t to_ns)
{
	struct tt__sched_window w = {.out = out, .from_ns = from_ns, .to_ns = to_ns, .seen_ns = INT64_MIN};
	struct tt_os_signals old;
	tt__sched_lock(&old);
	uint64_t from = 0;
	tt__counters_sections(slot, &from, tt__counters_window_section, &w);
	if (!slot->sched.on) {
		tt__sched_unlock(&old);
		return;
	}
	tt__sched_drain_slot(slot);
	tt__sched_sections(slot, tt__sched_window_section, &w);
	tt__sched_unlock(&old);
	/* In the same state the whole window: that state, from its start; or, its
	 * switches lost after the state before it, none known. */
	if (!w.started && (w.carried || w.lost)) {
		struct tt_sched_info info = {.thread_index = slot->index, .lost = w.lost, .since_ns = from_ns};
		tt__out_sched_states(out, &info, w.carried ? &w.carry : NULL, NULL, 0);
	}
}
