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
	uint64_t size;          /* bytes, this header included: TT__CHUNK_SIZE, or less
	                         * once an exited thread's last chunk was compacted */
};
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
	uint32_t flags;   /* enum tt__slot_flags */
	uint32_t drop_cause; /* why events are dropped once EXHAUSTED */
	int named;        /* tt_thread_name() was called: keep `name` */
	char name[64];
	struct tt__slot *next; /* registry list, in registration order */
};
_Static_assert(offsetof(struct tt__slot, owner) == 0, "asm/record.asm SLOT_OWNER");
_Static_assert(offsetof(struct tt__slot, cursor) == 8, "asm/record.asm SLOT_CURSOR");
_Static_assert(offsetof(struct tt__slot, limit) == 16, "asm/record.asm SLOT_LIMIT");

enum tt__slot_flags {
	TT__SLOT_EXITED = 1u << 0,    /* the thread has exited */
	TT__SLOT_EXHAUSTED = 1u << 1, /* its budget of chunks is used up (mode stop) */
	TT__SLOT_PAUSED = 1u << 2,    /* tt_pause(): the thread records nothing for now */
};

/* Configuration, read from the environment once. */
struct tt__config {
	int off;                /* TICKTRACE=0: ticktrace does nothing this run */
	uint64_t buffer_events; /* TICKTRACE_BUFFER: events kept per thread */
	uint64_t chunk_budget;  /* chunks per thread that hold buffer_events */
};

extern struct tt__config tt__config TT__HIDDEN;
extern struct tt__slot *tt__tls_table[TT__TABLE_SIZE] TT__HIDDEN;
extern int tt__recording TT__HIDDEN; /* tt_enable/tt_disable; read with atomics */

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
extern int tt__dumps_running TT__HIDDEN; /* changed under the registry lock */
void tt__record_slow(uint64_t word, uint64_t value, uint64_t tsc, struct tt__slot *slot,
		     char *where) TT__HIDDEN;
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

/* writer.c */
int tt__write_file(const char *path) TT__HIDDEN;
/* Before the library loaded at `base` as `name` is unloaded (dlclose): keeps its
 * module entries and the call-site descriptors of it that records name, for the dump. */
void tt__retire_library(uintptr_t base, const char *name) TT__HIDDEN;
int tt__default_path(char *buf, size_t size) TT__HIDDEN;
/* `pattern` with %p replaced by the process id; 0 or -ENAMETOOLONG. */
int tt__expand_path(const char *pattern, char *buf, size_t size) TT__HIDDEN;
/* While held, exiting threads' chunks stay where they are (no compaction), so that
 * they can be read. */
void tt__hold_chunks(int hold) TT__HIDDEN;

/* report.c: TICKTRACE_REPORT, the flat profile at exit */
void tt__report_at_exit(void) TT__HIDDEN;

#endif /* TT_INTERNAL_H */
