/* ticktrace runtime, layer core: the recording itself. The table the hot path
 * (asm/record.asm) reads and the thread registry, the slow path, chunks and the arena.
 * The core calls nothing above it but the mode in use, through struct tt__mode_ops.
 * This is its face, what the layers above use; what only its own files share is in
 * core_internal.h. Never installed. */
#ifndef TT_CORE_H
#define TT_CORE_H

#include "base/base.h"

/* Buffers are made of chunks taken from one arena; a chunk starts with its header. */
#define TT__CHUNK_SIZE (64u * 1024u)
#define TT__CHUNK_RECORDS ((TT__CHUNK_SIZE - sizeof(struct tt__chunk)) / sizeof(struct tt_record))
/* A thread's scratch chunk (struct tt__slot): a fold of what it dropped costs a few
 * microseconds every 1,023 events. */
#define TT__SCRATCH_SIZE (16u * 1024u)

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

/* tt-sched's reading of a thread's records where its counters are read (counters.c):
 * which scopes are open, and since when, by the scope machine (common.h), over the
 * records it had not read yet. The outermost TT__SCOPES_KEPT are kept, deeper ones
 * left out (no allocation). */
#define TT__SCOPES_KEPT 16
struct tt__scopes_read {
	struct tt_scopes machine; /* its keys in `keys` (NULL: not begun) */
	uint64_t keys[TT__SCOPES_KEPT];
	uint64_t opened[TT__SCOPES_KEPT]; /* each open scope's first record's TSC */
	const struct tt__chunk *chunk;    /* where it stopped: this chunk, known by */
	struct tt_record first;           /* its first record (a ring recycles chunks), */
	uint32_t read;                    /* and its records read */
	/* records it never read came first (a ring's, mode stream's, a fork's parent's):
	 * the scopes open then are not known */
	int partial;
};

/* The sched lock's: a thread's counters, read by tt-sched (counters.c). */
struct tt__counters {
	struct tt_os_counters files; /* its counters opened (Linux: its /proc files, tt-sched's descriptors) */
	struct tt_schedstat_sample *at; /* the readings kept (mmap'd) */
	uint32_t n, cap;
	uint64_t base;     /* readings before at[0]: written (mode stream), or gone (ring) */
	uint64_t lost;     /* readings its full store had no room for (mode stop) */
	struct tt__scopes_read scopes;
	uint64_t watched;  /* the TSC of the record that opened the scope watched, or 0 */
	uint64_t outer;    /* and of the outermost watched since (a watch moves to a scope
	                    * inside it, and back out once that one ends), or 0 */
	int64_t since_ns, next_ns; /* when that scope opened; the next reading due */
	int64_t open_seen_ns; /* the last look that saw it open */
	uint64_t watch_from; /* its readings' count (base + n) as its watch began */
	uint32_t repaid; /* of them, paid back (a spike's: counters.c) */
	uint32_t on_room; /* begun past the budget, on what spikes slept through earned */
	int inside; /* its thread's last record stands in for it, inside a scope it opened */
	int64_t instead_ns; /* such a watch last begun past the budget (counters.c) */
	int gone;          /* its files could not be opened: it exited */
	uint64_t faults_seen; /* the process's faults before its own were last read (0: unknown) */
	/* Its scopes tt-sched left unread past its CPU budget (format.h:
	 * TT_SCHEDSTAT_BUDGET), and the last one's opening record's TSC */
	uint64_t unread, unread_scope;
	uint64_t unread_written; /* (as many as its last section written said) */
	int written; /* a section of it was written (of no reading, maybe) */
	uint32_t listed; /* its place in tt-sched's list of the threads it reads, + 1; 0: none */
	/* tt-sched's: its cursor at the last look, and its last record's TSC then */
	const char *seen_cursor;
	uint64_t seen_last;
	/* the thread's own reading as it started (sched.c), not in the store yet */
	struct tt_schedstat_sample early;
	int early_held;
	/* the ns of the readings it took itself (format.h: TT_SCHEDSTAT_OWN_FIRST): as
	 * it started, and the latest since (0: none) */
	int64_t own_first_ns, own_last_ns;
	/* it recorded while tt-sched did not follow its records (their share): the scopes
	 * open then are not known; and its last reading taken blind, whatever its scopes
	 * (counters.c: the clock's ns and the TSC then) */
	int unfollowed;
	int64_t blind_ns;
	uint64_t blind_tsc;
	const struct tt__chunk *blind_chunk; /* its current chunk then */
	uint64_t unmatched_seen; /* its records' ends that closed nothing, as of the last look */
};

/* The sched lock's: the kernel's ring for the thread, and the states taken from it. */
struct tt__sched {
	struct tt__counters counters;
	struct tt__switches sw; /* fd -1: none (not yet, refused, or the thread exited) */
	int wanted;             /* registered, not exited: tt-sched asks for its switches */
	int asked;              /* tt-sched did (once) */
	int ask_due;            /* it is to, counted in tt__sched_to_ask (lock held) */
	int on;                 /* it has states: TT_THREAD_SCHED */
	/* Without them, why (format.h: enum tt_no_states; the errno of a refusal): what
	 * its THREAD section says (tt__sched_no_states) */
	int none, none_err;
	uint64_t blocks;
	struct tt__sched_block *first, *last;
	uint64_t lost; /* lost since the last block began (for the next one) */
	int gap;       /* and a span not known before the next one's first state */
	int64_t since_ns; /* a first block holds every switch from then on: when the kernel
	                   * was asked, or the last state of the blocks written and gone */
	int said;         /* mode stream: a SCHED section of it is in the file */
	int64_t exited_ns; /* its exit, after its switches were read for the last time */
	int exit_said;     /* mode stream: a SCHED section says exited_ns */
};

/* Mode ring, while snapshots are taken: what the ring overwrote of a thread, so that
 * a snapshot counts what it lost of its window (overwritten.c). Entries in time
 * order, each spanning the chunks recycled within tt__overwrite_grain ticks of its
 * first, or more once merged; core lock held. */
#define TT__OVERWRITES 64
struct tt__overwrites {
	uint64_t total; /* timed events overwritten so far */
	uint32_t n;     /* entries, the oldest first */
	struct tt__overwrite {
		uint64_t first_tsc, last_tsc; /* of the events it overwrote */
		uint64_t before, after;       /* total before and after them */
	} at[TT__OVERWRITES];
};

/* The part of a recording thread's state that the hot path reads: an entry of
 * tt__tls_table, a cache line of its own, or the slot's own copy once a new thread
 * took the entry over. The first three fields are read by asm/record.asm. */
struct tt__hot {
	uintptr_t owner; /* tt_os_thread_key() (%fs:0x10); 0 once the thread exited */
	char *cursor;    /* where the next record goes (bumped by the hot path's xadd) */
	char *limit;     /* end of the current chunk, TT__LIMIT_OFF while the thread may not
	                  * record, NULL in an entry never used */
	struct tt__slot *slot; /* the rest; a tombstone once recycled; NULL: never used */
	struct tt__filters *filters; /* TICKTRACE_MIN_DUR: the thread's, read by the exit
	                              * hooks; NULL: none */
#ifdef _WIN32
	/* MSVC's /Gh /GH hooks (asm/penter_win64.asm): the functions _penter entered, for
	 * _pexit to name, a stack _penter's slow path grows as calls nest deeper; top
	 * counts on past end while they nest deeper than memory let it grow. Set up at
	 * registration from the slot's own (penter). (Linux's entry leaves these bytes
	 * free.) */
	uintptr_t *penter_top, *penter_end, *penter_base;
#endif
} __attribute__((aligned(64)));

/* (struct tt__filters, TICKTRACE_MIN_DUR's table: sections/sections.h) */
/* Tags in a limit's low bits (asm/record.asm): recording off (the hot path returns at
 * once), or dropping (it writes into the scratch chunk whose end the limit is, without
 * a time). A dropping limit with no chunk sends every event to the slow path. */
#define TT__LIMIT_OFF ((char *)1)
#define TT__LIMIT_DROP 2u
#define TT__LIMIT_SLOW ((char *)(uintptr_t)TT__LIMIT_DROP)
#define TT__LIMIT_TAGS (TT__LIMIT_DROP | (uintptr_t)TT__LIMIT_OFF) /* asm/hot.inc TT_LIMIT_TAGS */
_Static_assert(offsetof(struct tt__hot, owner) == 0, "asm/record.asm HOT_OWNER");
_Static_assert(offsetof(struct tt__hot, cursor) == 8, "asm/record.asm HOT_CURSOR");
_Static_assert(offsetof(struct tt__hot, limit) == 16, "asm/record.asm HOT_LIMIT");
_Static_assert(offsetof(struct tt__hot, filters) == 32, "asm/hot.inc HOT_FILTERS");
_Static_assert(sizeof(struct tt__hot) == 64, "asm/record.asm HOT_SHIFT");
#ifdef _WIN32
_Static_assert(offsetof(struct tt__hot, penter_top) == 40 && offsetof(struct tt__hot, penter_end) == 48 &&
		       offsetof(struct tt__hot, penter_base) == 56,
	       "asm/penter_win64.asm HOT_PENTER_TOP, HOT_PENTER_END, HOT_PENTER_BASE");
/* The calls _pexit can name, nested, in a thread's slot, before its stack grows. */
#define TT__PENTER_DEPTH 1024
/* slow_path_windows.c: asm/record_win64.asm's slow path (entry NULL: the lookup
 * failed; else the thread's own, its cursor past the reservation that did not fit),
 * and _penter's and _pexit's (asm/penter_win64.asm) */
void tt__record_slow_win64(uint64_t word, uint64_t value, uint64_t tsc, struct tt__hot *entry) TT__HIDDEN;
void tt__penter_slow(uint64_t fn) TT__HIDDEN;
void tt__pexit_slow(void) TT__HIDDEN;
#endif

/* One recording thread. */
struct tt__slot {
	struct tt__hot *hot; /* its table entry, or &parked */
	struct tt__hot parked;

	char *chunk_end;  /* end of the current chunk (limit without the on/off) */
	struct tt__chunk *first, *current;
	uint64_t chunks;  /* chunks taken, against the thread's budget */
	/* Mode ring: chunks it took off the front of `first` to recycle them, ever: a
	 * chunk's place in the list, this count when it was first plus the chunks before
	 * it, tells a reader whether it is still there (tt__chunks_front). */
	uint64_t recycled;
	uint64_t dropped[TT_DROP_CAUSES];
	/* Of dropped[TT_DROP_BEHIND]: the records the output lost (a full disk, a file
	 * size limit, its descriptor taken), which the mode says with their cause. */
	uint64_t lost_by_output;
	uint32_t tid;
	uint32_t index;   /* the thread's number, in registration order */
	uint32_t table_index; /* its entry in tt__tls_table */
	uint32_t flags;   /* enum tt__slot_flags */
	int limit_tagged; /* its published limit is: counted in tt__hot_global */
	uint32_t drop_cause; /* why events are dropped once EXHAUSTED */
	int named;        /* tt_thread_name() was called: keep `name` */
	/* The record that opened its first scope or function (word 0: none), looked for
	 * in its first chunk as it leaves it (`opener_looked`, then set): a file whose
	 * records of it begin later names it as the others do (TT_SEC_THREAD_FIRST). */
	struct tt_record opener;
	int opener_looked;
	int opener_said; /* live file: in a THREAD_FIRST section */
	char name[64];
	struct tt__slot *next; /* registry list, in registration order */
	struct tt_gap gap;     /* events dropped (owner thread, slow path: tt__count_drop), up to the scratch */
	/* Once EXHAUSTED, events go on being written by the hot path, at its cost, into
	 * this scratch chunk of its own, which the slow path counts as dropped when it is
	 * full (slow_path.c); odd `scratch_seq` while it counts. Its TT__SCRATCH_SIZE
	 * bytes end a chunk-aligned block of address space given as the thread registers,
	 * outside the run's budget, so that a thread dropping for want of memory has it:
	 * its pages are faulted in only once the thread drops. */
	struct tt__chunk *scratch;
	uint32_t scratch_seq;
	/* Dropping without a scratch chunk (none could be mapped): tt__chunk_returns when
	 * the slow path last looked for a chunk under the lock; until it changes, each
	 * event is counted without the lock. */
	uint32_t returns_seen;
	struct tt__filters *filters; /* TICKTRACE_MIN_DUR (kept when the slot is recycled) */
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
	struct tt_record live_first;  /* live file: that chunk's first record then */
	/* live file: where its THREAD section's dropped counts are, and their sum as they
	 * were last written there (tt-live brings them up to date) */
	uint64_t live_dropped_at, live_dropped_said;
	struct tt__spikes_thread *spikes; /* mode stream, TICKTRACE_SPIKES: its detector */
	struct tt__sched sched;
	struct tt__overwrites overwrites;
	struct tt__chunk *deferred; /* recycled while read, to clean after (arena.c): */
	uint64_t deferred_count;    /* chunks linked from `deferred` on */
#ifdef _WIN32
	uintptr_t penter[TT__PENTER_DEPTH]; /* the first of its _penter stack (struct tt__hot) */
#endif
};

/* Mode stream: the drain thread and the exiting thread that compacts its last chunk
 * take turns, neither waiting for the other. */
enum tt__drain_state {
	TT__DRAIN_IDLE,
	TT__DRAIN_READING,    /* the drain thread writes the slot's records */
	TT__DRAIN_COMPACTING, /* its thread, exiting, moves its last records */
};

enum tt__slot_flags {
	TT__SLOT_EXITED = 1u << 0,    /* the thread has exited */
	TT__SLOT_EXHAUSTED = 1u << 1, /* no chunk to record into: events are dropped */
	TT__SLOT_PAUSED = 1u << 2,    /* tt_pause(): the thread records nothing for now */
	TT__SLOT_WRAPPED = 1u << 3,   /* mode ring: its oldest chunk was recycled */
	TT__SLOT_RUNTIME = 1u << 4,   /* ticktrace's own thread, shown in the file only */
	TT__SLOT_COMPACTED = 1u << 5, /* mode stream: its last chunk is a malloc'd copy */
	TT__SLOT_EXIT_TIMED = 1u << 6, /* exited, and its exit's time is set (sched.exited_ns) */
	/* a fork's child's thread that forked: its records begin inside the scopes it
	 * opened in the parent, whose beginnings are in the parent's file */
	TT__SLOT_FORKED = 1u << 7,
};

/* Configuration, read from the environment once. */
struct tt__config {
	int off;                /* TICKTRACE=0: ticktrace does nothing this run */
	uint64_t buffer_events; /* TICKTRACE_BUFFER: events kept per thread */
	uint64_t chunk_budget;  /* chunks per thread that hold buffer_events */
	uint64_t memory_bytes;  /* TICKTRACE_MEMORY: every thread's chunks together, at most */
	/* Of the arena, 1/memory_aside_part is kept out of the buffers, for the snapshots'
	 * copies (0: none; tt__arena_set_aside gives it back) */
	unsigned memory_aside_part;
	const struct tt__mode_ops *mode; /* TICKTRACE_MODE: tt__mode once started */
	int sched_off;          /* TICKTRACE_SCHED=0: no thread states */
	int sched_only;         /* TICKTRACE_SCHED=switches or schedstat: that source alone
	                         * (enum tt__sched_source); 0: the switches, the counters
	                         * beside them and where they are refused */
	uint64_t min_dur_ns;    /* TICKTRACE_MIN_DUR: shorter calls erased as they return */
	uint64_t min_dur_ticks; /* the same in TSC ticks; 0: nothing erased */
	int zero_markup;        /* the program links the patcher (pkg-config ticktrace-instrument) */
	int live;               /* TICKTRACE_LIVE=1: modes stop and ring's buffers in a live file */
};

extern struct tt__config tt__config TT__HIDDEN;
/* What the hot path must look at before it reads the clock, 0 almost always:
 * TT__HOT_OFF while recording is off for threads yet to register (TICKTRACE=0,
 * tt_disable), plus TT__HOT_TAGGED for each slot whose published limit is tagged (off
 * or dropping). While it is 0 no entry is tagged, and the hot path loads nothing of
 * the entry before RDTSC (asm/record.asm says why). A cache line of its own: every
 * event reads it. */
extern struct tt__hot_global {
	uint32_t unusual;
} __attribute__((aligned(64))) tt__hot_global TT__HIDDEN;
#define TT__HOT_OFF 1u
#define TT__HOT_TAGGED 2u
_Static_assert(offsetof(struct tt__hot_global, unusual) == 0 && TT__HOT_OFF == 1,
	       "asm/hot.inc HOT_UNUSUAL, TT_HOT_OFF");
extern int tt__recording TT__HIDDEN; /* tt_enable/tt_disable; read with atomics */
extern int tt__forked TT__HIDDEN;    /* this process is a child forked after start */
/* The program images this process ran before this one (exec keeps the pid): its files
 * are named apart, or this one's would replace theirs (lifecycle/exec.c). */
extern unsigned tt__exec_image TT__HIDDEN;

extern int tt__crash_signal TT__HIDDEN; /* the signal the program is dying of, or 0 */

/* The modes' interface (modes/): what the core and the lifecycle ask of the mode in
 * use, that is, where chunks come from, what a full chunk does, what a dump writes,
 * and what start-up, exit, a crash and fork do. A NULL member does nothing. */
struct tt__mode_ops {
	/* Before start-up only (lifecycle/start.c): starts ticktrace, which picks the
	 * mode. A thread's first event may come before the constructor ran. */
	void (*start)(void);
	/* Start-up, before the arena: where its chunks will be; it says what fails. */
	void (*prepare)(void);
	/* Start-up, the arena made: its threads and file; 0, or -errno, said: recording off. */
	int (*begin)(void);
	/* At exit or on a crash: the whole trace in its file, for good; 0 or -errno. */
	int (*finish)(void);
	/* In a forked child, after the core's reset: its threads and file, the child's own. */
	void (*after_fork)(void);
	/* What the raw file's header says of the mode (TT_FILE_RING). */
	uint32_t file_flags;
	/* Where chunks come from: a file of the platform's the arena maps from offset
	 * chunks_at() (NULL: private memory). Its I/O once started is done where the
	 * program cannot reach its descriptor: chunks_file_table, by tt-prefault (grows: 1)
	 * and tt-live as each starts, gives the thread a table of descriptors of its own
	 * that holds the file. cover, core lock held, no I/O: 0 where it holds the arena's
	 * first `arena_bytes`; else, where tt-prefault runs (`grows`), 1: it is asked to
	 * grow it (the caller waits: arena.c), or -errno where it cannot (said). grow,
	 * tt-prefault's alone: the file made to hold the arena's first `arena_bytes` and
	 * what the writers asked, 0 or -errno (said). In a forked child, a file of the
	 * child's own (0, or -1: none). */
	const struct tt_os_file *(*chunks_file)(void);
	uint64_t (*chunks_at)(void);
	void (*chunks_file_table)(int grows);
	int (*cover)(uint64_t arena_bytes, int grows);
	int (*grow)(uint64_t arena_bytes);
	int (*chunks_after_fork)(void);
	void (*tick)(void); /* thread tt-live, every 200 ms while chunks_file() */
	/* A thread registered (before its first record) or tt_thread_name() named it,
	 * registry lock held: who it is, where a SIGKILL leaves it (the live file). */
	void (*identify)(struct tt__slot *slot);
	/* What a full chunk does: the slot's thread moved on to a new one (core lock
	 * held, signals blocked); what a thread's exit does. */
	void (*chunk_full)(struct tt__slot *slot);
	void (*thread_exited)(struct tt__slot *slot);
	/* What a dump writes: tt_dump(path), or the default file (NULL); 0 or -errno.
	 * Called from any thread: by the service thread on a signal. */
	int (*dump)(const char *path);
	/* What the core does once a thread's budget of chunks is used up. It recycles the
	 * thread's oldest chunk (recycle_oldest: ring); or, where the mode drains chunks
	 * off the threads' lists as they record (drains: stream, tt__chunk_drained), the
	 * thread drops events (TT_DROP_BEHIND) until the drain frees one, and its last
	 * chunk is compacted into malloc'd memory that the drain frees; or else it keeps
	 * its first events (TT_DROP_FULL: stop). A draining mode's file is written by its
	 * drain thread: dump and finish only ask it to. */
	int recycle_oldest;
	int drains;
};
/* The mode in use; before start-up, the lifecycle's, whose only member is start. */
extern const struct tt__mode_ops *tt__mode TT__HIDDEN;

/* registry.c: threads */
int tt__registry_init(void) TT__HIDDEN; /* 0 or -errno */
struct tt__slot *tt__find_slot(uintptr_t tp) TT__HIDDEN;
struct tt__slot *tt__register_thread(uintptr_t tp) TT__HIDDEN;
/* The first slot of the registry list (registration order); each one's `next` goes on.
 * Inline, read by every layer that walks the threads (sched.c among them, which
 * registry.c calls). */
extern struct tt__slot *tt__registry_first TT__HIDDEN;
static inline struct tt__slot *tt__registry_head(void)
{
	return __atomic_load_n(&tt__registry_first, __ATOMIC_ACQUIRE);
}
/* Threads registered since the start (or the fork), those whose slots were retired since
 * too (mode stream): whether the run recorded anything. */
uint32_t tt__registry_count(void) TT__HIDDEN;
/* A thread's exit's time, as its states say it (monotonic ns): 0 where it runs or its
 * states were not wanted, -1 while it is exiting and the time is not set yet (a reader
 * that closes its open scopes at its exit waits for it). */
int64_t tt__thread_exit_ns(const struct tt__slot *slot) TT__HIDDEN;
void tt__registry_lock(struct tt_os_signals *old) TT__HIDDEN;
void tt__registry_unlock(const struct tt_os_signals *old) TT__HIDDEN;
void tt__registry_reset_after_fork(void) TT__HIDDEN;
/* Mode stream: a retired thread's slot (all written, its chunks recycled) leaves the
 * registry list, after `prev`, for a new thread. Only the drain thread walks the list
 * while slots leave it. */
void tt__registry_recycle(struct tt__slot *prev, struct tt__slot *slot) TT__HIDDEN;

/* arena.c: the arena and its threads (tt-prefault, tt-clean, tt-live) */
/* 0, -E2BIG: the address-space limit leaves no room (said), or -ENOMEM */
int tt__arena_init(void) TT__HIDDEN;
void tt__arena_reset_after_fork(void) TT__HIDDEN;
uint64_t tt__arena_bytes(void) TT__HIDDEN; /* the arena: the run's memory budget (as grown) */
/* Whether the arena stopped growing where the program left it no room (an address-space
 * limit: TT_FILE_GAVE_ROOM). */
int tt__arena_gave_room(void) TT__HIDDEN;
/* The arena's last `bytes` (whole chunks, never one taken) kept out of the buffers,
 * for memory the run takes beside them within the budget (the snapshots' copies);
 * tt__arena_init sets aside tt__config.memory_aside_part, before any chunk is taken;
 * 0 gives it back. Returns what is set aside. */
uint64_t tt__arena_set_aside(uint64_t bytes) TT__HIDDEN;
uint64_t tt__arena_set_aside_bytes(void) TT__HIDDEN;
/* overwritten.c: what the ring overwrote, for snapshots */
/* Ticks an entry of struct tt__overwrites spans at least; 0 (the default): none kept. */
extern uint64_t tt__overwrite_grain TT__HIDDEN;
/* What the ring overwrote of the slot's records from `from_tsc` to `to_tsc`: the
 * events, and the span of the entries they were noted in, said whole
 * (*lost_from_tsc at or before from_tsc, or the thread's first). 0 events: none. */
uint64_t tt__overwritten_in(struct tt__slot *slot, uint64_t from_tsc, uint64_t to_tsc,
			    uint64_t *lost_from_tsc, uint64_t *lost_to_tsc) TT__HIDDEN;
/* Readers that copy a ring's chunks while it goes on recycling (tt-spikes,
 * snapshots), between tt__reading(1) and tt__reading(0): every chunk they find keeps
 * its records until they are done (the chunks recycled meanwhile go to tt-clean's
 * queue after, and no thread's last chunk is compacted at its exit). 1 first cleans
 * the chunks recycled before, so that the slots' overwritten counts hold them;
 * TT__READING_UNCOUNTED leaves them to tt-clean (a reader that needs the counts only
 * where the ring took what it had not read: tt__recycled_count then; cleaning them
 * was a sixth of tt-spikes' CPU time in xz -T2, the ring's own work). Signals blocked
 * inside. */
#define TT__READING_UNCOUNTED 2
void tt__reading(int begin) TT__HIDDEN;
/* The chunks the rings recycled so far cleaned now, their events counted as
 * overwritten (mode ring; a reader's, after TT__READING_UNCOUNTED). */
void tt__recycled_count(void) TT__HIDDEN;
/* A reader's: the timed events from from_tsc to to_tsc of the slot's chunks recycled
 * since readers began, the first's and the last's times. */
uint64_t tt__deferred_events(struct tt__slot *slot, uint64_t from_tsc, uint64_t to_tsc,
			     uint64_t *first_tsc, uint64_t *last_tsc) TT__HIDDEN;

/* chunks.c: a thread's chunks */
void tt__set_all_limits(void) TT__HIDDEN;            /* after tt_enable/tt_disable */
void tt__set_paused(struct tt__slot *slot, int paused) TT__HIDDEN; /* tt_pause/tt_resume */
/* While held, threads' chunks stay where they are (no compaction, no recycling in
 * mode ring: a thread then grows), so that they can be read. */
void tt__hold_chunks(int hold) TT__HIDDEN;
/* The slot's first chunk and its place (slot->recycled then). A reader's chunk whose
 * place is `at` is still in the list while slot->recycled, read once it reads
 * (tt__reading: seq_cst, as the ring counts a chunk before it hands it on), is `at` or
 * less, unless its thread's exit moved it (compaction). */
const struct tt__chunk *tt__chunks_front(const struct tt__slot *slot, uint64_t *at) TT__HIDDEN;
/* Mode stream, the drain thread: takes a written chunk off the front of the slot's
 * list and recycles it (or, without `recycle`, leaves it to whatever may still be
 * written into it). The chunk must have a successor, unless the thread exited. */
void tt__chunk_drained(struct tt__slot *slot, int recycle) TT__HIDDEN;

/* extent.c: what a chunk holds, for its readers */
/* The records of a chunk that were written: [begin, end). Returns its successor as
 * it was when its end was found (NULL: its thread's last chunk then, which ends where
 * its cursor was): a reader that goes on goes on to that one, never to one loaded
 * after, which the thread may have moved to once it wrote past the end found (tt-spikes
 * skipped those records: a scope's end never fed, a spike made up). */
const struct tt__chunk *tt__chunk_extent(const struct tt__slot *slot, const struct tt__chunk *chunk,
					 const struct tt_record **begin, const struct tt_record **end) TT__HIDDEN;
/* Where a reader that follows a running thread (tt-spikes, mode stream's drain) may
 * stop in [begin, end) of its current chunk (sections.h: tt__before_enters, when the
 * thread erases). */
const struct tt_record *tt__settled_end(const struct tt__slot *slot, const struct tt__chunk *chunk,
					const struct tt_record *begin, const struct tt_record *end) TT__HIDDEN;

/* slow_path.c: the hot path's slow path, and events recorded out of line */
void tt__record_slow(uint64_t word, uint64_t value, uint64_t tsc, struct tt__hot *entry,
		     char *where) TT__HIDDEN;
/* A thread's dropped events so far, by cause, and its open gap (what it is dropping
 * now, with what its scratch chunk holds): what a file says of it. */
void tt__drops_now(const struct tt__slot *slot, uint64_t dropped[TT_DROP_CAUSES],
		   struct tt_gap *gap) TT__HIDDEN;
/* At exit: a line on stderr when events were dropped, how many, where, and the
 * setting that would have kept them. */
void tt__say_drops(void) TT__HIDDEN;
/* A slot about to be recycled (tt__registry_recycle), whose drops the exit still
 * says; and in a fork's child, the parent's forgotten (its retired threads' and
 * those of its threads that had no buffer). */
void tt__drops_retire(const struct tt__slot *slot) TT__HIDDEN;
void tt__drops_forget_parents(void) TT__HIDDEN;
/* Records one event of n records (at most a chunk) for the calling thread, out of
 * line: TT_DESCRIBE's text. The thread's first event is timed again (its time in
 * records[0] rewritten) after the thread's set-up. */
void tt__record_many(struct tt_record *records, size_t n) TT__HIDDEN;
extern uint64_t tt__unregistered_drops TT__HIDDEN; /* events of threads without a slot */
/* Set while this thread runs a part of the slow path that may reach code which records
 * (initialization, through the C library, may call an interposed, instrumented malloc):
 * an event recorded from there would wait on a lock this thread holds, so it is dropped
 * and counted (TT_DROP_REENTERED). Set only with signals blocked (registration), so
 * that a signal handler's events are not taken for re-entry, or during start-up, where
 * a handler's event would wait on the same lock. */
extern __thread int tt__in_slow_path TT__HIDDEN __attribute__((tls_model("initial-exec")));
/* Whether ticktrace is off this run (TICKTRACE=0, or start-up failed), starting it
 * first: a thread's first event or name may come before the constructor ran, which says
 * whether it is on. Not while start-up runs on this thread (tt__in_slow_path): it would
 * wait for itself. */
static inline int tt__started_off(void)
{
	const struct tt__mode_ops *mode = __atomic_load_n(&tt__mode, __ATOMIC_ACQUIRE);
	if (mode->start && !tt__in_slow_path)
		mode->start();
	return tt__config.off;
}
/* The records that describe a slot's open gap (none: returns 0), for a last EVENTS
 * section. */
size_t tt__gap_records(const struct tt__slot *slot, struct tt_record out[2]) TT__HIDDEN;

/* sched.c: thread states (TICKTRACE_SCHED) */
/* Start-up: the drain thread, unless `off`; `only`: one source (enum
 * tt__sched_source), or 0. 0 or -errno. */
int tt__sched_start(int off, int only) TT__HIDDEN;
/* The calling thread, as it starts (the program's threads, the first thread, a fork's
 * child; signals may come): asks the kernel for its switches, which its first event
 * takes (tt__sched_open), once tt-sched runs; nothing when states are off. `alone`: no
 * code of the program's runs meanwhile (the first thread, in the constructor; a fork's
 * child), which a descriptor taken for a moment then never deprives, below a small
 * limit too (base/fds.c; else tt-sched asks at its first event, in its own table).
 * `asked_ns`: the monotonic clock as pthread_create was called for it (0: not known),
 * which may stand for its counters' first reading (sched.c). */
void tt__sched_thread_starts(int alone, int64_t asked_ns) TT__HIDDEN;
/* At exit: which threads went without states and why, where more than the one said;
 * how many had tt-sched ask for theirs (not started by pthread_create). */
void tt__sched_say_refused(void) TT__HIDDEN;
/* A slot's THREAD flags for why it has no states (TT_THREAD_NO_STATES_FLAGS), 0 when
 * it has them. */
uint32_t tt__sched_no_states(const struct tt__slot *slot) TT__HIDDEN;
/* Whether the thread's counters are its states' source, or will be once tt-sched
 * looks: read where its switches are not (TICKTRACE_SCHED=schedstat, perf refused
 * but for TICKTRACE_SCHED=switches). */
int tt__sched_counters_stand_in(const struct tt__slot *slot) TT__HIDDEN;
/* The kernel's rings into the stores: of `only`, or of every thread (NULL), which
 * first asks for those of the threads not asked for yet. */
void tt__sched_drain(struct tt__slot *only) TT__HIDDEN;
void tt__sched_drain_slot(struct tt__slot *slot) TT__HIDDEN; /* the same, lock held */
/* The calling thread's switches drained before a dump at exit, what the kernel lost
 * of them said (it says so before the thread's next switch: the thread naps, a few
 * times at most, where its ring was found full). Lock not held. */
void tt__sched_settle_self(void) TT__HIDDEN;
/* Around reading or emptying stores (the writer), signals blocked. */
void tt__sched_lock(struct tt_os_signals *old) TT__HIDDEN;
void tt__sched_unlock(const struct tt_os_signals *old) TT__HIDDEN;
/* Lock held: the slot's states as SCHED sections say them (format.h: tt_sched_info),
 * one call each, in order. */
typedef void (*tt__sched_section_fn)(void *ctx, struct tt__slot *slot, uint64_t lost,
				     int64_t since_ns, const struct tt_sched_state *states, size_t n);
void tt__sched_sections(struct tt__slot *slot, tt__sched_section_fn fn, void *ctx) TT__HIDDEN;
/* Where a reader that leaves the states in place (modes stop and ring, the live spike
 * log) stopped: zeroed, from the first. */
struct tt__sched_cursor {
	const struct tt__sched_block *block;
	uint64_t seq;   /* the block's, when read: a block recycled since is another */
	uint32_t count; /* its states read */
};
/* Lock not held: drains the slot's switches, then gives fn the states after *at, as
 * tt__sched_sections would, and moves *at past them; up to when (monotonic ns) the
 * states given so far hold every switch of the thread (INT64_MIN: their last). */
int64_t tt__sched_read_new(struct tt__slot *slot, struct tt__sched_cursor *at, tt__sched_section_fn fn,
			void *ctx) TT__HIDDEN;
/* Lock held: the store's blocks back to the free list (written, or a fork's child). */
void tt__sched_release(struct tt__sched *s) TT__HIDDEN;
void tt__sched_after_fork(void) TT__HIDDEN; /* in the child, before the registry's reset */

enum tt__sched_source { TT__SCHED_SWITCHES = 1, TT__SCHED_SCHEDSTAT = 2 };

/* counters.c: the threads' counters, thread states' second source */
extern int tt__counters_on TT__HIDDEN;    /* tt-sched reads them (TICKTRACE_SCHED) */
extern int tt__counters_steal TT__HIDDEN; /* format.h: TT_SCHEDSTAT_STEAL */
extern uint64_t tt__counters_unread TT__HIDDEN; /* every thread's scopes left unread (budget) */
/* tt-sched's last look found it past its budget (sched lock): it begins to read no
 * scope shorter than TT__COUNTERS_LONG_NS, nor does a thread's own reading at its exit
 * one shorter than a spike (counters.c) */
extern int tt__counters_past TT__HIDDEN;
extern uint64_t tt__counters_kept TT__HIDDEN; /* readings taken, of every thread (sched lock) */
/* readings a thread takes itself not taken below a small limit (base/fds.c), said at exit */
extern unsigned tt__counters_few TT__HIDDEN;
/* tt-sched's reading of the threads' records, to follow their scopes (counters.c):
 * its CPU time for them at most this share of the process's (or
 * TT__COUNTERS_BUDGET_WALL_PCT of one CPU's since the run began where more), past
 * which the threads' last records stand in. Its own share, beside the budget's: it reads every record
 * (2 ns each here, where threads record 0.7 million events a second each, to 7 where
 * two record 15 million flat out: lines another core just wrote), and the budget would
 * go to that alone where threads record hard, no scope read. */
#define TT__SCOPES_PCT 0.5
/* Past its budget (below), a thread's outermost scope open this long is watched anyway,
 * read at its pace to its end (a spike: it pays its readings back): the budget went to
 * many short scopes nested in it, and a program's longest spikes got none (outside
 * recheck r41 F2: lbzip2's 4 longest, 0.85 to 1.43 s, its thread not read once in 2.1 s). */
#define TT__COUNTERS_LONG_NS 20000000
/* How long (ns) it did not follow them, past that share. */
int64_t tt__scopes_held_for(void) TT__HIDDEN;
/* A thread it did not follow the records of that went on recording (its scopes not
 * known) is read blind, whatever its scopes, each TT__COUNTERS_BLIND_NS while it records
 * and they are not followed (as near as a watched scope's first reading: a long scope
 * of short calls begun then, its last record never old, splits as finely), and once
 * they are again (or past that share) at a watched scope's pace, and as one begun
 * before ends (counters.c); the readings so taken, and tt-sched's CPU time for them and
 * the looks woken for them alone: that share's, not the budget's. */
#define TT__COUNTERS_BLIND_NS 2000000
/* A watched scope is read again this often, or each quarter of the time it has been
 * open (counters.c): what a spike's edges need is its first reading and the one after
 * it (the end's error is two thirds of the wait for that one); those between give the
 * pace near its end, and bound its CPU time there if the one after comes late (every
 * 4 ms, the benchmark's schedstat_overhead_pct was 4.2 %, now 3.3 %) */
#define TT__COUNTERS_BETWEEN_NS 8000000
extern uint64_t tt__counters_blind TT__HIDDEN;
extern int64_t tt__counters_blind_ns TT__HIDDEN;
/* tt-sched's budget for the counters (counters.c): its share of the process's CPU
 * time, or of one CPU's time since the run began where that is more (both, added, gave
 * a loaded machine's benchmark, its wall time long, up to twice either). What it did not
 * charge then (its wake-ups for looks with nothing to read, the threads' own last
 * readings) was some 0.4 % more in the benchmark: 0.5 % here made
 * schedstat_overhead_pct 1.2 to 1.7 %, 0.3 % 0.8 % (medians of 41 in turns, load 19 to
 * 35). Every wake-up is charged now (counters.c); the threads' last readings are not, and
 * past it read only a spike's end. */
#define TT__COUNTERS_BUDGET_PCT 0.3
#define TT__COUNTERS_BUDGET_WALL_PCT 0.1
/* and, added to them, its idle allowance: this share of the CPU time the process's
 * cores had in the run's first TT__COUNTERS_START_NS that the program neither used nor
 * waited for (the shares alone were spent some 60 ms into a short run: 12 to 18 of a
 * tester's 27 spikes had no split), kept after it, */
#define TT__COUNTERS_START_PCT 1.0
#define TT__COUNTERS_START_NS 1e9
/* and this share of what they had so since the run began, at most
 * TT__COUNTERS_IDLE_MAX_PCT of one CPU's time: what costs the program nothing, all run
 * long (a program that mostly sleeps, its spikes past the first second, had little
 * more than one CPU's share: a tester's 60 threads' sleeps of 5 to 10 ms, 45 of them
 * unsplit). One left running for hours, however many its cores, never sees it spend
 * more than 1 % of one CPU on them. Where a wake-up costs tt-sched 50 to 100 us of CPU
 * time (a VM's: its looks' main cost), a quarter of the start-up share, up to half a
 * percent of one CPU, left a fifth of the spikes of a program that mostly sleeps, its
 * two threads recording in bursts, unsplit past its first seconds (outside test ot30
 * F2: its looks, resting 2 to 8 ms after each burst, cost 0.7 % of one CPU). */
#define TT__COUNTERS_IDLE_PCT 1.0
#define TT__COUNTERS_IDLE_MAX_PCT 1.0
/* A spike of TT__COUNTERS_SPIKE_NS and more pays for its own readings: a watched scope
 * seen open that long gives the budget back what its first TT__COUNTERS_SPIKE_READINGS
 * readings cost (the mean of tt-sched's CPU time a reading: its looks and wake-ups
 * too), up to TT__COUNTERS_SPIKE_WALL_PCT of one CPU's time since the run began. The
 * shares above then bind only the readings of scopes that end shorter: on a loaded
 * machine, where the program's cores are never idle, they were spent within a few
 * hundred milliseconds and most spikes of 5 ms and more had no split (outside recheck
 * r37 N1: an 8-worker daemon 237 to 276 of 300; 8 workers here 179 to 198 of 240, at
 * load 21; each such spike needs two or three readings) */
#define TT__COUNTERS_SPIKE_NS 5000000
#define TT__COUNTERS_SPIKE_READINGS 4
#define TT__COUNTERS_SPIKE_WALL_PCT 1.0
/* and one its thread slept through (asleep half a spike's length or more between its
 * watch's first reading and its last) from a share it earns: TT__COUNTERS_SLEPT_PCT of
 * its length, up to TT__COUNTERS_SLEPT_WALL_PCT of one CPU's time all told; past the
 * budget, what is earned and not spent yet pays for the next scopes due (the program
 * sleeps: a spike's share, paid at its end, came too late for the next ones). Reading
 * a sleeping thread takes no CPU from it, and is what splits its spike; a spike's
 * readings and its part of the looks cost 40 to 100 us on a loaded VM (outside recheck
 * r47 F10: 64 threads asleep 5 to 14 ms in scopes one after another, 1,900 spikes a
 * second, 298 to 330 of their 384 unsplit on the 1 %; at 1 % of each one's length, the
 * first spikes' share paid less than the looks cost meanwhile, and none was read after) */
#define TT__COUNTERS_SLEPT_PCT 2
#define TT__COUNTERS_SLEPT_WALL_PCT 10.0
/* tt-sched's looks while it is over its budget and reads nothing, less often while
 * they find no thread new to mark (counters.c): a scope that opens and ends between
 * two is not seen, and not counted unread */
#define TT__COUNTERS_OVER_BUDGET_NS 10000000
#define TT__COUNTERS_OVER_BUDGET_MAX_NS 80000000
/* A scope this old is watched, its first reading taken then: tt-sched wakes for it
 * where a look saw the scope open before. A split's error is at most two thirds of
 * the gaps from its edges to the readings after them (common/analysis/states.c): a
 * spike of 5 ms, read 2 ms into it and within a look after it (1 ms, and 0.75 ms
 * more for a tt-sched kept off the CPUs), is split within half its length; a scope
 * shorter, most of them no spike (a 2 ms sleep, a mutex's wait), costs no reading
 * (sched.c says it where none was read). */
#define TT__COUNTERS_AFTER_NS TT_COUNTERS_AFTER_NS /* (common.h: the analysis says it too) */
/* Lock held: the slot's readings from the `*at`-th the thread had (0: from the first
 * kept), one call with those the store still holds and those lost before them; *at
 * moves past them. */
typedef void (*tt__counters_fn)(void *ctx, struct tt__slot *slot, uint64_t lost,
				const struct tt_schedstat_sample *readings, size_t n);
void tt__counters_sections(struct tt__slot *slot, uint64_t *at, tt__counters_fn fn, void *ctx) TT__HIDDEN;
/* The same, lock not held (the live spike log), with `read` a reading taken first
 * wherever tt-sched reads the thread's counters: the live detector asks for one as it
 * finds a spike among records it read (every spike then has a reading after its end,
 * however long it was and whether tt-sched watched it or not), not at each look (two
 * /proc files opened and read a thread each 20 ms: a sixth of its time in xz -T2). */
void tt__counters_read_new(struct tt__slot *slot, int read, uint64_t *at, tt__counters_fn fn,
			   void *ctx) TT__HIDDEN;
/* Lock held: a thread inside a scope watched has its counters read now (by the
 * calling thread: at a dump, or its exit), so that a reader has the reading after its
 * spike; the dumping thread's own slot as at its exit (below). */
void tt__counters_read_now(struct tt__slot *slot) TT__HIDDEN;
/* Lock held (let go while the thread reads its own counters, signals blocked), at a
 * thread's exit: as tt__counters_read_now, and where its counters are its source, a
 * reading where it recorded since its last. */
void tt__counters_read_at_exit(struct tt__slot *slot) TT__HIDDEN;
/* Lock held: the flags of the slot's readings (format.h: enum tt_schedstat_flags), as
 * its SCHEDSTAT sections and the runtime's analyses take them. */
uint32_t tt__counters_flags(const struct tt__slot *slot, const struct tt_schedstat_sample *readings,
			    size_t n) TT__HIDDEN;
/* Lock held: the readings given are written (mode stream): the store empties. */
void tt__counters_written(struct tt__slot *slot) TT__HIDDEN;

#endif /* TT_CORE_H */
