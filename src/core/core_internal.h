/* ticktrace runtime, layer core, the inside: what only the core's own files share
 * (the table's layout, the core's lock, the arena's chunks, a thread's chunk
 * changes, registration). The layers above include core.h, the core's face; each
 * file of core/ includes this one alone. Never installed. */
#ifndef TT_CORE_INTERNAL_H
#define TT_CORE_INTERNAL_H

#include "core/core.h"

/* The table the hot path indexes with bits 12..27 of the thread pointer
 * (asm/record.asm says why). */
#define TT__TABLE_BITS 16
#define TT__TABLE_SIZE (1u << TT__TABLE_BITS)
#define TT__TABLE_INDEX_SHIFT 12
extern struct tt__hot tt__tls_table[TT__TABLE_SIZE] TT__HIDDEN;

/* A thread's states (sched.c), in blocks of TT__SCHED_BLOCK_BYTES. */
struct tt__sched_block {
	struct tt__sched_block *next;
	uint32_t count;       /* states */
	uint32_t cap;         /* states it has room for */
	uint64_t lost_before; /* states lost before the first (format.h: tt_sched_info) */
	int64_t since_ns;     /* it holds every switch from then on (TT__SINCE_FIRST: its first) */
	uint64_t seq;         /* numbers each use: mode ring reuses its oldest block at once */
	struct tt_sched_state states[];
};

#define TT__SINCE_FIRST INT64_MAX
/* An entry of a block's states that is no state: switches the kernel lost there, `cpu`
 * of them (0: a loss already counted, tt__switches_told), after the state before it,
 * whose time its `ns` repeats. Never in a file: SCHED sections end at it. */
#define TT__SCHED_LOST TT_SCHED_UNKNOWN

/* Whether `size` bytes at `where` lie inside the live chunk that ends at `limit`
 * (NULL: none). The hot path makes the same check. */
static inline int tt__fits(const char *where, uint64_t size, const char *limit)
{
	uint64_t left = (uint64_t)(uintptr_t)limit - (uint64_t)(uintptr_t)where - size;
	return left <= TT__CHUNK_SIZE - sizeof(struct tt__chunk) - size;
}

/* state.c: the core's lock (base/base.h: TT__LOCK_CORE), taken with signals blocked
 * (the slow path may run in a signal handler); in a fork's child, reset (arena.c's
 * reset does). */
void tt__core_lock(int lock) TT__HIDDEN;
void tt__core_reset_after_fork(void) TT__HIDDEN;

/* registry.c */
void tt__refresh_thread_name(struct tt__slot *slot) TT__HIDDEN;

/* arena.c */
int tt__arena_full(void) TT__HIDDEN; /* the run's memory budget (TICKTRACE_MEMORY) ran out */
/* Where chunks come from (the mode's answer): a file the arena maps, or NULL. */
const struct tt_os_file *tt__chunks_file(void) TT__HIDDEN;
/* Core lock held, signals blocked: a zeroed chunk, from the free list or never used
 * before, or NULL when the arena (or the mode's file) has no more. */
struct tt__chunk *tt__chunk_alloc(void) TT__HIDDEN;
/* Registry lock held, signals blocked: memory for a new thread's slot, not zeroed (one
 * tt-prefault wrote through ahead, where it has one), or NULL. */
struct tt__slot *tt__slot_memory(void) TT__HIDDEN;
/* Core lock held: a zeroed chunk back to the free list. */
void tt__chunk_free(struct tt__chunk *chunk) TT__HIDDEN;
/* Bumped (core lock held) whenever a thread with no chunk may get one again: a chunk
 * freed, a drained one off a thread's budget, a dump's hold on the rings let go. A
 * thread that found none drops its events without the lock until it changes. */
extern uint32_t tt__chunk_returns TT__HIDDEN;
void tt__chunk_returned(void) TT__HIDDEN;
/* Core lock held: the thread numbered `thread` took a chunk (for tt-prefault, which
 * waits for a free core while every core records). */
void tt__chunk_taken(uint32_t thread) TT__HIDDEN;
/* tt-prefault's page faults of its faulting in (most of the process's faults while
 * threads take chunks: MADV_POPULATE_WRITE's count as its own), summed, for the
 * counters' fault gate, which leaves them out; tt__prefault_busy is odd while it
 * faults and the sum is not known (both atomic). */
extern uint32_t tt__prefault_busy TT__HIDDEN;
extern uint64_t tt__prefault_faults TT__HIDDEN;
/* Core lock held. Mode ring: the slot's oldest chunk, off its list, to count its
 * events as overwritten and zero before it is free again: queued for tt-clean, or
 * done here when the queue is full. */
void tt__chunk_to_clean(struct tt__slot *slot, struct tt__chunk *chunk) TT__HIDDEN;
int tt__reading_now(void) TT__HIDDEN; /* readers at work (tt__reading) */
/* Cleans the queued chunks now; whether some must wait for events being written. */
int tt__clean_queued(void) TT__HIDDEN;
/* Core lock held: memory for a compacted chunk, kept until the process ends. */
void *tt__compacted_alloc(size_t size) TT__HIDDEN;

/* overwritten.c: core lock held: a recycled chunk's `events` timed events, from
 * first_tsc to last_tsc, were overwritten. */
void tt__note_overwritten(struct tt__slot *slot, uint64_t events, uint64_t first_tsc,
			  uint64_t last_tsc) TT__HIDDEN;

/* chunks.c */
int tt__slot_start(struct tt__slot *slot) TT__HIDDEN; /* gives a new slot its first chunk */
/* Core lock held: the limit is the chunk's end while the thread may record; once its
 * buffer is used up, its scratch chunk's, tagged TT__LIMIT_DROP (or, without one,
 * TT__LIMIT_SLOW: every event to the slow path, which counts it); TT__LIMIT_OFF while
 * it may not record; NULL once it exited. */
void tt__publish_limit(struct tt__slot *slot) TT__HIDDEN;
/* Core lock held: leaves the current chunk for a new one (0), or, the thread's budget
 * used up, makes the thread drop events (-ENOBUFS). */
int tt__next_chunk(struct tt__slot *slot) TT__HIDDEN;
/* Core lock held, signals blocked. A thread that dropped events takes a new chunk
 * again (1): in a draining mode, once the drain freed one; in a ring, as soon as it
 * can recycle or get one. */
int tt__resume(struct tt__slot *slot) TT__HIDDEN;
/* Registry lock held, the thread exiting: moves its last records out of a mostly
 * empty chunk, which is recycled. Not while a dump may be reading them. */
void tt__compact_exited(struct tt__slot *slot) TT__HIDDEN;
extern int tt__dumps_running TT__HIDDEN; /* changed under the registry and core locks */

/* sched.c */
/* Registering the calling thread into `slot` (registry lock held, signals blocked):
 * takes the switches it asked for as it started, or has tt-sched ask the kernel for
 * them (a refusal is counted, said at exit, and the run goes on without). */
void tt__sched_open(struct tt__slot *slot) TT__HIDDEN;
/* The calling thread exits (its signals blocked): its last states into its store, its
 * event closed. */
void tt__sched_thread_exited(struct tt__slot *slot) TT__HIDDEN;
int tt__sched_any(void) TT__HIDDEN; /* whether a thread has its switches recorded */
/* The same lock, taken by a thread whose signals are all blocked (tt-sched). */
void tt__sched_lock_held_signals(void) TT__HIDDEN;
void tt__sched_unlock_held_signals(void) TT__HIDDEN;

/* counters.c (tt-sched, every `period_ns` at most while tt__counters_on): the counters
 * of the threads inside a scope open a while, read; how long until the next look is
 * due (a scope's first reading may be due sooner than period_ns). `alone`: the
 * counters are the states' only source (no switches): held to tt-sched's budget. */
int64_t tt__counters_tick(int64_t period_ns, int alone) TT__HIDDEN;
/* Its looks rest (every thread it reads quiet outside its scopes, read since): a
 * thread registering wakes it (tt__sched_rouse). */
extern int tt__counters_resting TT__HIDDEN;
/* The time of a thread's last record as of TSC `now` (0: none seen; none after `now`). */
uint64_t tt__counters_last(struct tt__slot *slot, uint64_t now) TT__HIDDEN;
extern long tt__cores TT__HIDDEN; /* arena.c: the cores the process may run on */
/* Lock held: a slot's readings let go, its files handed to tt-sched to close (`ours`:
 * they are this process's tt-sched's, not a fork's parent's; not ours, the scopes its
 * thread has open are not known from its records after). */
void tt__counters_forget(struct tt__counters *c, int ours) TT__HIDDEN;
/* In a fork's child: tt-sched's budget begins again. */
void tt__counters_after_fork(void) TT__HIDDEN;

#endif /* TT_CORE_INTERNAL_H */
