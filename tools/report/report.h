/* tools/report: the analyses over decoded events: the flat profile, the spikes and
 * convert's spike marks (profile.c: one sink into the analysis library the runtime
 * shares, src/analysis/analysis.h), frame times (frames.c), suggested markup
 * (suggest.c), the profile as an SVG plot (plot.c). */
#ifndef TT_TOOLS_REPORT_H
#define TT_TOOLS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../decode/decode.h"

/* `ticktrace report` (the flat profile) and `ticktrace spikes`, and the spike marks
 * that `convert` adds to a trace: the decoder's events into the analysis that the
 * runtime shares (src/analysis/analysis.h). */

/* Spike thresholds from the command line: a global one, and a file of lines
 * "PATTERN DURATION" ("GameTick 16.6ms", "script_* 0.1ms"; # starts a comment). */
struct tt_thresholds {
	int64_t global; /* TT__NO_THRESHOLD: none */
	const char *file; /* NULL: none */
	/* what tt_thresholds_load read from the file */
	struct tt__threshold_rule *rules;
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
void tt_table_svg(FILE *out, const struct tt__table *t, const char *title);

struct tt_report_opts {
	char *const *inputs;
	size_t ninputs;
	const char *output; /* NULL or "-": standard output */
	bool force;
	bool quiet;         /* no summary line on stderr (warnings are still printed) */
	enum tt_report_format format; /* spikes: text or JSON (one object a line) */
	enum tt__sort sort;
	bool by_thread;
	struct tt_thresholds thresholds; /* spikes */
	uint32_t depth;     /* spikes: the innermost scopes shown of each (0: all) */
	bool suggest;       /* spikes: the markup worth adding, instead of the spikes */
	bool frames;        /* report: the frame times instead of the flat profile */
	int64_t budget;     /* report --frames: a frame's budget (0: none) */
	const char *debug_dir; /* searched for debug info first (NULL: the system's only) */
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
	const struct tt__thread_analysis *thread; /* for its name */
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
	struct tt__hist hist;
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
void tt_frames_scope(struct tt_frame_stats *fs, const struct tt__thread_analysis *th, uint64_t key,
		     int64_t self);
/* The report as text; names from `an`. 0, or -1 when memory ran out. */
int tt_frames_print(const struct tt_frame_stats *fs, const struct tt__analysis *an, FILE *out);

/* `ticktrace spikes --suggest`: the markup worth adding to a run, PET's "suggested
 * markup", from its flat profile against the global threshold: thresholds of their
 * own for scopes over the global one on most calls (a frame's Tick), TT_IGNORE for
 * the few long calls that only hold others (main, a thread's loop), and the GCC flag
 * that leaves out of -finstrument-functions the functions too short to measure that
 * make most of the events. */

/* The suggestions for the table's entries (built with an analysis whose global
 * threshold is `threshold`, or TT__NO_THRESHOLD), as text. */
void tt_suggest_print(const struct tt__table *t, int64_t threshold, FILE *out);

#endif
