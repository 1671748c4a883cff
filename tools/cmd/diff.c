/* `ticktrace diff BASE NEW`: two runs' flat profiles compared scope by scope
 * (report/diff.c), each change weighed against the calls' spread, and a gate for CI
 * (exit TT_EXIT_REGRESSED). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

int tt_diff_run(const struct tt_diff_opts *o, const char *output, bool force, bool quiet)
{
	if (tt_out_possible(output) < 0)
		return -1;
	struct tt_diff d;
	int rc = tt_diff_compare(&d, o);
	struct tt_out out;
	for (int side = 0; side < 2 && rc == 0; side++) /* (its runs: a directory's too) */
		rc = tt_out_apart(output, d.runs[side], d.nruns[side]);
	if (rc == 0 && (rc = tt_out_open(&out, output, force)) == 0)
		rc = tt_out_finish(&out, tt_out_text(&out, tt_diff_write, &d));
	if (rc == 0 && !quiet && !tt_diag_quiet)
		fprintf(stderr, "ticktrace: diff %s\n", d.summary);
	bool gate = rc == 0 && o->fail_above > 0;
	/* What was not compared fails the gate (scopes gone, unless accepted): a run
	 * that recorded none of BASE's scopes has no regression to find. */
	bool uncompared = rc == 0 && d.uncompared[0] && !(o->allow_gone && d.gone);
	if (uncompared && gate)
		tt_error("diff: %s; --fail-above cannot pass it (exit %d%s)", d.uncompared,
			 TT_EXIT_UNCOMPARED, d.gone ? "; --allow-gone accepts scopes gone" : "");
	else if (rc == 0 && d.uncompared[0])
		tt_warn("diff: %s", d.uncompared);
	int status = gate && d.regressed ? TT_EXIT_REGRESSED : gate && uncompared ? TT_EXIT_UNCOMPARED : 0;
	tt_diff_free(&d);
	return rc < 0 ? -1 : status;
}

static const char tt_diff_usage[] =
	"usage: ticktrace diff BASE NEW [options]\n"
	"\n"
	"Compares two runs' flat profiles (see 'ticktrace report --help'), scope by scope\n"
	"(name or function): calls, total, self, p50, p90, p99 and max on each side, the\n"
	"change of --metric, and its p-value: the Mann-Whitney rank test of the calls'\n"
	"durations (from the histograms: calls in one bucket, 1.6 to 3.1% wide, tie).\n"
	"A change counts when it is significant (p < --alpha, in its direction) and\n"
	"beyond --fail-above (or 5%); with several runs a side, only when each new run's\n"
	"figure is beyond each base run's as well. Sorted by the significant increases\n"
	"of the total time, the largest first.\n"
	"BASE and NEW are each a raw file, or a directory of raw files (*.ttr), runs of\n"
	"one build whose calls are pooled.\n"
	"\n"
	"      --metric M        p50 (default), p90, p99, total or calls\n"
	"      --fail-above PCT  exit 3 when a scope regressed (its --metric went up\n"
	"                        significantly) by more than PCT percent: '20' or '20%';\n"
	"                        exit 4 when the runs cannot be compared: a side that\n"
	"                        recorded no scope, no scope on both sides (another\n"
	"                        program), or scopes of BASE that NEW did not record\n"
	"      --allow-gone      scopes of BASE that NEW did not record (removed or\n"
	"                        renamed) do not fail --fail-above: the others are gated\n"
	"      --alpha P         the significance level (default 0.001)\n"
	"      --min-calls N     leave out the scopes with fewer calls than N on a side\n"
	"      --by-thread       per thread name and scope (threads of a name pooled;\n"
	"                        the main thread, unless the program named it, 'main')\n"
	"      --json            one JSON object per scope a line, times in integer ns\n"
	"      --markdown        the changed scopes as a Markdown table (a CI summary)\n"
	"      --svg             the distributions of the first 10 scopes, both sides\n"
	"      --from TIME, --to TIME\n"
	"                        only the scopes that overlap this window of each run\n"
	"                        (since its start; counted whole)\n"
	"      --thread T        only the threads whose tid or name is T (repeatable)\n"
	"      --debug-dir DIR   where to look for debug info first (see convert)\n"
	"  -o, --output FILE     where to write (default: standard output)\n"
	"  -f, --force           replace an existing output file\n"
	"  -q, --quiet           no summary line on stderr\n"
	"  -h, --help            this text\n"
	"\n"
	"Exit status: 0 compared (no regression beyond --fail-above), 1 bad input,\n"
	"2 usage, 3 a scope regressed beyond --fail-above, 4 under --fail-above, runs\n"
	"that cannot be compared (what is missing is said; without --fail-above, a\n"
	"warning).\n";

/* in the order of enum tt_diff_metric */
static const char tt_diff_metric_values[] = "p50, p90, p99, total, calls";

enum { OPT_METRIC = 256, OPT_FAIL_ABOVE, OPT_ALPHA, OPT_MIN_CALLS, OPT_BY_THREAD, OPT_JSON,
       OPT_MARKDOWN, OPT_SVG, OPT_FROM, OPT_TO, OPT_THREAD, OPT_DEBUG_DIR, OPT_ALLOW_GONE };
const struct option tt_diff_options[] = {
	{"metric", required_argument, NULL, OPT_METRIC},
	{"fail-above", required_argument, NULL, OPT_FAIL_ABOVE},
	{"allow-gone", no_argument, NULL, OPT_ALLOW_GONE},
	{"alpha", required_argument, NULL, OPT_ALPHA},
	{"min-calls", required_argument, NULL, OPT_MIN_CALLS},
	{"by-thread", no_argument, NULL, OPT_BY_THREAD},
	{"json", no_argument, NULL, OPT_JSON},
	{"markdown", no_argument, NULL, OPT_MARKDOWN},
	{"svg", no_argument, NULL, OPT_SVG},
	{"from", required_argument, NULL, OPT_FROM},
	{"to", required_argument, NULL, OPT_TO},
	{"thread", required_argument, NULL, OPT_THREAD},
	{"debug-dir", required_argument, NULL, OPT_DEBUG_DIR},
	{"output", required_argument, NULL, 'o'},
	{"force", no_argument, NULL, 'f'},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};
const struct tt_cmd_arg tt_diff_args[] = {
	{'o', TT_ARG_FILE, NULL},
	{OPT_METRIC, TT_ARG_VALUES, tt_diff_metric_values},
	{OPT_DEBUG_DIR, TT_ARG_DIR, NULL},
	{0, 0, NULL},
};

/* A number in [lo, hi] with an optional suffix; 0 or -1. */
static int tt_parse_number(const char *text, const char *suffix, double lo, double hi, double *v)
{
	char *end;
	*v = strtod(text, &end);
	if (end == text || (*end && strcmp(end, suffix) != 0) || !(*v >= lo && *v <= hi))
		return -1;
	return 0;
}

int tt_cmd_diff(int argc, char **argv)
{
	struct tt_diff_opts o = {.alpha = TT_DIFF_DEFAULT_ALPHA};
	const char *output = "-";
	bool force = false, quiet = false;
	const char **threads = calloc((size_t)argc, sizeof(*threads));
	if (!threads) {
		tt_error("out of memory");
		return 1;
	}
	int c, rc = -1, metric;
	double v;
	while (rc < 0 && (c = getopt_long(argc, argv, "o:fqh", tt_diff_options, NULL)) != -1) {
		switch (c) {
		case OPT_METRIC:
			if ((metric = tt_value_index(tt_diff_metric_values, optarg)) < 0)
				rc = tt_usage_error(tt_diff_usage, "diff: --metric is p50, p90, p99, total or calls");
			o.metric = (enum tt_diff_metric)metric;
			break;
		case OPT_FAIL_ABOVE:
			if (tt_parse_number(optarg, "%", 0, 1e9, &o.fail_above) < 0 || o.fail_above <= 0)
				rc = tt_usage_error(tt_diff_usage, "diff: --fail-above is a percentage above 0: 20 or 20%");
			break;
		case OPT_ALPHA:
			if (tt_parse_number(optarg, "", 0, 1, &o.alpha) < 0 || o.alpha <= 0 || o.alpha >= 1)
				rc = tt_usage_error(tt_diff_usage, "diff: --alpha is a probability between 0 and 1");
			break;
		case OPT_MIN_CALLS:
			if (tt_parse_number(optarg, "", 0, 1e18, &v) < 0 || v != floor(v))
				rc = tt_usage_error(tt_diff_usage, "diff: --min-calls is a number of calls");
			o.min_calls = (uint64_t)v;
			break;
		case OPT_ALLOW_GONE: o.allow_gone = true; break;
		case OPT_BY_THREAD: o.by_thread = true; break;
		case OPT_JSON: o.format = TT_DIFF_JSON; break;
		case OPT_MARKDOWN: o.format = TT_DIFF_MARKDOWN; break;
		case OPT_SVG: o.format = TT_DIFF_SVG; break;
		case OPT_FROM:
		case OPT_TO:
			if (tt_window_option(c == OPT_FROM, optarg, &o.filter) < 0)
				rc = tt_usage_error(tt_diff_usage, "diff: a TIME is a number with ns, us, ms or s");
			break;
		case OPT_THREAD: threads[o.filter.nthreads++] = optarg; break;
		case OPT_DEBUG_DIR: o.debug_dir = optarg; break;
		case 'o': output = optarg; break;
		case 'f': force = true; break;
		case 'q': quiet = true; break;
		case 'h': fputs(tt_diff_usage, stdout); rc = 0; break;
		default: rc = tt_usage_error(tt_diff_usage, NULL); break;
		}
	}
	o.filter.threads = threads;
	if (rc >= 0)
		; /* --help, or a usage error */
	else if (argc - optind != 2)
		rc = tt_usage_error(tt_diff_usage, "diff: two runs to compare: BASE NEW (each a raw file or a directory)");
	else if (o.filter.has_from && o.filter.has_to && o.filter.from > o.filter.to)
		rc = tt_usage_error(tt_diff_usage, "diff: --from is after --to");
	if (rc < 0) {
		o.paths[TT_BASE] = argv[optind];
		o.paths[TT_NEW] = argv[optind + 1];
		rc = tt_diff_run(&o, output, force, quiet);
		rc = rc < 0 ? 1 : rc;
	}
	free(threads);
	return rc;
}
