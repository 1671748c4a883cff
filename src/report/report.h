/* ticktrace runtime, layer report: the analyses the runtime runs on its own records
 * with the analysis library (analysis/): the flat profile at exit (TICKTRACE_REPORT)
 * and live spikes (TICKTRACE_SPIKES). Never installed. */
#ifndef TT_REPORT_H
#define TT_REPORT_H

#include "analysis/analysis.h"
#include "writer/writer.h"

/* report.c: TICKTRACE_REPORT, the flat profile at exit */
void tt__report_at_exit(void) TT__HIDDEN;
/* Whether a file's format is the one `suffix` names (".csv"): decided by the name as
 * set (`dest`), not the path made from it, whose .PID (a child's) hides the suffix. */
bool tt__format_is(const char *dest, const char *suffix) TT__HIDDEN;
/* A call site's name, or a function's: the patcher's name for one it patched, else from
 * the dynamic symbol table, else module+0xOFFSET (analysis.h's tt_an.name). */
size_t tt__report_name(void *ctx, const struct tt_an_thread *th, uint64_t key, char *buf,
		       size_t cap) TT__HIDDEN;

/* patched.c: the name of a function `ticktrace record -f` patched at `address`, in
 * `module` (tt_os_address_module's), asked of the patcher (tt__patched_namer), into
 * `buf` (`cap` bytes, cut short): its length, or 0: none patched there, or in a module
 * unloaded since. */
size_t tt__patched_name(uint64_t address, const struct tt_os_address *module, char *buf, size_t cap)
	TT__HIDDEN;

/* spikes.c: TICKTRACE_SPIKES: the spike detector, fed by the drain thread of a
 * draining mode (stream) as it writes, or else by tt-spikes from the chunks; each
 * spike logged as it ends */
void tt__spikes_start(void) TT__HIDDEN; /* a failure said */
/* The log's descriptor (NULL: no log file), for the draining thread that writes it to
 * keep in a table of its own (tt__fd_private_table). */
struct tt__fd *tt__spikes_log(void) TT__HIDDEN;
/* Records [begin, end) of a slot, just written. */
void tt__spikes_feed(struct tt__slot *slot, const struct tt_record *begin,
		     const struct tt_record *end) TT__HIDDEN;
/* A slot's states, as they are written (tt__states_seen): before the records they cover. */
void tt__spikes_states(void *ctx, struct tt__slot *slot, uint64_t lost, int64_t since_ns,
		       const struct tt_sched_state *states, size_t n) TT__HIDDEN;
/* A slot's counters' readings, as they are written or read: before the records they
 * cover, as its states. */
void tt__spikes_counters(void *ctx, struct tt__slot *slot, uint64_t lost,
			 const struct tt_schedstat_sample *readings, size_t n) TT__HIDDEN;
void tt__spikes_retire(struct tt__slot *slot) TT__HIDDEN; /* its records are all written */
void tt__spikes_finish(void) TT__HIDDEN;
/* At exit (not a draining mode): the records tt-spikes has not read yet, then the
 * log closed. */
void tt__spikes_last(void) TT__HIDDEN;
void tt__spikes_after_fork(void) TT__HIDDEN;

/* spikes_log.c: the spike log's bound, TICKTRACE_SPIKES_LOG_MAX: past it, the log
 * written again with its worst spikes, then a line that says what was left out */
struct tt__log_entry {
	uint64_t at;               /* where it begins in the file */
	uint32_t len;
	bool note;                 /* a note (events not read), not a spike */
	bool skipped;              /* a note of events passed over, not overwritten */
	int64_t dur, threshold;    /* a spike's (threshold 1 or more); a note's events in dur */
};
struct tt__spikes_bound {
	uint64_t max; /* bytes; 0: no bound */
	bool on;      /* a file ticktrace made: bound */
	int stuck;    /* -errno: it could not be kept within it, no entry taken since */
	struct tt__log_entry *entries; /* the entries the file holds, in its order */
	size_t n, cap;
	/* left out: spikes, notes and the events they said overwritten or passed over; rewrites */
	uint64_t spikes_out, notes_out, events_out, skipped_out, rewrites;
	struct tt__log_entry worst; /* the worst spike left out (threshold 0: none) */
	int64_t until_ns;           /* the last rewrite's time (ns since the start) */
};
/* The bound of a log (`file`: one ticktrace made; else none), as set; a bad value said. */
void tt__spikes_bound_start(struct tt__spikes_bound *b, bool file) TT__HIDDEN;
/* The entry the log at `path` (its descriptor `log`) just took whole, [from, *whole):
 * a spike `s`, or a note (NULL) of `events` overwritten (or passed over: `skipped`).
 * Past the bound, the log written again (*whole its new end), or this entry cut off
 * (counted). */
void tt__spikes_bound_add(struct tt__spikes_bound *b, struct tt__fd *log, const char *path, bool json,
			  int64_t from, int64_t *whole, const struct tt_an_spike *s, uint64_t events,
			  bool skipped) TT__HIDDEN;
/* At exit: what was left out, said; then the index let go. */
void tt__spikes_bound_said(const struct tt__spikes_bound *b, const char *path) TT__HIDDEN;
void tt__spikes_bound_free(struct tt__spikes_bound *b) TT__HIDDEN;

/* snapshots.c: TICKTRACE_SNAPSHOTS, a window of the run around each spike and trigger */
/* At the spike detector's start: whether snapshots are taken (which the detector is
 * then run for); what is wrong with the settings is said. */
bool tt__snapshots_start(void) TT__HIDDEN;
/* Before the arena is made: the part of the memory budget (1/N) the snapshots' copies
 * will take, or 0 without TICKTRACE_SNAPSHOTS. */
unsigned tt__snapshots_memory_part(void) TT__HIDDEN;
/* tt_trigger, called with `why` at `tsc` by the thread numbered `thread`: 0, or -ENOTCONN
 * (no snapshots), -EDQUOT (TICKTRACE_SNAPSHOT_MAX triggers taken), -EBUSY, -ESHUTDOWN
 * (the run ends). Async-signal-safe. */
int tt__snapshot_trigger(const char *why, uint64_t tsc, uint32_t thread) TT__HIDDEN;
/* The detector found a spike of the thread numbered `thread`: its snapshot, to write
 * once its window ended, when it is among the worst so far (it may replace one). */
void tt__snapshot_spike(const struct tt_an_spike *spike, const struct tt_clock *clock,
			uint32_t thread) TT__HIDDEN;
/* tt-spikes, after each look: the snapshots whose window ended, written; with
 * `last` (the exit), every one waiting, and what was not taken said. Whether some
 * still wait for their window's end. */
bool tt__snapshots_take(const struct tt_clock *clock, bool last) TT__HIDDEN;
/* tt-spikes, within a look: whether a spike's window waiting has ended, and those that
 * did written at once (a ring recycles the window's start meanwhile). */
bool tt__snapshots_ended(void) TT__HIDDEN;
/* The ns until the first window waiting ends (0: one has; INT64_MAX: none waits). */
int64_t tt__snapshots_next_end_ns(const struct tt_clock *clock) TT__HIDDEN;
void tt__snapshots_copy_ended(void) TT__HIDDEN;
void tt__snapshots_after_fork(void) TT__HIDDEN; /* the child's own, from 1 */
/* The program dies of `sig`: the snapshots taken but not written are said, no more taken. */
void tt__snapshots_crashed(int sig) TT__HIDDEN;

#endif /* TT_REPORT_H */
