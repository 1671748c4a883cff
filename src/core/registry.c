/* The thread registry: the TLS table the hot path reads, slot allocation, thread
 * exit, names. Everything here is the slow path: it may take microseconds, but it
 * must be safe when a signal handler records an event at any point. So it never
 * calls malloc (a handler may have interrupted malloc), and its lock is only held
 * with signals blocked. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/core_internal.h"

struct tt__hot tt__tls_table[TT__TABLE_SIZE] __attribute__((aligned(4096)));
struct tt__hot_global tt__hot_global;

static struct tt__lock tt__registry = TT__LOCK_INIT(TT__LOCK_REGISTRY);
/* In a fork's child, the thread that forked until it registers (TT__SLOT_FORKED) */
static uintptr_t tt__forker;
struct tt__slot *tt__registry_first;
static struct tt__slot *tt__registry_last;
static uint32_t tt__thread_count;

static struct tt__slab tt__filters_slab = {.slab_size = 256 * 1024}; /* registry lock */
static struct tt__slot *tt__free_slots; /* mode stream: slots of retired threads */

/* What the entry of a recycled slot names: probes go past it, and a new thread takes
 * the entry over. */
static struct tt__slot tt__retired_slot;

static uint32_t tt__table_home(uintptr_t tp)
{
	return (uint32_t)(tp >> TT__TABLE_INDEX_SHIFT) & (TT__TABLE_SIZE - 1);
}

void tt__registry_lock(struct tt_os_signals *old)
{
	tt_os_signals_block(old);
	tt__lock(&tt__registry);
}

void tt__registry_unlock(const struct tt_os_signals *old)
{
	tt__unlock(&tt__registry);
	tt_os_signals_restore(old);
}

/* Entries are never cleared, only taken over once their owner has exited, so a
 * probe sequence ends at the first entry never used. */
struct tt__slot *tt__find_slot(uintptr_t tp)
{
	uint32_t h = tt__table_home(tp);
	for (uint32_t i = 0; i < TT__TABLE_SIZE; i++) {
		struct tt__hot *entry = &tt__tls_table[(h + i) & (TT__TABLE_SIZE - 1)];
		struct tt__slot *slot = __atomic_load_n(&entry->slot, __ATOMIC_ACQUIRE);
		if (!slot)
			return NULL;
		if (__atomic_load_n(&entry->owner, __ATOMIC_ACQUIRE) == tp)
			return slot;
	}
	return NULL;
}

void tt__refresh_thread_name(struct tt__slot *slot)
{
	if (!slot->named)
		tt_os_thread_name(slot->name, sizeof slot->name);
}

/* How many times the exiting thread's exit ran: the platform calls the exits again,
 * up to TT_OS_EXIT_ROUNDS rounds, while one of them sets a key, as the registration
 * of an event recorded in a later exit (another key's) does. */
static __thread int tt__exit_rounds;

/* Runs in the exiting thread (its key's exit): from now on a thread that reuses this
 * stack, and so this thread pointer, is a new thread. */
static void tt__thread_exit(void *arg)
{
	struct tt__slot *slot = arg;
	tt__exit_rounds++;
	/* (its signals blocked once for both locks: the states' exit blocked them again,
	 * two system calls a thread more, some 3 to 6 us on this VM) */
	struct tt_os_signals old;
	tt__registry_lock(&old);
	tt__refresh_thread_name(slot);
	__atomic_or_fetch(&slot->flags, TT__SLOT_EXITED, __ATOMIC_RELEASE);
	__atomic_store_n(&slot->hot->owner, 0, __ATOMIC_RELEASE);
	tt__compact_exited(slot);
	tt__unlock(&tt__registry);
	tt__sched_thread_exited(slot);
	tt_os_signals_restore(&old);
	__atomic_or_fetch(&slot->flags, TT__SLOT_EXIT_TIMED, __ATOMIC_RELEASE);
	/* The mode's turn (mode stream: the drain thread writes its last records out and
	 * recycles the slot). */
	if (tt__mode->thread_exited)
		tt__mode->thread_exited(slot);
}

int64_t tt__thread_exit_ns(const struct tt__slot *slot)
{
	uint32_t flags = __atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE);
	if (!(flags & TT__SLOT_EXITED))
		return 0;
	return flags & TT__SLOT_EXIT_TIMED ? slot->sched.exited_ns : -1;
}

static struct tt_os_exit_key tt__exit_key = {tt__thread_exit, 0};

int tt__registry_init(void)
{
	return tt_os_exit_key_make(&tt__exit_key);
}

#ifdef _WIN32
/* A thread's entry (or its slot's own copy) given the slot's stack of the functions
 * _penter entered, empty. */
static void tt__penter_reset(struct tt__hot *hot, struct tt__slot *slot)
{
	hot->penter_base = hot->penter_top = slot->penter;
	hot->penter_end = slot->penter + TT__PENTER_DEPTH;
}
#endif

/* Registry lock held: gives the slot an entry, the first free one from its home. An
 * exited thread's slot that still has the entry keeps its cursor and limit in its
 * own copy, where whatever reads them finds them. */
static int tt__table_insert(struct tt__slot *slot, uintptr_t tp)
{
	uint32_t h = tt__table_home(tp);
	for (uint32_t i = 0; i < TT__TABLE_SIZE; i++) {
		uint32_t at = (h + i) & (TT__TABLE_SIZE - 1);
		struct tt__hot *entry = &tt__tls_table[at];
		struct tt__slot *previous = entry->slot;
		if (previous && __atomic_load_n(&entry->owner, __ATOMIC_ACQUIRE))
			continue;
		if (previous && previous != &tt__retired_slot) {
			previous->parked = *entry;
			__atomic_store_n(&previous->hot, &previous->parked, __ATOMIC_RELEASE);
		}
		entry->limit = NULL;
		entry->filters = slot->filters;
#ifdef _WIN32
		tt__penter_reset(entry, slot);
#endif
		__atomic_store_n(&entry->slot, slot, __ATOMIC_RELEASE);
		slot->hot = entry;
		slot->table_index = at;
		return 0;
	}
	return -ENOSPC;
}

void tt__registry_recycle(struct tt__slot *prev, struct tt__slot *slot)
{
	/* The sched drain walks the list too (sched.c): not while a slot leaves it. */
	struct tt_os_signals old, sched_old;
	tt__sched_lock(&sched_old);
	tt__sched_release(&slot->sched);
	tt__counters_forget(&slot->sched.counters, 1);
	tt__registry_lock(&old);
	/* Another thread may have taken its entry over since it exited. */
	struct tt__slot *expected = slot;
	__atomic_compare_exchange_n(&tt__tls_table[slot->table_index].slot, &expected,
				    &tt__retired_slot, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	struct tt__slot *next = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE);
	if (prev)
		__atomic_store_n(&prev->next, next, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&tt__registry_first, next, __ATOMIC_RELEASE);
	if (tt__registry_last == slot)
		tt__registry_last = prev;
	slot->next = tt__free_slots;
	tt__free_slots = slot;
	tt__registry_unlock(&old);
	tt__sched_unlock(&sched_old);
}

/* Registry lock held: a thread's scratch chunk (core.h), the last TT__SCRATCH_SIZE
 * bytes of a chunk-aligned block of its own, so that a stale limit the hot path read
 * never lets a record through into another chunk's memory. */
static struct tt__chunk *tt__scratch_new(void)
{
	static char *next, *end;
	if (next == end) {
		size_t size = 64 * TT__CHUNK_SIZE;
		char *p = tt_os_alloc(size + TT__CHUNK_SIZE);
		if (!p)
			return NULL;
		next = (char *)(((uintptr_t)p + TT__CHUNK_SIZE - 1) & ~(uintptr_t)(TT__CHUNK_SIZE - 1));
		end = next + size;
	}
	next += TT__CHUNK_SIZE;
	return (struct tt__chunk *)(next - TT__SCRATCH_SIZE);
}

/* Called by the slow path on a thread's first event. Returns NULL when the thread
 * cannot record (no memory, 65,536 live threads). */
struct tt__slot *tt__register_thread(uintptr_t tp)
{
	struct tt_os_signals old;
	tt__registry_lock(&old);
	tt__in_slow_path = 1;
	/* A signal handler on this thread may have registered it since we looked. */
	struct tt__slot *slot = tt__find_slot(tp);
	if (slot)
		goto out;
	/* Recorded in the last round of exits: no round is left to mark it exited, and a
	 * thread that reuses its stack would record into its slot under its tid. Its
	 * events are counted as dropped instead. */
	if (tt__exit_rounds >= TT_OS_EXIT_ROUNDS)
		goto out;
	slot = tt__free_slots;
	if (slot)
		tt__free_slots = slot->next;
	else
		slot = tt__slot_memory();
	if (!slot)
		goto out;
	struct tt__chunk *scratch = slot->scratch; /* a recycled slot's: use it again */
	struct tt__filters *filters = slot->filters;
	memset(slot, 0, sizeof *slot);
	slot->scratch = scratch ? scratch : tt__scratch_new();
	/* (tt-spikes and mode stream's drain read what can no longer be erased as threads
	 * record: tt__settled_end) */
	if (tt__config.min_dur_ticks && !filters)
		filters = tt__slab_alloc(&tt__filters_slab, sizeof *filters);
	if (filters) { /* (none: its calls are all recorded) */
		memset(filters, 0, sizeof *filters);
		filters->min_ticks = tt__config.min_dur_ticks;
	}
	slot->filters = filters;
	slot->hot = &slot->parked;
#ifdef _WIN32
	tt__penter_reset(&slot->parked, slot);
#endif
	if (tp == tt__forker) {
		slot->flags = TT__SLOT_FORKED;
		tt__forker = 0;
	}
	slot->tid = tt_os_thread_id();
	slot->index = tt__thread_count;
	tt__refresh_thread_name(slot);
	int inserted = tt__table_insert(slot, tp) == 0;
	if (!inserted || tt__slot_start(slot) < 0) {
		/* No entry, or no chunk (the run's memory budget used up): the slot serves
		 * again, its entry left to probes and new threads; a later event tries again. */
		if (inserted)
			__atomic_store_n(&tt__tls_table[slot->table_index].slot, &tt__retired_slot,
					 __ATOMIC_RELEASE);
		slot->next = tt__free_slots;
		tt__free_slots = slot;
		slot = NULL;
		goto out;
	}
	tt__sched_open(slot);
	if (tt__mode->identify)
		tt__mode->identify(slot);
	/* Last: the hot path takes an entry whose owner is the thread as complete. */
	__atomic_store_n(&slot->hot->owner, tp, __ATOMIC_RELEASE);
	__atomic_store_n(&tt__thread_count, tt__thread_count + 1, __ATOMIC_RELEASE);
	if (tt__registry_last)
		__atomic_store_n(&tt__registry_last->next, slot, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&tt__registry_first, slot, __ATOMIC_RELEASE);
	tt__registry_last = slot;
	tt_os_exit_set(&tt__exit_key, slot);
out:
	tt__in_slow_path = 0;
	tt__registry_unlock(&old);
	return slot;
}

uint32_t tt__registry_count(void)
{
	return __atomic_load_n(&tt__thread_count, __ATOMIC_ACQUIRE);
}

/* In the child after fork: only the forking thread exists, and its events so far
 * belong to the parent's file. */
void tt__registry_reset_after_fork(void)
{
	tt__forker = tt_os_thread_key();
	tt__lock_reset(&tt__registry);
	/* Zero pages again, rather than writing 4 MiB that were never touched. */
	tt_os_zero(tt__tls_table, sizeof tt__tls_table);
	tt__registry_first = tt__registry_last = NULL;
	tt__free_slots = NULL;
	/* The parent's threads' tags are gone with their slots. */
	__atomic_and_fetch(&tt__hot_global.unusual, TT__HOT_OFF, __ATOMIC_SEQ_CST);
	tt__thread_count = 0;
	tt_os_exit_set(&tt__exit_key, NULL);
}
