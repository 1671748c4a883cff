/* The one pipeline every command reads a run through, as perf's session serves its
 * converters: open the inputs, name their functions (--debug-dir), decode into the
 * command's sinks with warnings printed and totals kept, then commit the output or
 * abort it, and one summary line. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"

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

int tt_decode_reported(const struct tt_trace *t, struct tt_sink *const *sinks, size_t n,
		       struct tt_summary *sum)
{
	struct tt_report_sink report = {.sink.ops = &tt_report_ops};
	struct tt_sink *all[TT_MAX_SINKS];
	if (n + 1 > TT_MAX_SINKS)
		return tt_error("more than %d sinks", TT_MAX_SINKS - 1);
	memcpy(all, sinks, n * sizeof(*sinks));
	all[n] = &report.sink;
	int rc = tt_decode(t, all, n + 1);
	if (sum)
		*sum = report.sum;
	return rc;
}

int tt_session_open(struct tt_session *r, const struct tt_session_opts *o)
{
	*r = (struct tt_session){.opts = o};
	if ((o->output && tt_out_possible(o->output) < 0) || tt_trace_open(&r->trace, o->inputs, o->ninputs) < 0)
		return -1;
	for (size_t i = 0; i < o->noffsets; i++)
		if (tt_trace_offset(&r->trace, o->offset_hosts[i], o->offset_ns[i]) < 0)
			return -1;
	if (tt_trace_check_span(&r->trace) < 0)
		return -1;
	r->symbols = tt_symbols_attach(&r->trace, o->debug_dir);
	return r->symbols ? 0 : -1;
}

int tt_session_output(struct tt_session *r)
{
	if (tt_out_apart(r->opts->output, r->opts->inputs, r->opts->ninputs) < 0 ||
	    tt_out_open(&r->out, r->opts->output, r->opts->force) < 0)
		return -1;
	r->out_open = true;
	return 0;
}

int tt_session_text(struct tt_session *r, int (*write)(void *ctx, FILE *out), void *ctx)
{
	return tt_session_output(r) < 0 ? -1 : tt_out_text(&r->out, write, ctx);
}

int tt_session_decode(struct tt_session *r, struct tt_sink *const *sinks, size_t n)
{
	uint64_t records = 0;
	for (size_t i = 0; i < r->trace.nfiles; i++)
		records += r->trace.files[i].records;
	bool bar = !r->opts->quiet && !tt_diag_quiet && records >= TT_PROGRESS_MIN_RECORDS &&
		   isatty(STDERR_FILENO);
	r->trace.progress = bar ? tt_progress : NULL;
	int rc = tt_decode_reported(&r->trace, sinks, n, &r->sum);
	if (bar)
		fputs("\r\033[K", stderr); /* the bar gives way to what follows */
	return rc;
}

const char *tt_session_output_name(const struct tt_session *r)
{
	return strcmp(r->opts->output, "-") ? r->opts->output : "stdout";
}

/* The calls TICKTRACE_MIN_DUR erased as they returned (FILTERED sections): not in the
 * trace, counted by `report`. */
static uint64_t tt_session_erased(const struct tt_trace *t)
{
	uint64_t calls = 0;
	for (size_t f = 0; f < t->nfiles; f++)
		for (size_t i = 0; i < t->files[f].nthreads; i++)
			for (size_t k = 0; k < t->files[f].threads[i].nfiltered; k++)
				calls += t->files[f].threads[i].filtered[k].calls;
	return calls;
}

int tt_session_close(struct tt_session *r, int rc)
{
	const struct tt_session_opts *o = r->opts;
	if (r->out_open)
		rc = tt_out_finish(&r->out, rc);
	char erased[128] = "";
	uint64_t calls = tt_session_erased(&r->trace);
	if (calls)
		snprintf(erased, sizeof erased, ", %" PRIu64 " short calls erased as they returned "
			 "(TICKTRACE_MIN_DUR: `report` counts them)", calls);
	if (rc == 0 && r->out_open && !o->quiet && !tt_diag_quiet)
		fprintf(stderr, "ticktrace: %s%s -> %s: %s%s%" PRIu64 " events, %" PRIu64 " threads, %"
			PRIu64 " dropped, %" PRIu64 " unmatched, %" PRIu64 " clamped, %" PRIu64
			" unterminated, %" PRIu64 " warnings%s\n",
			o->inputs[0], o->ninputs > 1 ? " ..." : "", tt_session_output_name(r), r->what,
			r->what[0] ? ", " : "", r->sum.events, r->sum.threads, r->sum.dropped,
			r->sum.unmatched, r->sum.clamped, r->sum.unterminated, r->sum.warnings, erased);
	tt_trace_close(&r->trace);
	tt_symbols_free(r->symbols);
	r->symbols = NULL;
	r->out_open = false;
	return rc;
}
