/* The floor: what the runtime (src/) and the tools (tools/) both know beyond the raw
 * format's structs (include/ticktrace/format.h), written once below both:
 *
 *   the record kinds' roles   which open and close scopes, their names in messages
 *   the clock                 TSC ticks to nanoseconds, exact integer arithmetic (clock.c)
 *   a SCHED section's head    what it says before its own states, and why a thread
 *                             has none (sched.c)
 *   the scope machine         how a thread's records open and close scopes (scopes.c)
 *   a user's text file        read whole, a regular file alone (read_file.c)
 *   settings                  what both runtimes read alike from the environment
 *                             (settings.c)
 *   names made at run time    the _DYN macros' descriptors, both runtimes' (names.c)
 *   a run of lost events      counted as it grows, written where it was (gaps.c)
 *
 * The analysis library (analysis/analysis.h) sits on it. Nothing here is API: the
 * runtime builds it hidden, as the rest of itself. Names: tt_ and the thing's name
 * (tt_clock_, tt_sched_, tt_kind_), never tt__. */
#ifndef TT_COMMON_H
#define TT_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <ticktrace/format.h>

/* "byte" or "bytes", as a count of them reads in a message: "%zu %s", n, TT_BYTES(n)
 * ("truncated file header (1 byte, need 144)"). */
#define TT_BYTES(n) ((n) == 1 ? "byte" : "bytes")

/* ---- the record kinds' roles ---- */

/* A scope's key: the address of its call-site descriptor, or a function's address
 * with this bit set (-finstrument-functions). */
#define TT_KEY_FUNC (UINT64_C(1) << 63)

/* The kinds a reader knows; any other is an error in a file. */
#define TT_RECORD_KNOWN(kind)                                                      \
	((kind) <= TT_REC_FUNC_EXIT ||                                             \
	 ((kind) >= TT_REC_THRESHOLD && (kind) <= TT_REC_PARENTS_THRESHOLD))
/* Kinds that open a scope, and that close one (ENDBEGIN does both). */
#define TT_RECORD_OPENS(kind)                                                      \
	((kind) == TT_REC_BEGIN || (kind) == TT_REC_BEGIN_ARG ||                       \
	 (kind) == TT_REC_FUNC_ENTER || (kind) == TT_REC_ENDBEGIN)
#define TT_RECORD_CLOSES(kind)                                                     \
	((kind) == TT_REC_END || (kind) == TT_REC_ENDBEGIN || (kind) == TT_REC_FUNC_EXIT)

/* The name of a kind that more records follow (a VALUE, or TEXT), for messages about
 * them: "BEGIN_ARG", "DESCRIBE", ...; NULL for the others. */
const char *tt_kind_name(unsigned kind);
/* Why events of a cause (TT_DROP_*) were dropped, for the runtimes' line at exit: "the
 * buffer was full", ...; NULL for a cause no runtime says. */
const char *tt_drop_cause_text(unsigned cause);

/* Where the events written in [first, last) of a thread's buffer end, read while its
 * thread may be writing: reserved records not yet written (zero) left out, and an
 * event whose first record is written but not the VALUE or TEXT records after it.
 * (The runtimes' readers: a dump, the live file, a stream, the spike detector.) */
const struct tt_record *tt_written_end(const struct tt_record *first, const struct tt_record *last);

/* Whether a record of `kind` opens a scope or a function (TT_SEC_THREAD_FIRST's). */
#define TT_OPENS_SCOPE(kind) \
	((kind) == TT_REC_BEGIN || (kind) == TT_REC_BEGIN_ARG || (kind) == TT_REC_ENDBEGIN || \
	 (kind) == TT_REC_FUNC_ENTER)
/* The first record of [first, last) that opens a scope or a function, looked for in
 * *left records at most, which it counts down; NULL where none. A thread's first, its
 * name where nobody named it: the runtime's (TT_SEC_THREAD_FIRST) and the tools'. */
const struct tt_record *tt_first_opener(const struct tt_record *first, const struct tt_record *last,
					size_t *left);

/* A scope's description (TT_DESCRIBE) as the runtimes record it: `fmt` formatted (cut
 * at TT_DESCRIBE_MAX bytes, where a character begins), a DESCRIBE record at `tsc` and
 * its TEXT records, into `records` (TT_DESCRIBE_RECORDS of them); how many, 0 when
 * the text cannot be formatted. errno unchanged (describe.c). */
#define TT_DESCRIBE_RECORDS (1 + TT_TEXT_RECORDS(TT_DESCRIBE_MAX))
size_t tt_describe_records(struct tt_record *records, uint64_t tsc, const char *fmt, va_list ap);
/* `text`'s length, cut to `max` bytes at most where a UTF-8 character begins, never
 * inside one (half a character is a name no reader shows): a description, a thread's
 * name, a snapshot's (describe.c). */
size_t tt_utf8_cut(const char *text, size_t max);

/* ---- a run of lost events ---- */

/* How an event of a kind changes the depth of open scopes: by tt_scope_change[kind],
 * going as low as tt_scope_low[kind] on the way (ENDBEGIN closes one, then opens one). */
extern const int8_t tt_scope_change[256], tt_scope_low[256];

/* Events a thread lost in a row, until a record tells where they were (gaps.c): both
 * runtimes' slow paths add each event they drop (tt_gap_add), and write the run as
 * TT_REC_DROPPED and its VALUE (tt_gap_records) before the thread's next records, or
 * at its end, so that a reader places the loss and closes the scopes that ended in it. */
struct tt_gap {
	uint64_t count;           /* events lost; 0: no gap */
	uint64_t first_tsc, last_tsc;
	int32_t depth, min_depth; /* scopes begun minus ended in the gap, and its lowest */
	int busy;                 /* Linux's: being updated, a signal handler then only counts */
};
void tt_gap_add(struct tt_gap *g, const struct tt_record *event);
/* The gap's two records into `out`: 2, or 0 when there is no gap. */
size_t tt_gap_records(const struct tt_gap *g, struct tt_record out[2]);

/* ---- the clock: TSC ticks to nanoseconds ---- */

/* Exact integer arithmetic in 128 bits, never a double: ns = ns0 + (tsc - tsc0) *
 * 1e9 / hz, rounded toward tsc0. */
struct tt_clock {
	uint64_t tsc0;  /* the anchor's TSC */
	int64_t ns0;    /* its reading of the clock (the tools: CLOCK_MONOTONIC; the
	                 * runtime's analyses: 0, so ns since the anchor) */
	uint64_t hz;    /* ticks per second */
	uint64_t mult;  /* floor(1e9 * 2^shift / hz) */
	unsigned shift;
	int exact_div;  /* correct the multiply to the exact floor */
};

/* A clock at `hz` ticks a second from the anchor (tsc0, ns0); 0, or -1 when hz is 0 or
 * beyond any clock (above 2^62). */
int tt_clock_set(struct tt_clock *c, uint64_t tsc0, int64_t ns0, uint64_t hz);

/* From a validated file header; 0, or -1 with *why set when the header's clock
 * fields cannot be used. */
int tt_clock_init(struct tt_clock *c, const struct tt_file_header *h, const char **why);

/* The multiply's q (floor(ticks * 1e9 / hz) or at most two less) stepped up to the
 * exact floor: the remainder ticks * 1e9 - q * hz is below 3 * hz and exact in 64-bit
 * arithmetic modulo 2^64. */
static inline int64_t tt__clock_exact(const struct tt_clock *c, uint64_t ticks, uint64_t q)
{
	uint64_t r = ticks * UINT64_C(1000000000) - q * c->hz;
	for (int i = 0; i < 2 && r >= c->hz; i++) {
		q++;
		r -= c->hz;
	}
	return (int64_t)q;
}

/* Nanoseconds in `ticks` ticks, saturated at INT64_MAX (a hostile file may hold any
 * TSC). */
static inline int64_t tt_clock_span(const struct tt_clock *c, uint64_t ticks)
{
	unsigned __int128 q = ((unsigned __int128)ticks * c->mult) >> c->shift;
	if (q > INT64_MAX)
		return INT64_MAX;
	return c->exact_div ? tt__clock_exact(c, ticks, (uint64_t)q) : (int64_t)q;
}

/* The same for ticks known to span at most INT64_MAX ns (the converter's, each record's
 * within what its file's range was checked to give), on a clock tt_clock_set made
 * (exact_div): nothing to saturate, and a clock of a GHz or more (shift 64 or more)
 * shifts the product's high half alone. */
static inline int64_t tt_clock_span_fits(const struct tt_clock *c, uint64_t ticks)
{
	unsigned __int128 product = (unsigned __int128)ticks * c->mult;
	uint64_t q = __builtin_expect(c->shift >= 64, 1) ? (uint64_t)(product >> 64) >> (c->shift - 64) :
							   (uint64_t)(product >> c->shift);
	return tt__clock_exact(c, ticks, q);
}

/* The clock's nanoseconds at `tsc`, saturated; inline, as the converter calls it for
 * every record. */
static inline int64_t tt_clock_ns(const struct tt_clock *c, uint64_t tsc)
{
	int64_t ns;
	if (tsc >= c->tsc0) {
		if (__builtin_add_overflow(c->ns0, tt_clock_span(c, tsc - c->tsc0), &ns))
			return INT64_MAX;
	} else if (__builtin_sub_overflow(c->ns0, tt_clock_span(c, c->tsc0 - tsc), &ns)) {
		return INT64_MIN;
	}
	return ns;
}

/* ---- a SCHED section's head ---- */

/* A RUNNING state's cpu when no switch says it (format.h: tt_sched_state). */
#define TT_NO_CPU UINT32_MAX

/* What a SCHED section (format.h: tt_sched_info) says before its own states, for a
 * thread whose last state so far is at *last_ns (INT64_MIN: none yet; updated): where
 * nothing is known, a TT_SCHED_UNKNOWN state from *last_ns (or the very start); then,
 * when its first state is a switch out, or it has none and nothing was lost (the
 * thread never left its CPU), a RUNNING one at since_ns (cpu TT_NO_CPU: no switch
 * says it, but every switch from since_ns on is there). 0 to 2 into head. */
size_t tt_sched_head(int64_t *last_ns, uint64_t lost, int64_t since_ns,
		     const struct tt_sched_state *states, size_t n, struct tt_sched_state head[2]);

/* A scope open this long is watched by tt-sched, which reads its thread's counters then
 * (core/counters.c), and the analysis says how late past it a first reading came. */
#define TT_COUNTERS_AFTER_NS 2000000

/* Why a thread has no states, in words, from its THREAD flags (format.h: enum
 * tt_no_states): "the kernel refused its thread states (perf_event_open: Permission
 * denied)", "thread states are off (TICKTRACE_SCHED=0)", ...; returns buf. */
/* (TT_SCHED_NONE_TEXT bytes hold the longest: Windows' is 165 characters) */
#define TT_SCHED_NONE_TEXT 256
const char *tt_sched_none_text(uint32_t thread_flags, char *buf, size_t cap);

/* The threads ticktrace ended for the program's, from the file's flags (format.h:
 * TT_FILE_GAVE_*), and what each one's end cost: "tt-prefault (...), tt-sched (...)";
 * NULL where none (sched.c). */
#define TT_GAVE_BACK_TEXT 640
const char *tt_gave_back_text(uint32_t file_flags, char *buf, size_t cap);

/* ---- the scope machine ---- */

/* How a thread's records open and close scopes, one machine that the tools' decoder
 * and the runtime's analysis both drive:
 *   - BEGIN, BEGIN_ARG and FUNC_ENTER open one; END closes the innermost; ENDBEGIN
 *     closes the innermost and opens one; an end with nothing open is unmatched;
 *   - FUNC_EXIT closes its FUNC_ENTER and whatever was left open inside it (a longjmp,
 *     an exception, flagged unterminated), or the innermost scope a run of lost events
 *     began of no known function (its entry was lost); else it is unmatched;
 *   - a run of lost events closes the scopes that ended in it (unterminated) and opens
 *     those begun in it and still open after it (unbegun), as do the scopes a thread's
 *     records close without opening them (a ring's window: tt_unbegun_scan);
 *   - nested deeper than max_depth, scopes are left out: their ends close them, notes
 *     on them are dropped, the scopes around them keep their times.
 * The machine keeps each open scope's key and decides; the driver keeps beside it what
 * it needs of each scope (the decoder its event, the analysis its row) and opens and
 * closes as told. Offsets are the driver's, for its messages (the runtime's: 0). */

/* The key of a scope a run of lost events began, of no known function. */
#define TT_KEY_UNBEGUN UINT64_MAX

struct tt_scopes {
	uint64_t *keys;      /* of the open scopes, outermost first */
	uint32_t depth, cap;
	uint32_t max_depth;  /* deeper ones are left out; 0: no limit */
	uint64_t too_deep;   /* scopes left out, open now */
	uint64_t too_deep_total, first_too_deep;
	uint64_t unmatched, first_unmatched;   /* ends with nothing to close, FUNC_EXITs too */
	uint64_t unmatched_exits, first_unmatched_exit; /* FUNC_EXITs with no FUNC_ENTER */
	uint64_t unmatched_exit_key, unmatched_exit_tsc; /* the first's */
	uint64_t gap_closed; /* scopes that ended in runs of lost events */
	uint64_t unbegun;    /* scopes opened whose beginning was not recorded */
};

/* A scope begins: 1, the driver opens it; 0, it is left out (too deep); -1, out of
 * memory. Inline, as the converter opens millions a second; what is rare, out of line. */
int tt__scopes_open_rare(struct tt_scopes *s, uint64_t key, uint64_t offset);
static inline int tt_scopes_open(struct tt_scopes *s, uint64_t key, uint64_t offset)
{
	if (__builtin_expect(!s->too_deep && s->depth < s->cap &&
			     (!s->max_depth || s->depth < s->max_depth), 1)) {
		s->keys[s->depth++] = key;
		return 1;
	}
	return tt__scopes_open_rare(s, key, offset);
}
/* A scope whose beginning was not recorded opens: its function's key, or
 * TT_KEY_UNBEGUN; as tt_scopes_open. */
int tt_scopes_unbegun(struct tt_scopes *s, uint64_t key, uint64_t offset);
/* END (and ENDBEGIN's end): true, the driver closes its innermost scope; false,
 * nothing to close (a scope left out ended, or the end is unmatched). */
bool tt__scopes_end_rare(struct tt_scopes *s, uint64_t offset);
static inline bool tt_scopes_end(struct tt_scopes *s, uint64_t offset)
{
	if (__builtin_expect(!s->too_deep && s->depth > 0, 1)) {
		s->depth--;
		return true;
	}
	return tt__scopes_end_rare(s, offset);
}
/* FUNC_EXIT of the function whose key is `key`, recorded at `tsc`: how many of the
 * driver's innermost scopes close, all but the last of them unterminated; 0: none (a
 * scope left out ended, or the exit is unmatched). */
uint32_t tt_scopes_func_exit(struct tt_scopes *s, uint64_t key, uint64_t offset, uint64_t tsc);
/* A run of lost events in which `closes` of the scopes open before it ended: how many
 * of the driver's innermost scopes close, unterminated (the scopes left out go first). */
uint32_t tt_scopes_gap(struct tt_scopes *s, uint32_t closes);
/* The thread's records end: how many scopes are still open, which the driver closes,
 * unterminated; the machine is then empty. */
uint32_t tt_scopes_finish(struct tt_scopes *s);
/* Whether a note goes to a scope that is left out (it is dropped then). */
static inline bool tt_scopes_left_out(const struct tt_scopes *s)
{
	return s->too_deep != 0;
}
void tt_scopes_free(struct tt_scopes *s);

/* The scopes a thread's records close without opening them, from one pass over its
 * records (in as many pieces as they come) before they are decoded: each one's
 * function (FUNC_EXIT) or 0, outermost first in keys[n - 1 .. 0]. */
struct tt_unbegun_scan {
	uint64_t *keys;
	uint32_t n, cap, max; /* at most max of them (past it, ends are unmatched) */
	uint64_t depth;
};
/* 0, or -1 when out of memory. */
int tt_unbegun_scan(struct tt_unbegun_scan *u, const struct tt_record *r, size_t n);

/* The whole of the regular file `path`, at most `max` bytes, into *text (malloc'd,
 * NUL-terminated; its length in *len): 0, or -errno (-EFBIG: more than `max`; -ENOMEM),
 * or TT_READ_NOT_REGULAR: a device, FIFO or directory, never read (no blocking on a
 * FIFO, no /dev/zero read without end). tt_read_small_file_problem says which in words. */
#define TT_READ_NOT_REGULAR (-4096)
int tt_read_small_file(const char *path, size_t max, char **text, size_t *len);
const char *tt_read_small_file_problem(int err);

/* ---- a crash's cause ---- */

/* The file header's crash_signal in words: "signal 11 (Segmentation fault)", or a
 * Windows exception's "exception 0xC0000005 (access violation)"; returns buf. */
#define TT_CRASH_TEXT 96
const char *tt_crash_text(uint32_t crash, char *buf, size_t cap);

/* ---- settings both runtimes read ---- */

/* TICKTRACE_BUFFER (record_protocol.h: TT_ENV_BUFFER): events kept per thread, 1 to
 * 2^36; NULL (unset) is the default, and text that is not such a number is said to
 * `err` and the default taken. */
#define TT_BUFFER_EVENTS_DEFAULT (UINT64_C(1) << 20)
#define TT_BUFFER_EVENTS_MAX (UINT64_C(1) << 36)
uint64_t tt_buffer_events(const char *text, FILE *err);
/* A TICKTRACE_OUT-like `path` in `buf`, made absolute with the directory `cwd` ("" when
 * it cannot be told: left as it is; a name too long with it, too). The runtime reads
 * its names from its start directory; `record` hands -o to processes that may change
 * theirs. */
void tt_in_dir(const char *path, const char *cwd, char *buf, size_t size);
/* A size setting (TICKTRACE_MEMORY, TICKTRACE_SPIKES_LOG_MAX): bytes, or with a
 * suffix K, M or G (KiB, MiB, GiB), into *bytes; 0, or -1 (not such a size). */
int tt_parse_size(const char *text, uint64_t *bytes);
/* "1.5ms", "200us", "20ns", "2s" or "0" into ns; 0, -1 (not a time) or -ERANGE (a time
 * past the clock's range, 1e30ms: *ns INT64_MAX, which tt_time_in_range says out of
 * range). Every time setting and option is read by it (TICKTRACE_MIN_DUR by both
 * runtimes; the tools through tt_an_parse_duration): a number other than 0 needs its
 * unit (a bare 20000000 is no time). */
int tt_parse_duration(const char *text, int64_t *ns);
/* Whether `ns`, the time a setting VAR=TEXT gives (TICKTRACE_MIN_DUR,
 * TICKTRACE_SPIKE_THRESHOLD, TICKTRACE_SNAPSHOT_BEFORE and _AFTER), is one it takes: an
 * hour at most (1e9s, 31 years, is a slip, never a window or a threshold); if not,
 * said to `err`, naming both, with `then`, what the run does instead. */
#define TT_TIME_SETTING_MAX_NS (INT64_C(3600) * 1000000000)
bool tt_time_in_range(const char *var, const char *text, int64_t ns, FILE *err, const char *then);

/* A setting of 0 (off: false) or 1 (on), VAR=TEXT (TICKTRACE, TICKTRACE_LIVE): `unset`
 * where TEXT is NULL or "", and for anything else, which is said to `err` with `then`,
 * what the run does instead. */
bool tt_setting_on(const char *var, const char *text, bool unset, const char *then, FILE *err);

/* TICKTRACE_MODE: its value's index in TT_MODES ("stop" for NULL or ""); another
 * value said to `err`, and stop used (ticktrace(7)). */
#define TT_MODES {"stop", "stream", "ring"}
#define TT_MODE_COUNT 3
size_t tt_mode_index(const char *name, FILE *err);

/* ---- names made at run time ---- */

/* The _DYN macros' names (names.c), each copied once into a call-site descriptor of
 * its own (tt__name: writer/names.c). A lookup,
 * tt_names_find, takes no lock: the name's descriptor, or NULL with `key` filled for
 * tt_names_add, which the caller runs under its own lock (one adder at a time). Memory
 * from `alloc` (never given back: a descriptor lives as long as the process); where
 * there is none, one descriptor says so. tt_names_hold: whether `address` is a
 * descriptor made here (the Linux writer reads only those and its modules'). */
#define TT_NAMES_MAX_SLABS 4096 /* 4 GiB of names: beyond it, names are not kept */
struct tt_callsite;
struct tt_names_table;
struct tt_names {
	void *(*alloc)(size_t size);
	struct tt_names_table *table; /* read with acquire loads */
	size_t count;
	char *next, *end;
	char *slabs[TT_NAMES_MAX_SLABS];
	size_t nslabs; /* read with acquire loads */
};
struct tt_name_key {
	const struct tt_callsite *from; /* the macro's own descriptor */
	const char *name;
	size_t len;
	bool cut; /* longer than TT_NAME_MAX: its first bytes and "..." */
	uint64_t hash;
};
/* `len` (size_t)-1: up to its NUL; a NULL name is "(null)". */
const struct tt_callsite *tt_names_find(const struct tt_names *names, const struct tt_callsite *from,
					const char *name, size_t len, struct tt_name_key *key);
const struct tt_callsite *tt_names_add(struct tt_names *names, const struct tt_name_key *key);
bool tt_names_hold(const struct tt_names *names, uint64_t address);

#endif /* TT_COMMON_H */
