/* The hot path's table, the threads' slots and chunks, and the slow path the emitters
 * jump to when the common case does not hold. */
#include <errno.h>
#include <intrin.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "portable/portable.h"

struct tt__hot tt__tls_table[TT__TABLE_SIZE];
struct tt__hot_global tt__hot_global;

/* Lock held: the limit the slot's state says, and the count of tagged limits that
 * the hot path checks before its clock. */
void tt__set_limit(struct tt__slot *slot)
{
	char *limit = slot->chunk_end;
	if (slot->paused)
		limit = TT__LIMIT_OFF;
	else if (!slot->chunk_end)
		limit = TT__LIMIT_DROP;
	int tagged = limit == TT__LIMIT_OFF || limit == TT__LIMIT_DROP;
	if (tagged != slot->tagged) {
		if (tagged)
			__atomic_add_fetch(&tt__hot_global.unusual, TT__HOT_TAGGED, __ATOMIC_RELAXED);
		else
			__atomic_sub_fetch(&tt__hot_global.unusual, TT__HOT_TAGGED, __ATOMIC_RELAXED);
		slot->tagged = tagged;
	}
	__atomic_store_n(&slot->hot->limit, limit, __ATOMIC_RELEASE);
}

const struct tt_record *tt__chunk_end(const struct tt__slot *s, const struct tt__chunk *c)
{
	const char *end = (const char *)c + c->size;
	if (c == s->current && s->chunk_end) {
		const char *cursor = __atomic_load_n(&s->hot->cursor, __ATOMIC_ACQUIRE);
		if (cursor < end) /* (past it: a reservation that did not fit) */
			end = cursor;
	}
	return (const struct tt_record *)end;
}

void tt__chunk_close(struct tt__slot *slot)
{
	if (!slot->current || !slot->chunk_end)
		return;
	/* (a reservation that failed moved the cursor past the end until its slow path) */
	char *end = slot->hot->cursor < slot->chunk_end ? slot->hot->cursor : slot->chunk_end;
	slot->current->size = (uint32_t)(end - (char *)slot->current);
}

/* tt-prefault keeps the arena faulted in past the next chunk, so that a thread taking
 * a chunk never waits for its pages (a thread faulting its own pages in cost 0.4 x
 * RDTSC an event under Wine, 0.6 x on fresh pages measured alone; pages faulted in
 * before cost nothing). Large pages need a privilege (Wine refuses them), so each
 * 4 KiB page is a fault: the window is what the threads took in about the last
 * TT__PREFAULT_MEMORY_NS, as on Linux (core/arena.c), so that a burst like the last
 * ones finds its memory ready (a fixed 16 MiB was used up within one benchmark
 * round: event_warm_ns 1.4-1.9 x RDTSC). Never more than the arena already used, nor
 * beyond TT__PREFAULT_AHEAD_MAX; faulted in steps of TT__PREFAULT_STEP. */
#define TT__PREFAULT_AHEAD_MIN (16u << 20)
#define TT__PREFAULT_AHEAD_MAX (256u << 20)
#define TT__PREFAULT_MEMORY_NS 100000000
#define TT__PREFAULT_STEP (1u << 20)

static char *tt__arena_base;
static size_t tt__prefault_ahead = TT__PREFAULT_AHEAD_MIN; /* atomic: the window */

/* tt-prefault's: what the threads took lately, decaying over TT__PREFAULT_MEMORY_NS. */
static struct {
	char *next;
	int64_t ns;
	double bytes;
} tt__recent_use;

static size_t tt__prefault_window(char *next)
{
	int64_t now_ns = tt_os_monotonic_ns();
	double kept = 1.0 - (double)(now_ns - tt__recent_use.ns) / TT__PREFAULT_MEMORY_NS;
	tt__recent_use.bytes = tt__recent_use.bytes * (kept > 0 ? kept : 0) + (double)(next - tt__recent_use.next);
	tt__recent_use.next = next;
	tt__recent_use.ns = now_ns;
	double ahead = tt__recent_use.bytes;
	if (ahead > (double)(next - tt__arena_base))
		ahead = (double)(next - tt__arena_base);
	if (ahead > TT__PREFAULT_AHEAD_MAX)
		ahead = TT__PREFAULT_AHEAD_MAX;
	if (ahead < TT__PREFAULT_AHEAD_MIN)
		ahead = TT__PREFAULT_AHEAD_MIN;
	__atomic_store_n(&tt__prefault_ahead, (size_t)ahead, __ATOMIC_RELAXED);
	return (size_t)ahead;
}

/* Never takes the lock: a thread ExitProcess ends while it holds it would keep the
 * exit's dump waiting for ever. */
static void *tt__prefault(void *unused)
{
	(void)unused;
	for (;;) {
		uint32_t wanted = __atomic_load_n(&tt__run.prefault_wanted, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&tt__run.ending, __ATOMIC_ACQUIRE))
			return NULL;
		char *from = __atomic_load_n(&tt__run.ready, __ATOMIC_ACQUIRE);
		char *next = __atomic_load_n(&tt__run.next, __ATOMIC_RELAXED);
		size_t ahead = tt__prefault_window(next);
		if (from >= tt__run.arena_end || from - next >= (ptrdiff_t)ahead) {
			tt_os_wait(&tt__run.prefault_wanted, wanted, 100 * 1000000);
			continue;
		}
		size_t step = (size_t)(tt__run.arena_end - from) < TT__PREFAULT_STEP
				      ? (size_t)(tt__run.arena_end - from)
				      : TT__PREFAULT_STEP;
		/* (a chunk in it handed out meanwhile is committed by the slow path too, which
		 * changes nothing the thread writes) */
		if (tt_os_commit(from, step) != 0)
			return NULL; /* (the slow path commits what it takes) */
		__atomic_store_n(&tt__run.ready, from + step, __ATOMIC_RELEASE);
	}
}

void tt__prefault_start(void)
{
	tt__run.ready = tt__arena_base = tt__recent_use.next = tt__run.next;
	tt__recent_use.ns = tt_os_monotonic_ns();
	if (tt__thread_start(tt__prefault) != 0)
		fprintf(stderr, "ticktrace: no thread to fault buffers in ahead: each thread does "
				"as it takes a chunk\n");
}

/* Lock held: `size` bytes of the arena, faulted in (chunks and blocks of slots), or
 * NULL once it is used up. */
static void *tt__arena_take(size_t size)
{
	if (tt__run.arena_end - tt__run.next < (ptrdiff_t)size)
		return NULL;
	char *ready = __atomic_load_n(&tt__run.ready, __ATOMIC_ACQUIRE);
	if (tt__run.next + size > ready && tt_os_commit(tt__run.next, size) != 0)
		return NULL;
	void *at = tt__run.next;
	__atomic_store_n(&tt__run.next, tt__run.next + size, __ATOMIC_RELAXED);
	if (ready - tt__run.next < (ptrdiff_t)(__atomic_load_n(&tt__prefault_ahead, __ATOMIC_RELAXED) / 2)) {
		__atomic_add_fetch(&tt__run.prefault_wanted, 1, __ATOMIC_RELEASE);
		tt_os_wake(&tt__run.prefault_wanted);
	}
	return at;
}

/* Lock held: a chunk of the live file (live.c), its mappings made TT__LIVE_GROW at a
 * time; NULL once the file cannot grow (the events counted as dropped for want of
 * memory). */
static void *tt__live_take(void)
{
	static char *next, *end; /* mapped, not handed out yet */
	static uint64_t mapped;
	if (next == end) {
		char *at = tt_os_file_map(&tt__run.live_file, TT__LIVE_CHUNKS_AT + mapped, TT__LIVE_GROW);
		if (!at)
			return NULL;
		mapped += TT__LIVE_GROW;
		next = at;
		end = at + TT__LIVE_GROW;
	}
	void *chunk = next;
	next += TT__CHUNK_SIZE;
	return chunk;
}

struct tt__chunk *tt__chunk_take(void)
{
	struct tt__chunk *chunk = tt__run.free_chunks;
	if (chunk) {
		tt__run.free_chunks = chunk->next;
		memset(chunk, 0, sizeof *chunk);
		return chunk;
	}
	return tt__run.live ? tt__live_take() : tt__arena_take(TT__CHUNK_SIZE);
}

/* Lock held, mode ring, a thread whose budget is used up: its oldest chunk, its
 * events counted as overwritten, zeroed (a live file's reader takes a chunk's records
 * up to its last not zero), for it to record into again. (Zeroed here, on the
 * thread's slow path: 64 KiB a chunk, ~1 ns an event; Linux's tt-clean does it
 * aside.) */
static struct tt__chunk *tt__recycle_oldest(struct tt__slot *slot)
{
	struct tt__chunk *oldest = slot->first;
	slot->first = oldest->next;
	slot->chunks--;
	const struct tt_record *r = (const struct tt_record *)(oldest + 1);
	const struct tt_record *end = (const struct tt_record *)((char *)oldest + oldest->size);
	for (; r < end; r++)
		if (TT_RECORD_IS_EVENT(TT_RECORD_KIND(r->word)))
			slot->dropped[TT_DROP_OVERWRITTEN]++;
	memset(oldest, 0, TT__CHUNK_SIZE);
	if (slot->seen_chunk == oldest) /* (the live file's look starts again from the first) */
		slot->seen_chunk = NULL;
	slot->wrapped = 1;
	return oldest;
}

/* Lock held: the slot's next chunk (0), or -ENOBUFS once its budget or the arena is
 * used up (its events dropped from then on, counted by the cause): mode stop's full
 * buffer, mode stream's chunks all waiting for tt-stream. */
static int tt__next_chunk(struct tt__slot *slot)
{
	tt__chunk_close(slot);
	int filled = slot->chunk_end != NULL;
	slot->chunk_end = NULL;
	struct tt__chunk *chunk = NULL;
	if (slot->chunks >= tt__run.chunk_budget && tt__run.mode == TT__MODE_RING && slot->first != slot->current)
		chunk = tt__recycle_oldest(slot);
	else if (slot->chunks >= tt__run.chunk_budget)
		slot->drop_cause = tt__run.mode == TT__MODE_STREAM ? TT_DROP_BEHIND : TT_DROP_FULL;
	else if (!(chunk = tt__chunk_take()))
		slot->drop_cause = TT_DROP_NO_MEMORY;
	if (tt__run.mode == TT__MODE_STREAM && filled) { /* (a full chunk to write) */
		__atomic_add_fetch(&tt__run.stream_wanted, 1, __ATOMIC_RELEASE);
		tt_os_wake(&tt__run.stream_wanted);
	}
	if (!chunk)
		return -ENOBUFS;
	chunk->thread = slot->index;
	chunk->size = TT__CHUNK_SIZE;
	if (slot->current)
		slot->current->next = chunk;
	else
		slot->first = chunk;
	slot->current = chunk;
	slot->chunks++;
	slot->hot->cursor = (char *)(chunk + 1);
	slot->chunk_end = (char *)chunk + TT__CHUNK_SIZE;
	return 0;
}

/* The slots' threads' handles, read and closed under it: tt-stream names a thread
 * without tt__run_lock while its exit closes its handle. Taken last, nothing under it. */
static struct tt_os_lock tt__thread_handles;

int tt__thread_name_now(const struct tt__slot *s, char *name, size_t size)
{
	tt_os_lock(&tt__thread_handles);
	int known = s->thread != 0;
	if (known)
		tt_os_thread_name_at(s->thread, name, size);
	tt_os_unlock(&tt__thread_handles);
	return known;
}

/* The thread is gone (its fiber local storage's callback, on the exiting thread): its
 * name kept, its entry free for the next thread, which may have the same TEB. */
static void tt__thread_exit(void *unused)
{
	(void)unused;
	char name[sizeof ((struct tt__slot *)0)->name];
	size_t len = tt_os_thread_name(name, sizeof name);
	tt_os_lock(&tt__run_lock);
	struct tt__slot *slot = tt__self(0);
	if (!slot) {
		tt_os_unlock(&tt__run_lock);
		return;
	}
	if (!slot->named && len)
		memcpy(slot->name, name, len + 1);
	tt_os_lock(&tt__thread_handles);
	if (slot->thread)
		tt_os_thread_close(slot->thread);
	slot->thread = 0;
	tt_os_unlock(&tt__thread_handles);
	tt__chunk_close(slot);
	slot->exited = 1;
	if (slot->tagged) /* (an exited thread's limit is nobody's business) */
		__atomic_sub_fetch(&tt__hot_global.unusual, TT__HOT_TAGGED, __ATOMIC_RELAXED);
	slot->tagged = 0;
	struct tt__hot *entry = slot->hot;
	slot->own = *entry;
	slot->hot = &slot->own;
	if (entry != &slot->own) {
		__atomic_store_n(&entry->limit, NULL, __ATOMIC_RELAXED);
		__atomic_store_n(&entry->owner, 0, __ATOMIC_RELEASE);
	}
	tt_os_unlock(&tt__run_lock);
}

/* Before tt__run_lock, never under it: the calling thread's exit watched (0), which
 * tt__self(1) then may register. Windows and Wine call the exit callbacks holding
 * their lock of fiber local storage, which FlsSetValue takes for a thread's first
 * value: set under tt__run_lock, a thread starting to record and one exiting (its callback
 * waiting for tt__run_lock) deadlocked. The callback finds its slot by the thread's key. */
int tt__watch_exit(void)
{
	static struct tt_os_exit_key key = {tt__thread_exit, 0};
	int err = tt_os_exit_key_make(&key);
	return err ? err : tt_os_exit_set(&key, &tt__run);
}

/* Lock held: the calling thread's slot, registered now; NULL without memory. */
static struct tt__slot *tt__register(uintptr_t key)
{
	static char *slots, *slots_end; /* the block slots are carved from */
	size_t size = (sizeof(struct tt__slot) + 63) & ~(size_t)63;
	if (slots_end - slots < (ptrdiff_t)size) {
		/* (not in a live file, whose reader takes every block there for a chunk) */
		char *block = tt__run.live ? tt_os_alloc(TT__CHUNK_SIZE) : tt__arena_take(TT__CHUNK_SIZE);
		if (!block)
			return NULL;
		slots = block;
		slots_end = block + TT__CHUNK_SIZE;
	}
	struct tt__slot *slot = (struct tt__slot *)slots;
	slots += size;
	slot->tid = tt_os_thread_id();
	slot->thread = tt_os_thread_open(slot->tid);
	/* Its name so far, kept: a thread TerminateThread ends runs no exit, and Wine
	 * forgets its name as it ends (most threads name themselves before they record). */
	tt_os_thread_name(slot->name, sizeof slot->name);
	slot->index = tt__run.threads++;
	struct tt__hot *entry = &tt__tls_table[(key >> TT__TABLE_INDEX_SHIFT) % TT__TABLE_SIZE];
	/* A live thread alike in the index keeps its entry: this one records through the
	 * slow path, into a copy of its own. */
	slot->hot = entry->owner ? &slot->own : entry;
	slot->hot->slot = slot;
	/* TICKTRACE_MIN_DUR's table, zeroed (without memory: its calls are all kept) */
	struct tt__filters *filters = tt__run.min_dur_ticks ? tt_os_alloc(sizeof *filters) : NULL;
	if (filters)
		filters->min_ticks = tt__run.min_dur_ticks;
	slot->hot->filters = filters;
	slot->hot->penter_base = slot->hot->penter_top = slot->penter;
	slot->hot->penter_end = slot->penter + TT__PENTER_DEPTH;
	if (tt__run.last)
		tt__run.last->next = slot;
	else
		tt__run.first = slot;
	tt__run.last = slot;
	tt__next_chunk(slot); /* (without one, its events are counted as dropped) */
	tt__set_limit(slot);
	__atomic_store_n(&slot->hot->owner, key, __ATOMIC_RELEASE);
	return slot;
}

struct tt__slot *tt__self(int make)
{
	uintptr_t key = tt_os_thread_key();
	for (struct tt__slot *s = tt__run.first; s; s = s->next)
		if (!s->exited && s->hot->owner == key)
			return s;
	return make ? tt__register(key) : NULL; /* (an exit unwatched would leave its entry to a later thread) */
}

/* The calling thread (which alone adds to its gap): `event` dropped, in its gap (the
 * scopes it begins and ends, where it ends), so that the file says where events were
 * lost: mode stream's gap begins its next chunk; mode stop's, where its thread never
 * records again, follows its records in the dump (dump.c), as Linux's does. Where the
 * hot path read no clock (its limit tagged), timed now if it is the gap's first and
 * every 64th after: what a dropped event costs stays small. */
static void tt__gap_drop(struct tt__slot *slot, const struct tt_record *event)
{
	struct tt_record timed = *event;
	struct tt_gap *g = &slot->gap;
	uint64_t last = g->last_tsc;
	if (!timed.tsc && (!g->count || !(g->count & 63)))
		timed.tsc = __rdtsc();
	tt_gap_add(g, &timed);
	if (!timed.tsc)
		g->last_tsc = last;
}

/* Lock held, mode stream, the calling thread: `event` dropped while its chunks wait
 * for tt-stream (TT_DROP_BEHIND); once tt-stream gave a chunk back, the gap's records
 * begin it, so that the file says where events were lost and how many as it goes (a
 * run TerminateProcess ends writes no totals), as Linux's slow path does. */
static void tt__drop_behind(struct tt__slot *slot, const struct tt_record *event)
{
	if (!event->tsc) /* (the gap's end as it is now) */
		tt__gap_drop(slot, &(struct tt_record){__rdtsc(), event->word});
	else
		tt__gap_drop(slot, event);
	if (tt__next_chunk(slot) != 0)
		return;
	struct tt_record gap[2];
	size_t n = tt_gap_records(&slot->gap, gap);
	memcpy(slot->hot->cursor, gap, n * sizeof *gap);
	slot->hot->cursor += n * sizeof *gap;
	slot->gap.count = 0;
	tt__set_limit(slot);
}

/* `size` bytes of records into the calling thread's chunk, one after another (a chunk
 * without room for all of them left for the next); `entry`: the hot path's, whose
 * reservation did not fit, else NULL. */
static void tt__record_in(struct tt__hot *entry, const struct tt_record *records, size_t size)
{
	if (!__atomic_load_n(&tt__run.started, __ATOMIC_ACQUIRE))
		tt__start();
	if (tt__run.off || (__atomic_load_n(&tt__hot_global.unusual, __ATOMIC_RELAXED) & TT__HOT_OFF))
		return;
	int watched = entry || tt__watch_exit() == 0;
	tt_os_lock(&tt__run_lock);
	struct tt__slot *slot = entry ? entry->slot : tt__self(watched);
	if (!slot) {
		tt__run.unregistered_dropped++;
		tt_os_unlock(&tt__run_lock);
		return;
	}
	struct tt__hot *hot = slot->hot;
	if (entry)
		hot->cursor -= size; /* the reservation that did not fit, undone */
	if (slot->paused) {
		tt_os_unlock(&tt__run_lock);
		return;
	}
	for (;;) {
		/* A stream's thread records again once tt-stream wrote a chunk of its: from
		 * its next event. */
		if (!slot->chunk_end) {
			slot->dropped[slot->drop_cause]++;
			if (slot->drop_cause == TT_DROP_BEHIND)
				tt__drop_behind(slot, records);
			else
				tt__gap_drop(slot, records);
			break;
		}
		char *where = hot->cursor;
		if ((size_t)(slot->chunk_end - where) >= size) {
			memcpy(where, records, size);
			hot->cursor = where + size;
			break;
		}
		tt__next_chunk(slot);
		tt__set_limit(slot);
	}
	tt_os_unlock(&tt__run_lock);
}

void tt__record_slow_win64(uint64_t word, uint64_t value, uint64_t tsc, struct tt__hot *entry)
{
	size_t size = TT_RECORD_HAS_VALUE(TT_RECORD_KIND(word)) ? 32 : 16;
	/* A thread that drops every event (its buffer full, or no memory): counted here,
	 * without the lock (60 ns an event under Wine with it, 6 x a warm event), by the
	 * thread itself, which alone sets its entry's limit and its cause; a dump reads
	 * the count. */
	if (entry && __atomic_load_n(&entry->limit, __ATOMIC_RELAXED) == TT__LIMIT_DROP &&
	    entry->slot->drop_cause != TT_DROP_BEHIND) {
		entry->cursor -= size; /* the reservation that did not fit, undone */
		if (!(__atomic_load_n(&tt__hot_global.unusual, __ATOMIC_RELAXED) & TT__HOT_OFF)) {
			/* (counted first: a dump that sees the gap sees its count: dump.c) */
			__atomic_add_fetch(&entry->slot->dropped[entry->slot->drop_cause], 1, __ATOMIC_RELAXED);
			tt__gap_drop(entry->slot, &(struct tt_record){tsc, word});
		}
		return;
	}
	struct tt_record records[2] = {{tsc, word}, {value, TT_RECORD_WORD(TT_REC_VALUE, 0)}};
	tt__record_in(entry, records, size);
}

void tt__record_many(const struct tt_record *records, size_t n)
{
	tt__record_in(NULL, records, n * sizeof *records);
}

/* Lock held: the thread's stack of the functions _penter entered, full, twice the
 * room (the first, TT__PENTER_DEPTH, in its slot; those after, its own pages); false
 * without memory. */
static bool tt__penter_grow(struct tt__slot *slot)
{
	struct tt__hot *hot = slot->hot;
	size_t depth = (size_t)(hot->penter_end - hot->penter_base);
	uintptr_t *grown = tt_os_alloc(2 * depth * sizeof *grown);
	if (!grown)
		return false;
	memcpy(grown, hot->penter_base, depth * sizeof *grown);
	if (hot->penter_base != slot->penter)
		tt_os_free(hot->penter_base, depth * sizeof *grown);
	hot->penter_base = grown;
	hot->penter_top = grown + depth;
	hot->penter_end = grown + 2 * depth;
	return true;
}

/* _penter's and _pexit's records: as the -finstrument-functions hooks', whose slow path
 * registers the thread. */
void tt__penter_slow(uint64_t fn)
{
	tt_os_lock(&tt__run_lock);
	struct tt__slot *slot = tt__self(0);
	if (slot && slot->hot->penter_top >= slot->hot->penter_end &&
	    (slot->hot->penter_top > slot->hot->penter_end || !tt__penter_grow(slot))) {
		/* deeper than its stack, which no memory grew: the exit could not be named,
		 * so neither is recorded: counted */
		slot->dropped[TT_DROP_NO_MEMORY]++;
		slot->hot->penter_top++;
		tt_os_unlock(&tt__run_lock);
		return;
	}
	tt_os_unlock(&tt__run_lock);
	__cyg_profile_func_enter((void *)(uintptr_t)fn, NULL); /* (registers the thread) */
	tt_os_lock(&tt__run_lock);
	slot = tt__self(0);
	if (slot)
		*slot->hot->penter_top++ = (uintptr_t)fn;
	tt_os_unlock(&tt__run_lock);
}

void tt__pexit_slow(void)
{
	tt_os_lock(&tt__run_lock);
	struct tt__slot *slot = tt__self(0);
	uintptr_t fn = 0;
	if (slot && slot->hot->penter_top > slot->hot->penter_base) {
		struct tt__hot *hot = slot->hot;
		hot->penter_top--;
		if (hot->penter_top < hot->penter_end)
			fn = *hot->penter_top;
		else
			slot->dropped[TT_DROP_NO_MEMORY]++;
	}
	tt_os_unlock(&tt__run_lock);
	if (fn)
		__cyg_profile_func_exit((void *)fn, NULL);
}
