/* `ticktrace report` (the flat profile) and `ticktrace spikes`, and the spike marks
 * that `convert` adds to a trace: the decoder's events into the analysis that the
 * runtime shares (src/analysis/analysis.h). */
#ifndef TT_REPORT_H
#define TT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "tt_sinks.h"

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

/* The table as an SVG plot (tt_report_plot.c): the first rows' durations on a log
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
};

/* The flat profile of the inputs; 0, or -1 after reporting the problem. */
int tt_report(struct tt_report_opts *o);
/* The spikes of the inputs; 0, or -1 after reporting the problem. */
int tt_spikes(struct tt_report_opts *o);
/* What those two write, from a trace already open (its functions named or not) into
 * `out`, with o's options but not its inputs and output (and for the spikes, its
 * thresholds loaded); the decoder's totals in *sum. 0, or -1 after reporting the
 * problem. The fuzzer calls it on files in memory. */
int tt_analyse(const struct tt_trace *t, struct tt_report_opts *o, bool spikes, FILE *out,
	       struct tt_summary *sum);

/* For convert: passes everything to `inner`, and adds each spike as an instant on its
 * thread, at its end, named "spike: NAME took DURATION". `thresholds` must outlive
 * it; `inner` stays the caller's to free. NULL when out of memory. */
struct tt_sink *tt_spike_mark_sink_new(struct tt_sink *inner, const struct tt_thresholds *thresholds);

#endif
