/* A thread's chunks: its first, the limit the hot path checks, the next when one is
 * full (or, its budget used up, ring recycling or dropping), the ones the drain of
 * mode stream took, compaction at exit. The arena they come from is arena.c's; the
 * extent of what they hold, extent.c's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_internal.h"

int tt__dumps_running;

void tt__hold_chunks(int hold)
{
	/* Mode ring: the chunks waiting to be cleaned are counted as overwritten now,
	 * so that a dump has every thread's count; before the hold, which makes rings
	 * that fill meanwhile grow. */
	if (hold && tt__mode->recycle_oldest)
		tt__clean_queued();
	struct tt_os_signals old;
	tt__registry_lock(&old);
	tt__core_lock(1);
	tt__dumps_running += hold ? 1 : -1;
	if (!hold)
		tt__chunk_returned(); /* (the rings may recycle again) */
	tt__core_lock(0);
	tt__registry_unlock(&old);
}

void tt__compact_exited(struct tt__slot *slot)
{
	tt__core_lock(1);
	tt__publish_limit(slot);
	tt__core_lock(0);
	struct tt__chunk *chunk = slot->current;
	const struct tt_record *begin, *end;
	tt__chunk_extent(slot, chunk, &begin, &end);
	size_t used = (size_t)((const char *)end - (const char *)begin);
	/* Not in a live file: the copy would be private memory. */
	if (tt__dumps_running || tt__reading_now() || chunk->size != TT__CHUNK_SIZE ||
	    used > TT__CHUNK_SIZE / 2 ||
	    tt__chunks_file())
		return;
	/* A draining mode (stream): not while the drain reads the slot (it then recycles
	 * the chunk soon); the small copy is malloc'd, and freed once written. */
	int stream = tt__mode->drains;
	int idle = 0;
	if (stream && !__atomic_compare_exchange_n(&slot->drain_state, &idle, TT__DRAIN_COMPACTING, 0,
						  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	tt__core_lock(1);
	/* (a reader that began since may have found the chunk) */
	struct tt__chunk *small = NULL;
	if (!tt__reading_now())
		small = stream ? malloc(sizeof *small + used) : tt__compacted_alloc(sizeof *small + used);
	if (small) {
		tt__arena_holds(small); /* (tt-stream writes and frees it) */
		small->next = NULL;
		small->size = (uint32_t)(sizeof *small + used);
		small->thread = slot->index;
		memcpy(small + 1, begin, used);
		struct tt__chunk **link = &slot->first;
		while (*link != chunk)
			link = &(*link)->next;
		__atomic_store_n(link, small, __ATOMIC_RELEASE);
		slot->current = small;
		if (slot->drained >= begin && slot->drained <= end)
			slot->drained = (const struct tt_record *)(small + 1) + (slot->drained - begin);
		if (stream)
			slot->flags |= TT__SLOT_COMPACTED;
		memset(chunk, 0, TT__CHUNK_SIZE);
		tt__chunk_free(chunk);
	}
	tt__core_lock(0);
	if (stream)
		__atomic_store_n(&slot->drain_state, TT__DRAIN_IDLE, __ATOMIC_RELEASE);
}

void tt__publish_limit(struct tt__slot *slot)
{
	uint32_t flags = __atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE);
	char *limit = slot->chunk_end;
	if (flags & TT__SLOT_EXITED)
		limit = NULL; /* (not OFF: a new thread on its stack, and entry, registers) */
	else if (!__atomic_load_n(&tt__recording, __ATOMIC_SEQ_CST) || (flags & TT__SLOT_PAUSED))
		limit = TT__LIMIT_OFF;
	else if (flags & TT__SLOT_EXHAUSTED)
		limit = (char *)((uintptr_t)slot->scratch + (slot->scratch ? TT__SCRATCH_SIZE : 0) +
				 TT__LIMIT_DROP);
	/* Counted before the tag shows and uncounted after it is gone; a hot path that
	 * misses the count meanwhile fails its bounds check on the tag and goes slow. */
	int tagged = ((uintptr_t)limit & TT__LIMIT_TAGS) != 0;
	if (tagged && !__atomic_exchange_n(&slot->limit_tagged, 1, __ATOMIC_ACQ_REL))
		__atomic_add_fetch(&tt__hot_global.unusual, TT__HOT_TAGGED, __ATOMIC_SEQ_CST);
	__atomic_store_n(&slot->hot->limit, limit, __ATOMIC_RELEASE);
	if (!tagged && __atomic_exchange_n(&slot->limit_tagged, 0, __ATOMIC_ACQ_REL))
		__atomic_sub_fetch(&tt__hot_global.unusual, TT__HOT_TAGGED, __ATOMIC_SEQ_CST);
}

static void tt__enter_chunk(struct tt__slot *slot, struct tt__chunk *chunk)
{
	chunk->thread = slot->index;
	slot->current = chunk;
	slot->chunks++;
	tt__chunk_taken(slot->index);
	slot->chunk_end = (char *)chunk + TT__CHUNK_SIZE;
	__atomic_store_n(&slot->hot->cursor, (char *)(chunk + 1), __ATOMIC_RELEASE);
	tt__publish_limit(slot);
}

/* Registry lock held, signals blocked. */
int tt__slot_start(struct tt__slot *slot)
{
	tt__core_lock(1);
	struct tt__chunk *chunk = tt__chunk_alloc();
	if (chunk) {
		slot->first = chunk;
		tt__enter_chunk(slot, chunk);
	}
	tt__core_lock(0);
	return chunk ? 0 : -ENOMEM;
}

void tt__set_paused(struct tt__slot *slot, int paused)
{
	struct tt_os_signals old;
	tt_os_signals_block(&old);
	tt__core_lock(1);
	if (paused)
		__atomic_or_fetch(&slot->flags, TT__SLOT_PAUSED, __ATOMIC_RELEASE);
	else
		__atomic_and_fetch(&slot->flags, ~(uint32_t)TT__SLOT_PAUSED, __ATOMIC_RELEASE);
	tt__publish_limit(slot);
	tt__core_lock(0);
	tt_os_signals_restore(&old);
}

void tt__set_all_limits(void)
{
	struct tt_os_signals old;
	tt__registry_lock(&old); /* no slot leaves the list meanwhile */
	tt__core_lock(1);
	for (struct tt__slot *slot = tt__registry_head(); slot;
	     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE))
		tt__publish_limit(slot);
	tt__core_lock(0);
	tt__registry_unlock(&old);
}

const struct tt__chunk *tt__chunks_front(const struct tt__slot *slot, uint64_t *at)
{
	tt__core_lock(1);
	const struct tt__chunk *first = slot->first;
	*at = slot->recycled;
	tt__core_lock(0);
	return first;
}

/* Core lock held. Mode ring: a thread whose budget is used up gives its oldest
 * chunk to tt-clean, which counts its events as overwritten and zeroes
 * it (here, when the queue is full), and takes a clean one. Not while a dump reads
 * the chunks: the thread then grows (up to a bound) until the dump is done. */
static int tt__recycle_oldest(struct tt__slot *slot)
{
	struct tt__chunk *oldest = slot->first;
	if (__atomic_load_n(&tt__dumps_running, __ATOMIC_ACQUIRE) || oldest == slot->current)
		return 0;
	__atomic_store_n(&slot->first, oldest->next, __ATOMIC_RELEASE);
	/* (before a reader could miss that it is held: tt__chunk_to_clean's look) */
	__atomic_store_n(&slot->recycled, slot->recycled + 1, __ATOMIC_SEQ_CST);
	slot->chunks--;
	__atomic_or_fetch(&slot->flags, TT__SLOT_WRAPPED, __ATOMIC_RELEASE);
	tt__chunk_to_clean(slot, oldest);
	return 1;
}

/* Chunks a ring may grow by while a dump holds it, at least. */
#define TT__RING_GROWTH ((UINT64_C(16) << 20) / TT__CHUNK_SIZE)

/* Core lock held. Leaves the current chunk (its size then says where its records
 * end) for a new one. Mode stop: a thread whose budget is used up keeps its first
 * events and drops the rest. Mode stream: a thread whose budget of chunks is all
 * waiting for the drain thread drops events until the drain frees one. */
int tt__next_chunk(struct tt__slot *slot)
{
	enum tt_drop_cause cause = tt__mode->drains ? TT_DROP_BEHIND : TT_DROP_FULL;
	struct tt__chunk *chunk = NULL;
	/* (A thread that grew while a dump ran shrinks back.) */
	while (tt__mode->recycle_oldest && slot->chunks >= tt__config.chunk_budget &&
	       tt__recycle_oldest(slot))
		;
	/* Mode ring while a reader holds the chunks (a dump, the live file's update,
	 * tt-spikes): the thread grows past its budget, by as
	 * much again, or at least 16 MiB (what a thread that records flat out fills while a
	 * reader is held up by the scheduler); not more (dumps back to back would hold the
	 * chunks for good): past that it drops events until the dump is done (tt__resume). */
	uint64_t growth = tt__config.chunk_budget > TT__RING_GROWTH ? tt__config.chunk_budget : TT__RING_GROWTH;
	int grows = tt__mode->recycle_oldest && __atomic_load_n(&tt__dumps_running, __ATOMIC_ACQUIRE) &&
		    slot->chunks < tt__config.chunk_budget + growth;
	if (slot->chunks < tt__config.chunk_budget || grows) {
		chunk = tt__chunk_alloc();
		cause = TT_DROP_NO_MEMORY;
	}
	/* A thread that was dropping has its cursor in its scratch chunk, and its last
	 * chunk's size was set when it began to. */
	int dropping = __atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_EXHAUSTED;
	struct tt__chunk *left = slot->current;
	if (!dropping) {
		char *cursor = __atomic_load_n(&slot->hot->cursor, __ATOMIC_RELAXED);
		left->size = (uint32_t)((cursor < slot->chunk_end ? cursor : slot->chunk_end) - (char *)left);
	}
	if (!slot->opener_looked) { /* (it leaves its first chunk: the ring may take it) */
		const struct tt_record *records = (const struct tt_record *)(left + 1);
		size_t budget = TT_FIRST_OPENER_RECORDS;
		const struct tt_record *opener =
			tt_first_opener(records, (const struct tt_record *)((char *)left + left->size), &budget);
		if (opener)
			slot->opener = *opener;
		__atomic_store_n(&slot->opener_looked, 1, __ATOMIC_RELEASE);
	}
	if (!chunk) {
		slot->drop_cause = cause;
		/* Dropped events go on into the thread's scratch chunk (slow_path.c). */
		if (!dropping && slot->scratch)
			__atomic_store_n(&slot->hot->cursor, (char *)(slot->scratch + 1), __ATOMIC_RELEASE);
		__atomic_or_fetch(&slot->flags, TT__SLOT_EXHAUSTED, __ATOMIC_RELEASE);
		tt__publish_limit(slot);
		return -ENOBUFS;
	}
	__atomic_and_fetch(&slot->flags, ~(uint32_t)TT__SLOT_EXHAUSTED, __ATOMIC_RELEASE);
	__atomic_store_n(&left->next, chunk, __ATOMIC_RELEASE);
	tt__enter_chunk(slot, chunk);
	if (tt__mode->chunk_full)
		tt__mode->chunk_full(slot);
	return 0;
}

/* Core lock held, signals blocked. A draining mode (stream): a thread that dropped
 * events because the drain fell behind records again once the drain freed a chunk;
 * a ring records again as soon as it has a chunk. */
int tt__resume(struct tt__slot *slot)
{
	if (slot->flags & TT__SLOT_EXITED)
		return 0;
	/* A ring tries again for a chunk (its own oldest, or memory freed since). */
	if (!tt__mode->recycle_oldest &&
	    (!tt__mode->drains || slot->drop_cause != TT_DROP_BEHIND ||
	     slot->chunks >= tt__config.chunk_budget))
		return 0;
	return tt__next_chunk(slot) == 0;
}

void tt__chunk_drained(struct tt__slot *slot, int recycle)
{
	struct tt__chunk *chunk = slot->first;
	struct tt__chunk *next = __atomic_load_n(&chunk->next, __ATOMIC_ACQUIRE);
	int compacted = !next && (slot->flags & TT__SLOT_COMPACTED);
	if (recycle && !compacted)
		memset(chunk, 0, TT__CHUNK_SIZE);
	struct tt_os_signals old;
	tt_os_signals_block(&old);
	tt__core_lock(1);
	__atomic_store_n(&slot->first, next, __ATOMIC_RELEASE);
	__atomic_store_n(&slot->chunks, slot->chunks - 1, __ATOMIC_RELEASE);
	if (recycle && !compacted)
		tt__chunk_free(chunk);
	else
		tt__chunk_returned(); /* (one off its thread's budget) */
	/* A thread dropping events for want of a chunk takes the slow path at its next
	 * event, which gives it this one. */
	if ((__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_EXHAUSTED) &&
	    slot->drop_cause == TT_DROP_BEHIND &&
	    __atomic_load_n(&slot->hot->limit, __ATOMIC_ACQUIRE) != TT__LIMIT_OFF)
		__atomic_store_n(&slot->hot->limit, TT__LIMIT_SLOW, __ATOMIC_RELEASE);
	tt__core_lock(0);
	tt_os_signals_restore(&old);
	if (recycle && compacted)
		free(chunk);
}
