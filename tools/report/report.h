/* tools/report: the analyses over decoded events: the flat profile, the spikes and
 * convert's spike marks (profile.c: one sink into the analysis library the runtime
 * shares, src/common/analysis/analysis.h), frame times (frames.c), suggested markup
 * (suggest.c), the profile as an SVG plot (plot.c). */
#ifndef TT_TOOLS_REPORT_H
#define TT_TOOLS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../sinks/sinks.h"

/* `ticktrace report` (the flat profile) and `ticktrace spikes`, and the spike marks
 * that `convert` adds to a trace: the decoder's events into the analysis that the
 * runtime shares (src/common/analysis/analysis.h). */

/* Spike thresholds from the command line: a global one, and a file of lines
 * "PATTERN DURATION" ("GameTick 16.6ms", "script_* 0.1ms"; # starts a comment). */
struct tt_thresholds {
	int64_t global; /* TT_AN_NO_THRESHOLD: none */
	const char *file; /* NULL: none */
	/* what tt_thresholds_load read from the file */
	struct tt_an_threshold_rule *rules;
	size_t nrules;
	char *text;
};

/* Reads th->file, if any; 0, or -1 after reporting the file, the line and the problem. */
int tt_thresholds_load(struct tt_thresholds *th);
void tt_thresholds_free(struct tt_thresholds *th);
/* Whether any threshold was given. */
bool tt_thresholds_given(const struct tt_thresholds *th);

enum tt_report_format { TT_REPORT_TEXT, TT_REPORT_CSV, TT_REPORT_JSON, TT_REPORT_SVG };

/* The table as an SVG plot (plot.c): the first rows' durations on a log
 * axis, their self time. */
void tt_table_svg(FILE *out, const struct tt_an_table *t, const char *title);

struct tt_report_opts {
	char *const *inputs;
	size_t ninputs;
	const char *output; /* NULL or "-": standard output */
	bool force;
	bool quiet;         /* no summary line on stderr (warnings are still printed) */
	enum tt_report_format format; /* spikes: text or JSON (one object a line) */
	enum tt_an_sort sort;
	bool by_thread;
	struct tt_thresholds thresholds; /* spikes */
	uint32_t depth;     /* spikes: the innermost scopes shown of each (0: all) */
	bool suggest;       /* spikes: the markup worth adding, instead of the spikes */
	const char *exclude_list; /* spikes --suggest: the exclude list to merge into */
	bool frames;        /* report: the frame times instead of the flat profile */
	int64_t budget;     /* report --frames: a frame's budget (0: none) */
	const char *debug_dir; /* searched for debug info first (NULL: the system's only) */
	struct tt_filter filter; /* report: threads and time window (slices cut at its edges) */
};

/* What report and spikes write (cmd/report.c), from a trace already open (its functions named or not) into
 * `out`, with o's options but not its inputs and output (and for the spikes, its
 * thresholds loaded); the decoder's totals in *sum. 0, or -1 after reporting the
 * problem. The fuzzer calls it on files in memory. */
int tt_analyse(const struct tt_trace *t, struct tt_report_opts *o, bool spikes, FILE *out,
	       struct tt_summary *sum);

/* For convert: passes everything to `inner`, and adds each spike as an instant on its
 * thread, at its end, named "spike: NAME took DURATION". `thresholds` must outlive
 * it; `inner` stays the caller's to free. NULL when out of memory. */
struct tt_sink *tt_spike_mark_sink_new(struct tt_sink *inner, const struct tt_thresholds *thresholds);

/* Flows between machines (align.c): what the flows between machines a < b say of b's
 * offset from a, as the machines are placed (NTP's four timestamps). */
struct tt_flow_pair {
	uint64_t a_to_b, b_to_a; /* flows each way */
	/* b's times must move by at least lo (its flows from a arrive after they left)
	 * and at most hi (its flows to a): INT64_MIN, INT64_MAX without flows that way */
	int64_t lo, hi;
	uint64_t early;   /* flows either way that arrive before they left */
	int64_t earliest; /* by how much the earliest of them does (0: none) */
};
/* A flow from a to b (a_to_b) or from b to a, sent and received at those times. */
void tt_flow_pair_add(struct tt_flow_pair *p, bool a_to_b, int64_t sent, int64_t received);
/* Flows both ways that agree (lo <= hi): b's offset bounded on both sides. */
bool tt_flow_pair_bounded(const struct tt_flow_pair *p);

#define TT_FLOW_NOT_PLACED UINT32_MAX
/* Where the flows place a machine: moved by shift_ns (0 for a fixed one) from where it
 * was, by its flows with machine `by`, which leave it the window [lo_ns, hi_ns] around
 * where it now is (a machine moved: the window's middle), and how far from the first
 * machine's clock that may be: half the window's width, plus the uncertainty of `by`
 * where that was placed by its flows too (a chain). `by` TT_FLOW_NOT_PLACED: no
 * machine known has flows both ways with it that agree; known: where it is now is
 * known (the first, a fixed one, one placed by its flows). */
struct tt_flow_place {
	uint32_t by;
	bool known;
	int64_t shift_ns, lo_ns, hi_ns;
	int64_t uncertainty_ns;
};
/* Places machines 1..n-1 machine by machine, each by the first machine known whose
 * flows with it bound it both ways (pairs[a * n + b], a < b: tt_flow_bounds_pairs),
 * in as many rounds as it takes: a machine whose flows go only to one placed after
 * it in the list is placed through that one. A machine fixed[k] (exact already;
 * fixed may be NULL) stays, its window said. */
void tt_flow_align(const struct tt_flow_pair *pairs, size_t n, const bool *fixed,
		   struct tt_flow_place *place);
/* A sink that pairs the flows of n machines by id (the FLOW_IN with the latest FLOW_OUT
 * of its id on another machine; a FLOW_IN before any, with the next FLOW_OUT): NULL
 * when out of memory. Its pairs, as above, once the decoding ended. */
struct tt_sink *tt_flow_bounds_new(size_t nmachines);
const struct tt_flow_pair *tt_flow_bounds_pairs(const struct tt_sink *sink);

/* `ticktrace report --frames`: the frame times of a run (TT_FRAME_MARK), their
 * distribution, the frames over a budget, and the scopes that took the most of the
 * worst frames. Fed by the report's sink: the frame boundaries, and each scope's self
 * time as it closes, which counts in the frame it closes in. Memory is bounded: a
 * histogram of frame times, the scopes of the frame in progress, and the breakdown of
 * the TT_WORST_FRAMES worst frames. */

#define TT_WORST_FRAMES 5
#define TT_WORST_SCOPES 5

struct tt_frame_scope {
	uint64_t key;
	const struct tt_an_thread *thread; /* for its name */
	int64_t self;
};

struct tt_worst_frame {
	uint64_t number;
	int64_t start, dur;
	struct tt_frame_scope top[TT_WORST_SCOPES]; /* most self time first */
	size_t ntop;
};

struct tt_frame_stats {
	int64_t budget;
	const struct tt_site *site; /* the frames counted: the first name marked */
	uint64_t track;
	uint64_t frames;            /* frames that ended */
	uint64_t over;              /* of them, longer than budget */
	int64_t min, max, total;
	struct tt_an_hist hist;
	/* the frame in progress: self time by scope key (open addressing) */
	struct tt_frame_scope *scopes;
	size_t cap, count;
	struct tt_worst_frame worst[TT_WORST_FRAMES]; /* longest first */
	size_t nworst;
	bool oom;
};

void tt_frames_init(struct tt_frame_stats *fs, int64_t budget);
void tt_frames_free(struct tt_frame_stats *fs);
/* A frame boundary (the decoder's frame event). */
void tt_frames_mark(struct tt_frame_stats *fs, const struct tt_event *e);
/* A scope closed with `self` ns of its own. */
void tt_frames_scope(struct tt_frame_stats *fs, const struct tt_an_thread *th, uint64_t key,
		     int64_t self);
/* The report as text; names from `an`. 0, or -1 when memory ran out. */
int tt_frames_print(const struct tt_frame_stats *fs, const struct tt_an *an, FILE *out);

/* `ticktrace spikes --suggest`: the markup worth adding to a run, PET's "suggested
 * markup", from its flat profile against the global threshold: thresholds of their
 * own for scopes over the global one on most calls (a frame's Tick), TT_IGNORE for
 * the few long calls that only hold others (main, a thread's loop), and the GCC flag
 * that leaves out of -finstrument-functions the functions too short to measure that
 * make most of the events. */

/* The suggestions for the table's entries (built with an analysis whose global
 * threshold is `threshold`, or TT_AN_NO_THRESHOLD), as text; with `exclude_list` (a
 * path, or NULL) the functions to leave out merged into that file, and what it added
 * said. Functions are ranked by the whole run's calls: the trace's, those
 * TICKTRACE_MIN_DUR erased and those dropped with a buffer full; those `trace` turned
 * off as it ran (TURNED_OFF) are left out too, whatever their share. 0, or -1 after
 * saying why. */
int tt_suggest_print(const struct tt_an_table *t, const struct tt_trace *trace, int64_t threshold,
		     const char *exclude_list, FILE *out);

/* A string member. cJSON writes bytes as they are, and JSON text is UTF-8 (RFC 8259):
 * bytes that are not become U+FFFD, as in the converter's output. Out of memory, the
 * member is missing. */
struct cJSON;
void tt_json_add_text(struct cJSON *obj, const char *key, const char *text, size_t n);

/* The flat profile of a session's run as `report` builds it (profile.c), each entry
 * with its histogram: decoded through `filter` (NULL: everything), handed to `use`
 * with the decoder's totals while the trace is open (a by-thread entry's thread
 * points into it). 0, or -1 after reporting the problem (or what `use` returned). */
int tt_profile_table(struct tt_session *r, const struct tt_filter *filter, bool by_thread,
		     int (*use)(void *ctx, struct tt_an_table *t, const struct tt_summary *sum), void *ctx);

/* ---- `ticktrace diff` (diff.c, diff_write.c, rank.c) ---- */

/* The Wilcoxon-Mann-Whitney rank test on two histograms of call durations, as the
 * flat profile keeps them (analysis.h: 32 buckets per power of two). Calls in the
 * same bucket count as ties, so the test is exact for the histograms, in time
 * proportional to their buckets, not their calls; it cannot tell apart durations in
 * one bucket (1/32 of their power of two: 1.6 to 3.1 % of them). */
struct tt_rank_test {
	uint64_t base_calls, new_calls;
	/* P(a new call is longer than a base call) + P(a tie) / 2: 0.5, no shift; the
	 * common-language effect size, U / (base_calls x new_calls) */
	double superiority;
	double z;       /* the normal approximation, tie-corrected; > 0: new calls longer */
	double p_value; /* two-sided; 1 when either side is empty or all calls tie */
};

/* Compares the calls of `base` with those of `new`. */
void tt_rank_test(const struct tt_an_hist *base, const struct tt_an_hist *new, struct tt_rank_test *r);

/* Two runs' flat profiles compared scope by scope: per scope the change of a
 * statistic, whether the calls' durations moved beyond their spread (the rank test),
 * and with several runs a side, whether every run agrees. Memory grows with the
 * scopes and runs, never with the calls. */

/* Without --fail-above, a change counts from here: beyond a bucket of the histogram
 * (1.6 to 3.1 % wide), and beyond what a busy machine moves a median run to run. */
#define TT_DIFF_DEFAULT_PCT 5.0
/* Thousands of scopes are tested at once: a level this low keeps chance findings rare. */
#define TT_DIFF_DEFAULT_ALPHA 0.001

/* In the order of tt_diff_metrics ("p50", ...). */
enum tt_diff_metric { TT_DIFF_P50, TT_DIFF_P90, TT_DIFF_P99, TT_DIFF_TOTAL, TT_DIFF_CALLS };
extern const char *const tt_diff_metrics[];
extern const unsigned tt_diff_permille[]; /* the percentile metrics' ranks, per mille */
enum tt_diff_format { TT_DIFF_TEXT, TT_DIFF_JSON, TT_DIFF_MARKDOWN, TT_DIFF_SVG };
enum { TT_BASE, TT_NEW };

#define TT_DIFF_ABSENT INT64_MIN /* a run without the scope: no percentile */

/* One scope on one side: its runs pooled. */
struct tt_diff_side {
	uint64_t calls;
	int64_t total, self, calls_total, min, max;
	struct tt_an_hist hist;
	uint32_t runs;    /* runs that called it */
	size_t last_run;  /* the last of them, + 1 */
	int64_t *per_run; /* the metric in each run of the side, or TT_DIFF_ABSENT */
};

struct tt_diff_scope {
	char *thread; /* --by-thread: its threads' name; else NULL */
	char *name;
	uint32_t same_hash; /* the next scope with this hash, + 1 */
	struct tt_diff_side side[2];
	/* the comparison */
	struct tt_rank_test test;
	double change_pct; /* NAN: a side has no calls */
	bool significant; /* in the direction of the change of --metric */
	bool consistent;  /* significant, and with several runs a side, every run agrees */
	bool regressed, improved;
	bool total_up;     /* a significant increase of the total, what sorts first */
};

struct tt_diff_opts {
	const char *paths[2]; /* each a raw file, or a directory of them (runs pooled) */
	enum tt_diff_metric metric;
	double fail_above; /* 0: none (TT_DIFF_DEFAULT_PCT marks the changes) */
	bool allow_gone;   /* the gate passes with scopes of BASE gone from NEW */
	double alpha;
	uint64_t min_calls;
	bool by_thread;
	enum tt_diff_format format;
	struct tt_filter filter;
	const char *debug_dir;
};

struct tt_diff {
	const struct tt_diff_opts *o;
	char **runs[2]; /* each side's raw files */
	size_t nruns[2];
	struct tt_diff_scope *scopes;
	size_t n, cap;
	struct tt_map by_hash; /* hash -> the first scope with it, + 1 */
	uint64_t dropped[2];
	size_t regressed, improved;
	char summary[1024]; /* one line: the sides, the scopes, what changed */
	/* What the comparison could not judge: a side with no scope, no scope on both
	 * sides (another program), or scopes of BASE that NEW did not record ("gone",
	 * each with enough calls for --min-calls); "" when every scope was compared. */
	char uncompared[1024];
	size_t gone; /* of those, the scopes gone */
};

/* Reads both sides (each run through its own tt_session, a few at a time on
 * threads), compares every scope and sorts them: significant increases of the total
 * first, the largest first. 0, or -1 after reporting the problem; tt_diff_free
 * either way. */
int tt_diff_compare(struct tt_diff *d, const struct tt_diff_opts *o);
void tt_diff_free(struct tt_diff *d);
/* A side's percentile (permille) of its pooled calls. */
int64_t tt_diff_percentile(const struct tt_diff_side *s, unsigned permille);
/* Writes the comparison (`ctx`: the struct tt_diff) in its format, for tt_out_text. */
int tt_diff_write(void *ctx, FILE *out);

#endif
