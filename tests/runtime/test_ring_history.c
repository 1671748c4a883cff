/* The ring's history (core/overwritten.c) and chunk recycling (core/arena.c,
 * core/chunks.c), alone: chunks made here, noted and recycled by the core's own
 * functions, with no runtime started (TICKTRACE=0) and no background thread. What
 * the end-to-end snapshots test found three times, each time by a flaky run: the
 * history's entries, their merge once all 64 are used, a chunk noted after newer ones,
 * and readers that keep the chunks a ring recycles whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/core_internal.h"

/* The mode the core asks: a ring (recycle_oldest), everything else absent. */
static const struct tt__mode_ops tt_ring_mode = {.recycle_oldest = 1};

#define GRAIN 10 /* ticks an entry spans at least */

static struct tt__slot *tt_slot_new(void)
{
	struct tt__slot *slot = calloc(1, sizeof *slot);
	assert_non_null(slot);
	slot->hot = &slot->parked;
	return slot;
}

static int tt_setup(void **state)
{
	(void)state;
	tt__mode = &tt_ring_mode;
	tt__overwrite_grain = GRAIN;
	return 0;
}

/* What the history says of [from, to): the events and the span said. */
struct tt_lost {
	uint64_t events, from, to;
};

static struct tt_lost tt_lost_in(struct tt__slot *slot, uint64_t from, uint64_t to)
{
	struct tt_lost lost = {0};
	lost.events = tt__overwritten_in(slot, from, to, &lost.from, &lost.to);
	return lost;
}

static void tt_note(struct tt__slot *slot, uint64_t events, uint64_t first, uint64_t last)
{
	tt__core_lock(1);
	tt__note_overwritten(slot, events, first, last);
	tt__core_lock(0);
}

/* ---- the history (overwritten.c) ---- */

/* Chunks within a grain of an entry's first go to it; later ones start an entry; a
 * window counts the entries that reach into it, said whole. */
static void test_overwrite(void **state)
{
	(void)state;
	struct tt__slot *slot = tt_slot_new();
	tt_note(slot, 5, 100, 104);
	tt_note(slot, 7, 105, 108); /* within the grain: the same entry */
	tt_note(slot, 3, 200, 209);
	tt_note(slot, 0, 300, 300); /* nothing overwritten: nothing noted */
	const struct tt__overwrites *o = &slot->overwrites;
	assert_int_equal(o->n, 2);
	assert_int_equal(o->total, 15);
	assert_int_equal(o->at[0].first_tsc, 100);
	assert_int_equal(o->at[0].last_tsc, 108);
	assert_int_equal(o->at[0].after - o->at[0].before, 12);
	assert_int_equal(o->at[1].before, 12);
	assert_int_equal(o->at[1].after, 15);

	struct tt_lost lost = tt_lost_in(slot, 150, 250);
	assert_int_equal(lost.events, 3);
	assert_int_equal(lost.from, 200);
	assert_int_equal(lost.to, 209);
	lost = tt_lost_in(slot, 106, 201); /* reaches into both: said whole */
	assert_int_equal(lost.events, 15);
	assert_int_equal(lost.from, 100);
	assert_int_equal(lost.to, 209);
	assert_int_equal(tt_lost_in(slot, 110, 199).events, 0);
	assert_int_equal(tt_lost_in(slot, 210, 400).events, 0);
	free(slot);
}

/* Once its 64 entries are used, the two neighbours that span the least time merge:
 * nothing is forgotten, the totals stay, the merged entry is said whole. */
static void tt_merge_when_full(int late_pair)
{
	struct tt__slot *slot = tt_slot_new();
	/* Entries 1000 ticks apart, but the pair (late_pair, late_pair + 1), 100 apart. */
	uint64_t t = 1000;
	for (int i = 0; i < TT__OVERWRITES; i++) {
		tt_note(slot, 1, t, t + 1);
		t += i == late_pair ? 100 : 1000;
	}
	const struct tt__overwrites *o = &slot->overwrites;
	assert_int_equal(o->n, TT__OVERWRITES);
	uint64_t pair_first = o->at[late_pair].first_tsc, pair_last = o->at[late_pair + 1].last_tsc;
	tt_note(slot, 2, t, t + 5); /* the 65th */
	assert_int_equal(o->n, TT__OVERWRITES);
	assert_int_equal(o->total, TT__OVERWRITES + 2);
	/* The closest pair is one entry, which holds both events. */
	assert_int_equal(o->at[late_pair].first_tsc, pair_first);
	assert_int_equal(o->at[late_pair].last_tsc, pair_last);
	assert_int_equal(o->at[late_pair].after - o->at[late_pair].before, 2);
	/* In time order, each entry's count following on the one before. */
	for (uint32_t i = 1; i < o->n; i++) {
		assert_true(o->at[i].first_tsc > o->at[i - 1].last_tsc);
		assert_int_equal(o->at[i].before, o->at[i - 1].after);
	}
	assert_int_equal(o->at[o->n - 1].first_tsc, t);
	assert_int_equal(o->at[o->n - 1].after, o->total);
	/* A window inside the merged pair's second half is told of both, with their span. */
	struct tt_lost lost = tt_lost_in(slot, pair_last, pair_last);
	assert_int_equal(lost.events, 2);
	assert_int_equal(lost.from, pair_first);
	assert_int_equal(lost.to, pair_last);
	/* The whole history: every event. */
	assert_int_equal(tt_lost_in(slot, 0, UINT64_MAX).events, TT__OVERWRITES + 2);
	free(slot);
}

static void test_merge_when_full(void **state)
{
	(void)state;
	tt_merge_when_full(0);  /* the oldest pair */
	tt_merge_when_full(30); /* one in the middle */
	tt_merge_when_full(TT__OVERWRITES - 2); /* the newest pair */
}

/* A chunk noted after newer ones (a reader kept it whole, or its thread's cleaning
 * queue was full) goes to the entry of its time, and the entries after it move on by
 * its events; older than every entry, the oldest takes it. */
static void test_late_chunk(void **state)
{
	(void)state;
	struct tt__slot *slot = tt_slot_new();
	tt_note(slot, 10, 100, 105);
	tt_note(slot, 20, 200, 205);
	tt_note(slot, 30, 300, 305);
	tt_note(slot, 4, 150, 160); /* late: the entry of 100's */
	const struct tt__overwrites *o = &slot->overwrites;
	assert_int_equal(o->n, 3);
	assert_int_equal(o->at[0].last_tsc, 160);
	assert_int_equal(o->at[0].after, 14);
	assert_int_equal(o->at[1].before, 14);
	assert_int_equal(o->at[2].after, 64);
	/* A window after it does not count it; one over it does. */
	assert_int_equal(tt_lost_in(slot, 200, 305).events, 50);
	assert_int_equal(tt_lost_in(slot, 200, 205).events, 20);
	struct tt_lost lost = tt_lost_in(slot, 155, 158);
	assert_int_equal(lost.events, 14);
	assert_int_equal(lost.from, 100);
	assert_int_equal(lost.to, 160);
	/* Older than every entry. */
	tt_note(slot, 1, 50, 52);
	assert_int_equal(o->n, 3);
	assert_int_equal(o->at[0].first_tsc, 50);
	assert_int_equal(o->at[0].after, 15);
	assert_int_equal(o->at[2].after, 65);
	assert_int_equal(tt_lost_in(slot, 200, 205).events, 20);
	free(slot);
}

/* ---- chunk recycling (arena.c, chunks.c) ---- */

/* A chunk full of `n` timed events from tsc `first` on, one tick apart. */
static struct tt__chunk *tt_chunk_of(struct tt__slot *slot, uint64_t first, size_t n)
{
	struct tt__chunk *chunk = aligned_alloc(TT__CHUNK_SIZE, TT__CHUNK_SIZE);
	assert_non_null(chunk);
	memset(chunk, 0, TT__CHUNK_SIZE);
	assert_true(n <= TT__CHUNK_RECORDS);
	chunk->size = (uint32_t)(sizeof *chunk + n * sizeof(struct tt_record));
	chunk->thread = slot->index;
	struct tt_record *r = (struct tt_record *)(chunk + 1);
	for (size_t i = 0; i < n; i++)
		r[i] = (struct tt_record){.tsc = first + i, .word = TT_RECORD_WORD(TT_REC_END, 0)};
	return chunk;
}

/* Whether the chunk's records are all zero (its header links the free list). */
static int tt_zeroed(const struct tt__chunk *chunk)
{
	const char *bytes = (const char *)(chunk + 1);
	for (size_t i = 0; i < TT__CHUNK_SIZE - sizeof *chunk; i++)
		if (bytes[i])
			return 0;
	return 1;
}

/* The chunk the arena hands out next: the last one freed. */
static struct tt__chunk *tt_alloc(void)
{
	tt__core_lock(1);
	struct tt__chunk *chunk = tt__chunk_alloc();
	tt__core_lock(0);
	return chunk;
}

/* Without readers: a recycled chunk is queued, then counted as overwritten (the
 * slot's count and its history), zeroed and free; one whose last event is not
 * written yet waits in the queue until it is. */
static void test_recycle_queued(void **state)
{
	(void)state;
	struct tt__slot *slot = tt_slot_new();
	struct tt__chunk *whole = tt_chunk_of(slot, 1000, 100);
	struct tt__chunk *writing = tt_chunk_of(slot, 2000, 50);
	struct tt_record *unwritten = (struct tt_record *)(writing + 1) + 49;
	unwritten->word = 0; /* reserved, being written by an interrupted thread */
	tt__core_lock(1);
	tt__chunk_to_clean(slot, whole);
	tt__chunk_to_clean(slot, writing);
	tt__core_lock(0);
	assert_int_equal(slot->dropped[TT_DROP_OVERWRITTEN], 0); /* (queued, not counted yet) */
	assert_int_equal(tt__clean_queued(), 1); /* one waits */
	assert_int_equal(slot->dropped[TT_DROP_OVERWRITTEN], 100);
	assert_true(tt_zeroed(whole));
	assert_false(tt_zeroed(writing));
	unwritten->word = TT_RECORD_WORD(TT_REC_END, 0);
	assert_int_equal(tt__clean_queued(), 0);
	assert_int_equal(slot->dropped[TT_DROP_OVERWRITTEN], 150);
	assert_true(tt_zeroed(writing));
	struct tt_lost lost = tt_lost_in(slot, 0, UINT64_MAX);
	assert_int_equal(lost.events, 150);
	assert_int_equal(lost.from, 1000);
	assert_int_equal(lost.to, 2049);
	/* Both free again, the last cleaned first. */
	assert_ptr_equal(tt_alloc(), writing);
	assert_ptr_equal(tt_alloc(), whole);
	free(whole);
	free(writing);
	free(slot);
}

/* While a reader copies, a chunk the ring recycles stays whole (on its slot's deferred
 * list, its events told to the reader); once the last reader is done it goes to
 * tt-clean's queue (the reader cleaned it before: the ring's work, charged to
 * tt-spikes), and is counted, noted in its time's entry and freed as it is cleaned. A
 * reader that begins with TT__READING_UNCOUNTED leaves the queue to tt-clean, or to
 * tt__recycled_count. */
static void test_readers_keep_chunks(void **state)
{
	(void)state;
	struct tt__slot *slot = tt_slot_new();
	tt__registry_first = slot; /* (tt__reading(0) cleans every slot's deferred chunks) */
	struct tt__chunk *early = tt_chunk_of(slot, 100, 20);
	struct tt__chunk *late = tt_chunk_of(slot, 500, 30);
	early->next = late; /* (the ring recycles a thread's chunks in their order) */
	struct tt__chunk *copy = malloc(TT__CHUNK_SIZE);
	assert_non_null(copy);
	memcpy(copy, early, TT__CHUNK_SIZE);
	tt_note(slot, 1, 50, 50);   /* older chunks, cleaned before the reader began, */
	tt_note(slot, 7, 600, 606); /* and newer ones */
	tt__reading(1);
	tt__reading(1); /* two readers */
	tt__core_lock(1);
	tt__chunk_to_clean(slot, early);
	tt__chunk_to_clean(slot, late);
	tt__core_lock(0);
	assert_int_equal(tt__clean_queued(), 0); /* (nothing queued: deferred) */
	assert_memory_equal(early, copy, TT__CHUNK_SIZE);
	assert_int_equal(slot->dropped[TT_DROP_OVERWRITTEN], 0);
	uint64_t first, last;
	assert_int_equal(tt__deferred_events(slot, 110, 510, &first, &last), 10 + 11);
	assert_int_equal(first, 110);
	assert_int_equal(last, 510);
	tt__reading(0);
	assert_memory_equal(early, copy, TT__CHUNK_SIZE); /* one reader still at work */
	tt__reading(0);
	assert_memory_equal(early, copy, TT__CHUNK_SIZE); /* queued, not cleaned */
	assert_null(slot->deferred);
	assert_int_equal(slot->dropped[TT_DROP_OVERWRITTEN], 0);
	tt__reading(TT__READING_UNCOUNTED);
	assert_memory_equal(early, copy, TT__CHUNK_SIZE);
	tt__recycled_count();
	tt__reading(0);
	assert_true(tt_zeroed(early));
	assert_true(tt_zeroed(late));
	assert_int_equal(slot->dropped[TT_DROP_OVERWRITTEN], 50);
	/* Noted late, in the entry of their time, before the newer one. */
	const struct tt__overwrites *o = &slot->overwrites;
	assert_int_equal(o->n, 2);
	assert_int_equal(o->at[0].first_tsc, 50);
	assert_int_equal(o->at[0].last_tsc, 529);
	assert_int_equal(o->at[1].before, 51);
	assert_int_equal(o->at[1].after, 58);
	assert_int_equal(tt_lost_in(slot, 600, 606).events, 7);
	struct tt_lost lost = tt_lost_in(slot, 100, 119);
	assert_int_equal(lost.events, 51);
	assert_int_equal(lost.from, 50);
	assert_int_equal(lost.to, 529);
	assert_null(slot->deferred);
	assert_non_null(tt_alloc());
	assert_non_null(tt_alloc());
	tt__registry_first = NULL;
	free(early);
	free(late);
	free(copy);
	free(slot);
}

/* A reader at a chunk the ring recycles goes on through the thread's chunks in their
 * order: recycling while it reads leaves each chunk's link as it was (the deferred
 * chunks were linked through those links, and a reader at the oldest went on into
 * one recycled before it, or stopped). */
static void test_reader_keeps_its_way(void **state)
{
	(void)state;
	struct tt__slot *slot = tt_slot_new();
	tt__registry_first = slot;
	struct tt__chunk *chain[3];
	for (int i = 0; i < 3; i++)
		chain[i] = tt_chunk_of(slot, 100 * (uint64_t)(i + 1), 10);
	chain[0]->next = chain[1];
	chain[1]->next = chain[2];
	slot->first = chain[0];
	tt__reading(1);
	const struct tt__chunk *at = slot->first; /* where the reader is */
	for (int i = 0; i < 2; i++) { /* as tt__recycle_oldest does */
		tt__core_lock(1);
		struct tt__chunk *oldest = slot->first;
		slot->first = oldest->next;
		tt__chunk_to_clean(slot, oldest);
		tt__core_lock(0);
	}
	assert_ptr_equal(at->next, chain[1]);
	assert_ptr_equal(at->next->next, chain[2]);
	uint64_t first, last;
	assert_int_equal(tt__deferred_events(slot, 0, UINT64_MAX, &first, &last), 20);
	assert_int_equal(first, 100);
	assert_int_equal(last, 209);
	tt__reading(0);
	assert_int_equal(tt__clean_queued(), 0); /* (tt-clean's) */
	assert_true(tt_zeroed(chain[0]));
	assert_true(tt_zeroed(chain[1]));
	assert_false(tt_zeroed(chain[2]));
	assert_int_equal(slot->dropped[TT_DROP_OVERWRITTEN], 20);
	assert_null(slot->deferred);
	assert_ptr_equal(tt_alloc(), chain[1]);
	assert_ptr_equal(tt_alloc(), chain[0]);
	tt__registry_first = NULL;
	for (int i = 0; i < 3; i++)
		free(chain[i]);
	free(slot);
}

/* A ring thread whose budget is used up gives its oldest chunk to be cleaned and
 * goes on in a clean one (tt__next_chunk); its chunks stay linked in order. */
static void test_ring_recycles_oldest(void **state)
{
	(void)state;
	struct tt__slot *slot = tt_slot_new();
	tt__config.chunk_budget = 2;
	struct tt__chunk *pool[3];
	tt__core_lock(1);
	for (int i = 0; i < 3; i++) {
		pool[i] = tt_chunk_of(slot, 0, 0);
		tt__chunk_free(pool[i]);
	}
	tt__core_lock(0);
	tt__recording = 1;
	assert_int_equal(tt__slot_start(slot), 0);
	struct tt__chunk *first = slot->first;
	tt__core_lock(1);
	assert_int_equal(tt__next_chunk(slot), 0); /* second: within the budget */
	tt__core_lock(0);
	assert_int_equal(slot->chunks, 2);
	assert_false(slot->flags & TT__SLOT_WRAPPED);
	/* The first chunk full of events, as the hot path leaves it. */
	struct tt__chunk *filled = tt_chunk_of(slot, 3000, 40);
	memcpy(first + 1, filled + 1, 40 * sizeof(struct tt_record));
	first->size = filled->size;
	free(filled);
	tt__core_lock(1);
	assert_int_equal(tt__next_chunk(slot), 0); /* third: the first recycled */
	tt__core_lock(0);
	assert_true(slot->flags & TT__SLOT_WRAPPED);
	assert_int_equal(slot->chunks, 2);
	assert_ptr_not_equal(slot->first, first);
	assert_ptr_equal(slot->first->next, slot->current);
	/* A reader's place (tt-spikes'): the first chunk's was 0, now taken off the front;
	 * the second's, 1, is the first's now, the one still in the list. */
	uint64_t place;
	assert_ptr_equal(tt__chunks_front(slot, &place), slot->first);
	assert_int_equal(place, 1);
	assert_int_equal(slot->recycled, 1);
	assert_int_equal(tt__clean_queued(), 0);
	assert_int_equal(slot->dropped[TT_DROP_OVERWRITTEN], 40);
	assert_true(tt_zeroed(first));
	assert_ptr_equal(tt_alloc(), first); /* free again */
	tt__recording = 0;
	tt__hot_global.unusual = 0;
	for (int i = 0; i < 3; i++)
		free(pool[i]);
	free(slot);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_overwrite, tt_setup),
		cmocka_unit_test_setup(test_merge_when_full, tt_setup),
		cmocka_unit_test_setup(test_late_chunk, tt_setup),
		cmocka_unit_test_setup(test_recycle_queued, tt_setup),
		cmocka_unit_test_setup(test_readers_keep_chunks, tt_setup),
		cmocka_unit_test_setup(test_reader_keeps_its_way, tt_setup),
		cmocka_unit_test_setup(test_ring_recycles_oldest, tt_setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
