/* ticktrace's runtime on the platform layer alone (platform/platform.h), in modes stop,
 * ring and stream: the one Windows builds today. The hot path's table and the threads'
 * slots, their chunks, the slow path (record.c); the raw file (dump.c); the live file
 * (live.c); mode stream's drain (stream.c); start-up, exit and the public controls
 * (start.c). The Linux runtime (core/ and above) is not built on it yet. Never
 * installed; names tt__. */
#ifndef TT_PORTABLE_H
#define TT_PORTABLE_H

#include <stdint.h>
#include <stdio.h>

#include "common.h"
#include "sections/sections.h"
#include "ticktrace.h"

/* The hot path's view, as asm/hot.inc and core/core.h lay it out. */
#define TT__CHUNK_SIZE (64u * 1024u)
#define TT__TABLE_SIZE 65536u
#define TT__TABLE_INDEX_SHIFT 12
#define TT__LIMIT_OFF ((char *)1)
#define TT__LIMIT_DROP ((char *)2) /* dropping without a chunk: every event counted */
#define TT__HOT_OFF 1u
#define TT__HOT_TAGGED 2u

struct tt__chunk {
	struct tt__chunk *next; /* the thread's next, in recording order */
	uint32_t size;          /* bytes used, this header included (while recording into
	                         * it: up to the cursor) */
	uint32_t thread;
};

struct tt__slot;
struct tt__hot {
	uintptr_t owner; /* tt_os_thread_key() of its thread; 0: free */
	char *cursor;
	char *limit;
	struct tt__slot *slot;
	struct tt__filters *filters; /* TICKTRACE_MIN_DUR: the thread's, read by its
	                              * FUNC_EXIT hook (asm/record_win64.asm); NULL: none */
	/* MSVC's /Gh /GH hooks (asm/penter_win64.asm): the functions _penter entered, for
	 * _pexit to name, a stack the slow path grows as calls nest deeper; top counts on
	 * past end while they nest deeper than memory let it grow. */
	uintptr_t *penter_top, *penter_end, *penter_base;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct tt__hot) == 64 && __builtin_offsetof(struct tt__hot, owner) == 0 &&
		       __builtin_offsetof(struct tt__hot, cursor) == 8 &&
		       __builtin_offsetof(struct tt__hot, limit) == 16 &&
		       __builtin_offsetof(struct tt__hot, filters) == 32,
	       "asm/hot.inc HOT_OWNER, HOT_CURSOR, HOT_LIMIT, HOT_FILTERS, HOT_SHIFT");
_Static_assert(sizeof(struct tt__chunk) == 16, "asm/hot.inc TT_CHUNK_HEADER");
_Static_assert(__builtin_offsetof(struct tt__hot, penter_top) == 40 &&
		       __builtin_offsetof(struct tt__hot, penter_end) == 48 &&
		       __builtin_offsetof(struct tt__hot, penter_base) == 56,
	       "asm/penter_win64.asm HOT_PENTER_TOP, HOT_PENTER_END, HOT_PENTER_BASE");
#define TT__PENTER_DEPTH 1024 /* calls _pexit can name, nested, before the stack grows */

extern struct tt__hot tt__tls_table[TT__TABLE_SIZE];
extern struct tt__hot_global {
	uint32_t unusual; /* TT__HOT_OFF, plus TT__HOT_TAGGED per tagged limit */
} __attribute__((aligned(64))) tt__hot_global;

/* One recording thread. */
struct tt__slot {
	struct tt__hot *hot; /* its table entry, or &own when the entry is another thread's */
	struct tt__hot own;  /* (then every event comes to the slow path, which writes here) */
	char *chunk_end;     /* the limit while it records */
	struct tt__chunk *first, *current;
	uint64_t chunks;
	uint64_t dropped[TT_DROP_CAUSES];
	uint32_t tid, index;
	int exited, paused, tagged, named;
	int wrapped;    /* mode ring: its oldest chunk was recycled */
	int described;  /* stream, live file: its THREAD section is written */
	uint64_t written; /* stream: its records in the file */
	/* Where the live file's look for the sites its records use, or the stream's
	 * writing, stopped: a chunk of its, and the byte in it. */
	const struct tt__chunk *seen_chunk;
	uint32_t seen;
	uint32_t drop_cause; /* without a chunk: why (enum tt_drop_cause) */
	/* Mode stream: the events dropped since tt-stream last gave it a chunk back
	 * (TT_DROP_BEHIND), told in its records where they were as it gets one. */
	struct tt_gap gap;
	/* The live file: where its THREAD section's struct tt_thread_info is in the
	 * file (0: not written yet), whose dropped counts tt-live brings up to date. */
	uint64_t live_info_at;
	char name[64];
	/* The thread opened as it registered (tt_os_thread_open), until its exit: its name
	 * read through it (`name` holds the one it had as it registered, until its exit or
	 * tt_thread_name: that of a thread TerminateThread ended, no exit run). */
	uintptr_t thread;
	struct tt__slot *next; /* registration order */
	uintptr_t penter[TT__PENTER_DEPTH]; /* the functions _penter entered, innermost last */
};

/* TICKTRACE_MODE: what a thread whose budget is used up does. */
enum tt__mode {
	TT__MODE_STOP,   /* keeps its first events, drops the rest (counted) */
	TT__MODE_RING,   /* recycles its oldest chunk (its events counted as overwritten) */
	TT__MODE_STREAM, /* its full chunks are written to the file by tt-stream, and freed */
};

/* The longest TICKTRACE_OUT taken: a longer one is said, never cut to another name. */
#define TT__OUT_MAX 1023
/* A file's path: the start directory's and TICKTRACE_OUT's with its pid. */
#define TT__PATH_MAX (TT__OUT_MAX + 16 + 1024)

/* The runtime's own threads at most. */
#define TT__THREADS 4

/* The run's settings and state (start.c), under tt__run_lock but where said. */
struct tt__run {
	int started, off;        /* TICKTRACE=0 */
	enum tt__mode mode;
	int live;                /* the chunks are a live file's (live.c) */
	struct tt_os_file live_file;
	struct tt__chunk *free_chunks; /* stream: chunks written, for the next to take */
	uint32_t stream_wanted;  /* bumped to wake tt-stream (atomic) */
	uint64_t chunk_budget;   /* TICKTRACE_BUFFER in chunks, per thread */
	uint64_t min_dur_ns, min_dur_ticks; /* TICKTRACE_MIN_DUR; 0: every call kept */
	char *next, *arena_end;  /* the arena, reserved; taken up to `next` */
	char *ready;             /* faulted in up to there, by tt-prefault (atomic) */
	uint32_t prefault_wanted; /* bumped to wake tt-prefault (atomic) */
	struct tt__slot *first, *last;
	uint32_t threads;
	uint64_t unregistered_dropped;
	struct tt_anchor start;
	/* The file at the run's name as it started, then the start on the files' clock
	 * (tt_os_run_file's `before` and `since_ns`, by which tt__place_run judges one). */
	struct tt_os_file_stamp out_before;
	int64_t out_since_ns;
	struct tt_machine_info machine; /* as the run started: its host, its wall clocks */
	struct tt_process_info process; /* its parent and command line (PROCESS), read then:
	                                 * a crash's dump allocates nothing */
	char cmdline[4096];
	/* The runtime's threads (tt-prefault, tt-live, tt-stream, tt-sched: threads.c),
	 * ended at exit once `ending` is set (atomic). */
	struct tt_os_thread own[TT__THREADS];
	uint32_t owned, ending;
};
extern struct tt__run tt__run;
/* The run's lock (not tt__lock: base.h's function of that name, which the shared
 * layers' headers declare as portable/ comes onto them) */
extern struct tt_os_lock tt__run_lock;

/* record.c */
/* The slow path (asm/record_win64.asm): a thread's first event, a full chunk, another
 * thread in its entry, a full buffer. */
void tt__record_slow_win64(uint64_t word, uint64_t value, uint64_t tsc, struct tt__hot *entry);
/* Records that belong together (TT_DESCRIBE's and its text's), in one chunk. */
void tt__record_many(const struct tt_record *records, size_t n);
void tt__set_limit(struct tt__slot *slot); /* lock held: the limit its state says */
void tt__chunk_close(struct tt__slot *slot); /* lock held: the current chunk's size */
/* Lock held: the calling thread's slot; registered now with `make` (NULL without
 * memory), else NULL before its first event. `make` only once tt__watch_exit, called
 * before the lock, said 0. */
struct tt__slot *tt__self(int make);
int tt__watch_exit(void);

/* _penter and _pexit (asm/penter_win64.asm) when the thread's entry is not its own
 * (its first event, another thread in it) or calls nest deeper than its stack of
 * functions holds (_penter grows it): the function `fn` entered; a function returns. */
void tt__penter_slow(uint64_t fn);
void tt__pexit_slow(void);
/* The -finstrument-functions hooks (asm/record_win64.asm), which they record through. */
void __cyg_profile_func_enter(void *fn, void *call_site);
void __cyg_profile_func_exit(void *fn, void *call_site);

/* Start-up: tt-prefault, which faults the arena in ahead of the threads. */
void tt__prefault_start(void);

/* counters.c: each thread's counters (the platform's: tt_os_counters_*), read by
 * tt-sched (started here, unless TICKTRACE_SCHED=0) for spikes' split. tt__counters_copy (tt__run_lock held, at a
 * dump): slot s's readings, one more taken now, malloc'd, *n of them, and their
 * SCHEDSTAT section's head; NULL: none. */
void tt__counters_start(void);
int tt__counters_off(void); /* TICKTRACE_SCHED=0 */

/* Each thread's switches, base.h's tt__switches_* (base/switches_windows.c: an ETW
 * session of ticktrace's own, where the process is elevated), asked for and kept by
 * tt-sched. At a dump (tt__run_lock held): tt__switches_flush once, then per thread
 * tt__states_copy: its states, malloc'd, *n of them (NULL: none followed), their
 * SCHED section's head, and how many were lost after the last. */
struct tt_sched_state *tt__states_copy(const struct tt__slot *s, size_t *n, struct tt_sched_info *info,
				       uint64_t *lost_after);
struct tt_schedstat_sample *tt__counters_copy(const struct tt__slot *s, size_t *n,
					      struct tt_schedstat_info *info);

/* start.c */
void tt__start(void); /* once, from the constructor or a first event */

/* threads.c. Lock held: one of the runtime's threads, running main, which returns
 * once tt__run.ending is set (its wait woken: tt__nap, or its own word, which
 * tt__threads_end bumps). 0 or -errno. */
int tt__thread_start(void *(*main)(void *arg));
/* Waits `ns`, or less as the exit ends the runtime's threads: then 1. */
int tt__nap(int64_t ns);
/* At exit, once the run's file is written: the runtime's threads told to return and
 * waited for (a bound: said where one is left to ExitProcess). */
void tt__threads_end(void);
/* Whether the run's file has the pid in its name (TICKTRACE_OUT's %p, the default
 * name's, or .PID apart): another file there of that name was a process's the
 * system gave the same pid. */
int tt__out_pid_named(void);
/* Whether the run's file has the default name (ticktrace-%p.ttr: tt_os_run_file's
 * `keep`), and the line that says where it went where it was numbered as the process
 * began (another run's file of its pid there), said once. */
int tt__out_keep(void);
void tt__out_say_numbered(const char *path);
/* live.c: TICKTRACE_LIVE=1 (modes stop and ring): the chunks a shared mapping of
 * the file `path` (TICKTRACE_OUT.live), which outlives a process TerminateProcess
 * ends, from TT__LIVE_CHUNKS_AT on (tt__run.live_file: record.c maps them,
 * TT__LIVE_GROW at a time), with what describes them so far before; tt-live brings
 * the descriptions up to date. tt__live_start, lock held: made when wanted; where it
 * cannot be, said, and the buffers in memory. */
#define TT__LIVE_CHUNKS_AT (UINT64_C(16) << 20)
#define TT__LIVE_GROW (UINT64_C(16) << 20)
void tt__live_start(const char *path);
void tt__live_finish(void); /* the trace is written: the live file is removed */

/* stream.c: mode stream. tt__stream_start (lock held) creates the file `path` and
 * starts tt-stream; tt__stream_flush writes every full chunk now (tt_dump), and with
 * a `path`, a copy of the file so far there, ended as a complete run (-ECANCELED once
 * the stream ended); tt__stream_finish writes every thread's records and the file's
 * end, at exit or as the process dies of crash_signal. 0 or -errno. */
int tt__stream_start(const char *path);
int tt__stream_flush(const char *path);
int tt__stream_finish(int crash_signal);

/* record.c: the name slot s's thread has now, read through its handle (whatever
 * lock the caller holds): 1, or 0 where it has none (exited, or not opened). */
int tt__thread_name_now(const struct tt__slot *s, char *name, size_t size);
/* record.c: lock held, a chunk for a slot (from those stream wrote, the live file or
 * the arena), or NULL. */
struct tt__chunk *tt__chunk_take(void);

/* dump.c: every thread's records so far into `path` (written beside it, renamed); with
 * crash_signal, as the process dies of it (TT_FILE_CRASHED). With `run_size`, the
 * run's own file, `path` a buffer of that size: placed by tt__place_run. */
int tt__write_file(char *path, size_t run_size, int crash_signal);
/* The run's own file, complete or a stream's (held), under made->tmp, put at `path` by
 * the platform's rule (tt_os_file_place: beside another process's file there, with
 * the pid, said, as Linux's writer puts it): 0 or -errno, `path` where it went. */
int tt__place_run(struct tt_os_new_file *made, char *path, size_t size);
/* `path` written by `write` onto `out` (the caller's, which it alone uses meanwhile),
 * beside it under a temporary name and renamed (a device in place): 0 or -errno,
 * write's first. */
int tt__write_file_with(const char *path, struct tt__out *out, int (*write)(struct tt__out *out, void *arg),
			void *arg);
/* 1: `lock` taken, waited for a bounded time (a crash's or an exit's); 0: still held. */
int tt__take_within(struct tt_os_lock *lock);

/* dump.c: TICKTRACE_MIN_DUR's part of slot s's end (lock held): the functions whose
 * calls its hook erased, named in `set` (fresh: those new to it, when not NULL), 0 or
 * -ENOMEM; its FILTERED section, after its THREAD. (A reader that follows the thread,
 * the stream's, stops before the FUNC_ENTERs that end what it wrote so far:
 * tt__before_enters.) */
int tt__filtered_sites(struct tt__site_set *set, struct tt__site_set *fresh, const struct tt__slot *s);
void tt__out_filtered(struct tt__out *out, const struct tt__slot *s);

/* dump.c's pieces, which the live file and the stream write too (onto a struct tt__out:
 * sections.h). */
void tt__file_header(struct tt_file_header *h); /* (the end anchor taken now) */
void tt__out_process(struct tt__out *file);   /* PROCESS and MACHINE */
/* SITES, ARG_NAMES and FUNCS of the set's entries (sections.h). */
void tt__out_sites(struct tt__out *out, const struct tt__site_set *set);
/* tt_os_on_unload's callback: a module unloaded, kept for the dump's UNLOADED
 * sections, with copies of the call-site descriptors its records named. */
void tt__module_unloaded(struct tt_os_module_list *ranges, uint64_t low, uint64_t high, uint64_t tsc);
/* The generation (tt__generation_fn) of a record: the k-th module unloaded's, or 0. */
size_t tt__unloaded_generation(uint64_t address, uint64_t tsc, size_t limit);
/* Streamed and live files describe modules loaded and unloaded while they run (a
 * DLL LoadLibrary brought, then FreeLibrary took). tt__modules_look, outside any of
 * the runtime's locks (listing them waits for the loader, whose threads may record):
 * the loaded modules listed into `m` when they changed since `seen` looked (their
 * handles; or a module unloaded since: one loaded again where it was leaves the
 * handles as they were). tt__out_modules_since: the modules unloaded since `set` was
 * told as UNLOADED MODULES, its entries of their addresses tagged with their
 * generation (a record made there since is described anew), then `m` as MODULES (m
 * freed and emptied). 0 or -ENOMEM. */
struct tt__modules_seen {
	uint64_t changes;
	size_t unloaded;
	int looked;
};
void tt__modules_look(struct tt__modules_seen *seen, struct tt_os_module_list *m);
int tt__out_modules_since(struct tt__out *out, struct tt__site_set *set, struct tt_os_module_list *m);
/* THREAD or THREAD_TOTALS (type) of slot s with `events` records, `sched`: its
 * switches follow. Returns the events it says were dropped, for tt__end_add. */
uint64_t tt__out_thread_info(struct tt__out *file, uint32_t type, const struct tt__slot *s, uint64_t events,
			     int sched);
/* Lock held: where the records slot s wrote into chunk c end now (its cursor while it
 * records into it: events it is writing are left to tt_written_end). */
const struct tt_record *tt__chunk_end(const struct tt__slot *s, const struct tt__chunk *c);
/* A thread's switches (counters.c), taken before its THREAD section says whether it has
 * them, and written (SCHED, then its SCHEDSTAT) after its events, and freed. */
struct tt__states {
	struct tt_sched_state *states;
	size_t n;
	struct tt_sched_info info;
	uint64_t lost;
};
void tt__thread_states(const struct tt__slot *s, struct tt__states *st);
void tt__out_thread_states(struct tt__out *file, const struct tt__slot *s, struct tt__states *st);
/* END's totals: one more thread, its records and the dropped events its section said. */
void tt__end_add(struct tt_end_info *end_info, uint64_t records, uint64_t dropped);

#endif /* TT_PORTABLE_H */
