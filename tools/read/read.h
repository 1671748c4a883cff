/* tools/read: raw files in, validated (sections.c, lookup.c, records.c; a live or cut
 * file's recovery: recover.c; file.c opens them; their clock: src/common/), the trace
 * object over several files (trace.c), function symbols (symbols.c) and thread names
 * (thread_names.c). Every error names the file, the byte offset and the problem. */
#ifndef TT_TOOLS_READ_H
#define TT_TOOLS_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ticktrace/format.h>

#include "../base/base.h"

/* The raw file reader: maps a .ttr file, validates its header and every section,
 * and hands out processes, threads, call sites and the EVENTS sections in file order.
 * Every error names the file, the byte offset and the problem (base.h). */

/* Call-site strings longer than this (a run-time name from a program's data, or a
 * corrupt file) are cut to it, with a warning: as the runtime cuts them. */
#define TT_MAX_STRING TT_NAME_MAX

/* A string inside the mapped file: not NUL-terminated. */
struct tt_str {
	const char *ptr;
	uint32_t len;
};

struct tt_site {
	uint64_t address;
	struct tt_str name, file, func;
	struct tt_str arg_name; /* its argument's name (ARG_NAMES), or empty: "arg" */
	bool signed_arg;        /* its argument is signed (ARG_NAMES), shown as int64_t */
	uint32_t line;
	uint32_t id;         /* dense over every file of a trace: sinks index arrays by it */
	uint64_t defined_at; /* offset of the SITES section that holds it */
	/* A function from a FUNCS section: `address` is the function's, its FUNC_ENTER
	 * slices take this site, and name, file and line are what symbols tell
	 * (tt_trace_symbolize), "0x..." until then. */
	bool is_func;
	/* Used by a live or streamed file's records before the run described it: named
	 * by its address (tt_symbols then reads it from the ELF file, when it can). */
	bool undescribed;
	/* The TSCs of the records it names, [since, until): all of them, unless its
	 * library was unloaded (UNLOADED sections) and another loaded at its address,
	 * which is then described by another site. */
	uint64_t since, until;
	uint32_t next_same; /* position + 1 of another description of its address, or 0 */
};

struct tt_file;

/* One EVENTS section: a run of one thread's records. Read them with
 * tt_section_records: a packed section's (TT_SEC_EVENTS_PACKED) are unpacked when
 * asked for. */
struct tt_events {
	const struct tt_record *records; /* in the file; NULL: packed */
	const uint8_t *packed;
	size_t packed_size;
	size_t count;
	uint64_t offset; /* of the first record, or of the packed bytes */
};

/* A thread's packed section unpacked (the last one asked for). */
struct tt_unpacked {
	size_t section;
	bool valid;
	size_t cap;
	struct tt_record *records;
};

struct tt_thread {
	struct tt_file *file;
	uint32_t index; /* as the file numbers it */
	uint32_t tid;
	uint32_t id;    /* dense over every file of a trace */
	uint32_t flags; /* enum tt_thread_flags */
	uint64_t events;
	uint64_t dropped[TT_DROP_CAUSES];
	uint64_t dropped_total;
	/* Of dropped_total: its last event, cut in half when a file cut short ends (a
	 * run killed between the two records of an event with a value): 0 or 1. */
	uint64_t cut_events;
	uint64_t cut_offset; /* where that event's first record was */
	struct tt_str name;
	uint64_t offset;      /* of its THREAD section */
	uint64_t records;     /* records seen in its EVENTS sections */
	uint64_t first_tsc;   /* of its first record that holds a time, if has_first */
	bool has_first;
	struct tt_events *sections; /* its EVENTS sections, in file order */
	size_t nsections, sections_cap;
	struct tt_unpacked *unpacked; /* NULL: no packed section */
	/* Its states (SCHED sections; TT_THREAD_SCHED in flags), in time order, ns of
	 * CLOCK_MONOTONIC as tt_clock_ns gives, with what each section says before its own
	 * (tt_sched_head: TT_SCHED_UNKNOWN where nothing is known, a RUNNING one with cpu
	 * TT_NO_CPU where no switch says it but it ran). */
	struct tt_sched_state *states;
	size_t nstates, states_cap;
	uint64_t states_lost;
	bool has_states;
	int64_t states_last; /* the last state's time, or the first section's since_ns */
	int64_t exited_ns;   /* when it exited, after its last state (tt_sched_info); 0: not said */
	/* The record that opened its first scope or function, as the runtime kept it
	 * (TT_SEC_THREAD_FIRST); word 0: not said, its records are looked in. */
	struct tt_record opener;
	/* Its counters' readings (SCHEDSTAT sections), in time order, ns as its states' */
	struct tt_schedstat_sample *counters;
	size_t ncounters, counters_cap;
	uint64_t counters_lost;
	uint32_t counters_flags; /* enum tt_schedstat_flags */
	bool has_counters; /* a SCHEDSTAT section (of no reading, maybe): they were its source */
	uint64_t counters_unread; /* scopes tt-sched's budget left unread (TT_SCHEDSTAT_BUDGET) */
	/* Its calls TICKTRACE_MIN_DUR erased as they returned, per function (its
	 * FILTERED section; NULL: none), and the threshold. */
	struct tt_filtered_fn *filtered;
	size_t nfiltered;
	uint64_t filtered_min_ns;
	/* Its calls dropped with its buffer used up, per function (its DROPPED_CALLS
	 * section; NULL: none; each one's ticks 0) */
	struct tt_filtered_fn *dropped_calls;
	size_t ndropped_calls;
};

struct tt_module {
	uint64_t start, end, file_offset;
	struct tt_str path, build_id;
	uint64_t until; /* TSC when its library was unloaded (UINT64_MAX: never) */
};

struct tt_process {
	uint32_t pid, ppid;
	struct tt_str name, cmdline;
};

/* A thread whose window the ring cut (struct tt_snapshot_cut), with its thread. */
struct tt_snapshot_thread_cut {
	struct tt_snapshot_cut cut;
	const struct tt_thread *thread;
	uint64_t at; /* its offset in the file */
};

/* A snapshot's window of the run (TT_SEC_SNAPSHOT, TICKTRACE_SNAPSHOTS): why it was
 * written (a spike, or a tt_trigger call), when, and which threads' windows the
 * ring cut. Validated: kind, threshold and its source agree, from <= begin <= end <=
 * to, the spike or trigger within the run, every thread named exists and counts its
 * cut's events as overwritten. */
struct tt_snapshot {
	struct tt_snapshot_info info;
	/* The rest of its split; from a section without one (the first version's, whose
	 * split covers the whole spike): begin_tsc..end_tsc, unknown 0 */
	struct tt_snapshot_split split;
	/* What else its split says; 0s from a section without it (the split's source not
	 * said) */
	struct tt_snapshot_causes causes;
	/* Why its spike has no split; 0s from a section without it (its thread's flags
	 * say why) */
	struct tt_snapshot_unsplit unsplit;
	/* Its time without switches, and why the part no reading covers is unknown; 0s
	 * from a section without it */
	struct tt_snapshot_unknown unknown;
	/* The readings' far sides and the thread's wait beside why; 0s from a section
	 * without it */
	struct tt_snapshot_miss miss;
	struct tt_str name;             /* the spike's scope, or the trigger's why */
	/* of the spike, or that called tt_trigger (NULL: a thread that never recorded,
	 * TT_SNAPSHOT_NO_THREAD, which a trigger may be) */
	const struct tt_thread *thread;
	struct tt_snapshot_thread_cut *cuts; /* info.cuts of them */
	uint64_t at; /* the section's payload, in the file */
};

/* "spike" or "trigger". */
const char *tt_snapshot_kind_name(const struct tt_snapshot *s);
/* A spike snapshot's split, as the analysis gives a spike's (info.has_split: it has one),
 * and what else it says (its source, resolution, stolen time and page faults; without
 * a split, why: tt_an_no_split_text with its thread's flags). */
struct tt_an_split tt_snapshot_an_split(const struct tt_snapshot *s);
struct tt_an_causes tt_snapshot_an_causes(const struct tt_snapshot *s);
/* Where a spike's threshold came from, in the runtime's words ("TT_THRESHOLD_NS",
 * "TICKTRACE_SPIKE_THRESHOLD", ...); "" for a trigger. */
const char *tt_snapshot_threshold_from(const struct tt_snapshot *s);

/* The tid a live file's thread is given where the file does not say it (no
 * tt_live_thread of its index written): each thread its own, far above those the
 * systems give (Linux's are below 2^22), never 0 (the idle task's). */
#define TT_LIVE_UNKNOWN_TID(index) (UINT32_C(0x7fffffff) - (index) % (UINT32_C(1) << 30))
/* A name the reader made (a live file's site or thread not yet described). */
struct tt_made_name {
	struct tt_made_name *next;
	char text[64];
};

struct tt_live_copy {
	struct tt_live_copy *next;
	struct tt_record records[];
};

struct tt_file {
	const char *path;
	const uint8_t *data;
	size_t size;
	struct tt_file_header header; /* a copy: the mapping need not be aligned */
	uint64_t first_section; /* offset of the first section header */
	struct tt_clock clock;
	struct tt_process process;
	struct tt_site *sites;
	size_t nsites;       /* call sites and functions */
	uint64_t names_cut;  /* site strings longer than TT_MAX_STRING, cut to it */
	size_t nfuncs;       /* of which functions (FUNCS sections) */
	char *func_hex;      /* the functions' "0x..." names, back to back */
	struct tt_map site_map; /* address -> position in sites */
	struct tt_thread *threads;
	size_t nthreads;
	struct tt_map thread_map; /* index -> position in threads */
	struct tt_module *modules;
	size_t nmodules;
	struct tt_end_info end;
	uint64_t records;   /* in every EVENTS section */
	uint64_t dropped;   /* every thread's, summed */
	bool mapped;
	/* A streamed file without its END (the run crashed or was killed): read up to
	 * cut_at, where its last complete section ends. Also a live file (cut_at: the
	 * end of its descriptions). */
	bool cut_short;
	uint64_t cut_at;
	/* The TSCs a record may hold: the header's anchors, with room for what the
	 * anchors cannot bound (sections.c: tt_record_span); the decoder refuses any
	 * other time. */
	uint64_t tsc_min, tsc_max;
	/* Sites the decoder names what the records do not (among `sites`, last; NULL in
	 * files that need none): a run of lost events, and a scope whose beginning was
	 * not recorded (before a ring's oldest event, or in such a run). */
	const struct tt_site *gap_site, *unbegun_site;
	struct tt_made_name *made_names;
	struct tt_live_copy *live_copies; /* a running live file's chunks, as read (recover.c) */
	struct tt_snapshot *snapshot; /* NULL: the file is no snapshot */
	/* Its MACHINE section, or all 0 without one; machine_known: it was whole (the
	 * first version's, or none, says only a time namespace's offsets). */
	struct tt_machine_info machine;
	bool machine_known;
	uint32_t machine_index; /* its machine among its trace's (tt_trace.machines) */
	/* The functions the run turned off (its TURNED_OFF section; NULL: none): their
	 * later calls are in no record and no count. */
	struct tt_turned_off_fn *turned_off;
	size_t nturned_off;
	struct tt_turned_off_info turned_off_info;
	uint32_t index;         /* its place among its trace's files */
};

/* The kernel calls the clock of a reading unsynchronized (STA_UNSYNC, or TIME_ERROR):
 * its wall clock may be off by any amount. */
bool tt_clock_unsynchronized(const struct tt_clock_reading *r);

/* Two modules of a file whose address ranges overlap but that are not the same ELF
 * file, and whose time spans the file does not tell apart (a library unloaded, then
 * another loaded where it was, in a file without UNLOADED sections): in *a and *b,
 * true. Addresses there may be named after the wrong one. */
bool tt_file_modules_overlap(const struct tt_file *f, const struct tt_module **a,
			     const struct tt_module **b);

/* Maps `path` and validates all of it but the records themselves. 0, or -1 after
 * reporting the problem; tt_file_close is safe either way. */
int tt_file_open(struct tt_file *f, const char *path);
/* The same for a file already in memory (the fuzzer); `data` must outlive f. */
int tt_file_load(struct tt_file *f, const char *path, const uint8_t *data, size_t size);
/* The records of thread t's section s, which stay valid until another packed
 * section of t is asked for; and where record i of a section is in the file (a
 * packed section: where its packed records begin). */
const struct tt_record *tt_section_records(const struct tt_thread *t, size_t s);
/* The TSC of the thread's last record that has one: true, or false when it has none. */
bool tt_thread_last_tsc(const struct tt_thread *t, uint64_t *tsc);
static inline uint64_t tt_record_offset(const struct tt_events *ev, size_t i)
{
	return ev->offset + (ev->records ? i * sizeof(struct tt_record) : 0);
}
void tt_file_close(struct tt_file *f);

/* The reader's thread (ahead.c): it maps the pages of a mapped input asked for
 * before the decoder reads them, and gives back those it has read, so that the
 * kernel's work for them is not the decoding thread's. NULL: it could not be started
 * (then the decoder's reads map the pages, and releases run at once). Stopped after
 * its last job; before the files are closed. */
struct tt_ahead;
struct tt_ahead *tt_ahead_start(void);
void tt_ahead_stop(struct tt_ahead *a);

/* Tells the kernel that bytes [from, to) of a mapped file will not be read again, so
 * that converting a large file keeps little of it resident: through `a` (a
 * tt_ahead_start's, in the order of what was asked of it), or at once (NULL). */
void tt_file_release(struct tt_ahead *a, const struct tt_file *f, uint64_t from, uint64_t to);
/* Asks `a` (NULL: nothing) to map bytes [from, to) of a mapped file before they are
 * read; left out when it is far behind. */
void tt_file_read_ahead(struct tt_ahead *a, const struct tt_file *f, uint64_t from, uint64_t to);

/* Whether the process that writes a file cut short may still be running it (a
 * process with its pid and name is alive here): then the file is not a crash's. */
bool tt_file_writer_running(const struct tt_file *f);

/* Why a file's calls that TICKTRACE_MIN_DUR erased are not all counted (a run killed
 * before its threads' FILTERED sections were written: TT_FILE_MIN_DUR), or NULL. */
const char *tt_file_erased_missing(const struct tt_file *f);

/* Whether the signal a file's handler wrote it on (TT_FILE_CRASHED) is one that stops
 * a program (SIGTERM, SIGINT, SIGHUP: a kill, Ctrl-C), not a crash's. */
bool tt_file_stopped_by_signal(const struct tt_file *f);

/* Grows the array at *pp (cap elements of elem bytes, count used) to hold one more;
 * 0, or -1 when out of memory. */
int tt_reserve(void *pp, size_t *cap, size_t count, size_t elem);
/* The same, to hold `more`. */
int tt_reserve_n(void *pp, size_t *cap, size_t count, size_t more, size_t elem);

/* The site (call site or function) at `address` for a record made at `tsc`: of the
 * library loaded there then. NULL when none is described. Every name of an address
 * goes through here. */
const struct tt_site *tt_file_site(const struct tt_file *f, uint64_t address, uint64_t tsc);
/* The function at `address` whose calls a thread counted over the whole run (FILTERED,
 * DROPPED_CALLS): of the library loaded there at the end, or where none was, of the
 * last one unloaded that held it. NULL when none is described. */
const struct tt_site *tt_file_site_last(const struct tt_file *f, uint64_t address);
/* The module (segment of an ELF file) that held `address` at `tsc`, or NULL. */
const struct tt_module *tt_file_module(const struct tt_file *f, uint64_t address, uint64_t tsc);

/* What symbols tell of a function (symbols.c): its name, and its source file and
 * line where debug info has them (file NULL otherwise). The strings are NUL-terminated
 * and belong to the symbolizer, which outlives the trace's decoding. */
struct tt_symbol {
	const char *name;
	const char *file;
	uint32_t line;
};

/* Names the function at `address` of `file` in a record made at `tsc` (of the module
 * that held the address then: tt_file_module); 0, or -1 when out of memory. */
typedef int (*tt_symbolize_fn)(void *ctx, const struct tt_file *file, uint64_t address,
			       uint64_t tsc, struct tt_symbol *out);

/* A machine of a trace: the runs of one boot (one CLOCK_MONOTONIC, time namespaces
 * taken out) in one time namespace, whatever host names they had (named by the first's). The first file's boot is the trace's timeline;
 * another boot is placed on it through the wall clocks at its first file's start,
 * CLOCK_TAI where both machines' kernels know TAI, else CLOCK_REALTIME. */
struct tt_machine {
	const struct tt_file *file; /* its first file (MACHINE section, host name) */
	const char *clock;          /* how it is placed: "CLOCK_MONOTONIC" (the first file's
	                             * boot: exact), "CLOCK_TAI" or "CLOCK_REALTIME", or
	                             * "flows" (--align flows: by its flows with a machine
	                             * placed before, within [flows_lo_ns, flows_hi_ns]) */
	int64_t offset_ns;  /* added to its files' times: placement and --offset, not the
	                     * time namespace's offsets, which each file's own times lose too */
	int64_t given_ns;   /* --offset's part of it */
	/* How far off its placement may be: the two wall clocks' maximum errors as their
	 * kernels say them (0: exact; -1: not known) */
	int64_t uncertainty_ns;
	bool unsynchronized; /* the kernel calls its clock unsynchronized */
	/* Its first file's wall clock moved so against CLOCK_MONOTONIC during the run,
	 * beyond slewing (stepped): placed by its reading at the start; 0: not */
	int64_t wall_step_ns;
	/* Its run `disagreeing`'s wall clock against CLOCK_MONOTONIC moved so (beyond slewing)
	 * from that of `anchor`, the earliest run of its boot, which placed it: stepped
	 * between the runs, or a damaged file's time namespace offsets; 0: none did */
	int64_t runs_disagree_ns;
	const struct tt_file *disagreeing, *anchor;
	int64_t flows_ns;    /* the flows' part of offset_ns */
	bool flows_window;   /* --align flows found its window: */
	int64_t flows_lo_ns, flows_hi_ns;
	uint32_t flows_with; /* against this machine's (placed before it, or the first) */
};

/* Several raw files (processes) on one timeline: the first file's machine's
 * CLOCK_MONOTONIC (tt_machine). */
struct tt_trace {
	struct tt_file *files;
	size_t nfiles;
	const char *about_was; /* tt_diag_about's before it (its one file's), put back */
	struct tt_machine *machines;
	size_t nmachines;
	int64_t base_ns; /* CLOCK_MONOTONIC of ts 0: the earliest anchor or event */
	size_t nsites;   /* site ids are below this, over all files */
	size_t nthreads; /* thread ids likewise */
	/* The writers show the threads' states at the finish, not at the start: a --split
	 * shard's view (filter.c), whose end, where they are cut, is known only then */
	bool states_at_finish;
	/* Names function addresses (tt_trace_symbolize); NULL: "0x...". */
	tt_symbolize_fn symbolize;
	void *symbolize_ctx;
	/* Called every million events or so while decoding, when set: events decoded,
	 * and the records of all files (events plus VALUE and PAD records). */
	void (*progress)(void *ctx, uint64_t events, uint64_t records);
	void *progress_ctx;
};

/* Opens and validates every file; 0, or -1 after reporting the problem.
 * tt_trace_close is needed either way. */
int tt_trace_open(struct tt_trace *t, char *const *paths, size_t n);
/* Moves the files of the machine NAME names by `ns` more (a known offset of its clock:
 * --offset NAME=TIME): the machine with a file recorded on a host of that name (a
 * machine renamed by `unshare --uts` goes by any of its names), else the one whose
 * machine id or boot id begins with it (4 hexadecimal digits or more). 0, or -1 (said) where
 * NAME names none, or machines of two boots or more (a host name two machines have:
 * each listed with its ids). Machines of one boot (time namespaces) move together. */
int tt_trace_offset(struct tt_trace *t, const char *name, int64_t ns);
/* What tells machine k apart from another boot's of its host name: "machine id", or
 * "boot id" where the machine ids agree too, with the shortest beginning of it (8
 * digits or more) that no other machine's has, in `prefix`; NULL (prefix "") where
 * its host name alone does. */
const char *tt_machine_key(const struct tt_trace *t, size_t k, char prefix[33]);
/* Host name `host` of machine k as viewers show it: with what tells the machine apart
 * where it needs telling ("vm (machine id 3d1219c7)"), in `buf`; its length. */
#define TT_MACHINE_LABEL_MAX (TT_HOST_NAME_MAX + 48)
size_t tt_machine_label(const struct tt_trace *t, size_t k, struct tt_str host, char *buf, size_t cap);
/* Times on a timeline, from its start, are within this (2^61 ns, 73 years): a
 * hostile file's clock can put events at either end of time, and sinks add and
 * subtract times freely. */
#define TT_TIME_LIMIT (INT64_C(1) << 61)
/* The trace's latest time: its files' end anchors and threads' last records. */
int64_t tt_trace_latest(const struct tt_trace *t);
/* 0 where the trace's times, its machines placed (wall clocks, --offset, flows), span
 * less than TT_TIME_LIMIT; else -1, said: the files at either end, and why each
 * machine is where it is. */
int tt_trace_check_span(const struct tt_trace *t);
/* Moves the files of machine k by `ns` more (its offset_ns too). */
void tt_trace_move(struct tt_trace *t, size_t k, int64_t ns);
/* The same for one file already in memory (8-byte aligned; it must outlive t). */
int tt_trace_load(struct tt_trace *t, const char *name, const uint8_t *data, size_t size);
void tt_trace_close(struct tt_trace *t);
/* Names every function of the trace's FUNCS sections with `fn` (its site's name,
 * file and line), and any other function address sinks ask for. Before tt_decode.
 * 0, or -1 after reporting the problem. */
int tt_trace_symbolize(struct tt_trace *t, tt_symbolize_fn fn, void *ctx);
/* Names each thread that carries its process's name (nobody named it; not the main
 * thread) after its first scope or function: "zstd: POOL_thread" (thread_names.c).
 * After tt_trace_symbolize, once functions have names (tt_symbols_attach does
 * both). 0, or -1 (reported). */
int tt_trace_name_threads(struct tt_trace *t);
/* The name of the function at `address` in `file`, in buf (at least 32 bytes): a
 * function no FUNCS section lists (a file written before there were any, so with
 * no UNLOADED sections either). */
size_t tt_trace_func_name(const struct tt_trace *t, const struct tt_file *file,
			  uint64_t address, char *buf, size_t cap);

/* Offline symbols for -finstrument-functions: names a function address of a raw file
 * from the ELF files its MODULES section lists, with elfutils (libdwfl): the symbol,
 * demangled for C++; file and line where debug info exists, found beside the file or
 * by build-id in the debug directories where the binary is stripped; "module+0xOFF"
 * where nothing names it. Each address is resolved once.
 *
 *   struct tt_symbols *sym = tt_symbols_attach(&trace, NULL);  // before tt_decode
 *   ...
 *   tt_symbols_free(sym);                                       // after the trace is done
 */

struct tt_symbols;

/* `debug_dir`: a directory searched for debug info (by build-id, .build-id/xx/yyyy.debug,
 * and by name) before the system's /usr/lib/debug; NULL: the system's only. NULL when
 * out of memory. */
struct tt_symbols *tt_symbols_new(const char *debug_dir);
void tt_symbols_free(struct tt_symbols *s);

/* A new symbolizer that names the trace's functions (tt_trace_symbolize); NULL after
 * reporting the problem. Free it after the trace is closed. */
struct tt_symbols *tt_symbols_attach(struct tt_trace *t, const char *debug_dir);

/* The tt_symbolize_fn (above): `ctx` is a struct tt_symbols. What it returns stays
 * valid until tt_symbols_free. */
int tt_symbols_lookup(void *ctx, const struct tt_file *file, uint64_t address, uint64_t tsc,
		      struct tt_symbol *out);

/* Where a process address is in its module's file as addr2line -e takes it: an ELF
 * file's, the offset in the module's segment plus its file offset; a PE file's, its
 * address at the image's preferred base. -1 when out of memory. */
int tt_symbols_file_address(struct tt_symbols *s, const struct tt_file *file, uint64_t address,
			    uint64_t tsc, uint64_t *out);

#endif
