/* The slow path of the hot path (asm/record.asm): a thread's first event, a full
 * chunk, recording off, a full buffer; and the events recorded out of line. */
#include <errno.h>
#include <string.h>

#include "core/core.h"

/* Gives a failed reservation back if nothing was reserved after it, so that the
 * cursor of a thread that may not record does not creep, and a chunk's size says
 * where its records end. */
static void tt__give_back(struct tt__slot *slot, char *where, uint64_t size)
{
	char *expected = where + size;
	__atomic_compare_exchange_n(&slot->cursor, &expected, where, 0, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
}

static int tt__try_record(struct tt__slot *slot, const struct tt_record *records, uint64_t size,
			  char **where)
{
	/* The limit first, as in the hot path: see asm/record.asm. */
	char *limit = __atomic_load_n(&slot->limit, __ATOMIC_ACQUIRE);
	*where = __atomic_fetch_add(&slot->cursor, size, __ATOMIC_RELAXED);
	if (!tt__fits(*where, size, limit)) {
		tt__give_back(slot, *where, size);
		return 0;
	}
	memcpy(*where, records, size);
	return 1;
}

/* How an event changes the depth of open scopes (for the gap's record). */
static int tt__depth_change(unsigned kind, int *low)
{
	switch (kind) {
	case TT_REC_BEGIN:
	case TT_REC_BEGIN_ARG:
	case TT_REC_FUNC_ENTER:
		*low = 0;
		return 1;
	case TT_REC_END:
	case TT_REC_FUNC_EXIT:
		*low = -1;
		return -1;
	case TT_REC_ENDBEGIN:
		*low = -1;
		return 0;
	default:
		*low = 0;
		return 0;
	}
}

/* An event the thread may not record is dropped, and counted, only when its buffer is
 * used up: not while recording is off or the thread has paused. It is counted by
 * cause, and in the thread's current gap with its time and its effect on the scopes.
 * Only the owner thread and its signal handlers drop its events: a handler that
 * interrupts an update only counts. */
static void tt__count_drop(struct tt__slot *slot, const struct tt_record *event)
{
	uint32_t flags = __atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE);
	if ((flags & (TT__SLOT_EXHAUSTED | TT__SLOT_PAUSED)) != TT__SLOT_EXHAUSTED ||
	    !__atomic_load_n(&tt__recording, __ATOMIC_RELAXED))
		return;
	__atomic_add_fetch(&slot->dropped[slot->drop_cause], 1, __ATOMIC_RELAXED);
	struct tt__gap *g = &slot->gap;
	if (__atomic_exchange_n(&g->busy, 1, __ATOMIC_ACQUIRE)) {
		__atomic_add_fetch(&g->count, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!g->count) {
		g->first_tsc = event->tsc;
		g->depth = g->min_depth = 0;
	}
	int low;
	int change = tt__depth_change(TT_RECORD_KIND(event->word), &low);
	if (g->depth + low < g->min_depth)
		g->min_depth = g->depth + low;
	g->depth += change;
	g->last_tsc = event->tsc;
	__atomic_add_fetch(&g->count, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&g->busy, 0, __ATOMIC_RELEASE);
}

size_t tt__gap_records(const struct tt__slot *slot, struct tt_record out[2])
{
	const struct tt__gap *g = &slot->gap;
	uint64_t count = __atomic_load_n(&g->count, __ATOMIC_ACQUIRE);
	if (!count)
		return 0;
	uint64_t closes = g->min_depth < 0 ? (uint64_t)-(int64_t)g->min_depth : 0;
	uint64_t opens = (uint64_t)((int64_t)g->depth - g->min_depth);
	out[0].tsc = g->first_tsc;
	out[0].word = TT_RECORD_WORD(TT_REC_DROPPED, count < TT_PAYLOAD_MASK ? count : TT_PAYLOAD_MASK);
	out[1].tsc = g->last_tsc;
	out[1].word = TT_RECORD_WORD(TT_REC_VALUE,
				     TT_GAP_DEPTHS(closes < TT_GAP_DEPTH_MAX ? closes : TT_GAP_DEPTH_MAX,
						   opens < TT_GAP_DEPTH_MAX ? opens : TT_GAP_DEPTH_MAX));
	return 2;
}

/* Arena lock held, signals blocked: the record of the gap before the next event. */
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
	if (!__atomic_load_n(&slot->limit, __ATOMIC_ACQUIRE) &&
	    (!tt__mode->drains ||
	     !(__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_EXHAUSTED) ||
	     __atomic_load_n(&slot->chunks, __ATOMIC_RELAXED) >= tt__config.chunk_budget)) {
		tt__count_drop(slot, records);
		return;
	}
	/* The chunk is full, or the drain freed one. Signals stay blocked while we move
	 * to the next one, so a handler never sees a half-switched slot. */
	sigset_t old;
	tt__block_signals(&old);
	tt__arena_lock(1);
	for (;;) {
		/* A handler may have moved to a new chunk before we blocked signals. */
		if (tt__close_gap(slot) && tt__try_record(slot, records, size, &where))
			break;
		if (slot->flags & TT__SLOT_EXHAUSTED ? !tt__resume(slot) :
		    !slot->limit || tt__next_chunk(slot) < 0) {
			tt__count_drop(slot, records);
			break;
		}
	}
	tt__arena_lock(0);
	tt__restore_signals(&old);
}

/* Lost before a thread has a slot (no memory, 65,536 live threads): reported in the
 * file's process totals. */
uint64_t tt__unregistered_drops;

/* Set while this thread runs the parts of the slow path that may reach code which
 * records (see core.h). */
__thread int tt__in_slow_path;

static void tt__count_reentered(struct tt__slot *slot)
{
	if (!slot)
		slot = tt__find_slot(tt__thread_pointer());
	if (slot)
		__atomic_add_fetch(&slot->dropped[TT_DROP_REENTERED], 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&tt__unregistered_drops, 1, __ATOMIC_RELAXED);
}

/* Records `size` bytes of records for the calling thread: from its slot and the
 * place the hot path reserved, or (slot NULL) from the start, finding the slot. */
static void tt__record_in(struct tt__slot *slot, const struct tt_record *records, uint64_t size,
			  char *where)
{
	if (tt__in_slow_path) {
		tt__count_reentered(slot);
		return;
	}
	if (!slot) {
		/* The thread's first event may come before the constructor ran. */
		const struct tt__mode_ops *mode = __atomic_load_n(&tt__mode, __ATOMIC_ACQUIRE);
		if (mode->start)
			mode->start();
		if (tt__config.off || !__atomic_load_n(&tt__recording, __ATOMIC_RELAXED))
			return;
		uintptr_t tp = tt__thread_pointer();
		slot = tt__find_slot(tp);
		if (!slot)
			slot = tt__register_thread(tp);
		if (!slot) {
			__atomic_add_fetch(&tt__unregistered_drops, 1, __ATOMIC_RELAXED);
			return;
		}
		if (tt__try_record(slot, records, size, &where))
			return;
	}
	tt__reservation_failed(slot, records, size, where);
}

void tt__record_slow(uint64_t word, uint64_t value, uint64_t tsc, struct tt__slot *slot,
		     char *where)
{
	int saved_errno = errno;
	const struct tt_record records[2] = {{tsc, word}, {value, TT_RECORD_WORD(TT_REC_VALUE, 0)}};
	uint64_t size = TT_RECORD_HAS_VALUE(TT_RECORD_KIND(word)) ? 2 * sizeof(struct tt_record)
								  : sizeof(struct tt_record);
	tt__record_in(slot, records, size, where);
	errno = saved_errno;
}

void tt__record_many(const struct tt_record *records, size_t n)
{
	int saved_errno = errno;
	tt__record_in(NULL, records, n * sizeof(struct tt_record), NULL);
	errno = saved_errno;
}
