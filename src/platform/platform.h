/* ticktrace's platform layer: what the runtime needs of an operating system, one file
 * per system (windows.c, linux.c), the same face, and what both sides share on it
 * (anchor.c). Threads and their ids and names, locks, waiting on a word, memory
 * reserved and committed and faulted in, files, time and the clock anchors, the
 * process and its modules. The floor of the runtime on both systems: it calls nothing
 * of ticktrace's but format.h; names tt_os_. Never installed. */
#ifndef TT_PLATFORM_H
#define TT_PLATFORM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ticktrace/format.h"

#ifndef _WIN32
#include <signal.h>
#endif

/* ---- threads ---- */

/* The hot path's key of the calling thread (asm/): the TEB's self pointer
 * (gs:[0x30]) on Windows, the thread pointer (%fs:0x10) on Linux. */
uintptr_t tt_os_thread_key(void);
uint32_t tt_os_thread_id(void);
/* Whether thread `tid` of this process is still there (the system has not let it go). */
int tt_os_thread_alive(uint32_t tid);
/* The calling thread's name (GetThreadDescription; the kernel's comm): its length,
 * cut to size - 1 and ended with NUL; 0 when it has none. */
size_t tt_os_thread_name(char *name, size_t size);
/* Thread `tid` of this process, by id: the same, for a thread that may not be the
 * caller. */
size_t tt_os_thread_name_of(uint32_t tid, char *name, size_t size);
/* Names the calling thread (Linux: the kernel's comm, cut to its 15 bytes; Windows:
 * SetThreadDescription, looked up: nothing where the system lacks it). */
void tt_os_thread_set_name(const char *name);
/* Keyed thread exits, as pthread keys give them (on Windows: one fiber local storage
 * callback runs them all): each key has its exit, called as a thread that set a value on
 * the key (not NULL) exits, on that thread, with that value, cleared first; the keys in
 * the order they were made, in rounds. A value an exit sets (on its own key, another's:
 * an event recorded in it registers its thread again) is called too, in this round or
 * the next, up to TT_OS_EXIT_ROUNDS rounds (PTHREAD_DESTRUCTOR_ITERATIONS); one set in
 * the last round or after is never called (Windows refuses one set after: -ESRCH).
 * `exit` is the caller's; `id` the platform's, 0 until the key is made. */
#define TT_OS_EXIT_ROUNDS 4
struct tt_os_exit_key {
	void (*exit)(void *value);
	uint32_t id;
};
/* Makes `key`: once, however often and by however many threads it is called. 0 or
 * -errno (-EAGAIN: no key left; a few are, for the runtime's own). */
int tt_os_exit_key_make(struct tt_os_exit_key *key);
/* Sets the calling thread's value of `key` (-EINVAL: not made): NULL clears it. Setting the value
 * it has takes no lock. Never with a lock an exit takes held for a thread's first
 * value: Windows calls the exits under a lock of its own, which a thread's first value
 * takes. 0 or -errno. */
int tt_os_exit_set(struct tt_os_exit_key *key, void *value);

/* Calls end() as the program exits, while its other threads still run (Windows: in
 * the process's C runtime, msvcrt's table, which exit() runs before ExitProcess ends
 * every other thread; a DLL's own atexit runs only after, at its detach), and, where
 * that table is not the program's, as atexit would, and as the process ends without
 * either (_exit: as a thread that set a value on an exit key ends it): end()
 * may run more than once. Windows: also once the program's last thread ended with none
 * of this (ExitThread, a stack overflow), ticktrace's threads left: end(), and the
 * process exits as Windows would have. The module is kept loaded from then on. 0 or
 * -errno. */
int tt_os_at_exit(void (*end)(void));
/* Runs init() once, however many threads call this, the others waiting until it
 * returned (pthread_once: a fork's child while another thread ran it runs it again;
 * InitOnceExecuteOnce). `once` zeroed before. */
struct tt_os_once {
	void *state;
};
void tt_os_once(struct tt_os_once *once, void (*init)(void));

/* Starts a thread of ticktrace's own running main(arg) (what it returns is dropped),
 * with every signal blocked (Linux: the program's signals are not for it), on a stack
 * of `stack` bytes (0: the system's default; Windows: a reservation that large, 64 KiB
 * committed; Wine reserves 1 MiB at least). With `thread`, joinable:
 * tt_os_thread_join waits for it to end and lets it go, once; without, detached.
 * Linux hands main to pthread_create as it is (its interposers see it: base/threads.c
 * tells ticktrace's threads by it). The module it runs in is kept loaded from then on
 * (a DLL unloaded under it would crash it). 0 or -errno. */
struct tt_os_thread {
	uintptr_t handle; /* a pthread_t; a HANDLE */
};
int tt_os_thread_start(struct tt_os_thread *thread, void *(*main)(void *arg), void *arg, size_t stack);
void tt_os_thread_join(struct tt_os_thread *thread);
/* The join, for timeout_ns at most: 0, ended and let go; -ETIMEDOUT, still running
 * (joinable still). */
int tt_os_thread_join_within(struct tt_os_thread *thread, int64_t timeout_ns);
/* Whether the process is ending with every other thread already ended wherever it was
 * (Windows' ExitProcess, which an MSVC program's C runtime calls: ticktrace's threads
 * ended too, their work to be done by the ending thread); Linux: never (exit's
 * handlers run beside the other threads). */
int tt_os_others_ended(void);

/* The calling thread's signal mask as it was (Linux): tt_os_signals_block blocks every
 * signal in it, so that a handler's events never wait on a lock the thread holds,
 * until tt_os_signals_restore puts `old` back. Windows runs no handler inside a thread
 * of the program's (a console's Ctrl-C comes on a thread of its own): nothing to do. */
struct tt_os_signals {
#ifdef _WIN32
	int none;
#else
	sigset_t mask;
#endif
};
void tt_os_signals_block(struct tt_os_signals *old);
void tt_os_signals_restore(const struct tt_os_signals *old);
/* In a thread of ticktrace's own as it begins (Linux): where every signal is blocked
 * in it (tt_os_thread_start's, which never unblocks them), tt_os_signals_block and
 * _restore make no system call in it from then on, nor does tt_os_writing_* change its
 * mask (tt-drain's and tt-sched's passes: two each, and two more a write). */
void tt_os_signals_blocked_for_good(void);
/* Around the runtime's own writes to its files, in the writing thread (Linux): a write
 * past the program's RLIMIT_FSIZE fails (EFBIG), one into a FIFO whose reader left fails
 * (EPIPE), instead of SIGXFSZ or SIGPIPE ending the program. They are blocked in the
 * calling thread alone (the kernel sends them to it), and tt_os_writing_end takes back
 * those its writes raised before it restores the mask: the program's dispositions are
 * never changed, its handlers never called for a write of the runtime's, and one that
 * was pending before (`pending`) stays the program's. Windows raises no signal for a
 * write: nothing. */
struct tt_os_writing {
	struct tt_os_signals mask; /* the thread's, restored at the end */
	unsigned pending; /* those pending already: the program's own */
};
void tt_os_writing_begin(struct tt_os_writing *w);
void tt_os_writing_end(struct tt_os_writing *w);
/* The calling thread kept from being cancelled (pthread_setcancelstate: a close or a
 * sleep of ticktrace's in a program's thread is no cancellation point of the
 * program's) until tt_os_cancel_restore(was); Windows cancels no thread: nothing. */
void tt_os_cancel_hold(int *was);
void tt_os_cancel_restore(int was);
/* Lets another thread run before the caller goes on (sched_yield; SwitchToThread). */
void tt_os_yield(void);
/* Sleeps for `ns` nanoseconds at least (nanosleep; Windows: Sleep, in whole
 * milliseconds rounded up); a signal's handler may end it early (Linux). */
void tt_os_sleep_ns(int64_t ns);
/* The CPUs the process may run on (its affinity; 1 at least). */
uint32_t tt_os_cpus(void);
/* The machine's memory in bytes (its physical pages; GlobalMemoryStatusEx); 0 where
 * the system does not say. */
uint64_t tt_os_memory_size(void);
/* How many processes the user may run (the soft RLIMIT_NPROC), which a thread the
 * program starts counts against; 0: no limit known (Windows has none). */
uint64_t tt_os_processes_limit(void);
/* The page faults and the switches the system forced so far (getrusage), of the
 * calling thread (`thread` 1) or of the whole process: 0, or -ENOSYS, zeroes, where
 * the system does not say (Windows: no thread's; the process's faults only on real
 * Windows, Wine counts none, and the core reads them only beside Linux's schedstat). */
struct tt_os_usage {
	uint64_t faults;      /* minor and major */
	uint64_t involuntary; /* switches the system made while it could run */
};
int tt_os_usage(int thread, struct tt_os_usage *usage);

/* ---- locks, and waiting for a word to change ---- */

/* A lock that needs no initialization but zeroes and never allocates: an SRW lock,
 * a futex word. Not recursive. */
struct tt_os_lock {
	void *word;
};
void tt_os_lock(struct tt_os_lock *lock);
void tt_os_unlock(struct tt_os_lock *lock);
int tt_os_trylock(struct tt_os_lock *lock); /* 1: taken; 0: another holds it */
/* Waits while *word is `value`, for timeout_ns at most (TT_OS_FOREVER: no longer;
 * Windows rounds it up to milliseconds), or until woken (WaitOnAddress; a futex).
 * May return early, spuriously: the caller looks at the word again. tt_os_wake wakes
 * one thread waiting on the word, tt_os_wake_all every one; on Linux both are
 * async-signal-safe. */
#define TT_OS_FOREVER (-1)
void tt_os_wait(uint32_t *word, uint32_t value, int64_t timeout_ns);
void tt_os_wake(uint32_t *word);
void tt_os_wake_all(uint32_t *word);

/* ---- memory ---- */

/* Address space for `size` bytes, aligned to 64 KiB, no memory behind it yet and
 * nothing charged, however large (NULL when refused): Windows' a reservation, which
 * faults where touched before it is committed; Linux's read and write at once, each
 * page there as it is first touched (MAP_NORESERVE), which a commit faults in. */
void *tt_os_reserve(size_t size);
/* A reservation as tt_os_reserve's that can grow in place (tt_os_grow) while the rest
 * of the process maps up to `away` bytes more: Linux's placed that far below where the
 * kernel would put it (it maps downwards from there; under an address-space limit the
 * process maps no more than the limit); Windows' tt_os_reserve's (none is limited). */
void *tt_os_reserve_growable(size_t size, uint64_t away);
/* [at, at + size) of a reservation or a file's view (tt_os_map_view) grown in place to
 * `new_size`: 0, or -ENOMEM where what follows it is taken or the limit refuses it
 * (Windows: -ENOSYS, never asked). */
int tt_os_grow(void *at, size_t size, size_t new_size);
/* Memory behind [at, at + size) of a reservation, faulted in, so that the hot path
 * never takes a page fault there: 0 or -ENOMEM. Zero when first committed; committed
 * again, what is there is left as it is (a thread may be writing into it). Of a
 * file's view (tt_os_map_view), the file's pages, which it must cover already
 * (Windows' mapped then: -ENOMEM where the file is shorter). */
int tt_os_commit(void *at, size_t size);
/* Whether a reservation's memory may be written before it is committed (Linux: yes, a
 * commit only faults it in; Windows: no, it faults): where not, a caller handing out a
 * reservation's memory faster than its own thread commits it commits what it hands
 * out itself, not faulted in (tt_os_commit_unfaulted). */
#ifdef _WIN32
#define TT_OS_RESERVE_WRITABLE 0
#else
#define TT_OS_RESERVE_WRITABLE 1
#endif
#if !TT_OS_RESERVE_WRITABLE
/* tt_os_commit's memory, each page faulted in as it is first written, as Linux's
 * reservation is: for a writer that overtook the thread faulting ahead of it, whose
 * faults then come one at a time as it records, outside its locks (faulted in whole,
 * a chunk's 16 pages were 16 faults under the core lock, 16 us each on this KVM/PVM
 * VM, whoever takes them, and a GetSystemInfo, 2 us under Wine). */
int tt_os_commit_unfaulted(void *at, size_t size);
#endif
/* The memory a run's tt-prefault commits ahead of its writers before they have used
 * any (core/arena.c grows it as they do): Linux, four chunks' worth; Windows, where a
 * writer's own faults cost more (event_cold), 16 MiB, the window's least. */
#ifdef _WIN32
#define TT_OS_PREFAULT_FIRST (16u << 20)
#else
#define TT_OS_PREFAULT_FIRST (256u << 10)
#endif
/* Faults [at, at + size) of memory already there in for writing, changing no byte (a
 * thread may be writing into it): MADV_POPULATE_WRITE, else an atomic add of zero to
 * each page. */
void tt_os_fault_in(void *at, size_t size);
/* The most address space the process may map (RLIMIT_AS's soft limit; UINT64_MAX: no
 * limit, as on Windows, whose job objects bound memory committed, not reserved). */
uint64_t tt_os_address_limit(void);
/* The address space the process has mapped now, reserved or not (Linux: statm's
 * first field, VmSize; Windows: every region not free): 0 when not known. */
uint64_t tt_os_address_mapped(void);
/* Huge pages asked for [at, at + size) of a reservation, where the system gives them
 * without privilege (MADV_HUGEPAGE; Windows needs a privilege: nothing). */
void tt_os_huge_pages(void *at, size_t size);
/* [at, at + size) of private memory zeroed, its pages given back where the system can
 * (MADV_DONTNEED: a page never touched is not written; Windows: written zero). */
void tt_os_zero(void *at, size_t size);
/* `size` bytes of zeroed memory of the runtime's own, page-aligned, each page there
 * as it is first touched (nothing charged before: MAP_NORESERVE); NULL when refused.
 * tt_os_free gives back a block from tt_os_alloc, whole, with the size it had. */
void *tt_os_alloc(size_t size);
void tt_os_free(void *at, size_t size);

/* ---- files ---- */

/* errno's values the runtime answers with that mingw's C library lacks: a user's disk
 * quota reached (Windows' full disk, a quota's too, is ENOSPC), a structure found
 * damaged (a chunk's header: EIO there), and what has ended (ECANCELED there). */
#include <errno.h>
#ifndef EDQUOT
#define EDQUOT ENOSPC
#endif
#ifndef EUCLEAN
#define EUCLEAN EIO
#endif
#ifndef ESHUTDOWN /* (a snapshot asked for once they ended: report/snapshots.c) */
#define ESHUTDOWN ECANCELED
#endif

/* A file open (tt_os_file_open, below). */
struct tt_os_file {
	intptr_t handle; /* a descriptor; a HANDLE */
};

/* Whether `path` is a device or a pipe (NUL, a console; /dev/null, a FIFO), which a
 * file is written into in place rather than under a temporary name renamed. Linux:
 * one of the user's or the system's (root's, as /dev's nodes are), or their link to
 * one; another user's, or another user's link to one (as planted in a shared
 * directory), is a file that exists, and replaced: never written through (the rule
 * ticktrace(1) gives the tools). Windows has no owner's rule (files' ACLs say who
 * may write them). tt_os_file_is_device: the same of a file opened, so that what was
 * opened is what was judged. */
int tt_os_is_device(const char *path);
int tt_os_file_is_device(struct tt_os_file *file);
/* Whether a directory ticktrace writes files into (TICKTRACE_SNAPSHOTS) is the user's
 * by that rule: 1; or 0, with why not in `why` (it is not there; Linux: another
 * user's, or their link to it, or one every user may write into without the sticky
 * bit, where another user could rename or replace the files). */
int tt_os_dir_ours(const char *dir, char *why, size_t cap);
/* Up to `size` bytes of a small file (/proc, /sys), read from its start: how many, 0
 * where it cannot be read. Linux: its descriptor, open for a moment in the program's
 * table, closed only while the number still is that file (a thread of the program's
 * may close every descriptor meanwhile and open its own there: base/fds.c's care). */
size_t tt_os_read_file(const char *path, char *buf, size_t size);
/* Whether `path` is a directory (a link to one too): 1 or 0. tt_os_dir_writable: 0, or
 * -errno where files cannot be made in directory `dir`: not there (the system's error:
 * -ENOENT), not a directory (-ENOTDIR), or (Linux) not by the user's rights (Windows:
 * its ACLs said by the write). */
int tt_os_is_dir(const char *path);
int tt_os_dir_writable(const char *dir);
/* A directory made at `path` (Linux: the user's alone, 0700; Windows: as its parent's
 * rights say): 0, or -errno (-EEXIST: something is there already). */
int tt_os_dir_make(const char *path);
/* The room the file at `path` takes on its disk (Linux: its blocks; Windows: its size
 * there, GetCompressedFileSizeW's), or 0 where it cannot be told. */
uint64_t tt_os_file_room(const char *path);
/* The bytes the user may still put on the disk of directory `dir` (Linux: statvfs's
 * blocks available to the unprivileged; Windows: GetDiskFreeSpaceExW's available to
 * the caller, a quota's too), or -errno. */
int64_t tt_os_disk_room(const char *dir);
/* Whether directory `dir` is another user's (Linux: neither the user's nor root's), or
 * their link to one: 1, said in `why` as tt_os_dir_ours says it; else 0 (Windows, which
 * has no owner's rule: 0). */
int tt_os_dir_theirs(const char *dir, char *why, size_t cap);
/* Whether the file at `path`, in directory `dir`, is one the user may not replace (a
 * file of the run's renamed over it at exit): 1 where it is another user's in a
 * directory with the sticky bit, which only they, the directory's owner or root may
 * replace (Linux), its owner in *owner, *link where it is a link; -EISDIR where it is a
 * directory; else 0 (nothing there; Windows, no owner's rule, any file). */
int tt_os_file_theirs(const char *dir, const char *path, uint32_t *owner, int *link);
/* The user the process acts as, whose files it makes (Linux: the effective uid, which
 * a program may change as it runs; Windows: 0, a process's user is its token's for
 * good). */
uint32_t tt_os_user(void);
/* Whether `path` holds a regular file, or nothing (or nothing it can look at): 1; 0
 * where it is a link (Windows: a reparse point), a directory, a device or a pipe
 * (TICKTRACE_OUT=/dev/null, NUL: no live file beside it). Never through a link. */
int tt_os_path_regular(const char *path);
/* TICKTRACE_OUT's value `given` (`there`: the directory it names, its %p the pid, made
 * absolute) as a directory's: where it ends with a separator, or `there` is one, the
 * name `name` in it (`given` joined with it) into `buf`: 1; 0 where it names no
 * directory. -errno, "DIR: why" in `why`, where it is one no file of the run's goes
 * into: not there, not writable, or not the user's (tt_os_dir_ours: "not yours: ..."). */
int tt_os_out_dir(const char *given, const char *there, const char *name, char *buf, size_t size, char *why,
		  size_t cap);
/* The current directory into `dir` (Windows: UTF-8): its length, 0 where it cannot
 * be read or does not fit. */
size_t tt_os_current_dir(char *dir, size_t size);
/* `path` as it reads from directory `dir` (a relative output's name resolved where the
 * program started, wherever it is at its end), into `buf`: path itself where it is
 * absolute (Linux: from "/"; Windows: from a root, a drive or a share, "\\x", "C:x",
 * or a device, "NUL"), or dir is "", else the two joined; 0, or -ENAMETOOLONG. */
int tt_os_path_in(const char *dir, const char *path, char *buf, size_t size);
/* Replaces `to` with `from` in one step (a file written under a temporary name):
 * 0 or -errno. */
int tt_os_rename(const char *from, const char *to);
/* remove (0 or -errno) of a path in UTF-8: Windows' wide call, so that any name goes,
 * not only the ANSI code page's. */
int tt_os_remove(const char *path);
/* The environment variable `name` in UTF-8 (Windows': read as UTF-16), cut to
 * size - 1 bytes, in `value`; NULL when it is not set. */
const char *tt_os_getenv(const char *name, char *value, size_t size);
/* `setting` ("NAME=VALUE", the caller's, kept while the process runs) in the
 * environment the process's children inherit, in place of NAME's value there: Linux's
 * environ itself, not through setenv, which a program may define as its own (bash's,
 * on a table it has not made at a constructor's time), a larger array from the
 * platform's pages where NAME is not there (not malloc's, whose bytes a program that
 * wraps it counts); Windows' putenv (msvcrt's sets the process's environment too,
 * CreateProcess's). 0 or -errno. */
int tt_os_env_set(char *setting);

/* A file mapped into memory, shared: what is written to the memory is the file's, and
 * stays there when the process is killed (SIGKILL, TerminateProcess) with no handler
 * run (the live file). tt_os_file_create makes `path`, new (-EEXIST when there is one),
 * empty, and opens it for tt_os_file_map: 0 or -errno. tt_os_file_map maps
 * [offset, offset + size) of it for reading and writing (offset a multiple of 64 KiB),
 * the file made that long first if it is shorter (the new bytes zero); NULL when
 * refused. The file's removal by name (remove) leaves its mappings as they are. */
int tt_os_file_create(const char *path, struct tt_os_file *file);
void *tt_os_file_map(struct tt_os_file *file, uint64_t offset, size_t size);
/* `path` opened for writing from its start: a file made, or emptied, or a device
 * (NUL, /dev/null) as it is; 0 or -errno. tt_os_file_seek moves where the next bytes
 * go (a device's place is left as it is); tt_os_file_close: 0 or -errno (what the
 * system had still to write, refused). */
int tt_os_file_open(const char *path, struct tt_os_file *file);
/* A device or a FIFO at `path` opened for writing as it is (a file written in place:
 * tt_os_is_device), close-on-exec (Windows: not inherited); Linux's not to block, and
 * kept so (a FIFO with no reader: -EPIPE; one whose reader takes nothing is given up
 * by its writer rather than waited on); -EPERM where what was opened is not one by
 * tt_os_file_is_device's rule (what was opened is what was judged, not another user's
 * put there since). 0 or -errno. */
int tt_os_device_open(const char *path, struct tt_os_file *file);
/* `size` bytes added at the end of the file at `path` in one write, the file made
 * (Linux: mode 0600) where none is there: lines of processes adding at once never mix
 * (O_APPEND; FILE_APPEND_DATA). 0 or -errno (-EMFILE: no descriptor to be had). */
int tt_os_file_append(const char *path, const void *buf, size_t size);
/* The file the C library's descriptor `fd` is (the program's standard streams among
 * them, 0 to 2: Linux's descriptor itself; Windows' the handle behind it,
 * _get_osfhandle's), into *file: 0, or -EBADF where it is none. */
int tt_os_descriptor_file(int fd, struct tt_os_file *file);
int tt_os_file_seek(struct tt_os_file *file, uint64_t offset);
/* Where the file's next write goes (after a stdio stream on it flushed: the spike
 * log's last whole entry); -errno (-ESPIPE: a FIFO or a device). */
int64_t tt_os_file_offset(struct tt_os_file *file);
int tt_os_file_close(struct tt_os_file *file);
/* Each one system call, so that a caller may check the file is still its own just
 * before (Linux's descriptors: base/fds.c). tt_os_file_reserve gives bytes [from, to)
 * their room on disk, the file made at least `to` long (a page of a shared mapping
 * that the disk has no room for faults when written): 0, -EINTR (called again), or
 * -EOPNOTSUPP where the file system cannot (then tt_os_file_resize, its length alone),
 * or another -errno. tt_os_file_resize makes the file `size` long (the bytes past its
 * end zero): 0 or -errno. tt_os_file_unmap gives back a view tt_os_file_map made. */
int tt_os_file_reserve(struct tt_os_file *file, uint64_t from, uint64_t to);
int tt_os_file_resize(struct tt_os_file *file, uint64_t size);
/* tt_os_file_reserve_past: room on disk for bytes [from, to) past the file's end, its
 * length left as it is (a stream's file, whose end is written as it grows): the same
 * answers as tt_os_file_reserve's (Linux: fallocate's FALLOC_FL_KEEP_SIZE; Windows:
 * the file's allocation, which Wine refuses). */
int tt_os_file_reserve_past(struct tt_os_file *file, uint64_t from, uint64_t to);
/* Up to `size` bytes written at byte `at` of a file, or read from it (a file opened for
 * reading too: tt_os_file_new's): how many (0: the file ends at `at`), or -errno
 * (-ESPIPE: a file with no place, a pipe; on Windows any not on disk). Where the sink writes on
 * from (tt_os_file_seek) stays where it was: Linux's pwrite and pread; Windows' write
 * and read at an offset move a synchronous handle's file pointer past what they
 * wrote or read, which is put back. */
int64_t tt_os_file_write_at(struct tt_os_file *file, const void *buf, size_t size, uint64_t at);
int64_t tt_os_file_read_at(struct tt_os_file *file, void *buf, size_t size, uint64_t at);
void tt_os_file_unmap(void *at, size_t size);
/* A view of `size` bytes of `file` from `offset`, shared, read and write, however long
 * the file is now, written once committed (tt_os_commit) where the file covers it:
 * Linux's at once (MAP_NORESERVE; a page past the file's end faults until the file
 * covers it); Windows', whose view cannot outgrow its file, address space reserved,
 * the file mapped into it as commits ask (one such view at a time, `offset` a multiple
 * of 64 KiB). With `at`, in place of what is mapped there (Linux's MAP_FIXED: a fork's
 * child's arena at its parent's addresses; Windows has no fork: NULL), and without
 * `file`, private memory there instead, as tt_os_reserve's. NULL when refused;
 * tt_os_file_unmap gives it back. */
void *tt_os_map_view(struct tt_os_file *file, uint64_t offset, size_t size, void *at);

/* A new file written whole before it has its name, so that a run killed meanwhile
 * never leaves a half-written file under it: made in `path`'s directory, exclusively
 * (never through a link or over a file planted there), mode 0600, open for reading and
 * writing. With `unnamed`, where the file system allows one, a file of no name at all
 * (Linux: O_TMPFILE; made->unnamed set); else, and on Windows always, a temporary name
 * beside `path` in made->tmp (Linux: "PATH.tmp-XXXXXX"; Windows: "PATH.PID.tmp", then
 * "PATH.PID.N.tmp" where that is taken). -EISDIR where `path` is a directory; where
 * the directory makes no file (Linux's /proc), -EACCES. 0 or -errno (no file left). */
struct tt_os_new_file {
	int unnamed;
	char tmp[4096 + 32]; /* "" while it has no name, or once it is at `path` */
};
int tt_os_file_new(const char *path, int unnamed, struct tt_os_file *file, struct tt_os_new_file *made);
/* Gives an unnamed file a name: `path` itself where nothing is there (made->tmp
 * stays ""), else a temporary name beside it (made->tmp), for the caller to put it at
 * `path` (tt_os_file_put, or its own rename). A named file keeps its name; Windows'
 * files are all named. `file` is the one tt_os_file_new opened, or a copy of it kept
 * elsewhere (Linux: base/fds.c's, checked just before). 0 or -errno. */
int tt_os_file_name(struct tt_os_file *file, const char *path, struct tt_os_new_file *made);
/* Puts the file, named, at `path`, replacing what is there in one step (a file, a
 * link: never followed): 0 (made->tmp then "") or -errno (the temporary name left for
 * tt_os_file_discard). Windows renames only a file no handle holds: close it first.
 * tt_os_file_discard removes the temporary name, if any (a file that failed). */
int tt_os_file_put(struct tt_os_new_file *made, const char *path);
void tt_os_file_discard(struct tt_os_new_file *made);
/* Holds `file` against a hold through any other opening of it, this process's or
 * another's (Linux: flock; Windows: LockFileEx of a byte past any file's end, which
 * keeps no reader or writer out), without waiting: 0, -EWOULDBLOCK where another holds
 * it, or another -errno. Let go as the file is closed. */
int tt_os_file_hold(struct tt_os_file *file);
/* A file's identity and when it was last written (ns since 1970): of a file open, or
 * of `path` itself (a link's own), 0 or -errno. */
struct tt_os_file_stamp {
	uint64_t dev, ino; /* Windows: the volume's serial number, the file's index */
	int64_t written_ns;
};
int tt_os_file_stamp(struct tt_os_file *file, struct tt_os_file_stamp *stamp);
int tt_os_path_stamp(const char *path, struct tt_os_file_stamp *stamp);
/* The file at `path` opened for reading and held (tt_os_file_hold), never through a
 * link (-ELOOP): 0, -EWOULDBLOCK where another holds it (Windows: or has it open for
 * itself alone), or another -errno. Closed with tt_os_file_close. */
int tt_os_file_open_held(const char *path, struct tt_os_file *file);
/* Puts the file made (named) at `path` where nothing is there: 0 (made->tmp then
 * ""), -EEXIST where something is, or another -errno. */
int tt_os_file_link(struct tt_os_new_file *made, const char *path);
/* Puts it at `path` over the file `held` (tt_os_file_open_held, there now; NULL: a
 * link, or a file not held), which is closed: 0, or -EBUSY where that file cannot be
 * replaced (Windows: another has it open, not for deleting), -EEXIST where another
 * file took the name meanwhile, or another -errno; made->tmp left then. */
int tt_os_file_replace(struct tt_os_new_file *made, const char *path, struct tt_os_file *held);

/* A run's own file (place.c, on the functions above, both systems): where two
 * processes that write the same name (the same TICKTRACE_OUT, a pid the system gave
 * again) each keep their file. `since_ns`: when the run began (tt_os_file_clock_ns);
 * `before`: the file at the run's name as it began, stamped before since_ns was read
 * (still there at the end, it is older, however near their times: a tick apart they
 * may not tell); `placed`: the file this process last put there (a dump's, which its
 * exit replaces). Dev and ino 0: none. */
struct tt_os_run_file {
	int64_t since_ns;
	struct tt_os_file_stamp before, placed;
	/* The default name (ticktrace-%p.ttr): a pid repeats (Wine's first process is 32
	 * with each new wineserver, a container's 1, Linux's after wrap-around), so a file
	 * there not this process's own is another run's, never replaced, whatever its age:
	 * this one's goes at the next free number, `path`-N (struct tt_os_out_number). */
	int keep;
	/* What the file is and the setting that named it, as the lines say them (NULL:
	 * "trace", "TICKTRACE_OUT"; the spike log's, "spike log", "TICKTRACE_SPIKES") */
	const char *what, *setting;
};
/* The run's file, complete (or a stream's, held while it is written) under made->tmp,
 * put at `path`: where nothing is; over a file there from before the run began, or
 * this process's own, or a link (with run->keep: this process's own alone; else the
 * next free number, `path`-N, said); else beside it, the pid before the extension (`path`
 * rewritten), with what to say of it in `said` (a line, "" where it went to `path`:
 * `pid_named`, a name with the pid in it, says the system gave the pid again). The file
 * at `path` is held while it is judged and replaced: two that end at once never both
 * replace the same older file. 0 or -errno. */
int tt_os_file_place(struct tt_os_new_file *made, char *path, size_t size, struct tt_os_run_file *run,
		     int pid_named, char *said, size_t said_size);
/* The live file at `path` ("NAME.live"), made new (tt_os_file_create) and held
 * (tt_os_file_hold) while the process runs, so that two processes of one name each
 * keep theirs and a killed run's is never replaced: where a file is there (another
 * process's live file, held; a killed run's, not held, whose events are to be read;
 * another user's; a link), left as it is, and this one's beside it, the pid before the
 * trace's extension ("NAME.PID.ttr.live", `path` rewritten), with what to say of it in
 * `said` (a line, "" where it went to `path`). 0 or -errno. */
int tt_os_live_place(char *path, size_t size, struct tt_os_file *file, char *said, size_t said_size);
/* `tag` put before the file name's extension in `path` (at its end without one): 0,
 * or -ENAMETOOLONG. */
int tt_os_name_tag(char *path, size_t size, const char *tag);
/* Whether the file name in `path` (after its last separator) is `name`. */
int tt_os_name_is(const char *path, const char *name);
/* `path`'s last separator (Windows: '\\' too), NULL where none. */
const char *tt_os_last_separator(const char *path);
/* The number a run's file at the default name takes, "-N" before its extension
 * (run->keep: another run's of the same pid is there), chosen once, as the process
 * (pid, and image: Linux's exec'd images each choose their own) first names it: the
 * first at which neither a file nor a live file (NAME.live) is there, so that its live
 * file and its trace have one name, not another run's. A guess (the exit's placing
 * takes its name in one step, tt_os_file_place). `first`: what was there at the
 * name itself, the file or a killed run's live file, as the line names it. */
struct tt_os_out_number {
	uint32_t pid, image; /* (pid 0: none chosen yet) */
	unsigned n;	     /* (0: the name itself) */
	int said;
	char first[4096 + 8];
};
/* `path`, the default name expanded, numbered (in place) as this process and image
 * first numbered it. 0 or -ENAMETOOLONG. */
int tt_os_out_numbered(struct tt_os_out_number *number, uint32_t pid, uint32_t image, char *path, size_t size);
/* In `said`, once for the pid and image that chose it, the line that says the run's
 * file went to `path` where its number is not 0 (another run's file was there as it
 * began, kept); else "". */
void tt_os_out_said(struct tt_os_out_number *number, uint32_t pid, uint32_t image, const char *path,
		    char *said, size_t size);

/* Which file a file opened is, so that a caller keeping one of its own in a process
 * that is the program's can tell it is still its own (Linux: the program may close
 * any descriptor and open its own file at the number, or dup2 over it: base/fds.c):
 * Linux its device and inode, Windows its file index (a
 * handle not of a disk file, NUL, a console, a pipe: its kind alone). `flags`: Linux's
 * open flags, read where `exact` (then the file is refused, -EBADF, unless it is
 * close-on-exec, as the runtime opens its own: a dup2 or a program's open leaves it
 * clear), else left as the caller set them; Windows' 0. */
struct tt_os_file_id {
	uint64_t dev, ino;
	int flags;
};
/* `file`'s identity into *id (one system call where not `exact`): 0, or -EBADF where
 * no file is there, or -errno. */
int tt_os_file_identify(struct tt_os_file file, struct tt_os_file_id *id, int exact);
/* How many files the process may hold open at once (Linux: the soft RLIMIT_NOFILE, its
 * descriptors' numbers below it, 1024 where it cannot be read; Windows: UINT64_MAX, a
 * handle being no small number of a table a program takes by range). */
uint64_t tt_os_files_limit(void);
/* A copy of `file` in *copy, open on the same file, which a program's child never
 * inherits (close-on-exec; Windows: a handle not inherited), at a number `from` or
 * above (Linux: F_DUPFD_CLOEXEC, the numbers a program takes first left to it;
 * Windows: any handle, `from` unused). `file` stays open. 0, or -EMFILE where no number
 * is free from `from` up (or `from` is past the limit), -EBADF where `file` is none
 * (negative) or closed, or another -errno. */
int tt_os_file_copy(struct tt_os_file file, int from, struct tt_os_file *copy);
/* The file `id` is, opened again by its `path` (where the program closed the caller's
 * number): a regular file alone, never through a link, never a FIFO waited on, with
 * id's open flags (Windows: for writing); 0 with `file`, or -EBADF where what is at
 * `path` is not that file (no file left open). */
int tt_os_file_reopen(const char *path, const struct tt_os_file_id *id, struct tt_os_file *file);

/* ---- a byte sink ---- */

/* Where the bytes of a file the runtime writes go (the writer's buffer, struct tt__out,
 * hands them on in few, large writes): `put` writes `a`, then `b` (either size may be
 * 0), after the bytes put before, which end at byte `at` of the file; all of them, or
 * -errno (then nothing more is put). A file's (below), or the runtime's own (a
 * descriptor of ticktrace's checked before each write; memory: the writer's). */
struct tt_os_sink {
	int (*put)(struct tt_os_sink *sink, const void *a, size_t a_size, const void *b, size_t b_size,
		   uint64_t at);
};
/* A file's sink: its bytes written where the file is (tt_os_file_seek), on from there
 * (WriteFile; write and writev, a short write's rest written after it). The caller's
 * care of its file, where it keeps one (Linux's descriptors, base/fds.c: the program
 * may close or take the number): `check`, called just before each system call the put
 * makes, with the file's place `at` there, answers 0 with `file` the one to write (it
 * may set another, the same file found again, moved to `at`) or -errno, which the put
 * returns; a write refused as no file at all (EBADF, ERROR_INVALID_HANDLE) is checked
 * again, once. `io` is called with 1 before each call that may block and 0 after it.
 * A device or FIFO opened not to block (Linux) whose reader takes nothing is waited
 * for, `wait_ms` at most each time (then -ETIMEDOUT). tt_os_file_sink sets no care and
 * no wait. */
struct tt_os_file_sink {
	struct tt_os_sink sink;
	struct tt_os_file file;
	int (*check)(struct tt_os_file_sink *sink, uint64_t at);
	void (*io)(int begin);
	int wait_ms;
};
void tt_os_file_sink(struct tt_os_file_sink *sink, struct tt_os_file file);

/* ---- time ---- */

int64_t tt_os_monotonic_ns(void); /* QueryPerformanceCounter; CLOCK_MONOTONIC */
int64_t tt_os_boottime_ns(void);  /* with time asleep: QueryInterruptTime; CLOCK_BOOTTIME */
int64_t tt_os_realtime_ns(void);  /* since 1970: GetSystemTimePreciseAsFileTime; CLOCK_REALTIME */
/* Since 1970 on the clock a file's written time is stamped from (GetSystemTimeAsFileTime
 * less a tick; CLOCK_REALTIME_COARSE), up to a tick behind tt_os_realtime_ns: a file
 * written after it was read is never stamped earlier. */
int64_t tt_os_file_clock_ns(void);
/* CPU time used so far (GetThreadTimes, GetProcessTimes; the CPU clocks): the
 * calling thread's, the whole process's. */
int64_t tt_os_thread_cpu_ns(void);
int64_t tt_os_process_cpu_ns(void);
/* Another thread of the process, by its id (tt_os_thread_id), opened to read its CPU
 * time until tt_os_thread_close: a HANDLE with THREAD_QUERY_LIMITED_INFORMATION
 * (Windows; any handle with that right reads too), its CPU clock's id (Linux); 0 when
 * it cannot be opened. tt_os_thread_cpu_ns_of: its CPU time so far, -1 when it cannot
 * be read. */
uintptr_t tt_os_thread_open(uint32_t tid);
int64_t tt_os_thread_cpu_ns_of(uintptr_t thread);
void tt_os_thread_close(uintptr_t thread);
/* Its name, as tt_os_thread_name_of's, read through what was opened: on Windows still
 * there once the thread ended without its exits run (TerminateThread), and never that
 * of another thread given its id since. */
size_t tt_os_thread_name_at(uintptr_t thread, char *name, size_t size);
/* The TSC and the clocks, read as close together as it can (the tightest of a few
 * tries, the TSC in the middle of the monotonic clock's reading): anchor.c, one for
 * both systems, on the clocks above. */
void tt_os_anchor(struct tt_anchor *anchor);
/* TSC ticks per second from one anchor to a later one; 0 when no time passed. */
uint64_t tt_os_anchor_hz(const struct tt_anchor *from, const struct tt_anchor *to);
/* TSC ticks in `ns` nanoseconds, measured against the monotonic clock over 100 us
 * (no sleep): for a threshold, which needs no more precision. */
uint64_t tt_os_ns_in_ticks(uint64_t ns);
/* Whether the CPU says its TSC runs at a constant rate in every state (CPUID). */
int tt_os_invariant_tsc(void);
/* The wall clocks at `anchor` (taken just before), as the MACHINE section holds them:
 * REALTIME, TAI, and the system's word on their error (Linux: adjtimex; Windows says
 * nothing: state -1, TAI taken as REALTIME, as Linux has it until an NTP daemon sets
 * the offset). */
void tt_os_clock_reading(const struct tt_anchor *anchor, struct tt_clock_reading *reading);

/* Whether the system keeps its own time by the TSC (Linux: the clocksource in use;
 * Windows does not say: 0). */
int tt_os_clock_by_tsc(void);
/* What the system says of the machine and the process's clocks beyond MACHINE's common
 * fields (sections/header.c), into `machine` (format.h: struct tt_machine_info): Linux's
 * time namespace's offsets (TT_MACHINE_TIMENS, where the kernel has time namespaces),
 * its boot id and machine id (16 bytes each, left 0 where they do not read as 32
 * hexadecimal digits); Windows says none of them, but that it is Windows
 * (TT_MACHINE_WINDOWS: what the tools say of its clocks and steal). */
void tt_os_machine_ids(struct tt_machine_info *machine);
/* The step the threads' CPU times moved by, as found in those read so far (Windows' thread
 * times, in ticks: the greatest divisor of all, 1 ms or more), into `machine`'s tick_ns
 * with TT_MACHINE_TICK (and TT_MACHINE_TICK_EACH under Wine, whose user and kernel
 * times are each cut to a tick); Linux's, exact, none. */
void tt_os_machine_tick(struct tt_machine_info *machine);

/* Calls crashed(cause) when the process dies of a fault nobody handles (a fatal
 * signal: its number, Windows' abort() as Linux's SIGABRT, 6; an unhandled exception: its code, 0xC0000005 for an access
 * violation, which no signal number reaches: format.h's crash_signal), on the
 * faulting thread (Linux: each one; Windows: the first), before the system ends it:
 * the handlers installed before are kept and called after. With `ends`, so too where
 * a signal whose default action ends the program comes while the program left that
 * default (Linux: SIGTERM, SIGINT, SIGHUP, SIGPIPE, but tt_os_on_signal's; the
 * program asking, sigaction and signal interposed, is shown the action it had, one
 * it sets back to the default or installs with SA_RESETHAND goes through ticktrace's;
 * Windows has none). crashed() runs in a signal handler: async-signal-safe, errno
 * kept. 0 or -errno. */
int tt_os_on_crash(void (*crashed)(uint32_t cause), int ends);
/* The signal `name` names ("SIGUSR2", "USR2", or its number) where ticktrace may take
 * it to dump: its number; 0 where it names none, or a crash's, SIGKILL or SIGSTOP;
 * -ENOSYS where the system has no signals to send (Windows). */
int tt_os_dump_signal(const char *name);
/* Calls asked() (in a signal handler: async-signal-safe, errno kept) each time `sig`,
 * tt_os_dump_signal's, comes, with every signal blocked meanwhile; before
 * tt_os_on_crash, which then leaves `sig` to it. 0 or -errno. */
int tt_os_on_signal(int sig, void (*asked)(void));
/* Calls before() ahead of each fork, and parent() and child() after it in each
 * (pthread_atfork; Windows has no fork: nothing). 0 or -errno. */
int tt_os_at_fork(void (*before)(void), void (*parent)(void), void (*child)(void));
/* Whether the process's end ends ticktrace's threads wherever they are, so that the
 * run's end ends them first (base/threads.c): Windows' ExitProcess (under Wine, one it
 * ended in a system call took the process down now and then: SIGSEGV in Wine's own
 * code past the exit); Linux's exit_group ends them with no harm. */
#ifdef _WIN32
#define TT_OS_END_JOINS 1
#else
#define TT_OS_END_JOINS 0
#endif
/* What ends a process with no chance to write its trace, as messages name it: a live
 * file outlives it (a Windows user's end is TerminateProcess, Task Manager's or
 * taskkill /F's, not a signal: outside tester r50 #6). */
#ifdef _WIN32
#define TT_OS_HARD_KILL "TerminateProcess"
#else
#define TT_OS_HARD_KILL "SIGKILL"
#endif
/* Whether start-up may wait for a thread of ticktrace's to run: Linux's does (none
 * that a fork finds starting, base/threads.c; the stream's drain makes its file in a
 * table of its own, modes/stream.c); Windows' runs in a DLL's attach, under the
 * loader's lock, which a new thread needs before it runs. */
#ifdef _WIN32
#define TT_OS_START_WAITS 0
#else
#define TT_OS_START_WAITS 1
#endif
/* Whether the runtime sees the program's threads start (Linux: pthread_create,
 * interposed, lifecycle/pthread.c); Windows' threads start in the system's
 * CreateThread, each seen first at its first event. */
#ifdef _WIN32
#define TT_OS_THREADS_SEEN_STARTING 0
#else
#define TT_OS_THREADS_SEEN_STARTING 1
#endif

/* ---- a thread's counters ---- */

/* What any thread of the process may read of another's without privilege, as a
 * SCHEDSTAT section's readings hold it (format.h: struct tt_schedstat_sample), each
 * system what it gives, and tt_os_counters_flags what that is; a field a system does
 * not give is 0, never made up. Linux: the thread's CPU time (its CPU clock, exact:
 * /proc's run time lags a tick while it runs), its time waiting on a run queue and its
 * timeslices (/proc/self/task/TID/schedstat), its page faults (TID/stat, the dearest
 * file, three times schedstat, opened once first wanted), its files kept open (in the
 * reader's table), each reading a pread, parsed by hand (sscanf was a tenth of
 * tt-sched's time). Windows: its CPU time (its cycle time at the TSC's rate where
 * QueryThreadCycleTime answers; else its thread times, GetThreadTimes, in steps of the
 * system's tick) and, where ntdll answers ThreadSystemThreadInformation (real Windows,
 * not Wine), its context switches, as timeslices; no run-queue wait, no faults. */
struct tt_os_counters {
	intptr_t handle; /* Linux: schedstat's descriptor; Windows: the thread's HANDLE. -1: not open */
	intptr_t stat;   /* Linux: stat's descriptor, once its faults are first read; -1: not open */
	int dir;         /* Linux: tt_os_counters_dir's descriptor it was opened in, or -1 */
	uint32_t tid;    /* 0: not open (a slot not yet set up holds zeros) */
};
/* What the readings hold: those of format.h's enum tt_schedstat_flags that say it
 * (TT_SCHEDSTAT_RUN_ONLY: run_ns alone; with it TT_SCHEDSTAT_SWITCH_COUNT: timeslices
 * counts the thread's switches; TT_SCHEDSTAT_TICK_STEPS: run_ns moves in ticks), found
 * once (Windows: whether QueryThreadCycleTime and ntdll answer for the calling thread,
 * and the anchor the cycle time is scaled from, taken then); 0: every field read (Linux). */
uint32_t tt_os_counters_flags(void);
/* A directory each thread's counters open faster in (Linux: /proc/self/task, in the
 * caller's table, its descriptor kept there: a thread's files opened in it cost a third
 * of those opened by their whole path), or -errno (Windows: -ENOSYS, none needed). */
int tt_os_counters_dir(void);
/* Whether what a thread's counters keep open is a file in the reader's table, which a
 * program that closes every descriptor may close and reuse behind its back (Linux's
 * /proc files: 1), or not (Windows: the thread's handle, no table a program empties: 0). */
#ifdef _WIN32
#define TT_OS_COUNTERS_FILES 0
#else
#define TT_OS_COUNTERS_FILES 1
#endif
/* Opens thread `tid`'s counters for the caller to read (in `dir`, tt_os_counters_dir's,
 * or by the whole path where -1): 0 or -errno (it exited). */
int tt_os_counters_open(struct tt_os_counters *c, uint32_t tid, int dir);
/* Its counters now into *out (the page faults only with `faults`, and only where its
 * CPU time is not `ran_ns`, the last reading's (0: none): the dearest part, left as
 * they are in *out without), `ns` the monotonic clock once they were read, the CPU time
 * first (Linux: it and the wait within TT_SCHEDSTAT_SPAN_NS before it, read again where
 * the reader was kept off its CPU between them, then the faults; Windows: two calls, no
 * wait to miss, no faults): 0, or -1 (it exited, or they were never read within the span). */
int tt_os_counters_read(struct tt_os_counters *c, struct tt_schedstat_sample *out, int faults, uint64_t ran_ns);
void tt_os_counters_close(struct tt_os_counters *c);
/* The calling thread's own counters now (`tid`: its tt_os_thread_id; Linux: its
 * schedstat opened for a moment in the caller's table, closed only while still that
 * file, its faults from getrusage): 0, or -1 (as above). */
int tt_os_counters_read_own(uint32_t tid, struct tt_schedstat_sample *out);
/* Another thread's counters now, its faults too, by a thread that keeps nothing open
 * (a dump's: Linux's files opened for a moment in the caller's table, each closed only
 * while still that file): 0, or -1 (as above). */
int tt_os_counters_read_other(uint32_t tid, struct tt_schedstat_sample *out);
/* Whether the system accounts stolen time (format.h: TT_SCHEDSTAT_STEAL; Linux:
 * /proc/stat's steal above zero; Windows does not say: 0). */
int tt_os_steal_accounted(void);
#ifndef _WIN32
/* perf_event_open(2) with its arguments (`attr` a struct perf_event_attr): a descriptor,
 * or -1 and errno; EPERM without asking where a seccomp filter kills the process for
 * asking (systemd's SystemCallFilter=, whose default action is SIGSYS, not an error):
 * found once, by a child that shares the filter and the memory (clone, CLONE_VFORK,
 * no SIGCHLD) asking first, where the process runs under a filter at all
 * (PR_GET_SECCOMP). */
int tt_os_perf_event_open(void *attr, int tid, int cpu, int group, unsigned long flags);
#endif

/* ---- the process ---- */

uint32_t tt_os_process_id(void);
/* The program's name (its file's, without the directory); length, as tt_os_thread_name. */
size_t tt_os_process_name(char *name, size_t size);
/* The process that started this one (Linux: getppid; Windows: the one its creation
 * inherited from, ntdll's ProcessBasicInformation), 0 where not known. */
uint32_t tt_os_parent_id(void);
/* The program's command line as PROCESS holds it (format.h): its arguments in UTF-8,
 * each ended by a NUL (Windows: its one string split as the C runtime splits it into
 * argv), as many whole ones as `size` bytes hold; the bytes written. */
size_t tt_os_command_line(char *line, size_t size);
/* The machine's host name (Windows: its DNS host name; Linux: uname's nodename);
 * length, as tt_os_thread_name. */
size_t tt_os_host_name(char *name, size_t size);

/* The modules mapped in this process: for each range of each, `each` is called with
 * the module's path (UTF-8; the program's file for the program), its base (where it
 * was loaded: the ELF load bias, the PE image base), the range, its offset in the
 * file, and its build id (Windows: the CodeView record's GUID and age; Linux: the ELF
 * note), until it returns non-zero. The ranges: Linux gives every loadable segment
 * (code, and the data call sites' descriptors live in), Windows its readable
 * sections that stay in memory, its data too. 0, or what `each` returned. */
struct tt_os_module {
	const char *path; /* from the root (Linux: a name the loader found relative to the
	                   * working directory resolved) */
	const char *loaded_as; /* the loader's own name for it (dlclose's link map's) */
	uint64_t base, start, end, file_offset;
	const uint8_t *build_id;
	uint32_t build_id_len;
};
int tt_os_modules(int (*each)(const struct tt_os_module *module, void *arg), void *arg);
/* The MODULES section's body (format.h) from tt_os_modules (modules.c, both systems):
 * tt_os_module_list_add, its callback, appends each range as a struct tt_module_info,
 * its path and its build id to `data` (malloc'd, grown; the caller frees it), and
 * counts it; err is -ENOMEM once memory ran out (what follows is not kept). */
struct tt_os_module_list {
	char *data;
	size_t len, cap;
	uint64_t count;
	int err;
};
int tt_os_module_list_add(const struct tt_os_module *module, void *list);
/* From now on, `unloaded` is handed each module unloaded (Windows: a DLL FreeLibrary
 * unloads, as ntdll's LdrRegisterDllNotification tells it, before it is unmapped): its
 * ranges as a MODULES section's body (tt_os_module_list_add's: the callee owns its
 * data), the span of its whole image [low, high) (its data too: call-site descriptors,
 * still readable then) and the TSC as it went. It runs under the loader's lock: it may allocate, but
 * must neither load a module nor wait for a thread that may (nor take a lock held
 * around tt_os_modules, which waits for the loader). Linux: -ENOTSUP (its runtime
 * wraps dlclose: lifecycle/unload.c). 0 or -errno. */
int tt_os_on_unload(void (*unloaded)(struct tt_os_module_list *ranges, uint64_t low, uint64_t high,
				      uint64_t tsc));
/* A number that changes as modules are loaded or unloaded (Linux: the loader's count
 * of both; Windows: the loaded modules' handles, hashed, with the loads and unloads
 * the loader told since tt_os_on_unload: one unloaded and loaded again at its address
 * leaves the handles as they were). */
uint64_t tt_os_modules_changes(void);
/* Whether `at` lies in a module loaded now: 1 or 0; where 1, *symbol the name of the
 * module's exported symbol that begins exactly at `at` (Linux: dladdr's, among the
 * dynamic symbols; Windows names none), valid while the module stays loaded, or NULL. */
int tt_os_address_loaded(const void *at, const char **symbol);
/* The module `at` lies in, loaded now: 1, or 0 (none). Where 1, *where: its base (as
 * tt_os_module's), the loader's own name for it (Linux: the link map's, "" for the
 * program; Windows: its path, written into `buf`, `cap` bytes), valid while it stays
 * loaded, and the symbol, as tt_os_address_loaded's. */
struct tt_os_address {
	uint64_t base;
	const char *loaded_as;
	const char *symbol;
};
int tt_os_address_module(const void *at, struct tt_os_address *where, char *buf, size_t cap);
/* The file name, without its directory, of the module the loader calls `loaded_as`
 * (Linux's "": the program's file, /proc/self/exe), in `buf` or within `loaded_as`. */
const char *tt_os_module_file(const char *loaded_as, char *buf, size_t cap);

/* ---- text in memory ---- */

/* A stdio stream whose text collects in memory (Linux: open_memstream; Windows: a
 * temporary file deleted as it closes, read back), then closed: 0 with *text (the
 * caller frees it) and *len, or -errno (-ENOMEM), nothing kept. */
struct tt_os_memstream {
	FILE *stream; /* NULL: none could be made (errno) */
	char *text;
	size_t len;
};
FILE *tt_os_memstream_open(struct tt_os_memstream *m);
int tt_os_memstream_close(struct tt_os_memstream *m, char **text, size_t *len);

#endif /* TT_PLATFORM_H */
