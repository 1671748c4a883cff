#include "cmd.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


/* Prints every warning as it comes and keeps the totals for the summary. */
struct tt_report_sink {
	struct tt_sink sink;
	struct tt_summary sum;
};

static void tt_report_warning(struct tt_sink *s, const char *message)
{
	(void)s;
	tt_warn("%s", message);
}

static int tt_report_finish(struct tt_sink *s, const struct tt_summary *sum)
{
	((struct tt_report_sink *)s)->sum = *sum;
	return 0;
}

static const struct tt_sink_ops tt_report_ops = {
	.warning = tt_report_warning,
	.finish = tt_report_finish,
};

/* Inputs above this many records get a progress bar (when stderr is a terminal). */
#define TT_PROGRESS_MIN_RECORDS (8u << 20)

static void tt_progress(void *ctx, uint64_t events, uint64_t records)
{
	(void)ctx;
	/* events are at most the records; the bar fills as they are decoded */
	unsigned pct = records ? (unsigned)(events * 100 / records) : 100;
	char bar[41];
	memset(bar, '#', pct * 40 / 100);
	memset(bar + pct * 40 / 100, '.', 40 - pct * 40 / 100);
	bar[40] = 0;
	fprintf(stderr, "\rticktrace: [%s] %3u%% of %" PRIu64 " records", bar, pct, records);
}

static void tt_print_summary(const struct tt_convert_opts *opts, const struct tt_summary *sum)
{
	if (opts->quiet || tt_diag_quiet)
		return;
	fprintf(stderr, "ticktrace: %s%s -> %s: %" PRIu64 " events, %" PRIu64 " threads, %" PRIu64
		" dropped, %" PRIu64 " unmatched, %" PRIu64 " clamped, %" PRIu64 " unterminated, %"
		PRIu64 " warnings\n",
		opts->inputs[0], opts->ninputs > 1 ? " ..." : "",
		strcmp(opts->output, "-") ? opts->output : "stdout", sum->events, sum->threads,
		sum->dropped, sum->unmatched, sum->clamped, sum->unterminated, sum->warnings);
}

/* JSON that a viewer will not load says so, and what to do instead. */
static void tt_json_size_check(const struct tt_convert_opts *opts, uint64_t bytes)
{
	uint64_t limit = opts->json_limit ? opts->json_limit : TT_JSON_VIEWER_LIMIT;
	if (bytes <= limit)
		return;
	tt_warn("%s: %" PRIu64 " MB of JSON, more than the %" PRIu64 " MB that Perfetto and "
		"chrome://tracing load (a JavaScript string's limit): convert to Perfetto's format "
		"instead (-o run.pftrace: about a quarter of the size, no such limit), or keep less "
		"(--min-dur, --from/--to, --thread)",
		strcmp(opts->output, "-") ? opts->output : "stdout", bytes >> 20, (limit + 24) >> 20);
}

enum tt_format tt_format_named(const char *name)
{
	return strcmp(name, "json") == 0 ? TT_FORMAT_JSON :
	       strcmp(name, "perfetto") == 0 ? TT_FORMAT_PERFETTO : TT_FORMAT_AUTO;
}

static bool tt_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static enum tt_format tt_format_for(const struct tt_convert_opts *opts)
{
	if (opts->format != TT_FORMAT_AUTO)
		return opts->format;
	const char *o = opts->output;
	return tt_ends_with(o, ".pftrace") || tt_ends_with(o, ".perfetto-trace") ||
			       tt_ends_with(o, ".pb") ?
		       TT_FORMAT_PERFETTO :
		       TT_FORMAT_JSON;
}

int tt_convert(const struct tt_convert_opts *opts, struct tt_summary *sum)
{
	struct tt_trace trace;
	struct tt_out out;
	struct tt_report_sink report = {.sink.ops = &tt_report_ops};
	struct tt_sink *writer = NULL, *filter = NULL, *marks = NULL;
	int rc = -1;
	enum tt_format format = tt_format_for(opts);
	if (format == TT_FORMAT_PERFETTO && opts->filter.min_dur > 0)
		return tt_error("--min-dur works with JSON output only: Perfetto's format needs a "
				"slice's begin before its duration is known");

	/* the thresholds are the caller's; the rules read from their file, ours */
	struct tt_thresholds thresholds = opts->thresholds;
	struct tt_symbols *symbols = NULL;
	if (tt_trace_open(&trace, opts->inputs, opts->ninputs) < 0 || tt_thresholds_load(&thresholds) < 0 ||
	    !(symbols = tt_symbols_attach(&trace, opts->debug_dir)))
		goto close_trace;
	if (tt_out_open(&out, opts->output, opts->force) < 0)
		goto close_trace;
	writer = format == TT_FORMAT_PERFETTO ? tt_perfetto_sink_new(&out) :
						   tt_json_sink_new(&out, opts->source);
	if (writer && tt_filter_active(&opts->filter))
		filter = tt_filter_sink_new(writer, &opts->filter);
	if (writer && opts->spikes)
		marks = tt_spike_mark_sink_new(filter ? filter : writer, &thresholds);
	if (!writer || (tt_filter_active(&opts->filter) && !filter) || (opts->spikes && !marks)) {
		tt_error("out of memory");
		tt_out_abort(&out);
		goto free_writer;
	}
	struct tt_sink *sinks[] = {marks ? marks : filter ? filter : writer, &report.sink};
	uint64_t records = 0;
	for (size_t i = 0; i < trace.nfiles; i++)
		records += trace.files[i].records;
	bool bar = !opts->quiet && !tt_diag_quiet && records >= TT_PROGRESS_MIN_RECORDS &&
		   isatty(STDERR_FILENO);
	if (bar)
		trace.progress = tt_progress;
	rc = tt_decode(&trace, sinks, 2);
	if (bar)
		fputs("\r\033[K", stderr); /* the bar gives way to what follows */
	if (rc < 0) {
		tt_out_abort(&out);
		goto free_writer;
	}
	rc = tt_out_commit(&out);
	if (rc == 0)
		tt_print_summary(opts, &report.sum);
	if (rc == 0 && format == TT_FORMAT_JSON)
		tt_json_size_check(opts, out.written);
free_writer:
	tt_sink_free(marks);
	tt_sink_free(filter);
	tt_sink_free(writer);
close_trace:
	tt_trace_close(&trace);
	tt_thresholds_free(&thresholds);
	tt_symbols_free(symbols);
	if (sum)
		*sum = report.sum;
	return rc;
}
