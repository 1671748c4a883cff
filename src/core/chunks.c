/* Chunks: carved from one reserved arena, faulted in ahead of the writers by a
 * background thread, handed to threads, recycled (mode ring, mode stream), compacted
 * when a thread exits. Where the arena's memory comes from, and what a full chunk
 * does, the mode in use says (core.h: struct tt__mode). */
#include <errno.h>
#include <sched.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The arena is address space only (MAP_NORESERVE); memory is used as chunks are
 * faulted in. Faulting a 4 KiB page costs about 1.7 us on a virtual machine, which
 * would add 7 ns to every event, so a background thread keeps memory past the next
 * chunk faulted in, in huge-page steps. The kernel zeroes it as it does (0.12 ns a
 * byte here, 1.8 ns an event): done while the writers record, that takes a core
 * from them, so the window covers what they took in about the last
 * TT__PREFAULT_MEMORY_NS, and a burst like the last ones finds its memory ready
 * (never more than the arena already used, nor beyond TT__PREFAULT_AHEAD_MAX); and
 * while every core records, the zeroing waits for a free one. */
#define TT__ARENA_MAX (UINT64_C(256) << 30)
#define TT__ARENA_MIN (UINT64_C(256) << 20)
#define TT__PREFAULT_STEP (2u << 20)
#define TT__PREFAULT_AHEAD_MIN (16u << 20)
#define TT__PREFAULT_AHEAD_MAX (256u << 20)
#define TT__PREFAULT_MEMORY_NS 100000000
#define TT__PREFAULT_PAUSE_NS 1000000 /* how often it looks for a free core again */
/* A live file's descriptions are brought up to date this often. */
#define TT__LIVE_PERIOD_NS 200000000

static pthread_mutex_t tt__arena_mutex = PTHREAD_MUTEX_INITIALIZER;
static char *tt__arena_base, *tt__arena_end;
static char *tt__arena_fresh; /* the next chunk never handed out */
static char *tt__arena_ready; /* [fresh, ready) is faulted in */
static struct tt__chunk *tt__free_chunks; /* recycled, zeroed, faulted in */
static struct tt__slab tt__small = {.slab_size = 1u << 20}; /* compacted chunks */
static uint32_t tt__prefault_seq;   /* futex word: bumped to wake the prefault thread */
static int tt__prefault_sleeping;
static size_t tt__prefault_ahead = TT__PREFAULT_AHEAD_MIN; /* the window past the next chunk */
/* The threads that took the latest chunks (tt__enter_chunk, arena lock held): the
 * background thread's way to see whether every core is recording. */
#define TT__TAKERS 16
static uint32_t tt__takers[TT__TAKERS];
static uint32_t tt__takers_seq;
static long tt__cores; /* the cores the process may run on */

/* The background thread's: what the writers took lately, decaying over
 * TT__PREFAULT_MEMORY_NS, and where and when it last looked. */
static struct tt__recent_use {
	double bytes;
	char *fresh;
	int64_t ns;
} tt__recent_use;

/* Mode ring: a thread's oldest chunk, recycled, waits here (arena lock) for the
 * background thread to count its events as overwritten and zero it. */
#define TT__CLEAN_QUEUE 64
static struct tt__to_clean {
	struct tt__chunk *chunk;
	struct tt__slot *slot;
} tt__to_clean[TT__CLEAN_QUEUE];
static unsigned tt__to_clean_count;

/* Where chunks come from (the mode's answer): a file the arena maps, or -1. */
static int tt__chunks_fd(void)
{
	return tt__mode->chunks_fd ? tt__mode->chunks_fd() : -1;
}

/* The arena: private memory, or a shared mapping of the mode's file (a live file). */
static void *tt__arena_map(void *at, uint64_t size)
{
	int fd = tt__chunks_fd();
	int fixed = at ? MAP_FIXED : 0;
	return fd < 0 ? mmap(at, size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | fixed, -1, 0) :
			mmap(at, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE | fixed, fd,
			     (off_t)tt__mode->chunks_at());
}

/* Arena lock held: the mode's file holds the arena up to `end`. */
static int tt__arena_cover(const char *end)
{
	return tt__chunks_fd() < 0 ? 0 : tt__mode->cover((uint64_t)(end - tt__arena_base));
}

static void tt__prefault(char *begin, size_t size)
{
	if (madvise(begin, size, MADV_POPULATE_WRITE) == 0)
		return;
	/* Before Linux 5.14: an atomic add of zero faults a page in for writing without
	 * changing a byte that a recording thread may be writing at the same time. */
	for (size_t off = 0; off < size; off += 4096)
		__atomic_fetch_add(begin + off, 0, __ATOMIC_RELAXED);
}

static void tt__wake_prefault(void)
{
	if (__atomic_load_n(&tt__prefault_sleeping, __ATOMIC_SEQ_CST)) {
		__atomic_add_fetch(&tt__prefault_seq, 1, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, &tt__prefault_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

/* Counts a recycled chunk's events as overwritten and zeroes it, unless one of them
 * is not written yet (its thread was interrupted by a signal handler between
 * reserving and writing it): then 0. */
static int tt__clean_chunk(struct tt__slot *slot, struct tt__chunk *chunk)
{
	const struct tt_record *r = (const struct tt_record *)(chunk + 1);
	const struct tt_record *end = (const struct tt_record *)((const char *)chunk + chunk->size);
	uint64_t events = 0;
	for (; r < end; r++) {
		uint64_t word = __atomic_load_n(&r->word, __ATOMIC_ACQUIRE);
		if (!word)
			return 0;
		events += TT_RECORD_HAS_TIME(TT_RECORD_KIND(word));
	}
	__atomic_add_fetch(&slot->dropped[TT_DROP_OVERWRITTEN], events, __ATOMIC_RELAXED);
	memset(chunk, 0, TT__CHUNK_SIZE);
	return 1;
}

/* Held through a whole cleaning, so that a dump that cleans the queue first waits
 * for a cleaning the background thread has begun: until it ends, the chunks it took
 * are neither in the queue nor counted as overwritten. */
static pthread_mutex_t tt__clean_mutex = PTHREAD_MUTEX_INITIALIZER;

/* The background thread's share of mode ring: cleans the queued chunks into the free
 * list. Returns whether some must wait for their events to be written. */
static int tt__clean_queued(void)
{
	struct tt__to_clean jobs[TT__CLEAN_QUEUE];
	sigset_t old;
	tt__block_signals(&old);
	pthread_mutex_lock(&tt__clean_mutex);
	pthread_mutex_lock(&tt__arena_mutex);
	unsigned count = tt__to_clean_count;
	memcpy(jobs, tt__to_clean, count * sizeof jobs[0]);
	tt__to_clean_count = 0;
	pthread_mutex_unlock(&tt__arena_mutex);
	int waiting = 0;
	for (unsigned i = 0; i < count; i++) {
		int clean = tt__clean_chunk(jobs[i].slot, jobs[i].chunk);
		pthread_mutex_lock(&tt__arena_mutex);
		if (clean) {
			jobs[i].chunk->next = tt__free_chunks;
			tt__free_chunks = jobs[i].chunk;
		} else if (tt__to_clean_count < TT__CLEAN_QUEUE) {
			tt__to_clean[tt__to_clean_count++] = jobs[i]; /* later */
			waiting = 1;
		}
		pthread_mutex_unlock(&tt__arena_mutex);
	}
	pthread_mutex_unlock(&tt__clean_mutex);
	tt__restore_signals(&old);
	return waiting;
}

/* The background thread: the window for what the writers took lately. */
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
	/* A live file's window is disk it takes before it is used: kept small. */
	if (ahead < TT__PREFAULT_AHEAD_MIN || tt__chunks_fd() >= 0)
		ahead = TT__PREFAULT_AHEAD_MIN;
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

static void *tt__prefault_main(void *unused)
{
	(void)unused;
	tt__thread_running("tt-prefault");
	int64_t last_tick_ns = 0;
	uint32_t takers_seen = 0;
	for (;;) {
		uint32_t seq = __atomic_load_n(&tt__prefault_seq, __ATOMIC_SEQ_CST);
		int waiting = tt__mode->recycle_oldest && tt__clean_queued();
		char *fresh = __atomic_load_n(&tt__arena_fresh, __ATOMIC_ACQUIRE);
		char *ready = __atomic_load_n(&tt__arena_ready, __ATOMIC_ACQUIRE);
		if (ready < fresh)
			ready = fresh; /* the writers overtook us: what they passed is theirs */
		int64_t now_ns = tt__clock_ns(CLOCK_MONOTONIC);
		tt__size_prefault_window(fresh, now_ns);
		size_t left = (size_t)(ready - fresh);
		int refill = ready < tt__arena_end && left < tt__prefault_ahead;
		/* While every core records, the zeroing would take one from a writer: it
		 * waits for a free core, unless the writers are about to run out. */
		if (refill && left >= tt__prefault_ahead / 4 && tt__cores_recording(&takers_seen)) {
			nanosleep(&(struct timespec){0, TT__PREFAULT_PAUSE_NS}, NULL);
			continue;
		}
		if (refill) {
			size_t step = TT__PREFAULT_STEP - ((uintptr_t)ready & (TT__PREFAULT_STEP - 1));
			if (step > (size_t)(tt__arena_end - ready))
				step = (size_t)(tt__arena_end - ready);
			sigset_t old;
			tt__block_signals(&old);
			pthread_mutex_lock(&tt__arena_mutex);
			int covered = tt__arena_cover(ready + step) == 0;
			pthread_mutex_unlock(&tt__arena_mutex);
			tt__restore_signals(&old);
			if (covered)
				tt__prefault(ready, step);
			__atomic_store_n(&tt__arena_ready, ready + step, __ATOMIC_RELEASE);
			continue;
		}
		/* A live file's descriptions and end anchor, every TT__LIVE_PERIOD_NS. */
		int live = tt__chunks_fd() >= 0 && tt__mode->tick;
		if (live && now_ns - last_tick_ns >= TT__LIVE_PERIOD_NS) {
			tt__background_work(1);
			tt__mode->tick();
			tt__background_work(0);
			last_tick_ns = now_ns;
		}
		__atomic_store_n(&tt__prefault_sleeping, 1, __ATOMIC_SEQ_CST);
		struct timespec soon = {0, 1000000}; /* for the events still being written */
		struct timespec period = {0, TT__LIVE_PERIOD_NS};
		if (__atomic_load_n(&tt__prefault_seq, __ATOMIC_SEQ_CST) == seq)
			syscall(SYS_futex, &tt__prefault_seq, FUTEX_WAIT_PRIVATE, seq,
				waiting ? &soon : live ? &period : NULL, NULL, 0);
		__atomic_store_n(&tt__prefault_sleeping, 0, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static int tt__start_prefault_thread(int wait)
{
	return tt__start_thread(NULL, tt__prefault_main, NULL, 1, wait);
}

int tt__arena_init(void)
{
	cpu_set_t cpus; /* the cores this process may run on */
	tt__cores = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) :
									  sysconf(_SC_NPROCESSORS_ONLN);
	for (uint64_t size = TT__ARENA_MAX; size >= TT__ARENA_MIN; size /= 2) {
		void *base = tt__arena_map(NULL, size);
		if (base == MAP_FAILED)
			continue;
		tt__arena_base = tt__arena_fresh = tt__arena_ready = base;
		tt__arena_end = tt__arena_base + size;
		/* The first chunk is faulted in now, so the first thread's first event does
		 * not wait for the background thread; on small pages, because zeroing a whole
		 * huge page here cost up to 5 ms of start-up. Huge pages after that: one 2 MiB
		 * fault instead of 512, where the kernel allows (not for a file). */
		if (tt__chunks_fd() < 0)
			madvise(tt__arena_base + TT__PREFAULT_STEP, size - TT__PREFAULT_STEP, MADV_HUGEPAGE);
		if (tt__arena_cover(tt__arena_base + TT__CHUNK_SIZE) < 0)
			return -ENOSPC;
		tt__prefault(tt__arena_base, TT__CHUNK_SIZE);
		tt__arena_ready = tt__arena_base + TT__CHUNK_SIZE;
		return tt__start_prefault_thread(1);
	}
	return -ENOMEM;
}

void tt__arena_reset_after_fork(void)
{
	/* Every page is now shared copy-on-write with the parent: none is ready. */
	pthread_mutex_init(&tt__arena_mutex, NULL);
	pthread_mutex_init(&tt__clean_mutex, NULL);
	tt__arena_ready = tt__arena_fresh;
	/* A live file's chunks are the parent's own: the child maps a file of its own
	 * (or private memory) in their place and starts from the beginning. */
	if (tt__chunks_fd() >= 0) {
		tt__mode->chunks_after_fork();
		if (tt__arena_map(tt__arena_base, (uint64_t)(tt__arena_end - tt__arena_base)) == MAP_FAILED)
			tt__arena_end = tt__arena_base; /* no chunks: events are counted as dropped */
		tt__arena_fresh = tt__arena_ready = tt__arena_base;
		tt__free_chunks = NULL;
	}
	tt__prefault_sleeping = 0;
	tt__prefault_ahead = TT__PREFAULT_AHEAD_MIN;
	tt__recent_use = (struct tt__recent_use){0};
	tt__to_clean_count = 0; /* the parent's threads' chunks */
	tt__start_prefault_thread(0);
}

void tt__arena_lock(int lock)
{
	if (lock)
		pthread_mutex_lock(&tt__arena_mutex);
	else
		pthread_mutex_unlock(&tt__arena_mutex);
}

/* Arena lock held, signals blocked. */
static struct tt__chunk *tt__chunk_alloc(void)
{
	struct tt__chunk *header = tt__free_chunks;
	if (header) {
		tt__free_chunks = header->next;
	} else {
		char *chunk = tt__arena_fresh;
		if ((size_t)(tt__arena_end - chunk) < TT__CHUNK_SIZE ||
		    tt__arena_cover(chunk + TT__CHUNK_SIZE) < 0)
			return NULL;
		__atomic_store_n(&tt__arena_fresh, chunk + TT__CHUNK_SIZE, __ATOMIC_RELEASE);
		if ((size_t)(__atomic_load_n(&tt__arena_ready, __ATOMIC_ACQUIRE) - chunk) <
		    __atomic_load_n(&tt__prefault_ahead, __ATOMIC_RELAXED) / 2)
			tt__wake_prefault();
		header = (struct tt__chunk *)chunk;
	}
	header->next = NULL;
	header->size = TT__CHUNK_SIZE;
	return header;
}

int tt__dumps_running;

void tt__hold_chunks(int hold)
{
	sigset_t old;
	tt__registry_lock(&old);
	pthread_mutex_lock(&tt__arena_mutex);
	tt__dumps_running += hold ? 1 : -1;
	pthread_mutex_unlock(&tt__arena_mutex);
	tt__registry_unlock(&old);
	/* Mode ring: the chunks waiting to be cleaned are counted as overwritten now,
	 * so that a dump has every thread's count. */
	if (hold && tt__mode->recycle_oldest)
		tt__clean_queued();
}

void tt__compact_exited(struct tt__slot *slot)
{
	pthread_mutex_lock(&tt__arena_mutex);
	tt__publish_limit(slot);
	pthread_mutex_unlock(&tt__arena_mutex);
	struct tt__chunk *chunk = slot->current;
	const struct tt_record *begin, *end;
	tt__chunk_extent(slot, chunk, &begin, &end);
	size_t used = (size_t)((const char *)end - (const char *)begin);
	/* Not in a live file: the copy would be private memory. */
	if (tt__dumps_running || chunk->size != TT__CHUNK_SIZE || used > TT__CHUNK_SIZE / 2 ||
	    tt__chunks_fd() >= 0)
		return;
	/* A draining mode (stream): not while the drain reads the slot (it then recycles
	 * the chunk soon); the small copy is malloc'd, and freed once written. */
	int stream = tt__mode->drains;
	int idle = 0;
	if (stream && !__atomic_compare_exchange_n(&slot->drain_state, &idle, TT__DRAIN_COMPACTING, 0,
						  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&tt__arena_mutex);
	struct tt__chunk *small = stream ? malloc(sizeof *small + used) :
				  tt__slab_alloc(&tt__small, sizeof *small + used);
	if (small) {
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
		chunk->next = tt__free_chunks;
		tt__free_chunks = chunk;
	}
	pthread_mutex_unlock(&tt__arena_mutex);
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
		limit = (char *)((uintptr_t)slot->scratch + (slot->scratch ? TT__CHUNK_SIZE : 0) +
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
	__atomic_store_n(&tt__takers[tt__takers_seq % TT__TAKERS], slot->index, __ATOMIC_RELAXED);
	__atomic_store_n(&tt__takers_seq, tt__takers_seq + 1, __ATOMIC_RELEASE);
	slot->chunk_end = (char *)chunk + TT__CHUNK_SIZE;
	__atomic_store_n(&slot->hot->cursor, (char *)(chunk + 1), __ATOMIC_RELEASE);
	tt__publish_limit(slot);
}

/* Registry lock held, signals blocked. */
int tt__slot_start(struct tt__slot *slot)
{
	pthread_mutex_lock(&tt__arena_mutex);
	struct tt__chunk *chunk = tt__chunk_alloc();
	if (chunk) {
		slot->first = chunk;
		tt__enter_chunk(slot, chunk);
	}
	pthread_mutex_unlock(&tt__arena_mutex);
	return chunk ? 0 : -ENOMEM;
}

void tt__set_paused(struct tt__slot *slot, int paused)
{
	sigset_t old;
	tt__block_signals(&old);
	pthread_mutex_lock(&tt__arena_mutex);
	if (paused)
		__atomic_or_fetch(&slot->flags, TT__SLOT_PAUSED, __ATOMIC_RELEASE);
	else
		__atomic_and_fetch(&slot->flags, ~(uint32_t)TT__SLOT_PAUSED, __ATOMIC_RELEASE);
	tt__publish_limit(slot);
	pthread_mutex_unlock(&tt__arena_mutex);
	tt__restore_signals(&old);
}

void tt__set_all_limits(void)
{
	sigset_t old;
	tt__registry_lock(&old); /* no slot leaves the list meanwhile */
	pthread_mutex_lock(&tt__arena_mutex);
	for (struct tt__slot *slot = tt__registry_head(); slot;
	     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE))
		tt__publish_limit(slot);
	pthread_mutex_unlock(&tt__arena_mutex);
	tt__registry_unlock(&old);
}

/* Arena lock held. Mode ring: a thread whose budget is used up gives its oldest
 * chunk to the background thread, which counts its events as overwritten and zeroes
 * it (here, when the queue is full), and takes a clean one. Not while a dump reads
 * the chunks: the thread then grows until the dump is done. */
static int tt__recycle_oldest(struct tt__slot *slot)
{
	struct tt__chunk *oldest = slot->first;
	if (__atomic_load_n(&tt__dumps_running, __ATOMIC_ACQUIRE) || oldest == slot->current)
		return 0;
	__atomic_store_n(&slot->first, oldest->next, __ATOMIC_RELEASE);
	slot->chunks--;
	__atomic_or_fetch(&slot->flags, TT__SLOT_WRAPPED, __ATOMIC_RELEASE);
	if (tt__to_clean_count < TT__CLEAN_QUEUE) {
		tt__to_clean[tt__to_clean_count++] = (struct tt__to_clean){oldest, slot};
		/* A wake-up costs this thread a system call: one for a few chunks. The
		 * background thread looks at the queue by itself every millisecond. */
		if (tt__to_clean_count >= TT__CLEAN_QUEUE / 4)
			tt__wake_prefault();
	} else if (tt__clean_chunk(slot, oldest)) {
		oldest->next = tt__free_chunks;
		tt__free_chunks = oldest;
	} /* else an event in it is still being written: the chunk is left alone */
	return 1;
}

/* Arena lock held. Leaves the current chunk (its size then says where its records
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
	if (slot->chunks < tt__config.chunk_budget) {
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
	if (!chunk) {
		slot->drop_cause = cause;
		/* Dropped events go on into a scratch chunk of the thread's own (slow_path.c). */
		if (!slot->scratch && (slot->scratch = tt__chunk_alloc())) {
			slot->scratch->thread = slot->index;
			/* Not a chunk of kept records: a live file's reader skips it. */
			slot->scratch->size = 0;
		}
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

/* Arena lock held, signals blocked. A draining mode (stream): a thread that dropped
 * events because the drain fell behind records again once the drain freed a chunk. */
int tt__resume(struct tt__slot *slot)
{
	if (!tt__mode->drains || slot->drop_cause != TT_DROP_BEHIND ||
	    (slot->flags & TT__SLOT_EXITED) || slot->chunks >= tt__config.chunk_budget)
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
	sigset_t old;
	tt__block_signals(&old);
	pthread_mutex_lock(&tt__arena_mutex);
	__atomic_store_n(&slot->first, next, __ATOMIC_RELEASE);
	__atomic_store_n(&slot->chunks, slot->chunks - 1, __ATOMIC_RELEASE);
	if (recycle && !compacted) {
		chunk->next = tt__free_chunks;
		tt__free_chunks = chunk;
	}
	/* A thread dropping events for want of a chunk takes the slow path at its next
	 * event, which gives it this one. */
	if ((__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_EXHAUSTED) &&
	    slot->drop_cause == TT_DROP_BEHIND &&
	    __atomic_load_n(&slot->hot->limit, __ATOMIC_ACQUIRE) != TT__LIMIT_OFF)
		__atomic_store_n(&slot->hot->limit, TT__LIMIT_SLOW, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&tt__arena_mutex);
	tt__restore_signals(&old);
	if (recycle && compacted)
		free(chunk);
}

void tt__chunk_extent(const struct tt__slot *slot, const struct tt__chunk *chunk,
		      const struct tt_record **begin, const struct tt_record **end)
{
	const struct tt_record *first = (const struct tt_record *)(chunk + 1);
	const struct tt_record *last = (const struct tt_record *)((const char *)chunk + chunk->size);
	if (!__atomic_load_n(&chunk->next, __ATOMIC_ACQUIRE)) {
		const struct tt__hot *hot = __atomic_load_n(&slot->hot, __ATOMIC_ACQUIRE);
		const struct tt_record *cursor =
			(const struct tt_record *)__atomic_load_n(&hot->cursor, __ATOMIC_ACQUIRE);
		if (cursor >= first && cursor < last)
			last = cursor;
	}
	/* Space reserved by an event that did not fit at the end of the chunk, or not
	 * yet written, is all zero. */
	while (last > first && last[-1].word == 0)
		last--;
	*begin = first;
	*end = last;
}
