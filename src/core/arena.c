/* The arena chunks are carved from, reserved once, and its threads, one job each:
 * tt-prefault faults memory in ahead of the writers; in mode ring, tt-clean counts
 * and zeroes the chunks the rings recycle; with a live file, tt-live brings its
 * descriptions up to date (chunks.c hands chunks to threads). Where the arena's
 * memory comes from, the mode in use says (core.h: struct tt__mode_ops). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_internal.h"

/* The arena is address space only (MAP_NORESERVE); memory is used as chunks are
 * faulted in. Faulting a 4 KiB page costs about 1.7 us on a virtual machine, which
 * would add 7 ns to every event, so tt-prefault keeps memory past the next
 * chunk faulted in, in huge-page steps. The kernel zeroes it as it does (0.12 ns a
 * byte here, 1.8 ns an event): done while the writers record, that takes a core
 * from them, so the window covers what they took in about the last
 * TT__PREFAULT_MEMORY_NS, and a burst like the last ones finds its memory ready
 * (never more than the arena already used, nor beyond TT__PREFAULT_AHEAD_MAX); and
 * while every core records, the zeroing waits for a free one. The window's least is
 * four times what the writers used (TT_OS_PREFAULT_FIRST at first) up to
 * TT__PREFAULT_AHEAD_MIN: a short run (a test suite runs thousands) paid 16 MiB
 * zeroed at start, most of ticktrace's CPU time in a one-event program. A writer
 * that goes on wakes tt-prefault with twice what it used still ready (a new
 * process's first 4 M events at load 20: 0 to 112 faults of the writer's own, 0 to 8
 * with 16 MiB from the start). */
#define TT__ARENA_MAX (UINT64_C(256) << 30)
#define TT__ARENA_MIN (UINT64_C(256) << 20)
#define TT__PREFAULT_STEP (2u << 20)
#define TT__PREFAULT_AHEAD_MIN (16u << 20)
#define TT__PREFAULT_USED_TIMES 4
#define TT__PREFAULT_AHEAD_MAX (256u << 20)
#define TT__PREFAULT_MEMORY_NS 100000000
#define TT__PREFAULT_PAUSE_NS 1000000 /* how often it looks for a free core again */
/* A live file's descriptions are brought up to date this often. */
#define TT__LIVE_PERIOD_NS 200000000
/* How long a writer that overtook tt-prefault waits for it to grow the mode's file,
 * at most (it grows it 16 MiB in a call: milliseconds, even at a high load). */
#define TT__FILE_WAIT_NS (INT64_C(10) * 1000000000)

static char *tt__arena_base, *tt__arena_end;
/* The arena as it may be; its last tt__arena_aside bytes are no chunk's (tt__arena_set_aside). */
static char *tt__arena_mapped_end;
/* The arena mapped so far, [base, grown): the whole, but under an address-space limit,
 * where it grows as it fills, each step while the program leaves it room. */
static char *tt__arena_grown;
static int tt__arena_room_refused; /* a step refused: TT_FILE_GAVE_ROOM */
static uint64_t tt__arena_aside;
static char *tt__arena_fresh; /* the next chunk never handed out */
static char *tt__arena_ready; /* [fresh, ready) is faulted in */
static struct tt__chunk *tt__free_chunks; /* recycled, zeroed, faulted in */
static struct tt__slab tt__small = {.slab_size = 1u << 20}; /* compacted chunks */
/* New threads' slots (registry.c), written through once by tt-prefault ahead of them:
 * under a hypervisor's shadow page tables (KVM/PVM on an EPYC) a page's first write
 * took 13 us, 7 us after MADV_POPULATE_WRITE, and a slot is most of a page: it was
 * half of a thread's first event (first_event_us 38 us). Core lock. */
#define TT__SPARE_SLOTS 8
static struct tt__slab tt__slot_slab = {.slab_size = 64 * 1024};
static struct tt__slot *tt__spare_slots[TT__SPARE_SLOTS];
static unsigned tt__spare_count;
/* A thread of the arena's asleep until woken, or until its timeout. */
struct tt__sleeper {
	uint32_t seq; /* (tt_os_wait's word) bumped to wake it */
	int sleeping;
};
static struct tt__sleeper tt__prefault_sleeper, tt__clean_sleeper, tt__live_sleeper;
static size_t tt__prefault_ahead = TT_OS_PREFAULT_FIRST; /* the window past the next chunk */
/* The threads that took the latest chunks (tt__chunk_taken): tt-prefault's way to
 * see whether every core is recording. */
#define TT__TAKERS 16
static uint32_t tt__takers[TT__TAKERS];
static uint32_t tt__takers_seq;
long tt__cores; /* the cores the process may run on */

/* tt-prefault's: what the writers took lately, decaying over
 * TT__PREFAULT_MEMORY_NS, and where and when it last looked. */
static struct tt__recent_use {
	double bytes;
	char *fresh;
	int64_t ns;
} tt__recent_use;

/* Mode ring: a thread's oldest chunk, recycled, waits here (core lock) for tt-clean
 * to count its events as overwritten and zero it. */
#define TT__CLEAN_QUEUE 64
static struct tt__to_clean {
	struct tt__chunk *chunk;
	struct tt__slot *slot;
} tt__to_clean[TT__CLEAN_QUEUE];
static unsigned tt__to_clean_count;
/* While readers copy chunks (tt__reading), the chunks the rings recycle wait whole
 * on their slot's `deferred` list (core lock), and are cleaned once the last reader
 * is done: a chunk a reader found stays as it found it, and the rings go on
 * recycling, into chunks never used before. */
static int tt__readers;
static uint64_t tt__deferred; /* chunks on the slots' `deferred` lists (core lock) */

/* Where chunks come from (the mode's answer): a file the arena maps, or NULL. */
const struct tt_os_file *tt__chunks_file(void)
{
	return tt__mode->chunks_file ? tt__mode->chunks_file() : NULL;
}

/* The arena: the platform's reservation (tt_os_reserve; Linux's, memory at once,
 * faulted in ahead of the writers), or a shared mapping of the mode's file (a live
 * file: tt_os_map_view), committed as its file covers it (tt_os_commit); with `at`, again at the arena's own addresses (after fork: Linux's
 * MAP_FIXED). NULL when refused. */
static void *tt__arena_map(void *at, uint64_t size)
{
	const struct tt_os_file *chunks = tt__chunks_file();
	if (!chunks && !at)
		return tt_os_reserve(size);
	struct tt_os_file file = chunks ? *chunks : (struct tt_os_file){-1};
	return tt_os_map_view(chunks ? &file : NULL, chunks ? tt__mode->chunks_at() : 0, size, at);
}

uint32_t tt__prefault_busy;
uint64_t tt__prefault_faults;

/* The calling thread's page faults so far (0: not known). */
static uint64_t tt__own_faults(void)
{
	struct tt_os_usage own;
	tt_os_usage(1, &own);
	return own.faults;
}

static void tt__wake(struct tt__sleeper *s)
{
	if (__atomic_load_n(&s->sleeping, __ATOMIC_SEQ_CST)) {
		__atomic_add_fetch(&s->seq, 1, __ATOMIC_SEQ_CST);
		tt_os_wake(&s->seq);
	}
}

/* Sleeps until woken since `seq` was read, or for timeout_ns (TT_OS_FOREVER: no
 * longer). */
static void tt__sleep(struct tt__sleeper *s, uint32_t seq, int64_t timeout_ns)
{
	__atomic_store_n(&s->sleeping, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->seq, __ATOMIC_SEQ_CST) == seq)
		tt_os_wait(&s->seq, seq, timeout_ns);
	__atomic_store_n(&s->sleeping, 0, __ATOMIC_SEQ_CST);
}

/* What a recycled chunk held: its timed events, from first_tsc to last_tsc. */
struct tt__recycled {
	uint64_t events, first_tsc, last_tsc;
};

/* One more timed event at tsc. (The earliest and the latest, not the first and the
 * last: a gap's record, written as its thread resumes, holds the time of the first
 * event it lost.) */
static void tt__recycled_add(struct tt__recycled *held, uint64_t tsc)
{
	if (!held->events++ || tsc < held->first_tsc)
		held->first_tsc = tsc;
	if (held->events == 1 || tsc > held->last_tsc)
		held->last_tsc = tsc;
}

/* Counts a recycled chunk's events as overwritten and zeroes it, unless one of them
 * is not written yet (its thread was interrupted by a signal handler between
 * reserving and writing it): then 0. */
static int tt__clean_chunk(struct tt__slot *slot, struct tt__chunk *chunk, struct tt__recycled *held)
{
	const struct tt_record *r = (const struct tt_record *)(chunk + 1);
	const struct tt_record *end = (const struct tt_record *)((const char *)chunk + chunk->size);
	*held = (struct tt__recycled){0};
	for (; r < end; r++) {
		uint64_t word = __atomic_load_n(&r->word, __ATOMIC_ACQUIRE);
		if (!word)
			return 0;
		if (TT_RECORD_IS_EVENT(TT_RECORD_KIND(word)))
			tt__recycled_add(held, r->tsc);
	}
	__atomic_add_fetch(&slot->dropped[TT_DROP_OVERWRITTEN], held->events, __ATOMIC_RELAXED);
	memset(chunk, 0, TT__CHUNK_SIZE);
	return 1;
}

/* Core lock held: a chunk cleaned goes back to the free list, what it held noted. */
static void tt__chunk_cleaned(struct tt__slot *slot, struct tt__chunk *chunk, const struct tt__recycled *held)
{
	tt__note_overwritten(slot, held->events, held->first_tsc, held->last_tsc);
	tt__chunk_free(chunk);
}

uint32_t tt__chunk_returns;

void tt__chunk_returned(void)
{
	__atomic_add_fetch(&tt__chunk_returns, 1, __ATOMIC_RELEASE);
}

void tt__chunk_free(struct tt__chunk *chunk)
{
	chunk->next = tt__free_chunks;
	tt__free_chunks = chunk;
	tt__chunk_returned();
}

/* Core lock held: to tt-clean's queue, or cleaned here when the queue is full. */
static void tt__chunk_queue(struct tt__slot *slot, struct tt__chunk *chunk)
{
	if (tt__to_clean_count < TT__CLEAN_QUEUE) {
		tt__to_clean[tt__to_clean_count++] = (struct tt__to_clean){chunk, slot};
		/* A wake-up costs this thread a system call: one for a few chunks (and
		 * readers, a dump and the exit clean the queue first). */
		if (tt__to_clean_count >= TT__CLEAN_QUEUE / 4)
			tt__wake(&tt__clean_sleeper);
	} else {
		struct tt__recycled held;
		/* (else an event in it is still being written: the chunk is left alone) */
		if (tt__clean_chunk(slot, chunk, &held))
			tt__chunk_cleaned(slot, chunk, &held);
	}
}

void tt__chunk_to_clean(struct tt__slot *slot, struct tt__chunk *chunk)
{
	if (!__atomic_load_n(&tt__readers, __ATOMIC_SEQ_CST)) {
		tt__chunk_queue(slot, chunk);
		return;
	}
	/* The ring recycles a thread's oldest chunk each time, so the deferred ones are
	 * the chain's old part, from slot->deferred on: their links stay as they were,
	 * and a reader at one of them goes on into the chunks that follow it. */
	if (!slot->deferred_count++)
		slot->deferred = chunk;
	tt__deferred++;
}

uint64_t tt__deferred_events(struct tt__slot *slot, uint64_t from_tsc, uint64_t to_tsc,
			     uint64_t *first_tsc, uint64_t *last_tsc)
{
	struct tt__recycled in = {0};
	tt__core_lock(1);
	const struct tt__chunk *chunk = slot->deferred;
	for (uint64_t i = 0; i < slot->deferred_count; i++, chunk = chunk->next) {
		const struct tt_record *r = (const struct tt_record *)(chunk + 1);
		const struct tt_record *end = (const struct tt_record *)((const char *)chunk + chunk->size);
		for (; r < end; r++)
			if (TT_RECORD_IS_EVENT(TT_RECORD_KIND(r->word)) && r->tsc >= from_tsc && r->tsc <= to_tsc)
				tt__recycled_add(&in, r->tsc);
	}
	tt__core_lock(0);
	*first_tsc = in.first_tsc;
	*last_tsc = in.last_tsc;
	return in.events;
}

int tt__reading_now(void)
{
	return __atomic_load_n(&tt__readers, __ATOMIC_SEQ_CST);
}

void tt__reading(int begin)
{
	struct tt_os_signals old;
	tt_os_signals_block(&old);
	if (begin) {
		__atomic_add_fetch(&tt__readers, 1, __ATOMIC_SEQ_CST);
		/* What was recycled before is counted now, before the reader looks. */
		if (tt__mode->recycle_oldest && begin != TT__READING_UNCOUNTED)
			tt__clean_queued();
		tt_os_signals_restore(&old);
		return;
	}
	/* The last reader: the chunks recycled meanwhile to tt-clean's queue (cleaned
	 * here where it is full), each slot's taken under the lock. */
	tt__core_lock(1);
	/* (none deferred: no slot to look at, where a reader of each thread's records in
	 * turn, tt-spikes, looked at every slot for each one) */
	int last = __atomic_sub_fetch(&tt__readers, 1, __ATOMIC_SEQ_CST) == 0 && tt__deferred;
	tt__deferred = last ? 0 : tt__deferred;
	tt__core_lock(0);
	for (struct tt__slot *slot = last ? tt__registry_head() : NULL; slot;
	     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
		tt__core_lock(1);
		struct tt__chunk *chunk = slot->deferred;
		uint64_t count = slot->deferred_count;
		slot->deferred = NULL;
		slot->deferred_count = 0;
		tt__core_lock(0);
		/* (no reader begun since can have found them out of the chain) */
		for (; count; count--) {
			struct tt__chunk *next = chunk->next; /* (cleaning zeroes the header) */
			tt__core_lock(1);
			tt__chunk_queue(slot, chunk);
			tt__core_lock(0);
			chunk = next;
		}
	}
	if (last)
		tt__wake(&tt__clean_sleeper);
	tt_os_signals_restore(&old);
}

void tt__recycled_count(void)
{
	if (tt__mode->recycle_oldest)
		tt__clean_queued();
}

/* Held through a whole cleaning, so that a dump that cleans the queue first waits
 * for a cleaning tt-clean has begun: until it ends, the chunks it took
 * are neither in the queue nor counted as overwritten. */
static struct tt__lock tt__clean = TT__LOCK_INIT(TT__LOCK_CLEAN);

/* Cleans the queued chunks into the free list (tt-clean's job). Returns whether some
 * must wait for their events to be written. */
int tt__clean_queued(void)
{
	struct tt__to_clean jobs[TT__CLEAN_QUEUE];
	struct tt_os_signals old;
	tt_os_signals_block(&old);
	tt__lock(&tt__clean);
	tt__core_lock(1);
	unsigned count = tt__to_clean_count;
	memcpy(jobs, tt__to_clean, count * sizeof jobs[0]);
	tt__to_clean_count = 0;
	tt__core_lock(0);
	int waiting = 0;
	for (unsigned i = 0; i < count; i++) {
		struct tt__recycled held;
		int clean = tt__clean_chunk(jobs[i].slot, jobs[i].chunk, &held);
		tt__core_lock(1);
		if (clean)
			tt__chunk_cleaned(jobs[i].slot, jobs[i].chunk, &held);
		else if (tt__to_clean_count < TT__CLEAN_QUEUE) {
			tt__to_clean[tt__to_clean_count++] = jobs[i]; /* later */
			waiting = 1;
		}
		tt__core_lock(0);
	}
	tt__unlock(&tt__clean);
	tt_os_signals_restore(&old);
	return waiting;
}

/* tt-prefault: the window for what the writers took lately. */
static void tt__size_prefault_window(char *fresh, int64_t now_ns)
{
	struct tt__recent_use *u = &tt__recent_use;
	if (!u->fresh)
		u->fresh = fresh;
	double kept = 1.0 - (double)(now_ns - u->ns) / TT__PREFAULT_MEMORY_NS;
	u->bytes = u->bytes * (kept > 0 ? kept : 0) + (double)(fresh - u->fresh);
	u->fresh = fresh;
	u->ns = now_ns;
	double ahead = u->bytes;
	if (ahead > (double)(fresh - tt__arena_base))
		ahead = (double)(fresh - tt__arena_base);
	if (ahead > TT__PREFAULT_AHEAD_MAX)
		ahead = TT__PREFAULT_AHEAD_MAX;
	/* (a live file's window is disk it takes before it is used: kept small) */
	double least = TT__PREFAULT_USED_TIMES * (double)(fresh - tt__arena_base);
	least = least < TT_OS_PREFAULT_FIRST ? TT_OS_PREFAULT_FIRST
		: least > TT__PREFAULT_AHEAD_MIN ? TT__PREFAULT_AHEAD_MIN : least;
	if (ahead < least || tt__chunks_file())
		ahead = least;
	__atomic_store_n(&tt__prefault_ahead, (size_t)ahead, __ATOMIC_RELAXED);
}

/* Whether as many threads as there are cores took chunks since the last look. */
static int tt__cores_recording(uint32_t *seen)
{
	uint32_t seq = __atomic_load_n(&tt__takers_seq, __ATOMIC_ACQUIRE);
	uint32_t n = seq - *seen < TT__TAKERS ? seq - *seen : TT__TAKERS;
	*seen = seq;
	uint32_t distinct[TT__TAKERS];
	long count = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t who = __atomic_load_n(&tt__takers[(seq - 1 - i) % TT__TAKERS], __ATOMIC_RELAXED);
		long k = 0;
		while (k < count && distinct[k] != who)
			k++;
		if (k == count)
			distinct[count++] = who;
	}
	return count >= tt__cores;
}

/* Woken whether it sleeps or not, as it may be about to: tt-prefault or tt-live asked
 * to end (base.h: the program's thread wants its place), tt-prefault asked to grow the
 * file. */
static void tt__wake_surely(struct tt__sleeper *s)
{
	__atomic_add_fetch(&s->seq, 1, __ATOMIC_SEQ_CST);
	tt_os_wake(&s->seq);
}

/* Where chunks may be handed out up to now: the arena's end, or where it has grown to. */
static char *tt__arena_usable_end(void)
{
	char *end = __atomic_load_n(&tt__arena_end, __ATOMIC_ACQUIRE);
	char *grown = __atomic_load_n(&tt__arena_grown, __ATOMIC_ACQUIRE);
	return grown < end ? grown : end;
}

static void tt__prefault_end(void)
{
	tt__wake_surely(&tt__prefault_sleeper);
}

static void tt__live_end(void)
{
	tt__wake_surely(&tt__live_sleeper);
}

static void tt__clean_end(void)
{
	tt__wake_surely(&tt__clean_sleeper);
}

/* The mode's file (a live file) is grown by tt-prefault alone, in a table of
 * descriptors of its own (the program's dup2 and close never reach its number), ahead
 * of the writers; one that overtook it asks it and waits. tt__file_grower: 1 from
 * before it starts until it ended (given back, the run's end): the file grows no more
 * then. tt__file_grown: bumped as it grew the file, or could not, or ended. */
static int tt__file_grower;
static uint32_t tt__file_grown;
static uint32_t tt__file_waiters; /* writers waiting on tt__file_grown */

/* Core lock held: whether the mode's file holds the arena up to `end`: 0; 1 where
 * tt-prefault was asked to grow it and waited for, the lock let go meanwhile (the
 * caller looks at the arena again), until `*until` at most (0: from now on); -1 where
 * it does not (no room, tt-prefault ended, or the wait ran out: said) and the chunk's
 * events are counted as dropped. */
static int tt__arena_cover(const char *end, int64_t *until)
{
	if (!tt__chunks_file())
		return 0;
	uint32_t seq = __atomic_load_n(&tt__file_grown, __ATOMIC_SEQ_CST);
	int grows = __atomic_load_n(&tt__file_grower, __ATOMIC_SEQ_CST);
	int rc = tt__mode->cover((uint64_t)(end - tt__arena_base), grows);
	if (rc <= 0)
		return rc < 0 ? -1 : 0;
	int64_t now = tt_os_monotonic_ns();
	*until = *until ? *until : now + TT__FILE_WAIT_NS;
	if (now >= *until) {
		static int said;
		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			fprintf(tt__err, "ticktrace: a thread waited %d s for tt-prefault to grow the live "
				"file: its events are counted as dropped\n", (int)(TT__FILE_WAIT_NS / 1000000000));
		return -1;
	}
	__atomic_add_fetch(&tt__file_waiters, 1, __ATOMIC_SEQ_CST);
	tt__wake_surely(&tt__prefault_sleeper);
	tt__core_lock(0);
	tt_os_wait(&tt__file_grown, seq, *until - now);
	tt__core_lock(1);
	__atomic_sub_fetch(&tt__file_waiters, 1, __ATOMIC_SEQ_CST);
	return 1;
}

/* tt-prefault: the mode's file grown to hold the arena up to `end` (NULL: what the
 * writers asked alone), and the writers waiting woken; 0 or -errno. */
static int tt__file_grow(const char *end)
{
	if (!tt__chunks_file())
		return 0;
	int err = tt__mode->grow(end ? (uint64_t)(end - tt__arena_base) : 0);
	__atomic_add_fetch(&tt__file_grown, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&tt__file_waiters, __ATOMIC_SEQ_CST))
		tt_os_wake_all(&tt__file_grown);
	return err;
}

/* tt-prefault ended (or never started): the file grows no more, its waiters told. */
static void tt__file_grower_gone(void)
{
	__atomic_store_n(&tt__file_grower, 0, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&tt__file_grown, 1, __ATOMIC_SEQ_CST);
	tt_os_wake_all(&tt__file_grown);
}

/* tt-prefault: the spare slots made up again, each written through outside the lock. */
static void tt__spares_fill(void)
{
	for (;;) {
		struct tt_os_signals old;
		tt_os_signals_block(&old);
		tt__core_lock(1);
		struct tt__slot *slot = tt__spare_count < TT__SPARE_SLOTS
						? tt__slab_alloc(&tt__slot_slab, sizeof *slot) : NULL;
		tt__core_lock(0);
		if (slot) {
			memset(slot, 0, sizeof *slot);
			tt__core_lock(1);
			tt__spare_slots[tt__spare_count++] = slot; /* (only this thread adds) */
			tt__core_lock(0);
		}
		tt_os_signals_restore(&old);
		if (!slot)
			return;
	}
}

struct tt__slot *tt__slot_memory(void)
{
	tt__core_lock(1);
	struct tt__slot *slot = tt__spare_count ? tt__spare_slots[--tt__spare_count]
						: tt__slab_alloc(&tt__slot_slab, sizeof *slot);
	int low = tt__spare_count < TT__SPARE_SLOTS / 2;
	tt__core_lock(0);
	if (low)
		tt__wake(&tt__prefault_sleeper);
	return slot;
}

/* tt-prefault's work, until it ends. */
static void tt__prefault_run(void)
{
	uint32_t takers_seen = 0;
	for (;;) {
		uint32_t seq = __atomic_load_n(&tt__prefault_sleeper.seq, __ATOMIC_SEQ_CST);
		if (tt__thread_end_asked())
			return;
		tt__spares_fill();
		tt__file_grow(NULL); /* (a writer that overtook it waits) */
		char *fresh = __atomic_load_n(&tt__arena_fresh, __ATOMIC_ACQUIRE);
		char *ready = __atomic_load_n(&tt__arena_ready, __ATOMIC_ACQUIRE);
		char *end = tt__arena_usable_end();
		if (ready < fresh)
			ready = fresh; /* the writers overtook us: what they passed is theirs */
		tt__size_prefault_window(fresh, tt_os_monotonic_ns());
		size_t left = (size_t)(ready - fresh);
		if (ready >= end || left >= tt__prefault_ahead) {
			tt__sleep(&tt__prefault_sleeper, seq, TT_OS_FOREVER);
			continue;
		}
		/* While every core records, the zeroing would take one from a writer: it
		 * waits for a free core, unless the writers are about to run out. */
		if (left >= tt__prefault_ahead / 4 && tt__cores_recording(&takers_seen)) {
			tt_os_sleep_ns(TT__PREFAULT_PAUSE_NS);
			continue;
		}
		size_t step = TT__PREFAULT_STEP - ((uintptr_t)ready & (TT__PREFAULT_STEP - 1));
		/* A window still growing, below the first huge page (small pages): a chunk
		 * at a time, each ready for a writer close behind as soon as it is. */
		if (tt__prefault_ahead < TT__PREFAULT_AHEAD_MIN && ready < tt__arena_base + TT__PREFAULT_STEP &&
		    step > TT__CHUNK_SIZE)
			step = TT__CHUNK_SIZE;
		if (step > (size_t)(end - ready))
			step = (size_t)(end - ready);
		if (tt__file_grow(ready + step) == 0) {
			/* (only these faults are summed: a stray one of tt-prefault's
			 * elsewhere stays in the gate's count, which then only grows) */
			__atomic_add_fetch(&tt__prefault_busy, 1, __ATOMIC_SEQ_CST);
			uint64_t before = tt__own_faults();
			int committed = tt_os_commit(ready, step) == 0;
			uint64_t after = tt__own_faults();
			__atomic_add_fetch(&tt__prefault_faults, after > before ? after - before : 0,
					   __ATOMIC_SEQ_CST);
			__atomic_add_fetch(&tt__prefault_busy, 1, __ATOMIC_SEQ_CST);
			/* Refused: the writers commit each chunk they take (tt__chunk_alloc),
			 * which fails where this did, their events then dropped for want of
			 * memory. */
			if (!committed)
				return;
		}
		__atomic_store_n(&tt__arena_ready, ready + step, __ATOMIC_RELEASE);
	}
}

static void *tt__prefault_main(void *unused)
{
	(void)unused;
	if (tt__chunks_file() && tt__mode->chunks_file_table)
		tt__mode->chunks_file_table(1); /* (before it runs: not yet the program's number) */
	tt__thread_running("tt-prefault");
	tt__thread_optional(TT__OPTIONAL_PREFAULT, tt__prefault_end);
	tt__prefault_run();
	tt__file_grower_gone();
	return NULL;
}

/* Mode ring: the chunks the rings recycled, cleaned a few at a time (woken), and
 * those whose last event was still being written, again a millisecond later. */
static void *tt__clean_main(void *unused)
{
	(void)unused;
	tt__thread_running("tt-clean");
	tt__thread_ends_with(tt__clean_end);
	for (;;) {
		uint32_t seq = __atomic_load_n(&tt__clean_sleeper.seq, __ATOMIC_SEQ_CST);
		if (tt__thread_end_asked())
			return NULL;
		int waiting = tt__clean_queued();
		tt__sleep(&tt__clean_sleeper, seq, waiting ? 1000000 : TT_OS_FOREVER);
	}
	return NULL;
}

/* A live file: its descriptions and end anchor, every TT__LIVE_PERIOD_NS. */
static void *tt__live_main(void *unused)
{
	(void)unused;
	if (tt__mode->chunks_file_table)
		tt__mode->chunks_file_table(0);
	tt__thread_running("tt-live");
	tt__thread_optional(TT__OPTIONAL_LIVE, tt__live_end);
	for (;;) {
		uint32_t seq = __atomic_load_n(&tt__live_sleeper.seq, __ATOMIC_SEQ_CST);
		if (tt__thread_end_asked())
			return NULL;
		tt__sleep(&tt__live_sleeper, seq, TT__LIVE_PERIOD_NS);
		if (tt__thread_end_asked())
			return NULL;
		tt__background_work(1);
		tt__mode->tick();
		tt__background_work(0);
	}
	return NULL;
}

/* The arena's threads, those the mode needs; `wait`: each running before this
 * returns. */
static int tt__start_arena_threads(int wait)
{
	__atomic_store_n(&tt__file_grower, 1, __ATOMIC_SEQ_CST);
	int err = tt__start_thread(NULL, tt__prefault_main, NULL, wait);
	if (err)
		tt__file_grower_gone();
	if (!err && tt__mode->recycle_oldest)
		err = tt__start_thread(NULL, tt__clean_main, NULL, wait);
	if (!err && tt__chunks_file() && tt__mode->tick)
		err = tt__start_thread(NULL, tt__live_main, NULL, wait);
	return err;
}

/* Under an address-space limit (ulimit -v), the program keeps three quarters of the
 * room free as ticktrace starts: ticktrace takes a quarter at most, all told. Its
 * arena gets what is left of the quarter after what else it maps (measured under a
 * limit: its threads' stacks, the first thread's scratch chunk, 3.2 MiB with markup;
 * with the patcher's code and memory, 8.6 MiB in the zero-markup build, whose shadow
 * stacks take 1/64 of the room more), said once, and below a useful size none: the
 * arena alone took a quarter once, and a zero-markup lz4 that ran in 27 MiB failed.
 * That much is mapped only as the buffers fill, TT__ARENA_STEP at a time, each step
 * while the buffers stay within a quarter of what is free then (the program's own
 * growth leaves them less): reserved at start, the quarter made an xz that ran in
 * 293 MiB fail at 371 (outside r42 N5); a step refused, they grow no more, said. */
#define TT__ARENA_STEP (2u << 20)
#define TT__ARENA_ROOM_PART 4
#define TT__ARENA_LIMITED_MIN (4u << 20)
#define TT__ARENA_BESIDE (4u << 20)
#define TT__ARENA_BESIDE_ZERO_MARKUP (10u << 20)

/* The arena's size (TICKTRACE_MEMORY, or what the limit leaves), or 0: none. */
static uint64_t tt__arena_budget(void)
{
	uint64_t asked = tt__config.memory_bytes / TT__CHUNK_SIZE * TT__CHUNK_SIZE;
	uint64_t room = tt__address_room();
	uint64_t beside = tt__config.zero_markup ? TT__ARENA_BESIDE_ZERO_MARKUP : TT__ARENA_BESIDE;
	uint64_t quarter = room == UINT64_MAX ? UINT64_MAX : room / TT__ARENA_ROOM_PART;
	if (quarter == UINT64_MAX || asked + beside <= quarter)
		return asked;
	uint64_t limit = tt_os_address_limit();
	uint64_t share = quarter > beside ? (quarter - beside) / TT__CHUNK_SIZE * TT__CHUNK_SIZE : 0;
	if (share < TT__ARENA_LIMITED_MIN) {
		fprintf(tt__err, "ticktrace: the address-space limit (ulimit -v, RLIMIT_AS: %" PRIu64
			" MiB, %" PRIu64 " MiB of it free) leaves no room for trace buffers (ticktrace "
			"takes at most a quarter of what is free: %" PRIu64 " MiB it maps besides them, "
			"and %u MiB of buffers at least); recording is off\n",
			limit >> 20, room >> 20, beside >> 20, TT__ARENA_LIMITED_MIN >> 20);
		return 0;
	}
	fprintf(tt__err, "ticktrace: the address-space limit (ulimit -v, RLIMIT_AS: %" PRIu64 " MiB, %"
		PRIu64 " MiB of it free) leaves trace buffers %" PRIu64 " MiB (ticktrace takes at most a "
		"quarter of what is free, %" PRIu64 " MiB of it besides them) of the %" PRIu64 " MiB asked "
		"(TICKTRACE_MEMORY), mapped as they fill while the program leaves them room; events "
		"past them are dropped, counted\n",
		limit >> 20, room >> 20, share >> 20, beside >> 20, asked >> 20);
	return share;
}

/* An arena that grows in place (tt__arena_grow), mapped `size` bytes to begin with. */
static void *tt__arena_map_growable(uint64_t size)
{
	void *at = tt_os_reserve_growable(size, tt_os_address_limit());
	if (!at || !tt__chunks_file())
		return at;
	void *view = tt__arena_map(at, size); /* (the file's view in its place) */
	if (!view)
		tt_os_free(at, size);
	return view;
}

/* Core lock held: the arena a step larger (under an address-space limit), while its
 * buffers stay within a quarter of what is free, themselves counted as free; else,
 * from then on, no more (TT_FILE_GAVE_ROOM). */
static int tt__arena_grow(void)
{
	char *grown = tt__arena_grown;
	uint64_t held = (uint64_t)(grown - tt__arena_base);
	uint64_t step = (uint64_t)(tt__arena_mapped_end - grown);
	step = step < TT__ARENA_STEP ? step : TT__ARENA_STEP;
	if (!step || tt__arena_room_refused)
		return -1;
	uint64_t room = tt__address_room();
	if ((room != UINT64_MAX && (held + step) * TT__ARENA_ROOM_PART > room + held) ||
	    tt_os_grow(tt__arena_base, held, held + step) != 0) {
		__atomic_store_n(&tt__arena_room_refused, 1, __ATOMIC_RELAXED);
		return -1;
	}
	if (!tt__chunks_file())
		tt_os_huge_pages(grown, step);
	__atomic_store_n(&tt__arena_grown, grown + step, __ATOMIC_RELEASE);
	return 0;
}

int tt__arena_gave_room(void)
{
	return __atomic_load_n(&tt__arena_room_refused, __ATOMIC_RELAXED);
}

int tt__arena_init(void)
{
	tt__cores = tt_os_cpus(); /* the cores this process may run on */
	/* The arena is the run's budget of memory for buffers (TICKTRACE_MEMORY): past it,
	 * threads get no more chunks, and drop their events (TT_DROP_NO_MEMORY). */
	uint64_t budget = tt__arena_budget();
	if (!budget)
		return -E2BIG;
	uint64_t largest = budget < TT__ARENA_MAX ? budget : TT__ARENA_MAX;
	uint64_t smallest = largest < TT__ARENA_MIN ? largest : TT__ARENA_MIN;
	int growing = tt_os_address_limit() != UINT64_MAX;
	for (uint64_t size = largest; size >= smallest && size >= TT__CHUNK_SIZE;
	     size = size / 2 / TT__CHUNK_SIZE * TT__CHUNK_SIZE) {
		uint64_t first = growing && size > TT__ARENA_STEP ? TT__ARENA_STEP : size;
		void *base = first < size ? tt__arena_map_growable(first) : tt__arena_map(NULL, size);
		if (!base)
			continue;
		tt__arena_base = tt__arena_fresh = tt__arena_ready = base;
		tt__arena_mapped_end = tt__arena_base + size;
		tt__arena_grown = tt__arena_base + first;
		tt__arena_aside = tt__config.memory_aside_part ? size / tt__config.memory_aside_part /
								 TT__CHUNK_SIZE * TT__CHUNK_SIZE : 0;
		tt__arena_end = tt__arena_mapped_end - tt__arena_aside;
		/* The first chunk is faulted in now, so the first thread's first event does
		 * not wait for tt-prefault; on small pages, because zeroing a whole
		 * huge page here cost up to 5 ms of start-up. Huge pages after that: one 2 MiB
		 * fault instead of 512, where the kernel allows (not for a file). */
		if (!tt__chunks_file())
			tt_os_huge_pages(tt__arena_base + TT__PREFAULT_STEP, first - TT__PREFAULT_STEP);
		int64_t until = 0; /* (the live file holds its first chunks: tt__live_start) */
		if (tt__arena_cover(tt__arena_base + TT__CHUNK_SIZE, &until) != 0)
			return -ENOSPC;
		if (tt_os_commit(tt__arena_base, TT__CHUNK_SIZE) != 0)
			return -ENOMEM;
		tt__arena_ready = tt__arena_base + TT__CHUNK_SIZE;
		return tt__start_arena_threads(1);
	}
	return -ENOMEM;
}

void tt__arena_reset_after_fork(void)
{
	/* Every page is now shared copy-on-write with the parent: none is ready. */
	tt__core_reset_after_fork();
	tt__lock_reset(&tt__clean);
	tt__readers = 0; /* (the parent's reader, if one was at work, is not the child's) */
	tt__deferred = 0;
	tt__arena_ready = tt__arena_fresh;
	/* A live file's chunks are the parent's own: the child maps a file of its own
	 * (or private memory) in their place and starts from the beginning. */
	if (tt__chunks_file()) {
		tt__mode->chunks_after_fork();
		if (!tt__arena_map(tt__arena_base, (uint64_t)(tt__arena_grown - tt__arena_base)))
			tt__arena_end = tt__arena_base; /* no chunks: events are counted as dropped */
		tt__arena_fresh = tt__arena_ready = tt__arena_base;
		tt__free_chunks = NULL;
	}
	tt__prefault_sleeper.sleeping = 0;
	tt__clean_sleeper.sleeping = 0;
	tt__live_sleeper.sleeping = 0;
	tt__file_waiters = 0; /* (the parent's threads') */
	/* (the child's process faults count from 0, and its tt-prefault was not faulting) */
	tt__prefault_busy = 0;
	tt__prefault_faults = 0;
	tt__prefault_ahead = TT_OS_PREFAULT_FIRST;
	tt__recent_use = (struct tt__recent_use){0};
	tt__to_clean_count = 0; /* the parent's threads' chunks */
	tt__chunk_returned(); /* (a new arena, or the parent's chunks, are the child's now) */
	tt__start_arena_threads(0);
}

uint64_t tt__arena_set_aside(uint64_t bytes)
{
	struct tt_os_signals old;
	tt_os_signals_block(&old);
	tt__core_lock(1);
	/* (not what was faulted in or taken already) */
	char *taken = __atomic_load_n(&tt__arena_ready, __ATOMIC_ACQUIRE);
	uint64_t free_bytes = (uint64_t)(tt__arena_mapped_end - taken);
	char *end = tt__arena_mapped_end - (bytes < free_bytes ? bytes : free_bytes) / TT__CHUNK_SIZE *
						   TT__CHUNK_SIZE;
	if (tt__arena_end != tt__arena_base) { /* (a child's arena may have none) */
		__atomic_store_n(&tt__arena_end, end, __ATOMIC_RELEASE); /* (tt-prefault reads it) */
		tt__arena_aside = (uint64_t)(tt__arena_mapped_end - end);
		tt__chunk_returned(); /* (what is set aside no more is the buffers') */
	}
	uint64_t aside = tt__arena_aside;
	tt__core_lock(0);
	tt_os_signals_restore(&old);
	return aside;
}

uint64_t tt__arena_set_aside_bytes(void)
{
	return tt__arena_aside;
}

uint64_t tt__arena_bytes(void)
{
	return (uint64_t)(__atomic_load_n(&tt__arena_grown, __ATOMIC_ACQUIRE) - tt__arena_base);
}

static int tt__arena_used_up; /* a chunk was wanted past the arena's end */

int tt__arena_full(void)
{
	return __atomic_load_n(&tt__arena_used_up, __ATOMIC_RELAXED);
}

/* Core lock held (let go while a live file is grown for it: tt__arena_cover), signals
 * blocked. */
struct tt__chunk *tt__chunk_alloc(void)
{
	struct tt__chunk *header;
	int64_t until = 0;
	int covered = 0;
	do { /* (again where the lock was let go for a live file to grow) */
		header = tt__free_chunks;
		if (header) {
			tt__free_chunks = header->next;
			break;
		}
		if ((size_t)(tt__arena_end - tt__arena_fresh) < TT__CHUNK_SIZE) {
			__atomic_store_n(&tt__arena_used_up, 1, __ATOMIC_RELAXED);
			return NULL;
		}
	} while ((covered = tt__arena_cover(tt__arena_fresh + TT__CHUNK_SIZE, &until)) > 0);
	if (!header) {
		if (covered < 0)
			return NULL;
		char *chunk = tt__arena_fresh;
		if (chunk + TT__CHUNK_SIZE > tt__arena_grown && tt__arena_grow() < 0) {
			__atomic_store_n(&tt__arena_used_up, 1, __ATOMIC_RELAXED);
			return NULL;
		}
#if !TT_OS_RESERVE_WRITABLE
		/* Past what tt-prefault committed, where the writers may not touch the
		 * reservation before it is: committed here (tt-prefault committing it too
		 * changes nothing the writer wrote), faulted in by the writer's own events. */
		if (chunk + TT__CHUNK_SIZE > __atomic_load_n(&tt__arena_ready, __ATOMIC_ACQUIRE) &&
		    tt_os_commit_unfaulted(chunk, TT__CHUNK_SIZE) != 0)
			return NULL;
#endif
		__atomic_store_n(&tt__arena_fresh, chunk + TT__CHUNK_SIZE, __ATOMIC_RELEASE);
		if ((size_t)(__atomic_load_n(&tt__arena_ready, __ATOMIC_ACQUIRE) - chunk) <
		    __atomic_load_n(&tt__prefault_ahead, __ATOMIC_RELAXED) / 2)
			tt__wake(&tt__prefault_sleeper);
		header = (struct tt__chunk *)chunk;
	}
	header->next = NULL;
	header->size = TT__CHUNK_SIZE;
	return header;
}

void *tt__compacted_alloc(size_t size)
{
	return tt__slab_alloc(&tt__small, size);
}

void tt__chunk_taken(uint32_t thread)
{
	__atomic_store_n(&tt__takers[tt__takers_seq % TT__TAKERS], thread, __ATOMIC_RELAXED);
	__atomic_store_n(&tt__takers_seq, tt__takers_seq + 1, __ATOMIC_RELEASE);
}
