/* What only the analysis library's own files share (analysis.h is its face): the
 * profile's rows, a scope's flags, the batching of histogram counts, what recording a
 * call costs, and the thread's states as the spikes read them. */
#ifndef TT_ANALYSIS_INTERNAL_H
#define TT_ANALYSIS_INTERNAL_H

#include "analysis.h"

/* a + b, held at INT64_MIN or INT64_MAX: a hostile file may hold any times */
static inline int64_t tt_an_plus_sat(int64_t a, int64_t b)
{
	int64_t sum;
	return __builtin_add_overflow(a, b, &sum) ? (b < 0 ? INT64_MIN : INT64_MAX) : sum;
}

/* ---- the flat profile (analysis.c, table.c) ---- */

struct tt_an_row {
	uint64_t key;
	uint64_t calls;
	int64_t total, self; /* children = total - self */
	int64_t calls_total; /* every call's duration, nested calls of itself too: the mean's */
	uint32_t open;       /* scopes of its name open now (more than one: recursion) */
	uint32_t same_name;  /* the first row of its name on the thread, which counts open */
	uint64_t over;       /* calls longer than the global threshold */
	int64_t min, max;
	struct tt_an_hist hist;
	int64_t name_threshold; /* the thresholds table's, once looked up */
	bool looked_up;
	/* Of total, the calls' of a thread with states (split_total), and of it the time
	 * preempted, blocked and unknown (no state covers it) */
	int64_t split_total, preempted, blocked, unknown;
	bool split;         /* some of its calls had states */
	unsigned approximate; /* some of them split by the counters (within their resolution):
	                       * enum tt_an_approximate, by whose */
	uint64_t filtered;  /* of calls, erased as they returned (TICKTRACE_MIN_DUR): in
	                     * the mean, not in min, max or hist */
	int64_t filtered_ns; /* their time: in the mean, and in no row's total or self but
	                      * their callers' (where the trace has it: never twice) */
	uint64_t dropped;   /* calls dropped with the buffer used up: in no other field */
};

/* The profile's names, the first row of each (table.c). */
struct tt_an_name_group {
	uint64_t hash;
	char *name;
	uint32_t row; /* + 1 */
};

/* struct tt_an_frame's flags */
enum tt_an_frame_flags {
	TT_AN_IGNORED = 1u << 0,      /* TT_IGNORE, or inside TT_IGNORE_CHILDREN */
	TT_AN_IGNORE_BELOW = 1u << 1, /* TT_IGNORE_CHILDREN here or above */
};

/* Counts the closed scopes' durations still pending in their rows' histograms (the
 * table does before it reads them). */
void tt_an_counts_flush(struct tt_an_thread *th);

/* What recording a call (a begin and an end) costs here, in ns: two RDTSCs, which an
 * event costs within a few percent (ticktrace-bench), timed now, the median of 15
 * rounds. */
int64_t tt_an_call_overhead_ns(void);

/* A thresholds file is a few lines written by hand: more is not one. */
#define TT_AN_THRESHOLDS_MAX_BYTES (1 << 20)

/* ---- the thread's states (states.c) ---- */

/* How [start, end) split (analysis.h: tt_an_split); false: the thread has no states. */
bool tt_an_split(const struct tt_an_thread *th, int64_t start, int64_t end,
		 struct tt_an_split *split);
/* The causes of a spike [start, end): *split as tt_an_split gives it (has_split), or
 * from the counters where the switches do not tell (then has_split set); what else
 * they say. */
void tt_an_causes(const struct tt_an_thread *th, int64_t start, int64_t end, bool *has_split,
		  struct tt_an_split *split, struct tt_an_causes *causes);
/* How a call [start, end) split for the flat profile: by the switches, or else by
 * the counters (*approximate) where they tell it within its duration, else all of it
 * unknown where the thread has readings; false: the thread has neither. */
bool tt_an_call_split(const struct tt_an_thread *th, int64_t start, int64_t end,
		      struct tt_an_split *split, bool *approximate);
/* No scope open before ns will close: what came before it is no longer needed. */
void tt_an_states_forget_before(struct tt_an_thread *th, int64_t ns);
void tt_an_states_free(struct tt_an_thread *th); /* its states and readings */

#endif /* TT_ANALYSIS_INTERNAL_H */
