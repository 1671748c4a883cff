/* `ticktrace convert`: raw files to Chrome trace JSON or Perfetto's protobuf format,
 * filtered, with spikes marked, through the one pipeline (decode/pipeline.c). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static const char tt_convert_usage[] =
	"usage: ticktrace convert RUN.ttr [MORE.ttr ...] -o OUTPUT [options]\n"
	"\n"
	"Converts raw files into Chrome trace JSON or Perfetto's protobuf format\n"
	"(several files: one timeline, one process each, aligned on CLOCK_MONOTONIC;\n"
	"the runs of other machines placed through their wall clocks, CLOCK_TAI where\n"
	"both know it, else CLOCK_REALTIME, as well as their kernels say those are:\n"
	"said on stderr and in the JSON's otherData \"machines\").\n"
	"The output is written under a temporary name and renamed when complete; on\n"
	"error nothing is left behind.\n"
	"\n"
	"  -o, --output FILE   where to write; '-' is standard output\n"
	"  -f, --force         replace an existing output file\n"
	"  -F, --format FMT    json, or perfetto (Perfetto's protobuf TrackEvent format);\n"
	"                      by default .pftrace, .perfetto-trace and .pb outputs are\n"
	"                      perfetto, anything else json\n"
	"  -q, --quiet         no summary line (warnings are still printed)\n"
	"  -s, --source        JSON: \"src\":\"file:line\" in every slice and instant\n"
	"                      (a third more bytes; the Perfetto format always has them)\n"
	"      --from TIME     keep what happens from TIME after the trace start on\n"
	"      --to TIME       ... up to TIME after the trace start (slices that overlap\n"
	"                      the window are kept whole)\n"
	"      --clip          cut the slices that cross --from or --to at the window's\n"
	"                      edge, flagged clipped_begin or clipped_end in their args\n"
	"      --thread T      keep the threads whose tid or name is T (repeatable)\n"
	"      --min-dur TIME  keep slices lasting TIME or more (JSON only); their\n"
	"                      children are shorter, so nesting holds\n"
	"                      TIME is a number with ns, us, ms or s (0 alone needs\n"
	"                      none); a filter that keeps nothing (a --thread no thread\n"
	"                      matches, a window past the run) is said on stderr, and\n"
	"                      the output is a valid, empty trace (status 0)\n"
	"      --threshold TIME, --thresholds FILE, --spikes\n"
	"                      mark each spike (see 'ticktrace spikes --help') with an\n"
	"                      instant on its thread at its end, named \"spike: NAME took\n"
	"                      DURATION\"; --spikes alone uses the thresholds set in the\n"
	"                      code. Without any of them, no spikes are looked for.\n"
	"      --offset HOST=TIME  the runs recorded on HOST moved by TIME (a known offset\n"
	"                      of its clock; TIME may be negative: -1.5ms); repeatable\n"
	"      --debug-dir DIR look for debug info here first (DIR/.build-id/xx/yyyy.debug,\n"
	"                      or by name), then in /usr/lib/debug; functions recorded with\n"
	"                      -finstrument-functions are named from the binaries' symbols\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 converted, 1 bad input or failed conversion, 2 usage.\n";

/* enum tt_format's names, from TT_FORMAT_JSON on */
static const char tt_format_names[] = "json, perfetto";

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
	int i = tt_value_index(tt_format_names, name);
	return i < 0 ? TT_FORMAT_AUTO : (enum tt_format)(TT_FORMAT_JSON + i);
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

/* How runs of several machines were placed, and how far off that may be; a machine
 * whose clock the kernel calls unsynchronized is said where wall clocks placed any. */
static void tt_say_machines(const struct tt_trace *t)
{
	bool by_wall = false;
	for (size_t k = 0; k < t->nmachines; k++)
		by_wall |= strcmp(t->machines[k].clock, "CLOCK_MONOTONIC") != 0;
	if (t->nmachines < 2)
		return;
	fprintf(stderr, "ticktrace: %zu machines, on the CLOCK_MONOTONIC of the first:\n",
		t->nmachines);
	for (size_t k = 0; k < t->nmachines; k++) {
		const struct tt_machine *mc = &t->machines[k];
		const struct tt_machine_info *m = &mc->file->machine;
		fprintf(stderr, "ticktrace:   host ");
		tt_put_escaped(stderr, m->host_name_len ? m->host_name : "(not known)",
			       m->host_name_len ? m->host_name_len : 11);
		if (mc->uncertainty_ns == 0 && !mc->given_ns) {
			fprintf(stderr, ": %s, exact", k ? "the first's boot" : "the first");
		} else {
			fprintf(stderr, ": placed by %s, ", mc->clock);
			tt_print_offset(stderr, mc->offset_ns);
			if (mc->given_ns) {
				fprintf(stderr, " (of which --offset ");
				tt_print_offset(stderr, mc->given_ns);
				fputc(')', stderr);
			}
			if (mc->uncertainty_ns < 0) {
				fprintf(stderr, ", how far off not known (a kernel did not say its clock's error)");
			} else if (mc->uncertainty_ns) {
				fprintf(stderr, ", off by up to ");
				tt_print_seconds(stderr, mc->uncertainty_ns);
				fprintf(stderr, " (both kernels' maximum error)");
			}
		}
		if (m->timens_monotonic_ns) {
			fprintf(stderr, "; its time namespace's ");
			tt_print_offset(stderr, m->timens_monotonic_ns);
			fprintf(stderr, " taken out");
		}
		if (mc->unsynchronized && by_wall)
			fprintf(stderr, "; its kernel calls its clock UNSYNCHRONIZED: its wall clock may be "
				"off by any amount (--offset %.*s=TIME corrects a known offset)",
				(int)m->host_name_len, m->host_name);
		fputc('\n', stderr);
	}
}

int tt_convert(const struct tt_convert_opts *opts, struct tt_summary *sum)
{
	enum tt_format format = tt_format_for(opts);
	if (format == TT_FORMAT_PERFETTO && opts->filter.min_dur > 0)
		return tt_error("--min-dur works with JSON output only: Perfetto's format needs a "
				"slice's begin before its duration is known");
	struct tt_session_opts ro = {.inputs = opts->inputs, .ninputs = opts->ninputs,
				 .debug_dir = opts->debug_dir, .output = opts->output,
				 .force = opts->force, .quiet = opts->quiet};
	struct tt_session run;
	struct tt_sink *writer = NULL, *filter = NULL, *marks = NULL;
	/* the thresholds are the caller's; the rules read from their file, ours */
	struct tt_thresholds thresholds = opts->thresholds;
	int rc = tt_session_open(&run, &ro);
	for (size_t i = 0; rc == 0 && i < opts->noffsets; i++)
		rc = tt_trace_offset(&run.trace, opts->offset_hosts[i], opts->offset_ns[i]);
	if (rc == 0 && !opts->quiet)
		tt_say_machines(&run.trace);
	if (rc == 0)
		rc = tt_thresholds_load(&thresholds);
	if (rc == 0)
		rc = tt_session_output(&run);
	if (rc == 0) {
		writer = format == TT_FORMAT_PERFETTO ? tt_perfetto_sink_new(&run.out) :
							   tt_json_sink_new(&run.out, opts->source);
		if (writer && tt_filter_active(&opts->filter))
			filter = tt_filter_sink_new(writer, &opts->filter);
		if (writer && opts->spikes)
			marks = tt_spike_mark_sink_new(filter ? filter : writer, &thresholds);
		if (!writer || (tt_filter_active(&opts->filter) && !filter) || (opts->spikes && !marks))
			rc = tt_error("out of memory");
	}
	struct tt_sink *first = marks ? marks : filter ? filter : writer;
	if (rc == 0)
		rc = tt_session_decode(&run, &first, 1);
	/* (the sinks go while the trace they read is still open) */
	tt_sink_free(marks);
	tt_sink_free(filter);
	tt_sink_free(writer);
	rc = tt_session_close(&run, rc);
	if (rc == 0 && format == TT_FORMAT_JSON)
		tt_json_size_check(opts, run.out.written); /* (what the commit wrote) */
	tt_thresholds_free(&thresholds);
	if (sum)
		*sum = run.sum;
	return rc;
}

enum { OPT_FROM = 256, OPT_TO, OPT_THREAD, OPT_MIN_DUR, OPT_THRESHOLD, OPT_THRESHOLDS,
       OPT_SPIKES, OPT_DEBUG_DIR, OPT_CLIP, OPT_OFFSET };
const struct option tt_convert_options[] = {
	{"output", required_argument, NULL, 'o'}, {"force", no_argument, NULL, 'f'},
	{"format", required_argument, NULL, 'F'}, {"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},         {"from", required_argument, NULL, OPT_FROM},
	{"source", no_argument, NULL, 's'},
	{"to", required_argument, NULL, OPT_TO},  {"thread", required_argument, NULL, OPT_THREAD},
	{"min-dur", required_argument, NULL, OPT_MIN_DUR},
	{"threshold", required_argument, NULL, OPT_THRESHOLD},
	{"thresholds", required_argument, NULL, OPT_THRESHOLDS},
	{"spikes", no_argument, NULL, OPT_SPIKES},
	{"debug-dir", required_argument, NULL, OPT_DEBUG_DIR},
	{"clip", no_argument, NULL, OPT_CLIP}, {"offset", required_argument, NULL, OPT_OFFSET},
	{NULL, 0, NULL, 0},
};

const struct tt_cmd_arg tt_convert_args[] = {
	{'o', TT_ARG_FILE, NULL},
	{'F', TT_ARG_VALUES, tt_format_names},
	{OPT_THRESHOLDS, TT_ARG_FILE, NULL},
	{OPT_DEBUG_DIR, TT_ARG_DIR, NULL},
	{0, 0, NULL},
};

int tt_cmd_convert(int argc, char **argv)
{
	struct tt_convert_opts opts = {.thresholds.global = TT_AN_NO_THRESHOLD};
	const char **threads = calloc((size_t)argc, sizeof(*threads));
	opts.offset_hosts = calloc((size_t)argc, sizeof(*opts.offset_hosts));
	opts.offset_ns = calloc((size_t)argc, sizeof(*opts.offset_ns));
	int c, rc = -1;
	while (rc < 0 && (c = getopt_long(argc, argv, "o:fF:qsh", tt_convert_options, NULL)) != -1) {
		int64_t *bound = c == OPT_FROM ? &opts.filter.from :
				 c == OPT_TO   ? &opts.filter.to :
						 &opts.filter.min_dur;
		switch (c) {
		case OPT_FROM:
		case OPT_TO:
		case OPT_MIN_DUR:
			opts.filter.has_from |= c == OPT_FROM;
			opts.filter.has_to |= c == OPT_TO;
			if (tt_time_option(optarg, bound) < 0)
				rc = tt_usage_error(tt_convert_usage,
						    "convert: a TIME is a number with ns, us, ms or s");
			break;
		case OPT_THREAD: threads[opts.filter.nthreads++] = optarg; break;
		case OPT_THRESHOLD:
		case OPT_THRESHOLDS:
			if (tt_threshold_option(c == OPT_THRESHOLD, optarg, &opts.thresholds) < 0)
				rc = tt_usage_error(tt_convert_usage, "convert: --threshold is a TIME");
			opts.spikes = true;
			break;
		case OPT_SPIKES: opts.spikes = true; break;
		case OPT_DEBUG_DIR: opts.debug_dir = optarg; break;
		case OPT_CLIP: opts.filter.clip = true; break;
		case OPT_OFFSET: {
			char *eq = strrchr(optarg, '=');
			int64_t *ns = &opts.offset_ns[opts.noffsets];
			bool negative = eq && eq[1] == '-';
			if (!eq || eq == optarg || tt_time_option(eq + 1 + negative, ns) < 0) {
				rc = tt_usage_error(tt_convert_usage, "convert: --offset is HOST=TIME "
						    "(a number with ns, us, ms or s; negative: -1.5ms)");
				break;
			}
			*eq = 0;
			*ns = negative ? -*ns : *ns;
			opts.offset_hosts[opts.noffsets++] = optarg;
			break;
		}
		case 'o': opts.output = optarg; break;
		case 'f': opts.force = true; break;
		case 'q': opts.quiet = true; break;
		case 's': opts.source = true; break;
		case 'F':
			opts.format = tt_format_named(optarg);
			if (opts.format == TT_FORMAT_AUTO)
				rc = tt_usage_error(tt_convert_usage, "convert: --format is json or perfetto");
			break;
		case 'h':
			fputs(tt_convert_usage, stdout);
			rc = 0;
			break;
		default: rc = tt_usage_error(tt_convert_usage, NULL); break;
		}
	}
	opts.filter.threads = threads;
	if (rc >= 0)
		; /* --help, or a usage error */
	else if (optind >= argc)
		rc = tt_usage_error(tt_convert_usage, "convert: no input file");
	else if (!opts.output)
		rc = tt_usage_error(tt_convert_usage, "convert: no output (-o FILE, or -o - for stdout)");
	else if (opts.filter.has_from && opts.filter.has_to && opts.filter.from > opts.filter.to)
		rc = tt_usage_error(tt_convert_usage, "convert: --from is after --to");
	else if (opts.filter.clip && !opts.filter.has_from && !opts.filter.has_to)
		rc = tt_usage_error(tt_convert_usage, "convert: --clip cuts at --from or --to: give one");
	if (rc < 0) {
		opts.inputs = argv + optind;
		opts.ninputs = (size_t)(argc - optind);
		rc = tt_convert(&opts, NULL) == 0 ? 0 : 1;
	}
	free(threads);
	free(opts.offset_hosts);
	free(opts.offset_ns);
	return rc;
}
