/* ticktrace runtime, layer writer: the raw file (FORMATS.md), whole (a dump) or
 * section by section (mode stream, the live file). Never installed. */
#ifndef TT_WRITER_H
#define TT_WRITER_H

#include <stdbool.h>

#include "core/core.h"
#include "pretty_name.h"

/* buffer.c: a file of ticktrace's written through a descriptor (Linux's struct
 * tt__out, sections.h), its sink checking the descriptor before each write. */
struct tt__fd_out {
	struct tt__out out; /* (first: tt__fd_out) */
	struct tt_os_file_sink sink; /* the platform's, its care tt__out_own */
	struct tt__fd file; /* checked before each write (tt__out_own) */
	const char *path;   /* where it is found again if the program closed it, or NULL */
};
/* Emptied, its descriptor yet to be kept (file). */
void tt__fd_out_init(struct tt__fd_out *f) TT__HIDDEN;
/* The file of a struct tt__out that is a struct tt__fd_out's. */
struct tt__fd_out *tt__fd_out(struct tt__out *out) TT__HIDDEN;
/* Before each use of tt__fd_out(out)->file.file: 0 while it is the file written (found
 * again by its path if need be, at the offset written to); -EBADF once it is not,
 * out->err then set to it unless an error came first. */
int tt__out_own(struct tt__out *out) TT__HIDDEN;

/* writer.c: the whole file a dump writes */
int tt__write_file(const char *path) TT__HIDDEN;
/* The same, the run's own file (tt__write_run_file_with: `path` may be rewritten). */
int tt__write_run_file(char *path, size_t size) TT__HIDDEN;
void tt__file_header(struct tt_file_header *header, uint32_t flags) TT__HIDDEN;
void tt__out_file_header(struct tt__out *out, uint32_t flags) TT__HIDDEN;

/* output.c: where a file goes, and how it gets there */
/* Takes TICKTRACE_OUT, made absolute, for the rest of the run (at start-up). */
void tt__resolve_out(void) TT__HIDDEN;
int tt__default_path(char *buf, size_t size) TT__HIDDEN; /* TICKTRACE_OUT, expanded */
/* Why writing the trace at exit met `err` (-errno) where the program changed its user
 * since the start (setuid: a daemon dropping root), into buf (left as it is: not so). */
void tt__out_lost_why(int err, char *buf, size_t size) TT__HIDDEN;
/* At start-up, in the run's first process, of a TICKTRACE_OUT given: what the exit's
 * writing would meet there said now, before a long run, not refused (a directory it
 * cannot write into; another user's file or link in a sticky one, which only its owner
 * may replace; another user's directory, or their link to one, tt_os_dir_ours). */
void tt__check_out(void) TT__HIDDEN;
/* `what` ("the trace", "the stream", "the live file") could not be made at `path`, the
 * run's name TICKTRACE_OUT gave (err, -errno, the place's: not there, not writable,
 * full; not a size limit's): the run's name is the default one from
 * now on, in the directory the run began in, as for a directory it cannot write into,
 * said (record learns where it went as it learns every file); 0 and the new path in `path`, or `err` where
 * the name is the default already (or a device's, written in place). */
int tt__out_fall_back(int err, const char *what, char *path, size_t size) TT__HIDDEN;
/* This process is one the run's first started (under `ticktrace record`, one the
 * program started), not forked by this image: an exec'd image of a child. */
int tt__out_is_apart(void) TT__HIDDEN;
/* "TICKTRACE_EXEC_IMAGE=..." for the environment of the image this process execs next
 * (a vfork child's: its process's first), in `buf`; 0 or -ENAMETOOLONG. */
int tt__exec_image_setting(char *buf, size_t size, int vfork_child) TT__HIDDEN;
/* The whole file at the default path (TICKTRACE_OUT), listed (tt__list_written);
 * 0 or -errno. */
int tt__write_default_file(void) TT__HIDDEN;
/* At the end: a run that recorded nothing (no event, none dropped) and was named no
 * TICKTRACE_OUT, as a program merely linked with ticktrace run for its --help, has no
 * file to write into the working directory, and says so (1); 0 otherwise. */
int tt__nothing_to_write(void) TT__HIDDEN;
/* A trace file now at `path` (relative to the working directory): its absolute path
 * appended as a line to TICKTRACE_LIST, when set, so that whoever started the run
 * (`ticktrace record`) learns every file its processes wrote. Async-signal-safe. */
void tt__list_written(const char *path) TT__HIDDEN;
/* A line of TICKTRACE_LIST's tagged `tag` (record_protocol.h), `path` after it made
 * absolute: the log of ticktrace's lines now at it (TT_LIST_LOG: TICKTRACE_LOG's, or
 * beside the trace), a trace not written (TT_LIST_LOST), a directory refused
 * (TT_LIST_REFUSED): record says each. */
void tt__list_tagged(const char *tag, const char *path) TT__HIDDEN;
/* `pattern` with %p replaced by the process id, and, where it has no %p, a forked
 * child's pid appended (an exec'd image's .execN before the extension): a file of
 * the process's own; 0 or -ENAMETOOLONG. */
int tt__expand_path(const char *pattern, char *buf, size_t size) TT__HIDDEN;
/* Only %p replaced. */
int tt__expand_pid(const char *pattern, char *buf, size_t size) TT__HIDDEN;
/* Writes a file at `path` the same way (under a temporary name, renamed when
 * complete; a device or a pipe in place) with `write`, which returns 0 or -errno. */
typedef int (*tt__file_writer)(struct tt__out *out, void *arg);
int tt__write_file_with(const char *path, tt__file_writer write, void *arg) TT__HIDDEN;
/* The same, put at `path` only where nothing is there (a link, one step): -EEXIST
 * where a file is, which is never replaced (a device or a FIFO of the user's is
 * written in place, as by tt__write_file_with). */
int tt__write_new_file_with(const char *path, tt__file_writer write, void *arg) TT__HIDDEN;
/* The same for the run's own file at `path` (TICKTRACE_OUT expanded, in a buffer of
 * `size`): where another process of the same name wrote there since this one began,
 * or streams there now, written beside it with the pid before the extension, said, and
 * `path` rewritten (output.c). */
int tt__write_run_file_with(char *path, size_t size, tt__file_writer write, void *arg) TT__HIDDEN;
/* Whether an output at `path` is written in place: one of the program's descriptors
 * by name (/dev/stdout, /proc/self/fd/N: whatever it is open on), a device or a FIFO,
 * or a link of the user's or the system's to one. Anything else is replaced. */
int tt__output_in_place(const char *path) TT__HIDDEN;
/* Whether an output at absolute `path` cannot be put there for another user's file
 * (tt_os_file_theirs): 1, said in `why`; else 0. */
int tt__output_theirs(const char *path, char *why, size_t size) TT__HIDDEN;
/* Opens such an output for writing (a named descriptor: a copy of it); -EPIPE for a
 * FIFO that no one reads. */
int tt__open_in_place(const char *path) TT__HIDDEN;
/* An output of the run's written while the program runs (`what`, "spike log", at the
 * name `setting` gave, `pattern` expanded into `path`): a new file (tt_os_file_new:
 * mode 0600, a link planted at `path` replaced, never written through), held while
 * the process writes it, put where the run's trace would go at a name given
 * (tt_os_file_place: over a file from before the run began; beside one another process
 * wrote since, or writes now, or another user's in a sticky directory, `path`
 * rewritten, said); or a device or FIFO in place (*in_place). The descriptor (readable
 * too when it is a file), or -errno. */
int tt__open_output(const char *pattern, char *path, size_t size, const char *what, const char *setting,
		    int *in_place) TT__HIDDEN;
/* tt__open_output for the run's own streamed file, kept in tt__fd_out(out): its
 * beginning written by `first` before it is placed as tt__write_run_file_with places
 * one, and held (flock) until it is closed. 0, or -errno (no file left). */
int tt__create_run_file(char *path, size_t size, int *in_place, struct tt__out *out,
			tt__file_writer first, void *arg) TT__HIDDEN;

/* threads.c: the threads' sections and their records */
/* THREAD (or THREAD_TOTALS) for a slot with `records` records in the file; adds its
 * dropped counts to *dropped_total. */
void tt__out_thread_info(struct tt__out *out, uint32_t type, const struct tt__slot *slot,
			 uint64_t records, uint64_t *dropped_total) TT__HIDDEN;
/* A THREAD_FIRST section: the record that opened the thread's first scope or function. */
void tt__out_thread_first(struct tt__out *out, uint32_t thread_index, const struct tt_record *opener) TT__HIDDEN;
/* A live file's word that the thread's counters are its states' source, their readings
 * in the run's memory (as its states would be): a SCHEDSTAT section of none, where
 * they are (tt__sched_counters_stand_in). */
void tt__out_counters_source(struct tt__out *out, const struct tt__slot *slot) TT__HIDDEN;
/* Records packed (format.h: TT_SEC_EVENTS_PACKED) into buf, which has room for
 * TT_PACKED_MAX_RECORD bytes a record: the bytes used. */
size_t tt__pack_records(uint8_t *buf, const struct tt_record *begin,
			const struct tt_record *end) TT__HIDDEN;
void tt__out_events_packed(struct tt__out *out, const struct tt__slot *slot, uint64_t first,
			   uint64_t records, const uint8_t *packed, size_t bytes) TT__HIDDEN;
struct tt__extent {
	const struct tt_record *begin, *end;
};
/* The extent of every chunk of a thread, taken once so that counts and data agree. */
struct tt__thread_snapshot {
	struct tt__slot *slot;
	struct tt__extent *extents;
	size_t chunks;
	uint64_t records;
	struct tt_record gap[2]; /* events it is dropping now, after its records */
	size_t gap_records;
	/* what its THREAD says it dropped: read with the gap (narrowed: its window's) */
	uint64_t dropped[TT_DROP_CAUSES];
	struct tt_record opener; /* its first scope's (TT_SEC_THREAD_FIRST); word 0: none */
	/* Narrowed to a window (tt__narrow_thread): what its THREAD says instead of the
	 * thread's flags so far. */
	bool windowed;
	bool begins_inside; /* records before the window were left out (TT_THREAD_WRAPPED) */
	uint64_t lost_from_tsc, lost_to_tsc; /* what the ring overwrote of it (tt_snapshot_cut) */
	/* What its chunks held before a window narrowed them: the records, from the first
	 * time to the last (its rate, where a ring lost its whole window). */
	uint64_t held_records, held_from_tsc, held_to_tsc;
};
/* A snapshot's window (report/snapshots.c): every thread's records from
 * info.from_tsc to info.to_tsc and its states from from_ns to to_ns, with the
 * SNAPSHOT section that says why (`info`, whose cuts the writer counts, `split`,
 * `causes`, `unsplit`, `unknown`, `miss` and `name`). */
struct tt__window {
	struct tt_snapshot_info info;
	struct tt_snapshot_split split;
	struct tt_snapshot_causes causes;
	struct tt_snapshot_unsplit unsplit;
	struct tt_snapshot_unknown unknown;
	struct tt_snapshot_miss miss;
	int64_t from_ns, to_ns;
	const char *name;
	/* Set by the writer: its beginning was left out, its records more than the
	 * copies' share of the memory budget holds (tt__window_fit); and the file's
	 * bytes, written or not (a full disk: what it needs). */
	bool shortened;
	uint64_t bytes;
	/* Set by its maker: a window whose every record the rings overwrote before it was
	 * copied is no file (-ENODATA), its cuts said all the same. */
	bool none_if_lost;
	uint64_t found_tsc; /* when its spike was found (0: a trigger's, taken before it ends) */
	/* Called once the file is whole, before it has its name (NULL: nothing): the
	 * snapshot it replaces removed first, so that no reader of the folder ever finds
	 * both, nor a part of the new one. */
	void (*whole)(struct tt__window *window);
};
/* The snapshot's file at `path`, its window copied as a reader, where nothing is
 * there (tt__write_new_file_with); 0 or -errno. */
int tt__write_window(const char *path, struct tt__window *window) TT__HIDDEN;
/* Narrows a snapshot to the records of [from_tsc, to_tsc]: its gap's too. */
void tt__narrow_thread(struct tt__thread_snapshot *snap, uint64_t from_tsc, uint64_t to_tsc) TT__HIDDEN;
/* Memory for the copies of a window's records: what the arena set aside of the
 * memory budget, faulted in before the reading as far as every live thread's chunks
 * from the window's start (from_tsc) as they are now, and a few more, reach. */
struct tt__copy_room {
	struct tt_record *at;
	size_t used, cap; /* records */
};
void tt__copy_room_make(struct tt__copy_room *room, uint64_t from_tsc) TT__HIDDEN; /* (cap 0 without memory) */
/* Given back, kept for the next window (tt-spikes' windows come one at a time, under
 * its lock), and let go by tt__copy_room_idle once none used it for a second. */
void tt__copy_room_free(struct tt__copy_room *room) TT__HIDDEN;
void tt__copy_room_idle(void) TT__HIDDEN;
/* A window whose threads' records (narrowed to it) pass the room begins later, as
 * early as they fit, never after its spike or trigger (w->shortened; the threads
 * narrowed to it again); 0, or -ENOBUFS when they do not fit even from there. */
int tt__window_fit(struct tt__window *w, struct tt__thread_snapshot *snaps, size_t threads,
		   const struct tt__copy_room *room) TT__HIDDEN;
/* Copies a narrowed snapshot's records (the chunks read) into the room, so that they
 * can be written once the reading ends; 0 or -ENOBUFS. */
int tt__copy_thread(struct tt__thread_snapshot *snap, struct tt__copy_room *room) TT__HIDDEN;
/* A copied window's events that its ring overwrote (snap->dropped, lost_from_tsc,
 * lost_to_tsc), while readers are at work (tt__reading). */
void tt__window_cut(struct tt__thread_snapshot *snap, uint64_t from_tsc, uint64_t to_tsc) TT__HIDDEN;
/* A thread's states from from_ns to to_ns (the one it was in at from_ns first, from
 * then) as SCHED sections. */
void tt__out_sched_window(struct tt__out *out, struct tt__slot *slot, int64_t from_ns,
			  int64_t to_ns) TT__HIDDEN;
/* A thread's states so far as SCHED sections (none without them), the kernel's ring
 * drained first, then its counters' readings as SCHEDSTAT sections; with `release`,
 * gone from its stores once written (mode stream). `seen` and `seen_counters` (may be
 * NULL) are handed each section as tt_sched_info and tt_schedstat_info say it. */
void tt__out_sched(struct tt__out *out, struct tt__slot *slot, int release,
		   tt__sched_section_fn seen, tt__counters_fn seen_counters, void *ctx) TT__HIDDEN;
/* 0 or -ENOMEM (snap->extents to be freed either way). */
int tt__snapshot_thread(struct tt__thread_snapshot *snap, struct tt__slot *slot) TT__HIDDEN;
/* THREAD and the EVENTS of a snapshot. */
void tt__out_thread(struct tt__out *out, const struct tt__thread_snapshot *snap,
		    uint64_t *dropped_total) TT__HIDDEN;

/* modules.c: the process, the modules loaded and their segments */
void tt__out_process(struct tt__out *out) TT__HIDDEN;
/* The process's name (/proc/self/comm, as PROCESS holds it), its length (0: not read). */
#define TT__COMM_MAX 64
size_t tt__process_name(char name[TT__COMM_MAX]) TT__HIDDEN;
/* Address ranges of every segment of the loaded modules, taken at the dump. */
struct tt__ranges {
	uint64_t (*range)[2]; /* [start, end) */
	size_t count, cap;
	int err;
};
/* A tt_os_modules callback: a module's range into a struct tt__ranges (a MODULES
 * section's entries: platform.h's tt_os_module_list_add). */
int tt__add_loaded(const struct tt_os_module *module, void *data) TT__HIDDEN;
bool tt__ranges_hold(const struct tt__ranges *r, uint64_t address) TT__HIDDEN;

/* sites.c: the call sites and functions records name (sets: sections.h), and their
 * sections of every generation */
/* turned_off.c: the functions turned off (tt__turned_off) into `names` (and `fresh`,
 * as tt__site_set_add_fresh); their TURNED_OFF section, if any. */
int tt__turned_off_names(struct tt__site_set *names, struct tt__site_set *fresh) TT__HIDDEN;
void tt__out_turned_off(struct tt__out *out) TT__HIDDEN;
/* The sites and functions every record of a snapshot names, into `set`; 0 or -ENOMEM. */
int tt__collect_names(struct tt__site_set *set, const struct tt__thread_snapshot *snap) TT__HIDDEN;
/* SITES, and FUNCS when the set holds functions. */
void tt__out_sites(struct tt__out *out, const struct tt__site_set *set) TT__HIDDEN;
/* The same, given the segments loaded (taken by the caller): a site at an address none
 * of them holds is named as unloaded; NULL: every descriptor is read where it is. */
void tt__out_names(struct tt__out *out, const struct tt__site_set *set,
		   const struct tt__ranges *loaded) TT__HIDDEN;
/* writer.c: the functions of a thread's table (TICKTRACE_MIN_DUR's erased calls, and
 * those dropped) into `names` (and `fresh`, as tt__site_set_add_fresh); 0 or -ENOMEM.
 * Their FILTERED section, or with `dropped` their DROPPED_CALLS section, if any. */
int tt__filtered_names(struct tt__site_set *names, struct tt__site_set *fresh,
		       const struct tt__slot *slot) TT__HIDDEN;
void tt__out_filtered(struct tt__out *out, const struct tt__slot *slot, bool dropped) TT__HIDDEN;

/* retired.c: what a library closed with dlclose leaves for the file */
#define TT__RETIRED_MAX 4096 /* libraries unloaded whose names are kept */
/* Before the library loaded at `base` as `name` is unloaded (dlclose): keeps its
 * module entries and the call-site descriptors of it that records name, for the
 * file. Then tt__library_unloaded with what it returned (NULL: nothing kept) once
 * dlclose returned: records from then on at its addresses are another library's. */
struct tt__retired_lib;
struct tt__retired_lib *tt__retire_library(uintptr_t base, const char *name) TT__HIDDEN;
void tt__library_unloaded(struct tt__retired_lib *lib) TT__HIDDEN;
/* A module the system unloaded (tt_os_on_unload's: Windows' DLLs, under the loader's
 * lock): the same copies kept, its ranges' list taken, until `tsc`. */
void tt__module_unloaded(struct tt_os_module_list *ranges, uint64_t low, uint64_t high, uint64_t tsc) TT__HIDDEN;
/* MODULES: each library unloaded so far in an UNLOADED section, then those loaded. */
int tt__out_modules(struct tt__out *out) TT__HIDDEN;
/* For a file written as the program runs (stream, live), before the sites of the
 * records it looks at next: the modules of the libraries unloaded since `set` last
 * told them apart, each in an UNLOADED section (which ends the time span of what the
 * file described of their addresses before), and the set's entries of their records
 * tagged with their generation; then MODULES of those loaded now where they changed
 * since *changes (tt_os_modules_changes as MODULES was last written, updated), so
 * that a library loaded mid-run is named in a file whose end never comes (a kill).
 * 0 or -errno. */
int tt__out_modules_since(struct tt__out *out, struct tt__site_set *set, uint64_t *changes) TT__HIDDEN;
/* The key by which the runtime's analysis (report.c, spikes.c) knows the site or
 * function at `address` in a record made at `tsc`: the address, tagged (TT__GEN) with
 * the library unloaded since that held it then. */
uint64_t tt__record_key(uint64_t address, uint64_t tsc) TT__HIDDEN;
/* The name of such a key's site or function (func) when it is not to be read where it
 * points: of a library unloaded since (its copy of the descriptor; its functions as
 * library+0xOFFSET), or at an address no library holds now ("(unloaded library)",
 * 0x...). 0 otherwise: the address is the descriptor or function it names. */
size_t tt__unloaded_name(uint64_t address, size_t gen, bool func, char *buf, size_t cap) TT__HIDDEN;
/* The libraries unloaded whose records are told apart now: a new site set's
 * retired_seen. */
size_t tt__retired_count(void) TT__HIDDEN;
/* Held while the libraries' copies are read. */
extern struct tt__lock tt__retired_lock TT__HIDDEN;
/* What the entries of one generation are described with. */
struct tt__names_view {
	const struct tt__ranges *loaded; /* segments loaded when the names were read, or NULL */
	size_t seen;                     /* the set's retired_seen */
	size_t gen;                      /* the generation described */
};
/* The generation of a record at `address` made at `tsc`, among the first `limit`
 * libraries unloaded: k when the k-th was loaded there then, 0 when none was. */
size_t tt__generation(uint64_t address, uint64_t tsc, size_t limit) TT__HIDDEN;
/* A function whose calls a thread counted over the run (TICKTRACE_MIN_DUR's table),
 * as a set's entry: where no library holds its address now, tagged with the last of
 * the first `seen` libraries unloaded that held it, whose module names it (before: a
 * closed plugin's library call whose calls were all erased was named 0x...). */
uint64_t tt__run_count_entry(uint64_t address, size_t seen) TT__HIDDEN;
/* When the library of generation `gen` was unloaded (0: the one loaded now). */
uint64_t tt__retired_until(size_t gen) TT__HIDDEN;
/* The descriptor of the site at `address` of the generation viewed: where it is, or
 * the copy dlclose left. Retired mutex held. */
const struct tt_callsite *tt__site_descriptor(uint64_t address,
					      const struct tt__names_view *v) TT__HIDDEN;

/* names.c: names made at run time (the _DYN macros; a site's shown name:
 * pretty_name.h's tt_site_name) */
/* Whether `address` is a descriptor that names.c made (the writer reads it). */
bool tt__names_hold(uint64_t address) TT__HIDDEN;
void tt__names_after_fork(void) TT__HIDDEN;

#endif /* TT_WRITER_H */
