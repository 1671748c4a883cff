/* ticktrace runtime, layer base: what every layer above uses and that knows nothing
 * of recording: the clock, ticktrace's own threads, slab memory.
 * Never installed. */
#ifndef TT_BASE_H
#define TT_BASE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "record_protocol.h"
#include "ticktrace.h"
#include "ticktrace/format.h"
#include "common/common.h" /* the floor: the record kinds' roles */
#include "sections/sections.h" /* a file's bytes and sections, on the operating system (platform.h: clocks, waits, thread ids) */

/* clock.c */
/* The file header's clock and format (tt__file_header_init, from the start anchor),
 * and the kernel's word that it keeps time by the TSC. */
void tt__clock_fill_header(struct tt_file_header *header) TT__HIDDEN;
extern struct tt_anchor tt__start_anchor TT__HIDDEN;
/* The run's machine and clocks (format.h: TT_SEC_MACHINE): its time namespace's
 * offsets, its name and ids, its wall clocks at the start anchor. */
extern struct tt_machine_info tt__machine TT__HIDDEN;
/* A new run's clocks: the start anchor, the time namespace's offsets, the machine. */
void tt__clock_start(void) TT__HIDDEN;

/* locks.c: the runtime's locks, and their order.
 *
 * Each lock has a rank, and a thread takes a lock only while every lock it holds
 * comes before it in this list: so no two threads ever wait on each other. The
 * lock fork takes (BACKGROUND) is never held across I/O (tt__background_io lets it
 * go around each write), so that a fork never waits for ticktrace's files; the
 * others, which fork does not take, are reset in the child. No lock is taken on the hot
 * path; the slow path takes REGISTRY and CORE (and NAMES, for a _DYN name), with
 * signals blocked: a signal handler's events never wait on a lock their thread
 * holds. Built with -Dlock_check (on in debug builds), every lock taken asserts the
 * order, and says which two locks broke it before the process aborts. */
enum tt__lock_rank {
	TT__LOCK_STREAM_DUMP, /* modes/stream.c: one dump at a time, waiting for the drain */
	TT__LOCK_STREAM,      /* modes/stream.c: the drain's requests (a condition waits on it) */
	TT__LOCK_SPIKES_POLL, /* report/spikes.c: a look of tt-spikes (its log written), or
	                       * the last at exit; it writes the snapshots that are due */
	TT__LOCK_WORK,        /* base/threads.c: ticktrace's threads' work that allocates
	                       * (a file written), one at a time */
	TT__LOCK_BACKGROUND,  /* base/threads.c: that work while it allocates, and fork;
	                       * never across I/O: let go around each write, and taken again
	                       * after it with whatever the work holds (no other thread of
	                       * ticktrace's waits on those, WORK keeps them out; fork takes
	                       * no lock after it) */
	TT__LOCK_CLEAN,       /* core/arena.c: a cleaning of the ring's recycled chunks, whole */
	TT__LOCK_RETIRED,     /* writer/retired.c: the libraries unloaded (dlclose); held
	                       * while their modules and names are written */
	TT__LOCK_SCHED,       /* core/sched.c: the threads' states, signals blocked */
	TT__LOCK_REGISTRY,    /* core/registry.c: the thread list and table, signals blocked */
	TT__LOCK_CORE,        /* core/state.c: slots' chunks and limits, the arena's free
	                       * chunks, the ring's history; signals blocked; held across a
	                       * live file's fallocate as the arena grows (core.h: cover) */
	TT__LOCK_NAMES,       /* writer/names.c: names made at run time, signals blocked */
	TT__LOCK_RANKS
};
struct tt__lock {
	struct tt_os_lock os; /* (a futex word; an SRW lock) */
	enum tt__lock_rank rank;
};
#define TT__LOCK_INIT(rank) {{0}, (rank)}
void tt__lock(struct tt__lock *lock) TT__HIDDEN;
void tt__unlock(struct tt__lock *lock) TT__HIDDEN;
/* In a fork's child: unlocked, whichever thread of the parent's held it. */
void tt__lock_reset(struct tt__lock *lock) TT__HIDDEN;

/* threads.c */
/* Starts one of ticktrace's own threads (tt_os_thread_start's: every signal blocked;
 * joinable with `thread`, else detached), its stack limited under an address-space
 * limit; with `wait`, returns once it calls tt__thread_running (its first act). 0 or
 * -errno. */
int tt__start_thread(struct tt_os_thread *thread, void *(*main)(void *), void *arg, int wait) TT__HIDDEN;
void tt__thread_running(const char *name) TT__HIDDEN;
/* ticktrace's threads the program may have back: where its pthread_create fails for
 * the limit on the user's processes (EAGAIN: RLIMIT_NPROC, a cgroup's pids.max), the
 * first of them still running ends and the program's is tried again
 * (lifecycle/pthread.c), in this order, what costs least first. Each one that ends is
 * a TT_FILE_GAVE_* flag of the file's, said at exit. */
enum tt__optional_thread {
	TT__OPTIONAL_PREFAULT, /* tt-prefault: the writers fault their memory in alone */
	TT__OPTIONAL_LIVE,     /* tt-live: a killed run's live file describes what it did then */
	TT__OPTIONAL_SPIKES,   /* tt-spikes: no live spike log nor snapshot from then on */
	TT__OPTIONAL_SCHED,    /* tt-sched: switches drained only as the trace is written */
	TT__OPTIONAL_DUMP,     /* tt-dump: no trace at a crash nor on a dump signal */
	TT__OPTIONAL_COUNT
};
/* Called by such a thread as it runs; `wake` gets it to look at tt__thread_end_asked
 * (NULL: it looks on its own, within a tenth of a second). */
void tt__thread_optional(enum tt__optional_thread which, void (*wake)(void)) TT__HIDDEN;
/* Whether the calling thread is asked to end: it then returns at once. */
int tt__thread_end_asked(void) TT__HIDDEN;
/* Ends the first such thread of this process still running and waits until the
 * kernel let it go (a second at most): 1, or 0 where none is left. */
int tt__thread_give_back(void) TT__HIDDEN;
/* The TT_FILE_GAVE_* flags of those that ended so (format.h). */
uint32_t tt__threads_given_back(void) TT__HIDDEN;
/* Called by a thread of ticktrace's no give-back ends (tt-clean): `wake` gets it to
 * look at tt__thread_end_asked as the run's end ends them all (tt__threads_end). */
void tt__thread_ends_with(void (*wake)(void)) TT__HIDDEN;
/* The run's end, its file written, where the process's end would end ticktrace's
 * threads wherever they are (TT_OS_END_JOINS): every one of them told to return
 * (tt__thread_end_asked) and waited for, 2 s at most all told, said where one did not
 * end. Once. */
void tt__threads_end(void) TT__HIDDEN;
/* (tt__own_thread and tt__own_thread_main, which the patcher calls: record_protocol.h) */
/* Around work of ticktrace's own threads that allocates: one at a time, and not
 * while a fork runs. */
void tt__background_work(int begin) TT__HIDDEN;
/* Inside that work, between two of its steps: where another of ticktrace's threads
 * waits for the work, it has it first (this one goes on after). */
void tt__background_give_way(void) TT__HIDDEN;
/* Around fork (its handlers, before and in the parent): no thread of ticktrace's is
 * in malloc meanwhile. */
void tt__background_fork(int begin) TT__HIDDEN;
/* Around a system call that may wait for I/O (a write), inside that work: the lock
 * let go meanwhile (nothing is allocated there), so that fork never waits for it. */
void tt__background_io(int begin) TT__HIDDEN;
void tt__background_reset_after_fork(void) TT__HIDDEN; /* in the child */
/* (ticktrace's own writes to its files: platform.h's tt_os_writing_begin) */

/* fds.c: ticktrace's own files (Linux's descriptors), kept where the program's do not
 * go, and checked before each use (a program may close them, and open its own at the
 * number). The policy is both systems' (Windows' handles are no numbers a program
 * takes by range: no share, any handle); the files are the platform's. */
struct tt__fd {
	struct tt_os_file file; /* a descriptor; a handle. Negative: none */
	struct tt_os_file_id id; /* what tells the file there (tt_os_file_identify) */
};
#define TT__FD_NONE {.file = {-1}}
/* Keeps `file`, just opened (always consumed; a negative handle: the -errno its open
 * gave, returned): a copy of it at a number in ticktrace's share of the descriptors
 * (tt__fd_share), the file remembered. 0, or -errno (-EMFILE: no room in the share, or
 * none below a small limit: tt__fd_room). */
int tt__fd_keep(struct tt__fd *f, struct tt_os_file file) TT__HIDDEN;
/* The same for a file written and closed at once (a trace, a dump): past the share,
 * and below a small limit too (fds.c). */
int tt__fd_keep_brief(struct tt__fd *f, struct tt_os_file file) TT__HIDDEN;
/* Whether tt__fd_keep may keep a file now: 0, or -EMFILE below a small soft
 * RLIMIT_NOFILE (fds.c: TT__FD_FEW), where ticktrace keeps none in the program's table
 * while it runs (a thread with a table of its own keeps its files there). */
int tt__fd_room(void) TT__HIDDEN;
/* Whether the soft RLIMIT_NOFILE is that small (a thread's own table has that limit
 * too: tt-sched keeps no file there past a reading). */
int tt__fd_few(void) TT__HIDDEN;
/* Both as found within the last 100 ms (fds.c: TT__FD_FEW_AGAIN_NS), no system call
 * most times: for the threads' counters' readings, tt-sched's and at each exit. */
int tt__fd_few_lately(void) TT__HIDDEN;
int tt__fd_room_lately(void) TT__HIDDEN;
/* Why a file was not kept (-errno), in `buf`, for a line that says what was given up:
 * at a small limit, the limit. */
const char *tt__fd_why(int err, char *buf, size_t size) TT__HIDDEN;
/* The lowest number ticktrace's descriptors take (the numbers from three quarters of
 * the soft RLIMIT_NOFILE up, up to 4096), and how many it may hold (a quarter of it):
 * the rest is the program's, as without ticktrace. */
void tt__fd_share(int *floor, int *share) TT__HIDDEN;
/* A file open for a moment in the program's table (a file read): tt__fd_opened notes
 * which file `file` is in *id (id->file, negative where it cannot tell: then closed),
 * and tt__fd_close_opened closes it only while the number is still that file (the
 * program may close every descriptor meanwhile, and open its own at the number). */
void tt__fd_opened(struct tt_os_file file, struct tt__fd *id) TT__HIDDEN;
void tt__fd_close_opened(const struct tt__fd *id) TT__HIDDEN;
/* Whether f->file still is the file kept there: its inode (one system call, out of
 * line); tt__fd_ours_exactly its open flags and close-on-exec too (as tt__fd_close
 * checks them before it closes). */
int tt__fd_ours(const struct tt__fd *f) TT__HIDDEN;
int tt__fd_ours_exactly(const struct tt__fd *f) TT__HIDDEN;
/* f itself when still ours; else the same file again by its `path` (NULL: none),
 * never another: 0, or -EBADF with f->file none (the number, the program's, left alone). */
int tt__fd_reopen(struct tt__fd *f, const char *path) TT__HIDDEN;
/* Closes f->file if it still is ours (0, or the platform's close's -errno), else leaves
 * the number to the program (-EBADF); f->file is none after. */
int tt__fd_close(struct tt__fd *f) TT__HIDDEN;
/* Lets f->file go without closing it (the program's now); f->file is none after. */
void tt__fd_forget(struct tt__fd *f) TT__HIDDEN;

/* lines.c (Linux), lines_windows.c: where ticktrace's lines go, and a thread's table
 * of descriptors of its own. */
/* Where ticktrace says its lines (tt__err): Linux: the program's standard error,
 * number 2, while it is the file it was when ticktrace started, or one lines are
 * written to (a terminal, a pipe, a socket, a file open for appending: a log put
 * there); never a file the program opened at number 2 after closing it (a daemon's
 * data file): the line then goes to the copy tt__err_keep kept, or the log beside the
 * trace. Whole lines, each in one write. Windows: the process's stderr (TICKTRACE_LOG
 * is Linux's). */
FILE *tt__err_stream(void) TT__HIDDEN;
#define tt__err (tt__err_stream())
/* One whole line said there now: 1, or 0 (nowhere fit to say it). */
int tt__err_say(const char *line) TT__HIDDEN;
/* The calling thread, one of ticktrace's, gets a table of descriptors of its own,
 * empty (not even stderr) but for the `count` descriptors of `keep` that are still
 * theirs (the others forgotten: found again by name, where they are): what it opens
 * there is out of the program's reach (its closefrom, close_range, loops of close,
 * dup2, even between a check and the call it allows) and takes none of its
 * RLIMIT_NOFILE numbers; what it says (tt__err) goes to the program's number 2 all the
 * same, copied into its table for each line (tt__fd_of_program). 0, or -errno
 * (seccomp, say; Windows: -ENOSYS): the thread shares the program's table. */
int tt__fd_private_table(struct tt__fd *const *keep, size_t count) TT__HIDDEN;
/* Whether the calling thread has a table of its own (tt__fd_private_table). */
int tt__fd_own_table(void) TT__HIDDEN;
/* A stdio stream writing to f (Linux: which checks it before each write; Windows: on
 * its handle, no number a program closes by range; f not used once it is closed);
 * fclose closes it as tt__fd_close does. NULL with errno. */
FILE *tt__fd_stdio(struct tt__fd *f) TT__HIDDEN;
/* What a failed flush left in such a stream let go, its error cleared. */
void tt__stdio_drop(FILE *stream) TT__HIDDEN;
/* (Windows: stderr throughout, nothing kept, no fork; TICKTRACE_LOG is Linux's)
 * tt__err_start notes the file at number 2 at start (before it, and where no stream
 * can be made, tt__err is stderr). */
void tt__err_start(void) TT__HIDDEN;
/* Where the lines go from now on (TICKTRACE_LOG, lifecycle/config.c decides): the
 * program's stderr as above; nowhere; or a file, whose name `name_of` gives into `buf`
 * as the first line is said (1: the run's first process, which empties it; 0: added
 * to, an image or a child of it; -1: none), made 0644 by this user (never through a
 * link, never another user's file, a FIFO or a device), where what cannot be written
 * (a directory not writable) sends the lines to stderr, said once. */
enum { TT__LOG_STDERR, TT__LOG_OFF, TT__LOG_FILE };
void tt__err_to(int where, int (*name_of)(char *buf, size_t size)) TT__HIDDEN;
/* The run records: a copy of the program's stderr kept where nothing waits for its
 * end (a terminal, a file), for the lines said after the program let number 2 go (its
 * exit's, after gnulib's close_stdout); where none is kept (a pipe, a socket: a daemon
 * closes it to let its reader go on), they go to the log beside the trace, which says
 * why as its first line. */
void tt__err_keep(void) TT__HIDDEN;
/* The log's lines held for want of a descriptor (lines.c), written now: into the log,
 * else stderr (at exit). */
void tt__err_flush(void) TT__HIDDEN;
/* In a forked child: the parent's log let go; the child's named at its first line. */
void tt__err_after_fork_in_child(void) TT__HIDDEN;
/* A copy of the program's descriptor `fd` in the calling thread's table (close-on-
 * exec; from a table of its own, pidfd_getfd, Linux 5.6; Windows: of the handle behind
 * the C library's descriptor, not inherited, as a number), or -1 with errno. */
int tt__fd_of_program(int fd) TT__HIDDEN;

/* A thread's context switches, as the kernel records them: Linux's from a perf event
 * of the thread's (switches.c), Windows' from an ETW session of the process's, where
 * it is elevated (switches_windows.c) */
struct tt__switches {
	void *map;     /* Linux: the perf ring, which holds the event (no descriptor is kept);
	                * Windows: the thread's states as the session gives them. NULL: none */
	size_t map_size;
	/* A read stopped at switches the kernel could not write (the ring was full), after
	 * the last state it gave: `gap` set, `lost` how many (the reader takes them, and
	 * zeroes both; lost may be 0 where the reader had counted them, told_at) */
	uint64_t lost;
	int gap;
	uint64_t busiest;   /* the most bytes a read found waiting in the ring */
	uint64_t last_time; /* the kernel's time of the last switch read */
	uint64_t skip_until; /* switches up to then were read from the small ring */
	/* Where the kernel tells the switches it may have lost since a read found the ring
	 * (nearly) full, none told yet (UINT64_MAX: nothing untold) */
	uint64_t unsaid_at;
	uint64_t told_at; /* where the reader counted one of those already (tt__switches_told) */
	void *larger;       /* a larger ring for the same thread, read once this one is empty */
	size_t larger_size;
	uint64_t larger_from; /* the kernel's time once it was mapped */
	int grown;          /* a larger ring was asked for (once) */
};
/* Asks for those of thread `tid` of this process, 0 the caller (one perf event and its
 * ring; `small`: the ring a thread asks for as it starts, a quarter of the size, its
 * mapping the most of the asking's cost, which tt__switches_grow makes larger where it
 * fills): 0 or -errno, with *denied set when the kernel refuses such events to any
 * thread (seccomp, perf_event_paranoid 3, no perf), not for want of descriptors or
 * locked memory (EMFILE; EPERM from mmap). Windows: the session started at the first
 * (not elevated: -EACCES; refused, Wine: -ENOSYS; both *denied), `small` one size;
 * switches from the call on, the thread's state then not known (tid other than 0: it
 * may have been asleep). */
int tt__switches_open(struct tt__switches *s, int tid, int small, int *denied) TT__HIDDEN;
/* What a THREAD section says of a thread tt__switches_open refused with `err`
 * (-errno; format.h's TT_THREAD_NO_STATES_FLAGS), and in *said whether the exit says
 * such refusals: Linux's, TT_NO_STATES_REFUSED and perf_event_open's errno, said (the
 * kernel's settings or a seccomp filter: news to the user); Windows',
 * TT_NO_STATES_WINDOWS and no errno (its numbers are not Linux's, which the tools
 * read), unsaid (ETW wants an administrator, always: the file says so). */
uint32_t tt__switches_refusal(int err, int *said) TT__HIDDEN;
/* A small ring that a read found half full or more (or full: switches lost): a larger
 * one for the same thread beside it, which reads go on from once the small one is
 * read to its end and has told what it lost before the larger one began, no switch
 * lost uncounted or read twice. 1 asked for, 0 not needed, or -errno (the small one
 * goes on). Windows: 0 (a thread's states grow as they come). */
int tt__switches_grow(struct tt__switches *s, int tid) TT__HIDDEN;
/* Moves up to `cap` of the states recorded since into `out` (in time order); how many.
 * It stops at switches the kernel lost: s->lost says how many were lost after the
 * states given (the next read gives those after them). One caller at a time.
 * Windows: those the session gave of every CPU's buffers since (2 s ago, or the last
 * tt__switches_flush); one that comes later than a read went is lost. */
size_t tt__switches_read(struct tt__switches *s, struct tt_sched_state *out, size_t cap) TT__HIDDEN;
/* Whether the kernel may have lost switches after the last state read and not said
 * how many yet (a read found the ring full, and nothing written since was read: the
 * kernel says so before the thread's next switch): 0 not, 1 so, 2 so and the reader
 * counted one of them (tt__switches_told). Windows: 0, what it lost told as a read
 * comes to it. */
int tt__switches_unsaid(const struct tt__switches *s) TT__HIDDEN;
/* The reader counted one switch of those untold as lost (it wrote the span after the
 * last state as not known): the kernel's count, when it comes, is told one less. */
void tt__switches_told(struct tt__switches *s) TT__HIDDEN;
void tt__switches_close(struct tt__switches *s) TT__HIDDEN;
/* Before a whole file's read: every switch recorded so far where a read finds it
 * (Linux's are there as they happen: nothing to do; Windows' session gives each CPU's
 * buffer when full or once a second: flushed, and tt-etw given a moment, ~30 ms). */
void tt__switches_flush(void) TT__HIDDEN;

/* (a thread's counters, Linux's schedstat and Windows' cycle time: the platform's,
 * tt_os_counters_*) */

/* slab.c: memory for the slow path, which must not call malloc (a signal handler may
 * have interrupted it): bump allocation from private mmap'd slabs, never freed. The
 * caller serializes calls on one slab. */
struct tt__slab {
	char *next, *end;
	size_t slab_size;
};
void *tt__slab_alloc(struct tt__slab *slab, size_t size) TT__HIDDEN;
/* `p`, from malloc, is held only by what lives in ticktrace's own mappings (a slot in
 * the arena): marked for LeakSanitizer, which looks through none of them (a check at
 * exit may come before its owner frees it). */
void tt__arena_holds(const void *p) TT__HIDDEN;

#endif /* TT_BASE_H */
