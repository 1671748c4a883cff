/* record's protocol: what `ticktrace record` (tools/cmd/record.c) and the libraries it
 * preloads into the program (the runtime, libticktrace: src/; the patcher,
 * libticktrace-detour: src/detour/) tell each other, in one place below both. record
 * sets the variables in the environment of the program it starts; the runtime and
 * the patcher read them in every process of the run (the program's children inherit
 * them); the runtime tells record which files it wrote through one list. Nothing else
 * passes between them. Not installed. */
#ifndef TT_RECORD_PROTOCOL_H
#define TT_RECORD_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* ---- the environment: each variable, who sets it, who reads it ---- */

/* The raw file's name; "%p" in it is the pid of the process that writes it,
 * expanded by the runtime alone (writer/output.c; record learns the names written
 * from TT_ENV_LIST). Set by the user, or by record (-o; default ticktrace-%p.ttr);
 * read by the runtime as it starts (a relative name: in the directory it started in). */
#define TT_ENV_OUT "TICKTRACE_OUT"
/* Its default, and the name a TT_ENV_OUT that names a directory (one there, or written
 * with a trailing separator) gets in it: the runtime's (both systems') and record's. */
#define TT_OUT_DEFAULT "ticktrace-%p.ttr"

/* "1": the buffers are a shared mapping of the file OUT.live, which a process killed
 * before it wrote its trace leaves. Set by record unless the user set it; read by the
 * runtime (modes/live.c). */
#define TT_ENV_LIVE "TICKTRACE_LIVE"

/* A file to which every process of the run appends a line (one write, O_APPEND) for
 * each trace file it creates: its raw file, its live file, its stream. Set by record
 * (in its directory of the run); read by the runtime as it starts (writer/output.c:
 * a program that clears its environment still lists), which appends; read by record
 * after the run, for its summary and -c. */
#define TT_ENV_LIST "TICKTRACE_LIST"
/* The line a process appends, before its log's absolute path, once it names the log
 * of ticktrace's lines (TICKTRACE_LOG's, or the one beside its trace where its stderr
 * is not a terminal: under record, as in the zero-markup build): record names the
 * logs in its summary. (A trace file's path, absolute, never begins so.) */
#define TT_LIST_LOG "log:"
/* The line a process appends, before its write's errno, a space and the trace's
 * absolute path, where it could not write its trace at exit (said on its stderr or in
 * its log, which may be lost with it: a directory gone): record counts them in its
 * summary, each with why. */
#define TT_LIST_LOST "lost:"
/* The line the run's first process appends where TT_ENV_OUT names a directory no file
 * goes into, before "DIR: why" (the default name taken instead): record says it on its
 * own stderr, where the runtime's line may be in a log. */
#define TT_LIST_REFUSED "refused:"

/* "PID[:SECONDS.NANOSECONDS]": the run's first process, the program record started,
 * and when its run began (CLOCK_REALTIME). Every process of another pid (one the
 * program started, however: fork, fork and exec, posix_spawn, vfork, a shell's, and
 * their exec'd images) puts its pid in its files' names where TT_ENV_OUT has no %p, as
 * a forked child does, and judges a file's age by the run's start: no process of the
 * run replaces another's file. Set by record (the pid); set by the runtime as it starts
 * in a process that finds none or its own pid (the pid and start), so that a run
 * without record is one too; read by the runtime as it starts (writer/output.c). */
#define TT_ENV_PROGRAM_PID "TICKTRACE_PROGRAM_PID"

/* "PID:N:APART:SECONDS.NANOSECONDS": the image that process PID execs next is its Nth
 * since its run began, and names its files apart (.execN); with APART 1 the process is
 * a child (forked, vfork'd, or apart under record), whose files have its pid as a
 * forked child's do; its run began at that CLOCK_REALTIME time (a file put at its name
 * since is another process's). Set by the runtime in the environment an exec passes on
 * (lifecycle/exec.c); read by the runtime of the next image (writer/output.c). Not
 * record's, but it names the files record lists. */
#define TT_ENV_EXEC_IMAGE "TICKTRACE_EXEC_IMAGE"

/* The functions to patch: -f's patterns, one a line. Set by record; read by the
 * patcher (detour/detour.c). */
#define TT_ENV_DETOUR "TICKTRACE_DETOUR"

/* Set (record --list): the patcher says what it would patch, on stdout, and ends the
 * process before main, nothing patched. Set by record; read by the patcher
 * (detour/detour.c). */
#define TT_ENV_DETOUR_LIST "TICKTRACE_DETOUR_LIST"

/* A directory (absolute) the patcher searches for the program's debug files first
 * (record --debug-dir), as the converter does. Set by record; read by the patcher
 * (detour/symbols.c). */
#define TT_ENV_DETOUR_DEBUG_DIR "TICKTRACE_DETOUR_DEBUG_DIR"

/* A directory where the patcher leaves a marker for each program already heard, so
 * that what it has to say is said once per program. Set by record (its directory of
 * the run); read and written by the patcher (detour/children.c). */
#define TT_ENV_DETOUR_ONCE "TICKTRACE_DETOUR_ONCE"
/* The marker, in that directory, of a run in one of whose processes a -f pattern
 * matched a function: without it, record says no pattern matched (exit 1). */
#define TT_DETOUR_MATCHED_MARKER "matched"
/* The marker of a run in one of whose processes the patcher matched the -f patterns
 * against the functions, and said what each missed: without it (the program ended
 * first, or recording was off), record does not say they missed. */
#define TT_DETOUR_LOOKED_MARKER "looked"
/* The marker of a run in one of whose processes the patcher ran out of descriptors
 * (EMFILE) as it read the modules' files or counted the threads: record says so, and
 * keeps the program's exit status. Markers are directories, made with no descriptor
 * free. In it, one for each image that ran out, "PID.IMAGE-NAME" (the pid in ten
 * digits, the exec'd image's number, TT_ENV_EXEC_IMAGE's, in five: in order by name;
 * NAME the kernel's, /proc/PID/comm's), which record names. */
#define TT_DETOUR_EMFILE_MARKER "emfile"

/* "0" (--no-follow): the patcher takes itself and the runtime out of TT_ENV_PRELOAD,
 * and the program's children run untraced. Set by record; read by the patcher
 * (detour/children.c). */
#define TT_ENV_DETOUR_FOLLOW "TICKTRACE_DETOUR_FOLLOW"

/* The loader's: record puts the runtime and the patcher there (after a sanitizer's
 * runtime the program needs and the user's own preload); the patcher takes them out
 * again under TT_ENV_DETOUR_FOLLOW=0. */
#define TT_ENV_PRELOAD "LD_PRELOAD"

/* Records kept per thread. Set by the user, or by record unless the user set it or
 * TT_ENV_MODE: the most the runtime takes (2^36), so that a run keeps every event up
 * to its memory budget (TICKTRACE_MEMORY), as uftrace does; read by the runtime as it
 * starts (lifecycle/config.c). */
#define TT_ENV_BUFFER "TICKTRACE_BUFFER"
#define TT_RECORD_BUFFER "68719476736"

/* What becomes of a full buffer (stop, ring, stream). Set by the user; read by the
 * runtime as it starts (lifecycle/config.c), and by record, which then leaves
 * TT_ENV_BUFFER to the user. */
#define TT_ENV_MODE "TICKTRACE_MODE"

/* A duration: function calls that return within it, having recorded nothing
 * inside, are erased as they return and counted. Set by the user, or by record
 * (--min-dur); read by the runtime as it starts (lifecycle/config.c). */
#define TT_ENV_MIN_DUR "TICKTRACE_MIN_DUR"

/* "0": the calls the program makes into shared libraries through its GOT (fopen,
 * malloc) are not recorded; "1": they are, as scopes named fopen@libc.so.6. Unset: in
 * the zero-markup build, not under record -f. Set by the user; read by the detour
 * library as it starts (libcalls.c). */
#define TT_ENV_LIBCALLS "TICKTRACE_LIBCALLS"

/* A file of function names (shell patterns, one a line; # starts a comment) that
 * the patcher leaves unpatched: in the zero-markup build the functions `ticktrace
 * spikes --suggest --exclude-list FILE` found too short to record; with record -f
 * exceptions to its patterns. Set by the user; read by the detour library as it
 * starts (detour.c). */
#define TT_ENV_EXCLUDE "TICKTRACE_EXCLUDE"

/* ---- between the two preloaded libraries ---- */

/* Whether `tid` (a kernel thread id) is one of ticktrace's own threads: defined and
 * exported by the runtime (base/threads.c) for the patcher, which patches only while
 * no thread of the program's but the first runs (ticktrace's run none of its code). */
__attribute__((visibility("default"))) int tt__own_thread(pid_t tid);
/* Whether `main` is a function tt__start_thread started, one of ticktrace's own
 * threads runs (base/threads.c; the program's threads are told apart from ticktrace's
 * before they run): the patcher's pthread_create starts those as they are. */
__attribute__((visibility("default"))) int tt__own_thread_main(void *(*main)(void *));

/* The address space the process may still map under its limit (`ulimit -v`,
 * RLIMIT_AS), in bytes, UINT64_MAX when it has none: defined and exported by the
 * runtime (base/slab.c), which sizes its reservations to a share of it, as the
 * patcher does its shadow stacks, so that the program keeps most of its room. */
__attribute__((visibility("default"))) uint64_t tt__address_room(void);

/* Where ticktrace's lines go (TICKTRACE_LOG: the program's stderr, a file, nowhere),
 * the patcher's as the runtime's: defined and exported by the runtime (base/lines.c). */
__attribute__((visibility("default"))) FILE *tt__log(void);

/* The patcher's name for the function it patched, or the library call it hooked
 * (TT_FUNC_LIBRARY_CALL), whose records carry `address`, as the converter names it
 * (symbol_name.h), into `buf` (`cap` bytes, cut short): its length, or 0 where it
 * patched nothing or knows no symbol (a function patched by address). Any thread may
 * ask, at any time; the name is made only when asked. */
typedef size_t (*tt__patched_namer_fn)(uint64_t address, char *buf, size_t cap);
/* The patcher, once it has patched, hands the runtime its namer and an address inside
 * each module it patched in: the live spike log, snapshots and report at exit name
 * what it patched as the converter does, where the program's dynamic symbols do not (a
 * static function, a program built without -rdynamic), while those modules stay as
 * loaded then (their link maps' names and biases). Nothing is named before main: most
 * runs never ask. Defined and exported by the runtime (report/patched.c); 0, or
 * -ENOMEM, or -EALREADY (once a process). */
__attribute__((visibility("default"))) int tt__patched_namer(tt__patched_namer_fn namer,
							     const uintptr_t *modules, size_t n);

/* TT_ENV_MIN_DUR when the environment sets none: defined and exported by the runtime
 * (lifecycle/config.c) for the patcher, which sets the zero-markup build's before
 * main (threads registered before keep every call). */
__attribute__((visibility("default"))) void tt__min_dur_default(uint64_t ns);

/* The patcher turned a patched function off (src/detour/turn_off.c) at `tsc`, after a
 * thread's exit hook had erased `after_calls` of its calls (TT_ENV_TURN_OFF): its
 * later calls are not recorded. Each function once; the runtime keeps it for the
 * file's TURNED_OFF section. Defined and exported by the runtime (writer/turned_off.c);
 * no lock, no allocation (called from the trampoline's rare path). */
__attribute__((visibility("default"))) void tt__turned_off(uint64_t address, uint64_t tsc,
							   uint64_t after_calls);

/* How many calls of a patched function a thread's TICKTRACE_MIN_DUR erases (each short,
 * nothing recorded inside) before the function is turned off: its patch undone, its
 * later calls neither recorded nor counted (said at exit and in the file). "0": never.
 * Unset: 1024 in the zero-markup build, never under record -f. Set by the user; read
 * by the detour library as it starts (turn_off.c). */
#define TT_ENV_TURN_OFF "TICKTRACE_TURN_OFF"

#endif /* TT_RECORD_PROTOCOL_H */
