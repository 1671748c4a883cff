/* ticktrace runtime, layer sections: a raw file's bytes (FORMATS.md), buffered into few
 * large writes onto a sink (platform.h), and the sections that need nothing of a
 * runtime's but what they are handed: headers and padding, MACHINE, MODULES, THREAD,
 * EVENTS, SCHED, SCHEDSTAT, the call sites' and functions' (SITES, ARG_NAMES, FUNCS),
 * END. Below the runtime's writer (writer/), on the platform layer alone. Never installed; names tt__. */
#ifndef TT_SECTIONS_H
#define TT_SECTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/platform.h"
#include "pretty_name.h"
#include "ticktrace.h"

#ifdef _WIN32
#define TT__HIDDEN /* (a DLL exports what its .def names alone) */
#else
#define TT__HIDDEN __attribute__((visibility("hidden")))
#endif

/* TICKTRACE_MIN_DUR: a function call that returns within min_ticks, having recorded
 * nothing inside (its FUNC_ENTER is the last record of its chunk), is erased by the
 * exit hook (asm/hot.inc TT_FILTER_SHORT), and counted here, in the first of the
 * TT__FILTER_PROBES entries from tt__filter_home(its word) that is its function's or
 * free. A call whose entries other functions hold is recorded: nothing is lost, but
 * its function is then never erased nor turned off, so the home is a hash of the
 * whole word: its address's bits 4..13 gave neighbours neighbouring homes, and a
 * row of small functions and library calls (GOT slots 8 bytes apart share those
 * bits) erased once each filled every entry a busy leaf could take (Lua's strcoll,
 * l_strcmp and sort_comp, once a Lua tail call's luaD_pretailcall took the last
 * one: 38 M events dropped). Written at the dump (TT_SEC_FILTERED,
 * TT_SEC_DROPPED_CALLS: tt__out_filtered_table). The tables are core/'s. */
#define TT__FILTER_BITS 10
#define TT__FILTER_FUNCS (1 << TT__FILTER_BITS)
#define TT__FILTER_PROBES 8
#define TT__FILTER_SLOTS (TT__FILTER_FUNCS + TT__FILTER_PROBES - 1)
#define TT__FILTER_HASH UINT64_C(0x9E3779B97F4A7C15) /* 2^64 / the golden ratio */
static inline unsigned tt__filter_home(uint64_t word)
{
	return (unsigned)((word * TT__FILTER_HASH) >> (64 - TT__FILTER_BITS));
}
struct tt__filtered_fn {
	uint64_t word; /* the FUNC_EXIT record's word (kind and address); 0: free */
	uint64_t calls, ticks;
	uint64_t dropped; /* calls dropped with the buffer used up (mode stop): counted
	                   * from the scratch chunk as it fills (slow_path.c), so that
	                   * `spikes --suggest` ranks the whole run (TT_SEC_DROPPED_CALLS) */
};
struct tt__filters {
	uint64_t min_ticks;
	uint64_t unused[3];
	struct tt__filtered_fn fn[TT__FILTER_SLOTS];
};
_Static_assert(sizeof(struct tt__filtered_fn) == 32 && sizeof(struct tt__filters) ==
		       32 + 32 * TT__FILTER_SLOTS && TT__FILTER_BITS == 10 && TT__FILTER_PROBES == 8 &&
		       TT__FILTER_HASH == UINT64_C(0x9E3779B97F4A7C15),
	       "asm/hot.inc TT_FILTER_SHORT, TT_FILTER_BITS, TT_FILTER_PROBES, TT_FILTER_HASH");
/* A function's calls in a thread's table: those its exit hooks erased, or with
 * `dropped`, those dropped with the buffer used up (read while the thread counts). */
static inline uint64_t tt__filtered_calls(const struct tt__filtered_fn *fn, bool dropped)
{
	return __atomic_load_n(dropped ? &fn->dropped : &fn->calls, __ATOMIC_RELAXED);
}

/* Where a reader that follows a running thread whose exits erase (TICKTRACE_MIN_DUR)
 * may stop in [begin, end) of its current chunk: before the FUNC_ENTERs that end it,
 * which its exit hook may still erase and write over (a record before them stays:
 * the cursor never moves back past a record that is no FUNC_ENTER). */
static inline const struct tt_record *tt__before_enters(const struct tt_record *begin,
						       const struct tt_record *end)
{
	while (end > begin &&
	       TT_RECORD_KIND(__atomic_load_n(&end[-1].word, __ATOMIC_ACQUIRE)) == TT_REC_FUNC_ENTER)
		end--;
	return end;
}

/* out.c: a file's bytes, buffered, and section headers */
struct tt__out {
	struct tt_os_sink *sink; /* where its bytes go */
	int err; /* the first error, as -errno: nothing more is put (Linux's writer: -EBADF,
	          * its descriptor is the program's now) */
	uint64_t offset; /* bytes written to the sink, buffered ones included */
	size_t len;
	char buf[1 << 16];
};
/* `out` emptied, to write into `sink` from its start. */
void tt__out_to(struct tt__out *out, struct tt_os_sink *sink) TT__HIDDEN;
void tt__out(struct tt__out *out, const void *data, size_t size) TT__HIDDEN;
void tt__out_flush(struct tt__out *out) TT__HIDDEN;
void tt__out_section(struct tt__out *out, uint32_t type, uint64_t size) TT__HIDDEN;
void tt__out_pad(struct tt__out *out, uint64_t size) TT__HIDDEN;
/* A section's header: within an UNLOADED section when `until` is not 0 (what it
 * describes held until then). */
void tt__out_section_until(struct tt__out *out, uint32_t type, uint64_t size,
			   uint64_t until) TT__HIDDEN;
void tt__out_end(struct tt__out *out, const struct tt_end_info *end) TT__HIDDEN;
/* MODULES with the entries of `m`, within an UNLOADED section when `until` is not 0. */
void tt__out_module_list(struct tt__out *out, const struct tt_os_module_list *m,
			 uint64_t until) TT__HIDDEN;
/* MODULES of those loaded now; 0, or -ENOMEM (no section). */
int tt__out_loaded_modules(struct tt__out *out) TT__HIDDEN;

/* EVENTS: records [begin, end) of thread `thread_index`, the first being its record
 * number `first`. */
void tt__out_events(struct tt__out *out, uint32_t thread_index, uint64_t first,
		    const struct tt_record *begin, const struct tt_record *end) TT__HIDDEN;
/* FILTERED, or with `dropped` DROPPED_CALLS, of thread `thread_index` from its table
 * (NULL: none), when its hooks erased (dropped) calls; `min_dur_ns`: the setting.
 * (Counted as they are now: a call the thread erases or drops while this runs may be
 * in it or not.) */
void tt__out_filtered_table(struct tt__out *out, uint32_t thread_index, const struct tt__filters *filters,
			    uint64_t min_dur_ns, bool dropped) TT__HIDDEN;

/* THREAD or THREAD_TOTALS (type): `info`, its name_len set to its name's, and the
 * name: `kept` (the program's, or the system's read as the thread exited) when
 * `final`, else the system's now (tt_os_thread_name_of info->tid), `kept` where that
 * reads none (the thread just gone); a thread named nothing at all, the program's (as
 * a Linux thread's comm is). */
void tt__out_thread_section(struct tt__out *out, uint32_t type, struct tt_thread_info *info,
			    const char *kept, int final) TT__HIDDEN;
/* One SCHED section: `info`, the state the thread was in at its start (carry, moved
 * to info->since_ns: a window's) when given, then `n` states. */
void tt__out_sched_states(struct tt__out *out, const struct tt_sched_info *info,
			  const struct tt_sched_state *carry, const struct tt_sched_state *states,
			  size_t n) TT__HIDDEN;
/* One SCHEDSTAT section: `info`, `budget` after it when info->flags say
 * TT_SCHEDSTAT_BUDGET, then `n` readings. */
void tt__out_counters(struct tt__out *out, const struct tt_schedstat_info *info,
		      const struct tt_schedstat_budget *budget,
		      const struct tt_schedstat_sample *readings, size_t n) TT__HIDDEN;

/* header.c: what says whose a file is. The file header's fields both runtimes fill
 * alike (the format, the process, the run's `start` anchor and one taken now, the
 * TSC's rate between them, CPUID's invariant TSC); the runtime adds its flags and
 * counts. */
void tt__file_header_init(struct tt_file_header *header, const struct tt_anchor *start) TT__HIDDEN;
/* PROCESS: `info`, `name` and `cmdline` of the lengths it gives. */
void tt__out_process_section(struct tt__out *out, const struct tt_process_info *info, const char *name,
			     const char *cmdline) TT__HIDDEN;
/* MACHINE as the run starts: the host's name and the wall clocks at `start`. */
void tt__machine_start(struct tt_machine_info *machine, const struct tt_anchor *start) TT__HIDDEN;
/* MACHINE: `at_start`, with the wall clocks as it is written. */
void tt__out_machine(struct tt__out *out, const struct tt_machine_info *at_start) TT__HIDDEN;

/* sites.c: the call sites and functions records name, each once, and the SITES,
 * ARG_NAMES and FUNCS sections that describe them. */
struct tt__site_set {
	uint64_t *slots; /* open addressing; 0 is empty */
	size_t cap, count;
	size_t funcs;    /* of count, functions */
	/* Of the libraries unloaded (dlclose: Linux's writer), in order, the first this
	 * many are told apart: an entry of a record made while the k-th of them held its
	 * address is tagged with generation k (TT__GEN), one of a record made later with 0. */
	size_t retired_seen;
};
#define TT__HASH_MULT UINT64_C(0x9E3779B97F4A7C15)
#define TT__FUNC_TAG (UINT64_C(1) << 63)
#define TT__GEN_SHIFT 48 /* user-space addresses fit in 47 bits */
#define TT__ADDRESS_MASK ((UINT64_C(1) << TT__GEN_SHIFT) - 1)
#define TT__GEN(entry) ((size_t)(((entry) & ~TT__FUNC_TAG) >> TT__GEN_SHIFT))
#define TT__NAME_MAX 1024 /* bytes kept of a name made from __PRETTY_FUNCTION__ */
/* 1: added, 0: already there, -ENOMEM */
int tt__site_set_add(struct tt__site_set *set, uint64_t address) TT__HIDDEN;
/* The same, and into `fresh` too (when not NULL) when `set` did not have it. */
int tt__site_set_add_fresh(struct tt__site_set *set, struct tt__site_set *fresh,
			   uint64_t address) TT__HIDDEN;
void tt__site_set_clear(struct tt__site_set *set) TT__HIDDEN;
/* The generation (k: the k-th library unloaded, among the first `limit`; 0: none) that
 * held `address` when a record was made at `tsc` (Linux's writer: retired.c). */
typedef size_t (*tt__generation_fn)(uint64_t address, uint64_t tsc, size_t limit);
/* Adds the sites and functions that records [begin, end) name to `set`; those that
 * were not in it go to `fresh` too (when not NULL), each tagged with its generation
 * once the set tells libraries apart (retired_seen: `generation` then says it). With
 * stop_unwritten, stops at the first record its thread has not written yet (all
 * zero). Returns where it stopped, or NULL when out of memory. */
const struct tt_record *tt__sites_add(struct tt__site_set *set, struct tt__site_set *fresh,
				      const struct tt_record *begin, const struct tt_record *end,
				      int stop_unwritten, tt__generation_fn generation) TT__HIDDEN;
/* A site's argument name (TT_BEGIN_NAMED_ARG), or NULL. */
const char *tt__arg_name(const struct tt_callsite *site) TT__HIDDEN;
/* The descriptor of the site at `address` (arg: the caller's), or NULL: none to read. */
typedef const struct tt_callsite *(*tt__site_fn)(uint64_t address, void *arg);
/* SITES (always, for generation 0), ARG_NAMES and FUNCS (when any) of the set's
 * entries of generation `gen`, each site's descriptor given by `describe`; within
 * UNLOADED sections when `until` is not 0. */
void tt__out_site_sections(struct tt__out *out, const struct tt__site_set *set, size_t gen,
			   uint64_t until, tt__site_fn describe, void *arg) TT__HIDDEN;

/* Memory as a sink: the bytes put at `at` of [mem, mem + cap), -ENOSPC past it (a
 * mapped file's head: Windows' live file). */
struct tt__mem_sink {
	struct tt_os_sink sink;
	char *mem;
	uint64_t cap;
};
void tt__mem_sink(struct tt__mem_sink *sink, void *mem, uint64_t cap) TT__HIDDEN;

#endif /* TT_SECTIONS_H */
