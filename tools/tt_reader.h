/* The raw file reader: maps a .ttr file, validates its header and every section,
 * and hands out processes, threads, call sites and the EVENTS sections in file order.
 * Every error names the file, the byte offset and the problem (tt_diag.h). */
#ifndef TT_READER_H
#define TT_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ticktrace/format.h>

#include "tt_clock.h"
#include "tt_map.h"

/* Call-site strings are literals in source code; longer ones mean a corrupt file. */
#define TT_MAX_STRING 65536

/* A string inside the mapped file: not NUL-terminated. */
struct tt_str {
	const char *ptr;
	uint32_t len;
};

struct tt_site {
	uint64_t address;
	struct tt_str name, file, func;
	struct tt_str arg_name; /* its argument's name (ARG_NAMES), or empty: "arg" */
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
	 * CLOCK_MONOTONIC as tt_clock_ns gives; a TT_SCHED_UNKNOWN one where states were
	 * lost, at the time of the state before them (INT64_MIN: none). */
	struct tt_sched_state *states;
	size_t nstates, states_cap;
	uint64_t states_lost;
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

/* A name the reader made (a live file's site not yet described). */
struct tt_made_name {
	struct tt_made_name *next;
	char text[64];
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
	 * anchors cannot bound (tt_reader.c: tt_record_span); the decoder refuses any
	 * other time. */
	uint64_t tsc_min, tsc_max;
	/* Sites the decoder names what the records do not (among `sites`, last; NULL in
	 * files that need none): a run of lost events, and a scope whose beginning was
	 * not recorded (before a ring's oldest event, or in such a run). */
	const struct tt_site *gap_site, *unbegun_site;
	struct tt_made_name *made_names;
};

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
uint64_t tt_record_offset(const struct tt_events *ev, size_t i);
void tt_file_close(struct tt_file *f);

/* Tells the kernel that bytes [from, to) of a mapped file will not be read again, so
 * that converting a large file keeps little of it resident. */
void tt_file_release(const struct tt_file *f, uint64_t from, uint64_t to);

/* Whether the process that writes a file cut short may still be running it (a
 * process with its pid and name is alive here): then the file is not a crash's. */
bool tt_file_writer_running(const struct tt_file *f);

/* Grows the array at *pp (cap elements of elem bytes, count used) to hold one more;
 * 0, or -1 when out of memory. */
int tt_reserve(void *pp, size_t *cap, size_t count, size_t elem);
/* The same, to hold `more`. */
int tt_reserve_n(void *pp, size_t *cap, size_t count, size_t more, size_t elem);

/* The site (call site or function) at `address` for a record made at `tsc`: of the
 * library loaded there then. NULL when none is described. Every name of an address
 * goes through here. */
const struct tt_site *tt_file_site(const struct tt_file *f, uint64_t address, uint64_t tsc);
/* The module (segment of an ELF file) that held `address` at `tsc`, or NULL. */
const struct tt_module *tt_file_module(const struct tt_file *f, uint64_t address, uint64_t tsc);

#endif
