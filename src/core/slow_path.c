/* The slow path of the hot path (asm/record.asm): a thread's first event, a full
 * chunk, a full buffer (its scratch chunk, counted); and the events recorded out of
 * line. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/core_internal.h"

/* Gives a failed reservation back if nothing was reserved after it, so that the
 * cursor of a thread that may not record does not creep, and a chunk's size says
 * where its records end. */
static void tt__give_back(struct tt__slot *slot, char *where, uint64_t size)
{
	char *expected = where + size;
	__atomic_compare_exchange_n(&slot->hot->cursor, &expected, where, 0, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
}

static int tt__try_record(struct tt__slot *slot, const struct tt_record *records, uint64_t size,
			  char **where)
{
	/* The limit first, as in the hot path: see asm/record.asm. Its tags off: a
	 * dropping thread's event goes to its scratch chunk, here with its time. */
	char *limit = (char *)((uintptr_t)__atomic_load_n(&slot->hot->limit, __ATOMIC_ACQUIRE) &
			       ~(uintptr_t)TT__LIMIT_TAGS);
	*where = __atomic_fetch_add(&slot->hot->cursor, size, __ATOMIC_RELAXED);
	if (!tt__fits(*where, size, limit)) {
		tt__give_back(slot, *where, size);
		return 0;
	}
	memcpy(*where, records, size);
	return 1;
}

/* Kinds whose `tsc` is not a time (not TT_RECORD_HAS_TIME), for the scan below. */
static const uint8_t tt__untimed[256] = {[TT_REC_PAD] = 1, [TT_REC_VALUE] = 1, [TT_REC_TEXT] = 1};

/* An event the thread may not record is dropped, and counted, only when its buffer is
 * used up: not while recording is off or the thread has paused. It is counted by
 * cause, and in the thread's current gap with its time and its effect on the scopes.
 * Only the owner thread and its signal handlers drop its events: a handler that
 * interrupts an update only counts. (With a scratch chunk, the hot path writes
 * dropped events there and tt__scratch_fold counts them; this is for the rest.) */
static void tt__count_drop(struct tt__slot *slot, const struct tt_record *event)
{
	uint32_t flags = __atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE);
	if ((flags & (TT__SLOT_EXHAUSTED | TT__SLOT_PAUSED)) != TT__SLOT_EXHAUSTED ||
	    !__atomic_load_n(&tt__recording, __ATOMIC_RELAXED))
		return;
	__atomic_add_fetch(&slot->dropped[slot->drop_cause], 1, __ATOMIC_RELAXED);
	struct tt_gap *g = &slot->gap;
	if (__atomic_exchange_n(&g->busy, 1, __ATOMIC_ACQUIRE)) {
		__atomic_add_fetch(&g->count, 1, __ATOMIC_RELAXED);
		return;
	}
	struct tt_gap next = *g;
	tt_gap_add(&next, event);
	g->first_tsc = next.first_tsc;
	g->last_tsc = next.last_tsc;
	g->depth = next.depth;
	g->min_depth = next.min_depth;
	__atomic_add_fetch(&g->count, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&g->busy, 0, __ATOMIC_RELEASE);
}

/* The events written into a thread's scratch chunk so far, added to `dropped` and
 * `gap`: a lean loop, which with the hot path's store is all a dropped event costs.
 * The chunk is not cleared between rounds: a record reserved but not yet written when
 * this runs (a signal handler that interrupted its writer counts the chunk) is taken
 * for what its place held before, so that event may be counted with another's kind. */
static void tt__scratch_scan(const struct tt__slot *slot, uint64_t *dropped, struct tt_gap *gap)
{
	const struct tt__hot *hot = __atomic_load_n(&slot->hot, __ATOMIC_ACQUIRE);
	const char *cursor = __atomic_load_n(&hot->cursor, __ATOMIC_ACQUIRE);
	const struct tt_record *begin = (const struct tt_record *)(slot->scratch + 1);
	const struct tt_record *end = (const struct tt_record *)((const char *)slot->scratch + TT__SCRATCH_SIZE);
	if (cursor < (const char *)begin || cursor > (const char *)end)
		return; /* not recording into it */
	end = (const struct tt_record *)cursor;
	uint64_t count = 0;
	int32_t depth = gap->count ? gap->depth : 0, low = gap->count ? gap->min_depth : 0;
	for (const struct tt_record *r = begin; r < end; r++) {
		unsigned kind = (unsigned)(__atomic_load_n(&r->word, __ATOMIC_RELAXED) >> TT_KIND_SHIFT);
		int32_t lowest = depth + tt_scope_low[kind];
		low = lowest < low ? lowest : low;
		depth += tt_scope_change[kind];
		count += 1u - tt__untimed[kind];
	}
	if (!count)
		return;
	/* Events the hot path dropped have no time (0); the slow path's have. */
	const struct tt_record *first = begin, *last = end - 1;
	while (tt__untimed[TT_RECORD_KIND(__atomic_load_n(&first->word, __ATOMIC_RELAXED)) & 0xff])
		first++;
	while (tt__untimed[TT_RECORD_KIND(__atomic_load_n(&last->word, __ATOMIC_RELAXED)) & 0xff])
		last--;
	uint64_t first_tsc = __atomic_load_n(&first->tsc, __ATOMIC_RELAXED);
	uint64_t last_tsc = __atomic_load_n(&last->tsc, __ATOMIC_RELAXED);
	if (!gap->count)
		gap->first_tsc = first_tsc;
	if (last_tsc > gap->last_tsc)
		gap->last_tsc = last_tsc;
	gap->depth = depth;
	gap->min_depth = low;
	gap->count += count;
	*dropped += count;
}

/* The calls in the full scratch chunk, `end` its cursor, counted per function in the
 * thread's table (TICKTRACE_MIN_DUR's, when it has one), claiming a free entry as the
 * exit hooks do: what the buffer kept is the run's first events, and `spikes
 * --suggest` ranks functions by the whole run's calls. A function whose entry another
 * holds is counted as dropped only. The owner, signals blocked: nothing else writes. */
static void tt__scratch_calls(const struct tt__slot *slot, const char *end)
{
	struct tt__filters *filters = slot->filters;
	const struct tt_record *r = (const struct tt_record *)(slot->scratch + 1);
	if (!filters || end > (const char *)slot->scratch + TT__CHUNK_SIZE)
		return;
	for (; r < (const struct tt_record *)end; r++) {
		if (TT_RECORD_KIND(r->word) != TT_REC_FUNC_ENTER)
			continue;
		uint64_t word = r->word ^ TT_RECORD_WORD(TT_REC_FUNC_ENTER ^ TT_REC_FUNC_EXIT, 0);
		struct tt__filtered_fn *fn = &filters->fn[tt__filter_home(word)];
		for (int probe = 1; probe < TT__FILTER_PROBES && fn->word && fn->word != word; probe++)
			fn++;
		if (fn->word == 0)
			__atomic_store_n(&fn->word, word, __ATOMIC_RELAXED);
		if (fn->word == word)
			__atomic_store_n(&fn->dropped, fn->dropped + 1, __ATOMIC_RELAXED);
	}
}

/* Core lock held, signals blocked, the owner thread: counts the events in the full
 * scratch chunk as dropped and starts it again. `now` is the time of the event that
 * found it full: the gap's end as far as known (its events have no time). */
static void tt__scratch_fold(struct tt__slot *slot, uint64_t now)
{
	if (!slot->scratch)
		return;
	__atomic_add_fetch(&slot->scratch_seq, 1, __ATOMIC_ACQ_REL);
	uint64_t dropped = 0;
	struct tt_gap gap = slot->gap;
	tt__scratch_scan(slot, &dropped, &gap);
	tt__scratch_calls(slot, __atomic_load_n(&slot->hot->cursor, __ATOMIC_ACQUIRE));
	if (gap.count && now > gap.last_tsc)
		gap.last_tsc = now;
	__atomic_store_n(&slot->dropped[slot->drop_cause], slot->dropped[slot->drop_cause] + dropped,
			 __ATOMIC_RELAXED);
	slot->gap.first_tsc = gap.first_tsc;
	slot->gap.last_tsc = gap.last_tsc;
	slot->gap.depth = gap.depth;
	slot->gap.min_depth = gap.min_depth;
	__atomic_store_n(&slot->gap.count, gap.count, __ATOMIC_RELEASE);
	__atomic_store_n(&slot->hot->cursor, (char *)(slot->scratch + 1), __ATOMIC_RELEASE);
	__atomic_add_fetch(&slot->scratch_seq, 1, __ATOMIC_ACQ_REL);
}

void tt__drops_now(const struct tt__slot *slot, uint64_t dropped[TT_DROP_CAUSES],
		   struct tt_gap *gap)
{
	for (;;) {
		uint32_t seq = __atomic_load_n(&slot->scratch_seq, __ATOMIC_ACQUIRE);
		for (int i = 0; i < TT_DROP_CAUSES; i++)
			dropped[i] = __atomic_load_n(&slot->dropped[i], __ATOMIC_RELAXED);
		*gap = slot->gap;
		gap->count = __atomic_load_n(&slot->gap.count, __ATOMIC_ACQUIRE);
		if (slot->scratch && (__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_EXHAUSTED))
			tt__scratch_scan(slot, &dropped[slot->drop_cause], gap);
		if (!(seq & 1) && __atomic_load_n(&slot->scratch_seq, __ATOMIC_ACQUIRE) == seq)
			return;
		tt_os_yield(); /* the owner is counting its scratch chunk */
	}
}

size_t tt__gap_records(const struct tt__slot *slot, struct tt_record out[2])
{
	uint64_t dropped[TT_DROP_CAUSES];
	struct tt_gap gap;
	tt__drops_now(slot, dropped, &gap);
	return tt_gap_records(&gap, out);
}

/* Core lock held, signals blocked: the record of the gap before the next event. */
static int tt__close_gap(struct tt__slot *slot)
{
	struct tt_record gap[2];
	if (!tt__gap_records(slot, gap))
		return 1;
	char *where;
	if (!tt__try_record(slot, gap, sizeof gap, &where))
		return 0;
	__atomic_store_n(&slot->gap.count, 0, __ATOMIC_RELEASE);
	return 1;
}

static void tt__reservation_failed(struct tt__slot *slot, const struct tt_record *records,
				   uint64_t size, char *where)
{
	tt__give_back(slot, where, size);
	/* Recording off for the thread: the hot path returns before reserving; a signal
	 * handler may have turned it off since. */
	if (__atomic_load_n(&slot->hot->limit, __ATOMIC_ACQUIRE) == TT__LIMIT_OFF)
		return;
	/* Dropping with no scratch chunk (the run's memory was used up first), and no
	 * chunk come back since the last look: counted as it is, without blocking
	 * signals or the lock, which cost microseconds an event. */
	if ((__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_EXHAUSTED) &&
	    !__atomic_load_n(&slot->scratch, __ATOMIC_ACQUIRE) &&
	    __atomic_load_n(&tt__chunk_returns, __ATOMIC_ACQUIRE) ==
		    __atomic_load_n(&slot->returns_seen, __ATOMIC_RELAXED)) {
		tt__count_drop(slot, records);
		return;
	}
	/* The chunk is full, the scratch chunk is, or the drain freed one. Signals stay
	 * blocked while we move to the next one, so a handler never sees a half-switched
	 * slot. */
	struct tt_os_signals old;
	tt_os_signals_block(&old);
	tt__core_lock(1);
	for (;;) {
		if (slot->flags & TT__SLOT_EXHAUSTED) {
			tt__scratch_fold(slot, records[0].tsc);
			if (tt__resume(slot))
				continue;
			tt__publish_limit(slot); /* (the drain may have sent us here) */
			__atomic_store_n(&slot->returns_seen, tt__chunk_returns, __ATOMIC_RELAXED);
			if (!slot->scratch || !tt__try_record(slot, records, size, &where))
				tt__count_drop(slot, records);
			break;
		}
		/* A handler may have moved to a new chunk before we blocked signals. */
		if (tt__close_gap(slot) && tt__try_record(slot, records, size, &where))
			break;
		if (slot->hot->limit == TT__LIMIT_OFF)
			break;
		tt__next_chunk(slot); /* or the thread is now EXHAUSTED */
	}
	tt__core_lock(0);
	tt_os_signals_restore(&old);
}

/* Lost before a thread has a slot (no memory, 65,536 live threads): reported in the
 * file's process totals. */
uint64_t tt__unregistered_drops;

/* Set while this thread runs the parts of the slow path that may reach code which
 * records (core.h says why). */
__thread int tt__in_slow_path;

/* 1 + tt__chunk_returns when this thread last failed to register; 0: never. */
static __thread uint32_t tt__unregistered_at __attribute__((tls_model("initial-exec")));

static void tt__count_reentered(struct tt__slot *slot)
{
	if (!slot)
		slot = tt__find_slot(tt_os_thread_key());
	if (slot)
		__atomic_add_fetch(&slot->dropped[TT_DROP_REENTERED], 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&tt__unregistered_drops, 1, __ATOMIC_RELAXED);
}

/* Records `size` bytes of records for the calling thread: from its slot and the
 * place the hot path reserved, or (slot NULL) from the start, finding the slot. */
static void tt__record_in(struct tt__slot *slot, struct tt_record *records, uint64_t size,
			  char *where)
{
	if (tt__in_slow_path) {
		tt__count_reentered(slot);
		return;
	}
	if (!slot) {
		/* A thread that could not register tries again once a chunk came back;
		 * meanwhile its events are only counted: no lookup, no lock. */
		uint32_t returns = __atomic_load_n(&tt__chunk_returns, __ATOMIC_ACQUIRE);
		if (tt__unregistered_at == returns + 1) {
			if (__atomic_load_n(&tt__recording, __ATOMIC_RELAXED))
				__atomic_add_fetch(&tt__unregistered_drops, 1, __ATOMIC_RELAXED);
			return;
		}
		if (tt__started_off() || !__atomic_load_n(&tt__recording, __ATOMIC_RELAXED))
			return;
		uintptr_t tp = tt_os_thread_key();
		slot = tt__find_slot(tp);
		int registered = !slot;
		if (!slot)
			slot = tt__register_thread(tp);
		if (!slot) {
			tt__unregistered_at = returns + 1;
			__atomic_add_fetch(&tt__unregistered_drops, 1, __ATOMIC_RELAXED);
			return;
		}
		/* The thread's set-up (and, for the run's first event, start-up) is
		 * ticktrace's time, not the program's: its first event is timed after it. */
		if (registered && TT_RECORD_HAS_TIME(TT_RECORD_KIND(records[0].word)))
			records[0].tsc = __builtin_ia32_rdtsc();
		if (tt__try_record(slot, records, size, &where))
			return;
	}
	tt__reservation_failed(slot, records, size, where);
}

void tt__record_slow(uint64_t word, uint64_t value, uint64_t tsc, struct tt__hot *entry,
		     char *where)
{
	struct tt__slot *slot = entry ? entry->slot : NULL;
	if (!tsc) /* a dropping thread's event: the hot path read no time */
		tsc = __builtin_ia32_rdtsc();
	int saved_errno = errno;
	struct tt_record records[2] = {{tsc, word}, {value, TT_RECORD_WORD(TT_REC_VALUE, 0)}};
	uint64_t size = TT_RECORD_HAS_VALUE(TT_RECORD_KIND(word)) ? 2 * sizeof(struct tt_record)
								  : sizeof(struct tt_record);
	tt__record_in(slot, records, size, where);
	errno = saved_errno;
}

void tt__record_many(struct tt_record *records, size_t n)
{
	int saved_errno = errno;
	tt__record_in(NULL, records, n * sizeof(struct tt_record), NULL);
	errno = saved_errno;
}

/* A tally of threads' drops for tt__say_drops: by cause, and the first threads that
 * dropped by name. */
struct tt__drops_tally {
	uint64_t total[TT_DROP_CAUSES];
	unsigned with_drops;
	size_t len;
	char threads[256];
};

/* Those of threads whose slots were recycled (mode stream retires a thread's slot
 * once its records are written): gone from the registry by the exit. (Registry lock
 * held, as the tally below.) */
static struct tt__drops_tally tt__retired_drops;

/* Registry lock held. */
static void tt__drops_tally_add(struct tt__drops_tally *t, const struct tt__slot *slot)
{
	uint64_t dropped[TT_DROP_CAUSES], lost = 0;
	struct tt_gap gap;
	tt__drops_now(slot, dropped, &gap);
	/* (what the output lost, the mode said with its cause) */
	dropped[TT_DROP_BEHIND] -= __atomic_load_n(&slot->lost_by_output, __ATOMIC_RELAXED);
	for (int i = 0; i < TT_DROP_CAUSES; i++) {
		if (i == TT_DROP_OVERWRITTEN) /* mode ring's purpose, not a loss */
			continue;
		t->total[i] += dropped[i];
		lost += dropped[i];
	}
	if (lost && t->with_drops++ < 4 && t->len < sizeof t->threads)
		t->len += (size_t)snprintf(t->threads + t->len, sizeof t->threads - t->len,
					   "%s%s (tid %u) %" PRIu64, t->with_drops > 1 ? ", " : "",
					   slot->name, slot->tid, lost);
}

void tt__drops_retire(const struct tt__slot *slot)
{
	struct tt_os_signals old;
	tt__registry_lock(&old);
	tt__drops_tally_add(&tt__retired_drops, slot);
	tt__registry_unlock(&old);
}

void tt__drops_forget_parents(void)
{
	tt__retired_drops = (struct tt__drops_tally){0};
	tt__unregistered_drops = 0;
	tt__unregistered_at = 0; /* the child's memory is its own: it may register */
}

void tt__say_drops(void)
{
	struct tt_os_signals old;
	tt__registry_lock(&old);
	struct tt__drops_tally tally = tt__retired_drops;
	for (struct tt__slot *slot = tt__registry_head(); slot;
	     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE))
		tt__drops_tally_add(&tally, slot);
	tt__registry_unlock(&old);
	const uint64_t *total = tally.total;
	uint64_t unregistered = __atomic_load_n(&tt__unregistered_drops, __ATOMIC_RELAXED);
	uint64_t all = unregistered;
	for (int i = 0; i < TT_DROP_CAUSES; i++)
		all += total[i];
	if (!all)
		return;
	fprintf(tt__err, "ticktrace: %" PRIu64 " events dropped", all);
	for (int i = 0; i < TT_DROP_CAUSES; i++)
		if (total[i])
			fprintf(tt__err, ", %" PRIu64 " because %s", total[i], tt_drop_cause_text((unsigned)i));
	if (unregistered)
		fprintf(tt__err, ", %" PRIu64 " of threads that had no buffer", unregistered);
	if (tally.with_drops)
		fprintf(tt__err, "; on %u thread%s: %s%s", tally.with_drops,
			tally.with_drops > 1 ? "s" : "", tally.threads, tally.with_drops > 4 ? ", ..." : "");
	fprintf(tt__err, "\n");
	if (total[TT_DROP_FULL] && tt__mode->recycle_oldest)
		fprintf(tt__err, "ticktrace: dumps held the rings while threads filled them twice "
			"over (TICKTRACE_BUFFER %" PRIu64 " records, or 16 MiB): dump less often\n",
			tt__config.buffer_events);
	else if (total[TT_DROP_FULL])
		fprintf(tt__err, "ticktrace: each thread kept its first %" PRIu64 " records "
			"(TICKTRACE_BUFFER=%" PRIu64 ", in whole chunks of %zu): set it larger, or "
			"TICKTRACE_MODE=ring to keep the latest, or TICKTRACE_MODE=stream to keep "
			"them all\n", (uint64_t)tt__config.chunk_budget * TT__CHUNK_RECORDS,
			tt__config.buffer_events, (size_t)TT__CHUNK_RECORDS);
	uint64_t aside = tt__arena_set_aside_bytes();
	/* (a stream's run is told of no mode it runs already: outside tester r51) */
	const char *other_modes = tt__mode->drains ? "" : ": TICKTRACE_MODE=stream or ring keeps more";
	if (tt__arena_full() && tt__arena_gave_room())
		fprintf(tt__err, "ticktrace: the buffers of all threads together stopped at %" PRIu64
			" MiB, where the program's own use of its address space (ulimit -v, RLIMIT_AS: "
			"%" PRIu64 " MiB) left them no more room (they take at most a quarter of what "
			"is free as they grow, the rest the program's)%s\n", tt__arena_bytes() >> 20,
			tt_os_address_limit() >> 20, other_modes);
	else if (tt__arena_full() && aside)
		fprintf(tt__err, "ticktrace: the buffers of all threads together reached their part "
			"of the run's memory budget, %" PRIu64 " of %" PRIu64 " KiB (TICKTRACE_MEMORY; "
			"the rest is kept for the snapshots' copies): set it larger, or TICKTRACE_BUFFER "
			"smaller\n", (tt__arena_bytes() - aside) >> 10, tt__arena_bytes() >> 10);
	else if (tt__arena_full() && tt__arena_bytes() < tt__config.memory_bytes)
		fprintf(tt__err, "ticktrace: the buffers of all threads together reached the %" PRIu64
			" MiB the process's address space left them (of the %" PRIu64 " MiB of "
			"TICKTRACE_MEMORY)%s\n", tt__arena_bytes() >> 20, tt__config.memory_bytes >> 20, other_modes);
	else if (tt__arena_full())
		fprintf(tt__err, "ticktrace: the buffers of all threads together reached the run's "
			"memory budget, %" PRIu64 " MiB (TICKTRACE_MEMORY): set it larger, or "
			"TICKTRACE_BUFFER smaller%s\n", tt__config.memory_bytes >> 20,
			tt__mode->drains ? "" : ", or TICKTRACE_MODE=stream");
	if (total[TT_DROP_BEHIND])
		fprintf(tt__err, "ticktrace: the drain thread could not write as fast as threads "
			"recorded: a larger TICKTRACE_BUFFER absorbs bursts, a faster disk the rest\n");
}
