/* ticktrace raw file format (.ttr): the one contract between the runtime (src/)
 * and the tools (tools/). Both include this header; nothing else is shared.
 *
 * Layout: a fixed tt_file_header, then a sequence of sections. Every section is a
 * tt_section_header followed by `size` payload bytes, padded with zeros to a multiple
 * of 16 so that records stay 16-byte aligned in the file. Order:
 *
 *   header | PROCESS | MACHINE | MODULES | SITES | FUNCS | THREAD | EVENTS... | SCHED... | SCHEDSTAT... | THREAD | ... | END
 *
 * A THREAD section precedes the EVENTS sections that name its index. SITES may appear
 * more than once (a later one adds descriptors), always before the first record that
 * references them. END is written last; a file without it was cut short (a crash, or
 * a truncated copy) and the tools say so.
 *
 * A library unloaded while the program ran (dlclose) may be followed by another at
 * the same addresses: what describes the first (its MODULES entries, its call sites,
 * its functions) is wrapped in UNLOADED sections that say until when it held, and a
 * record is named by the description whose time span holds its TSC.
 *
 * All integers are little-endian (x86-64 only). Strings are stored with their length
 * and are not NUL-terminated.
 */
#ifndef TICKTRACE_FORMAT_H
#define TICKTRACE_FORMAT_H

#include <stdint.h>

#define TT_FILE_MAGIC "TICKTRC\x1a"
#define TT_FILE_MAGIC_LEN 8
#define TT_FILE_VERSION 1

/* ---- records ---------------------------------------------------------------- */

/* One event: the TSC when it happened and a word holding the kind (top 8 bits) and a
 * 56-bit payload (a call-site descriptor address, a function address, or a length).
 * User-space addresses on x86-64 fit in 47 bits, so the payload always holds them. */
struct tt_record {
	uint64_t tsc;
	uint64_t word;
};
_Static_assert(sizeof(struct tt_record) == 16, "a record is 16 bytes");

#define TT_KIND_SHIFT 56
#define TT_PAYLOAD_MASK ((UINT64_C(1) << TT_KIND_SHIFT) - 1)
#define TT_RECORD_KIND(word) ((unsigned)((word) >> TT_KIND_SHIFT))
#define TT_RECORD_PAYLOAD(word) ((word) & TT_PAYLOAD_MASK)
#define TT_RECORD_WORD(kind, payload) (((uint64_t)(kind) << TT_KIND_SHIFT) | (uint64_t)(payload))
/* In a FUNC_ENTER or FUNC_EXIT payload: a call the program made into a shared library
 * through its GOT (libticktrace-detour, TICKTRACE_LIBCALLS). The address below this
 * bit is the program's GOT slot the call went through; the tools name the call
 * IMPORT@LIBRARY from the program's relocation of that slot and the library its
 * symbol's version needs (IMPORT@plt where no version says). Bit 47: user-space
 * addresses fit below it, and the runtime keeps bits 48 and up for its own. */
#define TT_FUNC_LIBRARY_CALL (UINT64_C(1) << 47)

enum tt_record_kind {
	TT_REC_PAD = 0,         /* never written (all zero): skip */
	TT_REC_BEGIN = 1,       /* payload: site; opens a scope */
	TT_REC_END = 2,         /* payload: 0; closes the innermost open scope */
	TT_REC_ENDBEGIN = 3,    /* payload: site; closes the innermost scope, opens site */
	TT_REC_INSTANT = 4,     /* payload: site */
	TT_REC_BEGIN_ARG = 5,   /* payload: site; a VALUE record follows (the argument) */
	TT_REC_INSTANT_ARG = 6, /* payload: site; a VALUE record follows */
	TT_REC_COUNTER = 7,     /* payload: site (the counter's name); VALUE follows (int64) */
	TT_REC_FLOW_OUT = 8,    /* payload: 0; VALUE follows (the flow id) */
	TT_REC_FLOW_IN = 9,     /* payload: 0; VALUE follows (the flow id) */
	TT_REC_FUNC_ENTER = 10, /* payload: function address (-finstrument-functions) */
	TT_REC_FUNC_EXIT = 11,  /* payload: function address */
	TT_REC_VALUE = 15,      /* second half of a two-record event: `tsc` holds the value */
	/* Notes on the innermost open scope, for the spike detector (ticktrace(3), THRESHOLDS). */
	TT_REC_THRESHOLD = 16,          /* payload: ns; this scope spikes above it */
	TT_REC_CHILDREN_THRESHOLD = 17, /* payload: ns; so does every scope nested in it */
	TT_REC_IGNORE = 18,             /* payload: 0; this scope never spikes */
	TT_REC_IGNORE_CHILDREN = 19,    /* payload: 0; no scope nested in it spikes */
	TT_REC_DESCRIBE = 20,           /* payload: bytes of text (at most TT_DESCRIBE_MAX);
	                                 * as many TEXT records as hold them follow */
	TT_REC_TEXT = 21,               /* TT_TEXT_BYTES bytes of a DESCRIBE's text: 8 in `tsc`,
	                                 * 7 in the payload, little-endian; the last is
	                                 * padded with zeros */
	/* A frame boundary (TT_FRAME_MARK): payload: site, whose name names the frames;
	 * the process's frames of that name are numbered from 1, each from its mark to
	 * the next. */
	TT_REC_FRAME = 22,
	TT_REC_SCOPE_VALUE = 23, /* payload: 0; VALUE follows: the innermost open scope's value */
	/* Events were lost here (a stream whose disk fell behind, a full buffer). tsc:
	 * the first lost event's; payload: how many were lost. The VALUE record that
	 * follows holds the last lost event's tsc, and in its payload TT_GAP_CLOSES (bits
	 * 0-27): scopes open before the gap that ended in it, and TT_GAP_OPENS (bits
	 * 28-55): scopes begun in the gap and still open after it, both saturated. */
	TT_REC_DROPPED = 24,
	/* payload: ns; every scope open around it spikes above it (a note, like THRESHOLD) */
	TT_REC_PARENTS_THRESHOLD = 25,
};
#define TT_REC_KIND_MAX 31

#define TT_GAP_DEPTH_MAX ((UINT64_C(1) << 28) - 1)
#define TT_GAP_DEPTHS(closes, opens) ((uint64_t)(closes) | (uint64_t)(opens) << 28)
#define TT_GAP_CLOSES(payload) ((uint32_t)((payload) & TT_GAP_DEPTH_MAX))
#define TT_GAP_OPENS(payload) ((uint32_t)(((payload) >> 28) & TT_GAP_DEPTH_MAX))

/* A description's text: at most this many bytes, TT_TEXT_BYTES per TEXT record. */
#define TT_DESCRIBE_MAX 240
#define TT_TEXT_BYTES 15
#define TT_TEXT_RECORDS(bytes) (((bytes) + TT_TEXT_BYTES - 1) / TT_TEXT_BYTES)

/* Kinds whose `tsc` is a time: not PAD, nor the second part of a longer event. */
#define TT_RECORD_HAS_TIME(kind)                                                   \
	((kind) != TT_REC_PAD && (kind) != TT_REC_VALUE && (kind) != TT_REC_TEXT)

/* Kinds that are the program's events, counted where they are lost or overwritten:
 * those with a time, but a gap's record (its lost events are counted already). */
#define TT_RECORD_IS_EVENT(kind) (TT_RECORD_HAS_TIME(kind) && (kind) != TT_REC_DROPPED)

/* Kinds whose payload is the address of a call-site descriptor (in a SITES section). */
#define TT_RECORD_HAS_SITE(kind)                                                   \
	((kind) == TT_REC_BEGIN || (kind) == TT_REC_ENDBEGIN || (kind) == TT_REC_INSTANT || \
	 (kind) == TT_REC_BEGIN_ARG || (kind) == TT_REC_INSTANT_ARG || (kind) == TT_REC_COUNTER || \
	 (kind) == TT_REC_FRAME)

/* Kinds that are followed by one VALUE record; the hot path reserves both at once. */
#define TT_RECORD_HAS_VALUE(kind)                                                  \
	((kind) == TT_REC_BEGIN_ARG || (kind) == TT_REC_INSTANT_ARG ||                 \
	 (kind) == TT_REC_COUNTER || (kind) == TT_REC_FLOW_OUT || (kind) == TT_REC_FLOW_IN || \
	 (kind) == TT_REC_DROPPED || (kind) == TT_REC_SCOPE_VALUE)

/* ---- file header -------------------------------------------------------------- */

/* A pair of readings taken as close together as possible: the TSC, and the clocks it
 * is converted to. */
struct tt_anchor {
	uint64_t tsc;
	int64_t monotonic_ns; /* CLOCK_MONOTONIC */
	int64_t boottime_ns;  /* CLOCK_BOOTTIME */
	int64_t realtime_ns;  /* CLOCK_REALTIME */
};
_Static_assert(sizeof(struct tt_anchor) == 32, "anchor layout");

/* How tsc_hz was obtained, and so how the tools convert ticks to nanoseconds. */
enum tt_tsc_source {
	/* tsc_hz = (end.tsc - start.tsc) * 1e9 / (end.monotonic_ns - start.monotonic_ns)
	 * and ns = start.monotonic_ns + (tsc - start.tsc) * 1e9 / tsc_hz, in 128-bit
	 * integers. Both ends are pinned to the clock, so the error anywhere in the run is
	 * about that of one anchor (tens of ns), however short the run. */
	TT_TSC_ANCHORS = 1,
};

enum tt_file_flags {
	TT_FILE_INVARIANT_TSC = 1u << 0, /* CPUID says the TSC runs at a constant rate */
	TT_FILE_TSC_RELIABLE = 1u << 1,  /* the kernel uses the TSC as its clocksource */
	/* Written while the program ran (TICKTRACE_MODE=stream): sections are appended as
	 * they are ready and the end anchor is refreshed as it goes, so a file without END
	 * holds everything up to its last complete section (the run crashed or was killed). */
	TT_FILE_STREAMED = 1u << 8,
	TT_FILE_RING = 1u << 9, /* TICKTRACE_MODE=ring: threads keep their latest events */
	TT_FILE_CRASHED = 1u << 10, /* written as the program died of crash_signal */
	/* The buffers of a running program (modes stop and ring), which are a shared
	 * mapping of this file, with what describes them so far: a program killed by
	 * SIGKILL leaves it behind (TICKTRACE_OUT with ".live" appended). */
	TT_FILE_LIVE = 1u << 11,
	/* A snapshot: a window of the run around a spike or a trigger (TT_SEC_SNAPSHOT).
	 * Every thread's records begin inside scopes begun before the window. */
	TT_FILE_SNAPSHOT = 1u << 12,
	/* TICKTRACE_MIN_DUR was on: calls shorter than it were erased as they returned,
	 * counted in their threads' FILTERED sections, which a streamed file gets as each
	 * thread exits and at the end, and a live file never: one cut short lacks them. */
	TT_FILE_MIN_DUR = 1u << 13,
	/* With TT_FILE_LIVE: the run ended normally, but its trace could not be written
	 * at exit (a full disk): this file holds every event it recorded; what was in its
	 * memory alone (thread states, dropped counts) is lost. Readers that do not know
	 * it take the file as a killed run's. */
	TT_FILE_LIVE_EXITED = 1u << 14,
	/* ticktrace ended a thread of its own so that the program's pthread_create, which
	 * met the limit on the user's processes (RLIMIT_NPROC, a cgroup's pids.max), could
	 * start its thread: tt-prefault (nothing lost: the writers fault their memory in),
	 * tt-spikes (no live spike log nor snapshot after it), tt-sched (no switches read
	 * after it but those the kernel's rings held as the file was written, no counters
	 * read, no states for threads started later: TT_NO_STATES_NOT_ASKED), tt-dump
	 * (no trace written at a crash nor on TICKTRACE_DUMP_SIGNAL after it; at _exit,
	 * by the exiting thread), tt-live (a live file's THREAD and SITES sections, and
	 * dropped counts, as they stood: a run killed later is described so far). */
	TT_FILE_GAVE_PREFAULT = 1u << 15,
	TT_FILE_GAVE_SPIKES = 1u << 16,
	TT_FILE_GAVE_SCHED = 1u << 17,
	TT_FILE_GAVE_DUMP = 1u << 18,
	TT_FILE_GAVE_LIVE = 1u << 19,
	/* Under an address-space limit (RLIMIT_AS) the buffers, mapped as they filled,
	 * stopped growing where the program's own use of its room left them no more (a
	 * quarter of what was free at most): the events past them dropped, counted as
	 * "no memory". */
	TT_FILE_GAVE_ROOM = 1u << 20,
};

/* A chunk of a live file: its thread's records, [sizeof(struct tt_live_chunk), size)
 * (or up to the last record not all zero, while size is TT_LIVE_CHUNK_SIZE: the
 * thread was recording into it). A chunk with size 0 holds nothing. A thread's
 * chunks are in the time order of their first records. */
#define TT_LIVE_CHUNK_SIZE 65536
struct tt_live_chunk {
	uint64_t next; /* the runtime's own */
	uint32_t size;
	uint32_t thread_index;
};
_Static_assert(sizeof(struct tt_live_chunk) == 16, "live chunk header layout");

/* Who a live file's thread is, written as it registers, before its first chunk holds
 * a record (and its name again when tt_thread_name() sets it): a run killed before
 * its THREAD section was written keeps the thread's tid. Entry i of the array at
 * live_threads_at is thread index i's; tid 0: no thread registered there yet. */
#define TT_LIVE_THREADS 16384
struct tt_live_thread {
	uint32_t tid;
	uint32_t reserved;
	char name[56]; /* NUL-terminated; empty: not known */
};
_Static_assert(sizeof(struct tt_live_thread) == 64, "live thread entry layout");

/* A crash_signal that is a Windows exception's code (NTSTATUS: its high bit set). */
#define TT_CRASH_EXCEPTION(crash) ((crash) >= UINT32_C(0x80000000))

struct tt_file_header {
	char magic[TT_FILE_MAGIC_LEN]; /* TT_FILE_MAGIC */
	uint32_t version;              /* TT_FILE_VERSION */
	uint32_t header_size;          /* sizeof(struct tt_file_header) for this version */
	uint32_t flags;                /* enum tt_file_flags */
	uint32_t tsc_source;           /* enum tt_tsc_source */
	uint64_t tsc_hz;               /* ticks per second, for display */
	uint64_t reserved1;
	struct tt_anchor start; /* taken when the runtime initialized */
	struct tt_anchor end;   /* taken when the file was written */
	uint32_t pid;
	uint32_t crash_signal; /* with TT_FILE_CRASHED: the signal the program died of, or
	                        * on Windows the exception's code (0xC0000005: an access
	                        * violation), which no signal number reaches:
	                        * TT_CRASH_EXCEPTION */
	uint64_t unregistered_dropped; /* events lost before their thread had a buffer */
	/* With TT_FILE_LIVE: the sections end at live_sections_end (no END: the run
	 * never finished), and the threads' chunks follow from live_chunks_at, each
	 * TT_LIVE_CHUNK_SIZE bytes starting with a struct tt_live_chunk. */
	uint64_t live_sections_end;
	uint64_t live_chunks_at;
	/* With TT_FILE_LIVE: TT_LIVE_THREADS struct tt_live_thread, between
	 * live_sections_end and live_chunks_at (0: none, a file from before them). */
	uint64_t live_threads_at;
};
_Static_assert(sizeof(struct tt_file_header) == 144, "file header layout");

/* ---- sections ----------------------------------------------------------------- */

enum tt_section_type {
	TT_SEC_PROCESS = 1, /* struct tt_process_info, then name and cmdline bytes */
	TT_SEC_SITES = 2,   /* uint64 count, then count tt_site_info each with strings */
	TT_SEC_MODULES = 3, /* uint64 count, then count tt_module_info each with strings */
	TT_SEC_THREAD = 4,  /* struct tt_thread_info, then the name bytes */
	TT_SEC_EVENTS = 5,  /* struct tt_events_info, then records (16-byte aligned) */
	TT_SEC_END = 6,     /* struct tt_end_info: totals that the reader checks */
	/* uint64 count, then count uint64 function addresses: each function that a
	 * FUNC_ENTER record names, once. It may appear more than once (each adds
	 * addresses), anywhere before END. The tools name them from MODULES. */
	TT_SEC_FUNCS = 0x40,
	/* uint64 count, then count tt_arg_name_info each followed by its name: the name of
	 * the argument (BEGIN_ARG, INSTANT_ARG) of a site that a SITES section before it
	 * describes. Without one, the argument is "arg". */
	TT_SEC_ARG_NAMES = 0x41,
	/* struct tt_unloaded_info, then one whole section (header, payload, padding) of
	 * type MODULES, SITES, FUNCS or ARG_NAMES: the description of a library unloaded
	 * (dlclose) at until_tsc, which holds for records before that TSC only. Records
	 * from then on at the same addresses are another library's, described outside
	 * UNLOADED sections. An UNLOADED MODULES also ends, at until_tsc, the time span of
	 * every description of its addresses that sections before it gave outside
	 * UNLOADED sections (a streamed or live file describes a library while it is
	 * loaded, and says it was unloaded later); the same UNLOADED MODULES again (a
	 * streamed file lists every module at its end) changes nothing. Files without
	 * UNLOADED sections, written before there were any, name every record by the one
	 * description of its address. */
	TT_SEC_UNLOADED = 0x42,
	/* struct tt_sched_info, then struct tt_sched_state records: a thread's switches
	 * off its CPU and back, as the kernel told them (perf_event_open's context-switch
	 * records, which any thread may ask for about itself), after a THREAD section of
	 * its index. A thread may have several; their states are in time order, each
	 * section's after the last one's. Readers older than this section refuse a file
	 * that holds one (an unknown section type, at its offset) rather than show
	 * threads without what they did; a file without one reads as it did, which is
	 * why the version stays. */
	TT_SEC_SCHED = 0x43,
	/* struct tt_snapshot_info, its name, then snapshot_info.cuts struct tt_snapshot_cut,
	 * then struct tt_snapshot_split, struct tt_snapshot_causes, struct
	 * tt_snapshot_unsplit, struct tt_snapshot_unknown and struct tt_snapshot_miss: the file is a snapshot (TICKTRACE_SNAPSHOTS), the records
	 * of every thread from from_tsc to to_tsc around a spike or a tt_trigger() call,
	 * written while the program ran. Once, after PROCESS; the header has
	 * TT_FILE_SNAPSHOT. A section that ends at its cuts is the first version's (its
	 * split, where it has one, covers the whole spike), one that ends at
	 * tt_snapshot_split the second's (its split's source not said), one that ends at
	 * tt_snapshot_causes the third's (why a spike has no split: its thread's flags),
	 * one that ends at tt_snapshot_unsplit the fourth's (its time without switches not
	 * said), one that ends at tt_snapshot_unknown the fifth's (the readings' far sides
	 * and the thread's wait not said); a longer one than tt_snapshot_miss is a later
	 * version's: a reader
	 * takes the fields it knows. */
	TT_SEC_SNAPSHOT = 0x44,
	/* struct tt_machine_info: the machine the run ran on (its name and ids), the
	 * clocks the run's times are on, and how they relate to its machine's and to the
	 * wall clock. Once, after PROCESS, in every file this version writes (the first
	 * version wrote it only where a time namespace moved the clocks: a file without
	 * one is on its machine's own clocks, machine not known). Readers older than the
	 * section refuse a file that holds one (an unknown section type, at its offset):
	 * the version stays, as a file without one reads as it did. A section of
	 * TT_MACHINE_INFO_V1_SIZE bytes is the first version's; a longer one than
	 * tt_machine_info is a later version's: a reader takes the fields it knows and
	 * skips the rest of the section. */
	TT_SEC_MACHINE = 0x45,
	/* struct tt_filtered_info, then count struct tt_filtered_fn: the calls of one
	 * thread (a THREAD section of its index before it) that TICKTRACE_MIN_DUR erased
	 * as they returned, each shorter than min_dur_ns with nothing recorded inside:
	 * counted per function, not recorded. Each function is in a FUNCS section. At
	 * most one per thread, in a file written whole, or in a streamed one as its thread
	 * exits and at the end (TT_FILE_MIN_DUR: one cut short lacks some); not in a
	 * snapshot. */
	TT_SEC_FILTERED = 0x46,
	/* The same two structs: the calls of one thread dropped with its buffer used up
	 * (mode stop), counted per function as they were dropped (min_dur_ns 0, each
	 * function's ticks 0: their times were not taken), in TICKTRACE_MIN_DUR's table,
	 * so only where it is on (the zero-markup build's default); a function whose place
	 * there another holds, and the last 4,095 events a thread dropped, are counted in
	 * the END section alone. So that `ticktrace spikes --suggest` ranks functions by
	 * the whole run's calls, not by the calls the buffer kept. At most one per thread,
	 * after its FILTERED section if any, in a file written whole. */
	TT_SEC_DROPPED_CALLS = 0x47,
	/* struct tt_schedstat_info, then struct tt_schedstat_sample readings: what the
	 * kernel counts of a thread of its own without privilege (its CPU time,
	 * /proc/self/task/TID/schedstat's run-queue wait and timeslices, /proc/.../stat's
	 * page faults), read by ticktrace's thread tt-sched while the thread is inside a
	 * scope open a millisecond or more, and once after it closed (and by the thread
	 * itself as it starts, and at its exit where tt-sched missed its last scope: a
	 * reading like any other). The second source of
	 * a spike's causes, where perf_event_open is refused (and beside the switches, the
	 * CPU time that tells stolen time apart). After a THREAD section of its index; a
	 * thread may have several, their readings in time order, each section's after the
	 * last one's. One of none says the counters were the thread's source, none read
	 * (in a live file, TT_FILE_LIVE: read, and kept in the run's memory, as its
	 * states would be). Readers older than it refuse a file that holds one (an unknown
	 * section type, at its offset); the version stays. */
	TT_SEC_SCHEDSTAT = 0x48,
	/* struct tt_turned_off_info, then count struct tt_turned_off_fn: the patched
	 * functions the zero-markup build turned off as it ran (their patches undone), each
	 * after a thread's TICKTRACE_MIN_DUR had erased `after_calls` of its calls: their
	 * later calls, on every thread, were neither recorded nor counted. Each function is
	 * in a FUNCS section; the calls erased before are in the threads' FILTERED
	 * sections. At most one, in a file written whole. */
	TT_SEC_TURNED_OFF = 0x49,
	/* struct tt_thread_exit: when a thread without switches (perf refused: its
	 * counters, SCHEDSTAT, its source) exited, which a SCHED section's exited_ns says of
	 * one with them: what it left open (pthread_exit, cancelled) lasts until then, not
	 * its last event. At most one per thread, after its THREAD section. Readers older
	 * than it refuse a file that holds one (an unknown section type, at its offset);
	 * the version stays. */
	TT_SEC_THREAD_EXIT = 0x4a,
	/* struct tt_thread_first: the record that opened a thread's first scope or
	 * function (among its first TT_FIRST_OPENER_RECORDS), which a thread nobody named
	 * is named after: a file whose records of it begin later (a ring's, a snapshot's
	 * window) names it as the run's other files do. Written where the file's records
	 * of the thread do not begin with it (a live file: once known); at most one per
	 * thread, after its THREAD section; the site or function it names is in the file's
	 * SITES or FUNCS.
	 * Readers older than it refuse a file that holds one; the version stays. */
	TT_SEC_THREAD_FIRST = 0x4b,
	/* struct tt_thread_info, then the name: a thread's final totals, name and flags,
	 * replacing those of its THREAD section (streamed files, where a thread's THREAD
	 * section is written before its events are known). */
	TT_SEC_THREAD_TOTALS = 0x60,
	/* struct tt_events_info, struct tt_packed_info, then the records packed (below):
	 * an EVENTS section in a quarter of the bytes or less, as mode stream writes. */
	TT_SEC_EVENTS_PACKED = 0x61,
};

struct tt_filtered_info {
	uint32_t thread_index;
	uint32_t count;      /* struct tt_filtered_fn that follow */
	uint64_t min_dur_ns; /* the threshold (not 0) */
};
_Static_assert(sizeof(struct tt_filtered_info) == 16, "filtered info layout");

struct tt_filtered_fn {
	uint64_t address; /* the function, as its FUNC_ENTER records name it */
	uint64_t calls;   /* erased calls (not 0) */
	uint64_t ticks;   /* their time together, in TSC ticks (each < min_dur_ns) */
};
_Static_assert(sizeof(struct tt_filtered_fn) == 24, "filtered function layout");

struct tt_turned_off_info {
	uint32_t count;       /* struct tt_turned_off_fn that follow */
	uint32_t not_written; /* turned off beyond what the runtime keeps: not in the list */
	uint64_t after_calls; /* erased calls of one thread that turn a function off */
};
_Static_assert(sizeof(struct tt_turned_off_info) == 16, "turned off info layout");

struct tt_turned_off_fn {
	uint64_t address; /* the function, as its FUNC_ENTER records name it */
	uint64_t tsc;     /* when it was turned off */
};
_Static_assert(sizeof(struct tt_turned_off_fn) == 16, "turned off function layout");

struct tt_section_header {
	uint32_t type; /* enum tt_section_type */
	uint32_t reserved;
	uint64_t size; /* payload bytes, not counting the padding to 16 */
};
_Static_assert(sizeof(struct tt_section_header) == 16, "section header layout");

#define TT_SECTION_PADDED(size) (((size) + UINT64_C(15)) & ~UINT64_C(15))

struct tt_process_info {
	uint32_t pid;
	uint32_t ppid;
	uint32_t name_len;    /* bytes of the process name (comm) that follow */
	uint32_t cmdline_len; /* bytes of the command line that follow the name:
	                       * the arguments, each terminated by NUL */
};
_Static_assert(sizeof(struct tt_process_info) == 16, "process info layout");

/* A call-site descriptor as the macros declared it; `address` is what the records'
 * payload holds. The name, file and function strings follow, in that order. */
struct tt_site_info {
	uint64_t address;
	uint32_t line;
	uint32_t name_len;
	uint32_t file_len;
	uint32_t func_len;
};
_Static_assert(sizeof(struct tt_site_info) == 24, "site info layout");
/* The longest site string a reader takes: the runtime cuts a run-time name (TT_*_DYN)
 * longer than this, ending it with "...", and a reader cuts any longer string. */
#define TT_NAME_MAX 65536

/* ARG_NAMES: a site's argument, by its name (name_len bytes follow; 0: "arg") and its
 * type (flags; files written before there were any have 0: unsigned). */
struct tt_arg_name_info {
	uint64_t address; /* the site's */
	uint32_t name_len;
	uint32_t flags;   /* enum tt_arg_flags */
};
enum tt_arg_flags {
	TT_ARG_SIGNED = 1u << 0, /* the argument is a signed integer: shown as int64_t */
};
_Static_assert(sizeof(struct tt_arg_name_info) == 16, "arg name info layout");

/* A mapping of an ELF file, for offline symbolization: one per loadable segment (its
 * code, and its data, where call-site descriptors live; files written before
 * descriptors were named offline list executable segments only). Path bytes, then
 * build-id bytes follow. An address A in [start, end) is file offset
 * A - start + file_offset. A Windows module (a PE file: one per executable section)
 * has as build id its CodeView record's GUID and age (20 bytes), else its header's
 * stamp (TT_PE_STAMP_SIZE: TimeDateStamp, SizeOfImage and CheckSum, uint32 each), which
 * mingw's ld writes where it writes no CodeView record (without --build-id); files
 * written before the stamp have none there. */
#define TT_PE_STAMP_SIZE 12
struct tt_module_info {
	uint64_t start;
	uint64_t end;
	uint64_t file_offset;
	uint32_t path_len;
	uint32_t build_id_len;
};
_Static_assert(sizeof(struct tt_module_info) == 32, "module info layout");

struct tt_unloaded_info {
	uint64_t until_tsc; /* the library was unloaded: every record of it is earlier */
	uint64_t reserved;
};
_Static_assert(sizeof(struct tt_unloaded_info) == 16, "unloaded info layout");

/* Why events were lost. */
enum tt_drop_cause {
	TT_DROP_FULL = 0,     /* the thread's buffer was full (mode stop) */
	TT_DROP_NO_MEMORY = 1, /* no memory for a buffer, or for the thread's registration */
	TT_DROP_BEHIND = 2,    /* mode stream: the disk fell behind, the thread's chunks
	                        * were all waiting to be written */
	TT_DROP_OVERWRITTEN = 3, /* mode ring: older events overwritten by newer ones */
	TT_DROP_REENTERED = 4, /* recorded from inside the recorder's slow path (a hook or
	                        * wrapper that it called into) */
	TT_DROP_CAUSES = 5,
};

struct tt_thread_info {
	uint32_t index; /* the thread's number in this file; EVENTS sections name it */
	uint32_t tid;   /* the kernel's thread id */
	uint64_t events;                  /* records of this thread in the file */
	uint64_t dropped[TT_DROP_CAUSES]; /* events lost, by enum tt_drop_cause */
	uint32_t name_len;                /* bytes of the thread's name that follow */
	uint32_t flags;                   /* enum tt_thread_flags */
};
_Static_assert(sizeof(struct tt_thread_info) == 64, "thread info layout");

enum tt_thread_flags {
	TT_THREAD_EXITED = 1u << 0, /* the thread had exited when the file was written */
	TT_THREAD_RUNTIME = 1u << 1, /* ticktrace's own thread (it records nothing) */
	/* Mode ring: its oldest events were overwritten, so its records begin inside
	 * scopes whose beginnings are gone; so do a fork's child's thread that forked
	 * (the scopes open as it forked began in the parent's file). */
	TT_THREAD_WRAPPED = 1u << 2,
	/* Its switches were recorded (TT_SEC_SCHED, tt_sched_info says from when). Without
	 * it, nothing is known of when it ran (the kernel refused, or TICKTRACE_SCHED=0).
	 * A streamed file's THREAD section may be written before the kernel was asked:
	 * its THREAD_TOTALS has the flag, and its SCHED sections follow that THREAD. */
	TT_THREAD_SCHED = 1u << 3,
	/* Without TT_THREAD_SCHED, why it has none: an enum tt_no_states in these bits
	 * (TT_THREAD_NO_STATES), and with TT_NO_STATES_REFUSED the errno perf_event_open
	 * gave in those (TT_THREAD_NO_STATES_ERRNO). 0: not said (a file from before). */
	TT_THREAD_NO_STATES_MASK = 7u << 4,
	TT_THREAD_NO_STATES_ERRNO_MASK = 0xffu << 8,
};

enum tt_no_states {
	TT_NO_STATES_UNSAID = 0,
	TT_NO_STATES_OFF = 1,       /* TICKTRACE_SCHED=0 */
	TT_NO_STATES_REFUSED = 2,   /* the kernel refused perf_event_open (its errno) */
	/* The thread (made by raw clone, or before ticktrace started: tt-sched asks for its
	 * switches at its next drain) ended, or the file was written, before they were
	 * asked for. */
	TT_NO_STATES_TOO_SHORT = 3,
	TT_NO_STATES_NOT_ASKED = 4, /* no thread drained them: not started, or given back (TT_FILE_GAVE_SCHED) */
	/* Windows: a thread's switches come from the kernel's events (ETW) alone, which need
	 * an administrator: not elevated, or the session was refused, or the thread did not
	 * switch once it was followed (its CPU time is read: TT_SCHEDSTAT_RUN_ONLY). */
	TT_NO_STATES_WINDOWS = 5,
	/* Said by the reader, never written: a live file (TT_FILE_LIVE) holds no SCHED
	 * sections, the run keeps its threads' states in memory until it writes its trace
	 * (killed first: they are gone). */
	TT_NO_STATES_LIVE = 6,
	/* TICKTRACE_SCHED=schedstat: its switches not asked for, its counters the source
	 * (SCHEDSTAT sections: one, of no reading maybe, for each such thread) */
	TT_NO_STATES_COUNTERS = 7,
};

#define TT_THREAD_NO_STATES(flags) (((flags) & TT_THREAD_NO_STATES_MASK) >> 4)
#define TT_THREAD_NO_STATES_ERRNO(flags) (((flags) & TT_THREAD_NO_STATES_ERRNO_MASK) >> 8)
#define TT_THREAD_NO_STATES_FLAGS(why, err) \
	((uint32_t)(why) << 4 | ((uint32_t)(err) & 0xffu) << 8)

/* Followed by (size - sizeof(struct tt_events_info)) / 16 records of one thread, in
 * the order they were reserved. */
struct tt_events_info {
	uint32_t thread_index;
	uint32_t reserved;
	uint64_t first_record; /* the number of this thread's records before this section */
};
_Static_assert(sizeof(struct tt_events_info) == 16, "events info layout");

/* Packed records (TT_SEC_EVENTS_PACKED), each one: a byte naming its word, then its
 * tsc field as an LEB128 varint. The byte is 0..254 for the word last given in full
 * whose tt_packed_slot is that number, or 255 for a word that follows in full (8
 * bytes, little-endian) and takes its slot; slots start empty in each section. The
 * varint is the zigzag-coded difference from the tsc of the section's last record
 * with a time (0 before the first) if the word's kind has one
 * (TT_RECORD_HAS_TIME), else the field as it is (a VALUE record's value). */
struct tt_packed_info {
	uint64_t records; /* how many records the bytes hold */
};
_Static_assert(sizeof(struct tt_packed_info) == 8, "packed info layout");

#define TT_PACKED_LITERAL 255u
#define TT_PACKED_MAX_RECORD 19     /* bytes a record takes at most: 1 + 8 + 10 */
#define TT_PACKED_MAX_RECORDS 4096  /* records a section holds at most (a chunk's) */

static inline unsigned tt_packed_slot(uint64_t word)
{
	return (unsigned)((word * UINT64_C(0x9E3779B97F4A7C15)) >> 56) % TT_PACKED_LITERAL;
}

static inline uint64_t tt_zigzag(uint64_t delta)
{
	return delta << 1 ^ (uint64_t)((int64_t)delta >> 63);
}

static inline uint64_t tt_unzigzag(uint64_t coded)
{
	return coded >> 1 ^ (uint64_t)-(int64_t)(coded & 1);
}

/* A section holds every switch of its thread from since_ns to its last state. Before
 * since_ns, back to the thread's previous state in the file (or its start), what the
 * thread did is not known: `lost` switches were lost there (the kernel's buffer for the
 * thread was full, or ticktrace's store for it), or, before the thread's first state,
 * the kernel had not been asked for them yet (since_ns: when it was). A section with
 * no state says that `lost` were lost after the thread's last one; with none lost,
 * and as its thread's first, that the thread never left its CPU from since_ns on (and
 * with none lost, since_ns its last state's and exited_ns set, only when it exited). */
struct tt_sched_info {
	uint32_t thread_index;
	uint32_t reserved;
	uint64_t lost;
	int64_t since_ns; /* CLOCK_MONOTONIC; at most the first state's */
	/* The thread exited: its switches were read for the last time then, on its way
	 * out (it ran from its last state on, and was gone microseconds later; the kernel
	 * records no switch out of a thread that exits). At least the section's last
	 * state's; 0: not said (it lived on, or a file from before). */
	int64_t exited_ns;
};
_Static_assert(sizeof(struct tt_sched_info) == 32, "sched info layout");

/* What a thread did from `ns` on, until its next state. */
enum tt_sched_what {
	TT_SCHED_RUNNING = 0,   /* switched in: on `cpu` */
	TT_SCHED_PREEMPTED = 1, /* switched out while it could run: it waits for a CPU */
	TT_SCHED_BLOCKED = 2,   /* switched out to wait (sleep, a lock, I/O) */
	/* Never in a file: what readers make of the spans whose states are not known
	 * (tt_sched_info), up to the next state; its cpu, how many switches were lost
	 * there (tt_sched_info.lost, UINT32_MAX at most; 0: none, not asked for yet). */
	TT_SCHED_UNKNOWN = 3,
};

struct tt_sched_state {
	int64_t ns;    /* CLOCK_MONOTONIC, as the file header's anchors: the kernel's own,
	                * in a time namespace moved into it (TT_SEC_MACHINE) */
	uint32_t cpu;  /* the CPU it ran on, or left */
	uint32_t what; /* enum tt_sched_what */
};
_Static_assert(sizeof(struct tt_sched_state) == 16, "sched state layout");

/* A thread's readings of its own counters (TT_SEC_SCHEDSTAT). Each counter only
 * grows: between two readings, the thread ran (run_ns), waited on a run queue
 * (wait_ns, counted when the wait ends) and slept the rest of the time between. */
struct tt_schedstat_info {
	uint32_t thread_index;
	uint32_t flags; /* enum tt_schedstat_flags */
	uint64_t lost;  /* readings lost before this section's first (a full store) */
};
_Static_assert(sizeof(struct tt_schedstat_info) == 16, "schedstat info layout");

enum tt_schedstat_flags {
	/* The kernel accounts stolen time (the paravirt steal clock: /proc/stat's steal
	 * was above zero at the start): run_ns leaves out the time the hypervisor ran
	 * something else while the thread had its CPU, which its switches count as on
	 * CPU. Without it, the two agree and stolen time is not known. */
	TT_SCHEDSTAT_STEAL = 1u << 0,
	/* Only run_ns was read: Windows, whose counters a thread of the process may read
	 * without an administrator are its CPU time (its cycle time at the TSC's rate
	 * where QueryThreadCycleTime answers; else its times, GetThreadTimes, in steps of
	 * the system's tick, which the readings are spaced by). wait_ns, timeslices and
	 * the faults are 0, not counted: the time off CPU is not told apart into
	 * preempted and blocked. */
	TT_SCHEDSTAT_RUN_ONLY = 1u << 1,
	/* run_ns moves in steps of the system's tick (Windows' thread times): each value
	 * may be behind by up to a tick, the MACHINE section's (TT_MACHINE_TICK), or
	 * without it TT_SCHEDSTAT_TICK_NS, Windows' default. */
	TT_SCHEDSTAT_TICK_STEPS = 1u << 2,
	/* With TT_SCHEDSTAT_RUN_ONLY: timeslices holds the thread's context switches so
	 * far (Windows: SYSTEM_THREAD_INFORMATION's ContextSwitches, which
	 * NtQueryInformationThread's ThreadSystemThreadInformation gives any thread of the
	 * process without an administrator, where ntdll has it; Wine 8's lacks it). A
	 * count that does not move from a reading before a scope to one after it says the
	 * scheduler kept the thread on CPU throughout. */
	TT_SCHEDSTAT_SWITCH_COUNT = 1u << 3,
	/* tt-sched reached its CPU budget (a share of the process's CPU time, measured by
	 * itself) and left scopes of this thread that were open long enough to be read
	 * unread: a struct tt_schedstat_budget follows the info, before the readings (a
	 * section may then have none). Their spikes have no split. */
	TT_SCHEDSTAT_BUDGET = 1u << 4,
	/* The section's first reading (TT_SCHEDSTAT_OWN_FIRST), its last
	 * (TT_SCHEDSTAT_OWN_LAST), was read by the thread itself (as it started, at its
	 * exit): it ran as its values were read, within TT_SCHEDSTAT_SPAN_NS before its ns,
	 * so a run-queue wait counted after them began after that, and one counted before
	 * them ended before. Such a reading just outside a spike bounds each of its parts
	 * within the distance, where another thread's says nothing of the waits between.
	 * A first one may be all 0, stamped before the thread was made (as pthread_create
	 * was called: every counter starts at 0 there, and every wait of its comes after),
	 * however late the thread started (it read no file: the spans from that moment to
	 * a spike's start bound what it waited meanwhile). */
	TT_SCHEDSTAT_OWN_FIRST = 1u << 5,
	TT_SCHEDSTAT_OWN_LAST = 1u << 6,
	/* tt-sched stopped following the thread's records for a while (their share of its
	 * CPU time) as the thread went on recording: its scopes were not known from then on,
	 * and its readings were taken blind, whatever scope it was in (each 2 ms while its
	 * records were not followed, each 8 ms after, and as a scope begun before ended). A
	 * spike of it may be read too far inside for a split. */
	TT_SCHEDSTAT_BLIND = 1u << 7,
};

struct tt_schedstat_budget {
	/* the thread's scopes seen left unread so far (each section: all since its start);
	 * at least: past its budget tt-sched looks seldom, and does not see a scope that
	 * opens and ends between two looks */
	uint64_t unread;
	uint64_t reserved; /* 0 */
};
_Static_assert(sizeof(struct tt_schedstat_budget) == 16, "schedstat budget layout");
#define TT_SCHEDSTAT_TICK_NS 15625000

/* A reading's values are read one after another, not at once: all of them within
 * TT_SCHEDSTAT_SPAN_NS before its `ns`, run_ns before wait_ns (Linux's tt-sched reads
 * again where it was kept off its CPU between them). An edge inside that span may
 * fall between them: a run-queue wait counted (as it ends) after wait_ns was read
 * but before the edge is missing from a reading stamped after the edge. */
#define TT_SCHEDSTAT_SPAN_NS 50000

struct tt_thread_exit {
	uint32_t thread_index;
	uint32_t reserved;  /* 0 */
	int64_t exited_ns;  /* CLOCK_MONOTONIC, as tt_sched_info.exited_ns */
};
_Static_assert(sizeof(struct tt_thread_exit) == 16, "thread exit layout");

/* How far into a thread's records its first scope or function is looked for. */
#define TT_FIRST_OPENER_RECORDS 64

struct tt_thread_first {
	uint32_t thread_index;
	uint32_t reserved; /* 0 */
	struct tt_record record; /* TT_REC_BEGIN, BEGIN_ARG, ENDBEGIN or FUNC_ENTER */
};
_Static_assert(sizeof(struct tt_thread_first) == 24, "thread first layout");

struct tt_schedstat_sample {
	int64_t ns;          /* CLOCK_MONOTONIC when read (the run's clock, as the anchors) */
	uint64_t run_ns;     /* the thread's CPU time (CLOCK_THREAD_CPUTIME_ID) */
	uint64_t wait_ns;    /* schedstat's second field: time on a run queue */
	uint64_t timeslices; /* schedstat's third: times it was given a CPU */
	uint64_t minflt, majflt; /* stat's fields 10 and 12: minor and major page faults */
};
_Static_assert(sizeof(struct tt_schedstat_sample) == 48, "schedstat sample layout");

/* The machine's wall clocks at one of the run's anchors, and how good the kernel says
 * they are (adjtimex(2) with no change asked). CLOCK_TAI is CLOCK_REALTIME plus the
 * kernel's TAI offset, whole seconds (0 until an NTP daemon sets it: TAI then equals
 * REALTIME and is no better than it). */
struct tt_clock_reading {
	uint64_t tsc;         /* the anchor's TSC */
	int64_t realtime_ns;  /* CLOCK_REALTIME at tsc */
	int64_t tai_ns;       /* CLOCK_TAI at tsc */
	int64_t esterror_ns;  /* timex.esterror: the kernel's estimate of REALTIME's error */
	int64_t maxerror_ns;  /* timex.maxerror: its bound */
	int32_t state;        /* adjtimex's return, TIME_OK (0) .. TIME_ERROR (5), or -1:
	                       * adjtimex failed and the errors and status are not known */
	uint32_t status;      /* timex.status: STA_* bits; STA_UNSYNC (0x40): not synchronized */
};
_Static_assert(sizeof(struct tt_clock_reading) == 48, "clock reading layout");

#define TT_HOST_NAME_MAX 64 /* Linux's HOST_NAME_MAX */

/* The machine a run ran on and its clocks. A time namespace (unshare --time,
 * containers, CRIU restores) shows its processes CLOCK_MONOTONIC and CLOCK_BOOTTIME
 * moved by an offset (/proc/self/timens_offsets), while the kernel stamps context
 * switches with the machine's: the runtime moves those into the namespace's, and says
 * by how much. A time T of the file is the machine's T - timens_monotonic_ns
 * (CLOCK_MONOTONIC; the boottime offset for CLOCK_BOOTTIME). Readers refuse offsets
 * that put the run's start anchor before the machine's boot (a clock of the machine's
 * below 0, which the kernel never shows). CLOCK_REALTIME and CLOCK_TAI are no time
 * namespace's: they place runs of different machines on one timeline, as well as the
 * readings' errors say.
 *
 * The first 24 bytes were the section's first version (time namespaces alone). */
struct tt_machine_info {
	uint32_t flags; /* enum tt_machine_flags; readers ignore those they do not know */
	uint32_t tick_ns; /* TT_MACHINE_TICK: the step the threads' CPU times move by (below) */
	int64_t timens_monotonic_ns; /* the namespace's CLOCK_MONOTONIC less the machine's */
	int64_t timens_boottime_ns;  /* the same for CLOCK_BOOTTIME */
	/* /proc/sys/kernel/random/boot_id and /etc/machine-id as 16 bytes each (the
	 * hexadecimal digits read): one boot of one machine has one CLOCK_MONOTONIC.
	 * All 0: not read. */
	uint8_t boot_id[16];
	uint8_t machine_id[16];
	uint32_t host_name_len; /* the host name (uname's nodename, the UTS namespace's) */
	uint32_t reserved2;
	char host_name[TT_HOST_NAME_MAX]; /* host_name_len bytes, no NUL among them; 0 after */
	/* With TT_MACHINE_START_CLOCK, the wall clocks at the header's start anchor
	 * (start.tsc is its TSC); with TT_MACHINE_WRITTEN_CLOCK, as the section was
	 * written (at the dump, or at the start of a file written as the program runs:
	 * mode stream, a live file). All 0 without their flag. */
	struct tt_clock_reading start, written;
};
_Static_assert(sizeof(struct tt_machine_info) == 224, "machine info layout");

/* The first version of the section, which readers still take. */
#define TT_MACHINE_INFO_V1_SIZE 24

enum tt_machine_flags {
	/* The offsets were read (/proc/self/timens_offsets). Without it they are 0 and
	 * not known: readers refuse other offsets. */
	TT_MACHINE_TIMENS = 1u << 0,
	TT_MACHINE_START_CLOCK = 1u << 1,   /* tt_machine_info.start was read */
	TT_MACHINE_WRITTEN_CLOCK = 1u << 2, /* tt_machine_info.written was read */
	/* The run was on Windows: its wall clock readings are the system time's
	 * (GetSystemTimePreciseAsFileTime: tai_ns is realtime_ns, state -1, no error
	 * estimate), and it has no machine, boot id or time namespace to read. */
	TT_MACHINE_WINDOWS = 1u << 3,
	/* tick_ns (0 without the flag) is the step the thread times (TT_SCHEDSTAT_TICK_STEPS)
	 * moved by, as the runtime found them: the greatest divisor of every user and
	 * kernel time it read, 1 ms or more (Windows' tick, 15.625 ms as it starts; Wine's,
	 * its Linux's USER_HZ, 10 ms, where GetSystemTimeAdjustment says 15.625 too). Each
	 * value is up to a tick behind the thread's CPU time; without the flag (a file
	 * before it, or no step read), up to TT_SCHEDSTAT_TICK_NS. */
	TT_MACHINE_TICK = 1u << 4,
	/* With TT_MACHINE_TICK: the user and kernel times are each cut to the tick (Wine:
	 * Linux's utime and stime), so their sum is up to two ticks behind. */
	TT_MACHINE_TICK_EACH = 1u << 5,
};

/* Why a snapshot was written. */
enum tt_snapshot_kind {
	TT_SNAPSHOT_SPIKE = 1,   /* a scope took longer than its threshold: name is the scope's */
	TT_SNAPSHOT_TRIGGER = 2, /* the program called tt_trigger(why): name is why */
};

/* Where the spike's threshold came from (as `ticktrace spikes --json` says it). */
enum tt_snapshot_threshold_from {
	TT_THRESHOLD_FROM_NONE = 0,     /* a trigger */
	TT_THRESHOLD_FROM_MARKUP = 1,   /* TT_THRESHOLD_NS (or TT_PARENTS_THRESHOLD_NS) */
	TT_THRESHOLD_FROM_FILE = 2,     /* TICKTRACE_SPIKE_THRESHOLDS */
	TT_THRESHOLD_FROM_CHILDREN = 3, /* TT_CHILDREN_THRESHOLD_NS on a scope around it */
	TT_THRESHOLD_FROM_GLOBAL = 4,   /* TICKTRACE_SPIKE_THRESHOLD */
};

struct tt_snapshot_info {
	uint32_t kind;         /* enum tt_snapshot_kind */
	uint32_t thread_index; /* the thread of the spike, or that called tt_trigger
	                        * (TT_SNAPSHOT_NO_THREAD: one that never recorded) */
	uint64_t number;       /* the process's snapshots, from 1, as the file's name says */
	uint64_t from_tsc;     /* the window: TICKTRACE_SNAPSHOT_BEFORE before begin_tsc */
	uint64_t to_tsc;       /* ... to TICKTRACE_SNAPSHOT_AFTER after end_tsc (or the exit) */
	uint64_t begin_tsc;    /* the spike's scope began; a trigger: when it was called */
	uint64_t end_tsc;      /* the scope ended; a trigger: the same as begin_tsc */
	int64_t threshold_ns;  /* the spike's threshold; 0 for a trigger */
	uint32_t threshold_from; /* enum tt_snapshot_threshold_from */
	uint32_t has_split;    /* 1: the thread had states: the three times below and
	                        * tt_snapshot_split's unknown_ns split the spike */
	int64_t on_cpu_ns;     /* of the spike's duration: running */
	int64_t preempted_ns;  /* switched out while it could run */
	int64_t blocked_ns;    /* switched out to wait */
	uint32_t name_len;     /* bytes of the name that follow */
	uint32_t cuts;         /* struct tt_snapshot_cut after the name (padded to 8) */
};
_Static_assert(sizeof(struct tt_snapshot_info) == 96, "snapshot info layout");
#define TT_SNAPSHOT_NO_THREAD UINT32_MAX

/* A thread whose window is cut: before the snapshot was taken, the ring overwrote
 * `events` of its events, from lost_from_tsc to lost_to_tsc (the last of them), which
 * its dropped[TT_DROP_OVERWRITTEN] counts. The span is the ring's chunks that reached
 * into the window, said whole: lost_from_tsc is at or before the window's from_tsc,
 * or the thread's first event when it began later; lost_to_tsc may pass to_tsc. 0 in
 * lost_from_tsc: the ring overwrote more than it remembers, and the window lost at
 * least `events`. */
struct tt_snapshot_cut {
	uint32_t thread_index;
	uint32_t reserved;
	uint64_t events;
	uint64_t lost_from_tsc;
	uint64_t lost_to_tsc;
};
_Static_assert(sizeof(struct tt_snapshot_cut) == 32, "snapshot cut layout");

/* The rest of a spike's split (tt_snapshot_info.has_split), after the cuts: 0s
 * without a split, and for a trigger. */
struct tt_snapshot_split {
	int64_t dur_ns;     /* the spike's duration as the detector measured it, which
	                     * on_cpu_ns + preempted_ns + blocked_ns + unknown_ns make up
	                     * (begin_tsc..end_tsc, on the file's clock, may differ by a
	                     * few ns: the detector's clock is measured as the run goes) */
	int64_t unknown_ns; /* of it, what no state covers: before the thread's states were
	                     * asked for, or switches the kernel lost or ticktrace's store
	                     * recycled */
};
_Static_assert(sizeof(struct tt_snapshot_split) == 16, "snapshot split layout");

/* Where a spike's split came from (tt_snapshot_causes.from). */
enum tt_snapshot_causes_from {
	TT_CAUSES_NONE = 0,      /* no split, a trigger, or a section too old to say */
	TT_CAUSES_SWITCHES = 1,  /* the thread's switches (SCHED): exact */
	TT_CAUSES_SCHEDSTAT = 2, /* its counters read around it (SCHEDSTAT): within error_ns */
	TT_CAUSES_THREAD_TIMES = 3, /* its CPU time alone read around it (Windows): on CPU
	                             * within error_ns, the rest unknown */
};
enum tt_snapshot_causes_flags {
	TT_CAUSES_FAULTS = 1u << 0, /* the counters were read around it: the fault counts */
	TT_CAUSES_STOLEN = 1u << 1, /* stolen_ns is known */
	/* the switches': waits for a CPU after wake-ups, which they count as blocked, moved
	 * into preempted as the counters' readings bound them (preempted and blocked within
	 * error_ns), or none bounds them (blocked may hold them: within error_ns, all of
	 * it); error_ns then the larger of that and stolen_ns's */
	TT_CAUSES_WAKEUPS = 1u << 2,
	TT_CAUSES_WAKEUPS_UNBOUNDED = 1u << 3,
	/* the switches': the kernel's own CPU time and run-queue wait, read beside them, put
	 * a preemption's edge elsewhere (`spikes --json`'s kernel_moved_ns, not kept), or
	 * may, by at most kernel_moved_at_most_ns (no two readings measured it), or its CPU
	 * time may run ahead of on CPU at switches in no two readings measured
	 * (kernel_cpu_ahead_at_most_ns): each part within error_ns, the larger of that and
	 * stolen_ns's */
	TT_CAUSES_MOVED = 1u << 4,
	/* the switches', with steal accounted: why stolen_ns is not known, in the three bits
	 * from here (enum tt_snapshot_stolen_miss; 0: known, or not to be told); on_cpu_ns
	 * may then be stolen, all of it (error_ns leaves that out) */
	TT_CAUSES_STOLEN_MISS_SHIFT = 5,
	/* its end was among dropped events: it ended at end_tsc or later (how much later
	 * the live log said; not kept) */
	TT_CAUSES_END_DROPPED = 1u << 8,
	/* no reading before its start or none after its end: the fault counts are those
	 * between its first and last readings inside it, at least */
	TT_CAUSES_FAULTS_AT_LEAST = 1u << 9,
	/* the readings around it reach outside it: the fault counts are at most its own */
	TT_CAUSES_FAULTS_AT_MOST = 1u << 10,
};
enum tt_snapshot_stolen_miss {
	TT_STOLEN_NEVER_READ = 1,  /* the thread's CPU time never read */
	TT_STOLEN_NOT_AFTER = 2,   /* not read after the spike began (a thread killed) */
	TT_STOLEN_NOT_BEFORE = 3,  /* not read before it ended */
	TT_STOLEN_NOT_BOUNDED = 4, /* the readings around it bound it no closer than its
	                            * time on CPU */
};
#define TT_CAUSES_STOLEN_MISS(flags) (((flags) >> TT_CAUSES_STOLEN_MISS_SHIFT) & 7u)
/* What the spike's split says beside its parts, after tt_snapshot_split (a section
 * that ends before it is an earlier version's, whose split's source is not said): 0s
 * without a split, and for a trigger. */
struct tt_snapshot_causes {
	uint32_t from;          /* enum tt_snapshot_causes_from */
	uint32_t flags;         /* enum tt_snapshot_causes_flags */
	int64_t error_ns;       /* each part within this of the kernel's figure, and stolen_ns
	                         * too; from the switches (exact parts), stolen_ns's alone
	                         * but with TT_CAUSES_WAKEUPS(_UNBOUNDED) */
	int64_t stolen_ns;      /* of on_cpu_ns, the time the hypervisor ran something else */
	uint64_t minor_faults;  /* page faults from the reading before its start to the one */
	uint64_t major_faults;  /* after its end (TT_CAUSES_FAULTS_AT_LEAST: inside it) */
};
_Static_assert(sizeof(struct tt_snapshot_causes) == 40, "snapshot causes layout");

/* Why a spike has no split (tt_snapshot_unsplit.why), as the run's detector knew it
 * when it wrote the snapshot: `ticktrace spikes` on the run's file says the same. */
enum tt_snapshot_unsplit_why {
	/* Its thread has no states, and no counters were read for it: its THREAD flags say
	 * why (TT_THREAD_NO_STATES). Also a spike with a split, and a trigger. */
	TT_UNSPLIT_THREAD = 0,
	TT_UNSPLIT_NOT_AFTER = 1,  /* its thread's counters: none read after its start */
	TT_UNSPLIT_NOT_BEFORE = 2, /* none read before its end */
	/* none read inside it: the nearest, start_ns before its start and end_ns after its
	 * end, bound it no closer than half its length */
	TT_UNSPLIT_NOT_INSIDE = 3,
	/* read inside it too far from its edges to bound it closer than half its length:
	 * the first start_ns after its start, the last end_ns before its end */
	TT_UNSPLIT_TOO_FAR = 4,
	TT_UNSPLIT_NEVER_READ = 5, /* its thread's counters stand in, never read once */
};
enum tt_snapshot_unsplit_flags {
	/* tt-sched's CPU budget left scopes of its thread unread (TT_SCHEDSTAT_BUDGET) */
	TT_UNSPLIT_BUDGET = 1u << 0,
	/* TT_UNSPLIT_TOO_FAR: no reading came near enough its start, or its end, to bound
	 * it (neither, in an earlier version's: which not said) */
	TT_UNSPLIT_FAR_START = 1u << 1,
	TT_UNSPLIT_FAR_END = 1u << 2,
};
/* Why the spike has no split, after tt_snapshot_causes (a section that ends before it
 * is an earlier version's: its thread's flags say why): 0s with a split, and for a
 * trigger. */
struct tt_snapshot_unsplit {
	uint32_t why;     /* enum tt_snapshot_unsplit_why */
	uint32_t flags;   /* enum tt_snapshot_unsplit_flags */
	int64_t start_ns; /* TT_UNSPLIT_NOT_INSIDE, TT_UNSPLIT_TOO_FAR: the reading nearest */
	int64_t end_ns;   /* its start, and its end, this far from it */
};
_Static_assert(sizeof(struct tt_snapshot_unsplit) == 24, "snapshot unsplit layout");

/* A spike's time without switches (its states' TT_SCHED_UNKNOWN spans: the kernel lost
 * them, its ring for the thread full, or they were not asked for yet), after
 * tt_snapshot_unsplit (a section that ends before it is an earlier version's: not
 * said): 0s without, and for a trigger. Of without_ns, what the counters' readings
 * covered is in the split's parts (tt_snapshot_causes.from TT_CAUSES_SCHEDSTAT, within
 * its error_ns), the rest its unknown_ns, and `why`, `flags`, `start_ns` and `end_ns`
 * say why no reading covers that as tt_snapshot_unsplit says it of a spike without a
 * split (0s where all was covered). */
struct tt_snapshot_unknown {
	uint64_t lost;      /* switches the kernel lost in the spans without them */
	int64_t without_ns; /* of the spike's duration, the time no state covers */
	uint32_t why;       /* enum tt_snapshot_unsplit_why */
	uint32_t flags;     /* enum tt_snapshot_unsplit_flags */
	int64_t start_ns, end_ns;
};
_Static_assert(sizeof(struct tt_snapshot_unknown) == 40, "snapshot unknown layout");

enum tt_snapshot_miss_flags {
	/* the readings bound its edges, but its thread's CPU time moves in steps of the
	 * system's tick (TT_SCHEDSTAT_TICK_STEPS), no closer than half its length */
	TT_MISS_TICK = 1u << 0,
	/* its thread recorded more than tt-sched's share let it follow: read blind */
	TT_MISS_BLIND = 1u << 1,
};
#define TT_MISS_FAR_NONE INT64_C(-1) /* (tt_snapshot_miss: no reading on that side) */
/* What else the run's detector knew of the readings where tt_snapshot_unsplit's or
 * tt_snapshot_unknown's `why` is said, after tt_snapshot_unknown (a section that ends
 * before it is an earlier version's: not said): 0s where neither says one. */
struct tt_snapshot_miss {
	uint32_t flags;    /* enum tt_snapshot_miss_flags */
	uint32_t reserved; /* 0 */
	/* TT_UNSPLIT_TOO_FAR: the reading before its start and the one after its end, how
	 * far (TT_MISS_FAR_NONE: none; 0: not said) */
	int64_t before_ns, after_ns;
	/* the thread's own run-queue wait in the over_ns between the readings around its
	 * start (over_ns 0: not known) */
	int64_t waited_ns, over_ns;
};
_Static_assert(sizeof(struct tt_snapshot_miss) == 40, "snapshot miss layout");

struct tt_end_info {
	uint64_t threads;  /* THREAD sections written */
	uint64_t records;  /* records in all EVENTS sections */
	uint64_t dropped;  /* sum of every thread's dropped counts */
	uint64_t sites;    /* site descriptors in all SITES sections */
};
_Static_assert(sizeof(struct tt_end_info) == 32, "end info layout");

#endif /* TICKTRACE_FORMAT_H */
