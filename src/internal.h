/* ticktrace runtime internals: shared by the files of src/, never installed. */
#ifndef TT_INTERNAL_H
#define TT_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "ticktrace.h"
#include "ticktrace/format.h"

#define TT__HIDDEN __attribute__((visibility("hidden")))

/* The table the hot path indexes with the top 16 bits of tp * TT__HASH_MULT. */
#define TT__TABLE_BITS 16
#define TT__TABLE_SIZE (1u << TT__TABLE_BITS)
#define TT__HASH_MULT UINT64_C(0x9E3779B97F4A7C15)

/* Buffers are made of chunks taken from one arena; a chunk starts with its header. */
#define TT__CHUNK_SIZE (64u * 1024u)
#define TT__CHUNK_RECORDS ((TT__CHUNK_SIZE - sizeof(struct tt__chunk)) / sizeof(struct tt_record))

struct tt__chunk {
	struct tt__chunk *next; /* the owning thread's next chunk, in recording order */
	uint32_t size;          /* bytes, this header included: TT__CHUNK_SIZE while the
	                         * thread records into it; then up to where its records
	                         * were reserved (compacted, or left for the next chunk) */
	uint32_t thread;        /* the owning thread's index */
};
/* A live file's chunks are the arena's (format.h). */
_Static_assert(sizeof(struct tt__chunk) == sizeof(struct tt_live_chunk) &&
		       offsetof(struct tt__chunk, size) == offsetof(struct tt_live_chunk, size) &&
		       offsetof(struct tt__chunk, thread) == offsetof(struct tt_live_chunk, thread_index) &&
		       TT__CHUNK_SIZE == TT_LIVE_CHUNK_SIZE,
	       "struct tt_live_chunk");
_Static_assert(sizeof(struct tt__chunk) == sizeof(struct tt_record), "records stay aligned");
_Static_assert(TT__CHUNK_SIZE == 65536 && sizeof(struct tt__chunk) == 16,
	       "asm/record.asm TT_CHUNK_SIZE and TT_CHUNK_HEADER");

/* Whether `size` bytes at `where` lie inside the live chunk that ends at `limit`
 * (NULL: none). The hot path makes the same check. */
static inline int tt__fits(const char *where, uint64_t size, const char *limit)
{
	uint64_t left = (uint64_t)(uintptr_t)limit - (uint64_t)(uintptr_t)where - size;
	return left <= TT__CHUNK_SIZE - sizeof(struct tt__chunk) - size;
}

/* Events lost in a row (tt__count_drop), until a record tells where they were. */
struct tt__gap {
	uint64_t count;             /* events lost; 0: no gap */
	uint64_t first_tsc, last_tsc;
	int32_t depth, min_depth;   /* scopes begun minus ended in the gap, and its lowest */
	int busy;                   /* being updated: a signal handler then only counts */
};

/* One recording thread. The first three fields are read by asm/record.asm. */
struct tt__slot {
	uintptr_t owner; /* the thread pointer (%fs:0x10); 0 once the thread exited */
	char *cursor;    /* where the next record goes (bumped by the hot path's xadd) */
	char *limit;     /* end of the current chunk, or NULL while the thread may not record */

	char *chunk_end;  /* end of the current chunk (limit without the on/off) */
	struct tt__chunk *first, *current;
	uint64_t chunks;  /* chunks taken, against the thread's budget */
	uint64_t dropped[TT_DROP_CAUSES];
	uint32_t tid;
	uint32_t index;   /* the thread's number, in registration order */
	uint32_t table_index; /* its entry in tt__tls_table */
	uint32_t flags;   /* enum tt__slot_flags */
	uint32_t drop_cause; /* why events are dropped once EXHAUSTED */
	int named;        /* tt_thread_name() was called: keep `name` */
	char name[64];
	struct tt__slot *next; /* registry list, in registration order */
	struct tt__gap gap;    /* events being dropped now (owner thread, slow path) */
	/* Mode stream, the drain thread's: how far `first` is written, how many records
	 * are, and whether the THREAD section is. */
	const struct tt_record *drained;
	uint64_t written;
	int streamed;    /* (also: described in the live file) */
	int drain_state; /* enum tt__drain_state: who may touch its last chunk */
	int64_t stalled_ns; /* mode stream: since when its oldest full chunk waits for an
	                     * event that is not written (CLOCK_MONOTONIC), or 0 */
	struct tt__chunk *live_chunk; /* live file: where the search for new sites stopped
	                               * (with `drained`) */
	struct tt__spikes_thread *spikes; /* mode stream, TICKTRACE_SPIKES: its detector */
};

/* Mode stream: the drain thread and the exiting thread that compacts its last chunk
 * take turns, neither waiting for the other. */
enum tt__drain_state {
	TT__DRAIN_IDLE,
	TT__DRAIN_READING,    /* the drain thread writes the slot's records */
	TT__DRAIN_COMPACTING, /* its thread, exiting, moves its last records */
};
_Static_assert(offsetof(struct tt__slot, owner) == 0, "asm/record.asm SLOT_OWNER");
_Static_assert(offsetof(struct tt__slot, cursor) == 8, "asm/record.asm SLOT_CURSOR");
_Static_assert(offsetof(struct tt__slot, limit) == 16, "asm/record.asm SLOT_LIMIT");

enum tt__slot_flags {
	TT__SLOT_EXITED = 1u << 0,    /* the thread has exited */
	TT__SLOT_EXHAUSTED = 1u << 1, /* no chunk to record into: events are dropped */
	TT__SLOT_PAUSED = 1u << 2,    /* tt_pause(): the thread records nothing for now */
	TT__SLOT_WRAPPED = 1u << 3,   /* mode ring: its oldest chunk was recycled */
	TT__SLOT_RUNTIME = 1u << 4,   /* ticktrace's own thread, shown in the file only */
	TT__SLOT_COMPACTED = 1u << 5, /* mode stream: its last chunk is a malloc'd copy */
};

enum tt__mode {
	TT__MODE_STOP,   /* a full buffer keeps the first events */
	TT__MODE_STREAM, /* a drain thread writes full chunks to the file as it runs */
	TT__MODE_RING,   /* a full buffer recycles its oldest chunk */
};

/* Configuration, read from the environment once. */
struct tt__config {
	int off;                /* TICKTRACE=0: ticktrace does nothing this run */
	uint64_t buffer_events; /* TICKTRACE_BUFFER: events kept per thread */
	uint64_t chunk_budget;  /* chunks per thread that hold buffer_events */
	enum tt__mode mode;     /* TICKTRACE_MODE */
};

extern struct tt__config tt__config TT__HIDDEN;
extern struct tt__slot *tt__tls_table[TT__TABLE_SIZE] TT__HIDDEN;
extern int tt__recording TT__HIDDEN; /* tt_enable/tt_disable; read with atomics */
extern int tt__forked TT__HIDDEN;    /* this process is a child forked after start */

/* Memory for the slow path, which must not call malloc (a signal handler may have
 * interrupted it): bump allocation from private mmap'd slabs, never freed. The
 * caller serializes calls on one slab. */
struct tt__slab {
	char *next, *end;
	size_t slab_size;
};
void *tt__slab_alloc(struct tt__slab *slab, size_t size) TT__HIDDEN;

/* init.c */
void tt__init(void) TT__HIDDEN; /* idempotent; every entry point calls it */
void tt__block_signals(sigset_t *old) TT__HIDDEN;
void tt__restore_signals(const sigset_t *old) TT__HIDDEN;
/* Starts one of ticktrace's own threads, with every signal blocked; with `wait`,
 * returns once it calls tt__thread_running (its first act). 0 or -errno. */
int tt__start_thread(pthread_t *thread, void *(*main)(void *), void *arg, int detached,
		     int wait) TT__HIDDEN;
void tt__thread_running(const char *name) TT__HIDDEN;
/* Around work of ticktrace's own threads that allocates: not while a fork runs. */
void tt__background_work(int begin) TT__HIDDEN;

/* registry.c: threads */
int tt__registry_init(void) TT__HIDDEN; /* 0 or -errno */
struct tt__slot *tt__find_slot(uintptr_t tp) TT__HIDDEN;
struct tt__slot *tt__register_thread(uintptr_t tp) TT__HIDDEN;
/* The calling thread's slot, registered now if need be; NULL when ticktrace is off or
 * the thread cannot have one. */
struct tt__slot *tt__own_slot(void) TT__HIDDEN;
struct tt__slot *tt__registry_head(void) TT__HIDDEN;
void tt__registry_lock(sigset_t *old) TT__HIDDEN;
void tt__registry_unlock(const sigset_t *old) TT__HIDDEN;
void tt__registry_reset_after_fork(void) TT__HIDDEN;
/* Mode stream: a retired thread's slot (all written, its chunks recycled) leaves the
 * registry list, after `prev`, for a new thread. Only the drain thread walks the list
 * while slots leave it. */
void tt__registry_recycle(struct tt__slot *prev, struct tt__slot *slot) TT__HIDDEN;
void tt__refresh_thread_name(struct tt__slot *slot) TT__HIDDEN;
uintptr_t tt__thread_pointer(void) TT__HIDDEN;

/* buffer.c: chunks, the arena and its prefault thread, the slow path */
int tt__arena_init(void) TT__HIDDEN;
void tt__arena_reset_after_fork(void) TT__HIDDEN;
int tt__slot_start(struct tt__slot *slot) TT__HIDDEN; /* gives a new slot its first chunk */
void tt__set_all_limits(void) TT__HIDDEN;            /* after tt_enable/tt_disable */
void tt__set_paused(struct tt__slot *slot, int paused) TT__HIDDEN; /* tt_pause/tt_resume */
/* Registry lock held, the thread exiting: moves its last records out of a mostly
 * empty chunk, which is recycled. Not while a dump may be reading them. */
void tt__compact_exited(struct tt__slot *slot) TT__HIDDEN;
extern int tt__dumps_running TT__HIDDEN; /* changed under the registry and arena locks */
void tt__record_slow(uint64_t word, uint64_t value, uint64_t tsc, struct tt__slot *slot,
		     char *where) TT__HIDDEN;
/* Mode stream, the drain thread: takes a written chunk off the front of the slot's
 * list and recycles it (or, without `recycle`, leaves it to whatever may still be
 * written into it). The chunk must have a successor, unless the thread exited. */
void tt__chunk_drained(struct tt__slot *slot, int recycle) TT__HIDDEN;
extern uint64_t tt__unregistered_drops TT__HIDDEN; /* events of threads without a slot */
/* Set while this thread runs a part of the slow path that may reach code which records
 * (initialization, through the C library, may call an interposed, instrumented malloc):
 * an event recorded from there would wait on a lock this thread holds, so it is dropped
 * and counted (TT_DROP_REENTERED). Set only with signals blocked (registration), so
 * that a signal handler's events are not taken for re-entry, or during start-up, where
 * a handler's event would wait on the same lock. */
extern __thread int tt__in_slow_path TT__HIDDEN __attribute__((tls_model("initial-exec")));
/* Records one event of n records (at most a chunk) for the calling thread, out of
 * line: TT_DESCRIBE's text. */
void tt__record_many(const struct tt_record *records, size_t n) TT__HIDDEN;
/* The records of a chunk that were written: [begin, end). */
void tt__chunk_extent(const struct tt__slot *slot, const struct tt__chunk *chunk,
		      const struct tt_record **begin, const struct tt_record **end) TT__HIDDEN;

/* clock.c */
void tt__anchor_now(struct tt_anchor *anchor) TT__HIDDEN;
void tt__clock_fill_header(struct tt_file_header *header) TT__HIDDEN;
extern struct tt_anchor tt__start_anchor TT__HIDDEN;

/* writer.c: the raw file, whole (tt_dump, at exit) or section by section (stream.c) */
int tt__write_file(const char *path) TT__HIDDEN;
/* Writes a file at `path` the same way (under a temporary name, renamed when
 * complete; a device or a pipe in place) with `write`, which returns 0 or -errno. */
struct tt__out;
typedef int (*tt__file_writer)(struct tt__out *out, void *arg);
int tt__write_file_with(const char *path, tt__file_writer write, void *arg) TT__HIDDEN;
/* Before the library loaded at `base` as `name` is unloaded (dlclose): keeps its
 * module entries and the call-site descriptors of it that records name, for the dump. */
void tt__retire_library(uintptr_t base, const char *name) TT__HIDDEN;
int tt__default_path(char *buf, size_t size) TT__HIDDEN;
/* `pattern` with %p replaced by the process id; 0 or -ENAMETOOLONG. */
int tt__expand_path(const char *pattern, char *buf, size_t size) TT__HIDDEN;
/* While held, threads' chunks stay where they are (no compaction, no recycling in
 * mode ring: a thread then grows), so that they can be read. (buffer.c) */
void tt__hold_chunks(int hold) TT__HIDDEN;

/* report.c: TICKTRACE_REPORT, the flat profile at exit */
void tt__report_at_exit(void) TT__HIDDEN;
/* TSC ticks to nanoseconds since the start anchor, at the rate measured up to now
 * (struct tt__report_clock as the clock). */
struct tt__report_clock {
	uint64_t tsc0;
	uint64_t hz;
};
int64_t tt__report_ns(void *clock, uint64_t tsc) TT__HIDDEN;
/* A call site's name, or a function's from the dynamic symbol table (analysis.h's
 * tt__analysis.name). */
struct tt__thread_analysis;
size_t tt__report_name(void *ctx, const struct tt__thread_analysis *th, uint64_t key, char *buf,
		       size_t cap) TT__HIDDEN;

/* spikes.c: mode stream, TICKTRACE_SPIKES: the drain thread runs the spike detector
 * on the records it writes and logs each spike as it ends */
int tt__spikes_start(void) TT__HIDDEN; /* 0 also when not asked for */
/* Records [begin, end) of a slot, just written. */
void tt__spikes_feed(struct tt__slot *slot, const struct tt_record *begin,
		     const struct tt_record *end) TT__HIDDEN;
void tt__spikes_retire(struct tt__slot *slot) TT__HIDDEN; /* its records are all written */
void tt__spikes_finish(void) TT__HIDDEN;
void tt__spikes_after_fork(void) TT__HIDDEN;

struct tt__out {
	int fd;
	int err; /* first error, as -errno */
	uint64_t offset; /* bytes written to fd, buffered ones included */
	size_t len;
	char buf[1 << 16];
};
void tt__out(struct tt__out *out, const void *data, size_t size) TT__HIDDEN;
void tt__out_flush(struct tt__out *out) TT__HIDDEN;
void tt__out_section(struct tt__out *out, uint32_t type, uint64_t size) TT__HIDDEN;
void tt__out_pad(struct tt__out *out, uint64_t size) TT__HIDDEN;
void tt__file_header(struct tt_file_header *header, uint32_t flags) TT__HIDDEN;
void tt__out_file_header(struct tt__out *out, uint32_t flags) TT__HIDDEN;
void tt__out_process(struct tt__out *out) TT__HIDDEN;
/* THREAD (or THREAD_TOTALS) for a slot with `records` records in the file; adds its
 * dropped counts to *dropped_total. */
void tt__out_thread_info(struct tt__out *out, uint32_t type, const struct tt__slot *slot,
			 uint64_t records, uint64_t *dropped_total) TT__HIDDEN;
/* One EVENTS section: records [begin, end) of the slot, the first being its record
 * number `first`. */
void tt__out_events(struct tt__out *out, const struct tt__slot *slot, uint64_t first,
		    const struct tt_record *begin, const struct tt_record *end) TT__HIDDEN;
/* The records that describe a slot's open gap (none: returns 0), for a last EVENTS
 * section. */
size_t tt__gap_records(const struct tt__slot *slot, struct tt_record out[2]) TT__HIDDEN;

/* The call sites already described in a file. */
/* The call sites and the instrumented functions (FUNC_ENTER addresses, tagged with
 * TT__FUNC_TAG) that records name. */
struct tt__site_set {
	uint64_t *slots; /* open addressing; 0 is empty */
	size_t cap, count;
	size_t funcs;    /* of count, functions */
};
#define TT__FUNC_TAG (UINT64_C(1) << 63)
/* Adds the sites and functions that records [begin, end) name to `set`; those that were not in it
 * go to `fresh` too (when not NULL). With stop_unwritten, stops at the first record
 * its thread has not written yet (all zero). Returns where it stopped, or NULL when
 * out of memory. */
const struct tt_record *tt__sites_add(struct tt__site_set *set, struct tt__site_set *fresh,
				      const struct tt_record *begin, const struct tt_record *end,
				      int stop_unwritten) TT__HIDDEN;
/* SITES, and FUNCS when the set holds functions. */
void tt__out_sites(struct tt__out *out, const struct tt__site_set *set) TT__HIDDEN;
void tt__site_set_clear(struct tt__site_set *set) TT__HIDDEN;
int tt__out_modules(struct tt__out *out) TT__HIDDEN;
void tt__out_end(struct tt__out *out, const struct tt_end_info *end) TT__HIDDEN;

/* signals.c: TICKTRACE_DUMP_SIGNAL, crashes, and the service thread that writes the
 * trace for them */
int tt__signals_init(void) TT__HIDDEN;
void tt__signals_after_fork(void) TT__HIDDEN;
extern int tt__crash_signal TT__HIDDEN; /* the signal the program is dying of, or 0 */

/* live.c: the buffers as a shared mapping of TICKTRACE_OUT.live (modes stop, ring) */
int tt__live_start(void) TT__HIDDEN;  /* 0 also when there is no live file */
int tt__live_fd(void) TT__HIDDEN;     /* the file the arena maps, or -1 */
uint64_t tt__live_chunks_at(void) TT__HIDDEN; /* where in it */
int tt__live_cover(uint64_t arena_bytes) TT__HIDDEN; /* arena lock held; 0 or -errno */
void tt__live_tick(void) TT__HIDDEN;  /* background thread: descriptions, end anchor */
void tt__live_finish(void) TT__HIDDEN; /* the raw file is written: no more live file */
int tt__live_after_fork(void) TT__HIDDEN; /* the child's own live file, or -1 */

/* stream.c: mode stream */
int tt__stream_start(void) TT__HIDDEN;  /* creates the file and the drain thread */
int tt__stream_finish(void) TT__HIDDEN; /* at exit: writes everything, then END */
void tt__stream_wake(void) TT__HIDDEN;  /* a chunk is full */
void tt__stream_after_fork(void) TT__HIDDEN;
/* tt_dump() in mode stream: what is recorded so far reaches the file, and with a
 * `path`, a copy of the file so far, ended as a complete one, goes there too. */
int tt__stream_flush(const char *path) TT__HIDDEN;

#endif /* TT_INTERNAL_H */
