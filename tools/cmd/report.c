/* `ticktrace report` (the flat profile, or --frames) and `ticktrace spikes`: their
 * options, and the pipeline that runs report/'s analysis into the output. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"

struct tt_analysis_run {
	struct tt_session *session;
	struct tt_report_opts *o;
	bool spikes;
};

static int tt_analysis_write(void *ctx, FILE *out)
{
	struct tt_analysis_run *a = ctx;
	return tt_analyse(&a->session->trace, a->o, a->spikes, out, &a->session->sum);
}

/* Opens the inputs and the output, runs tt_analyse into it, and commits the output.
 * 0, or -1 after reporting why; no output file is left behind on failure. */
static int tt_run_analysis(struct tt_report_opts *o, bool spikes)
{
	struct tt_session_opts ro = {.inputs = o->inputs, .ninputs = o->ninputs, .debug_dir = o->debug_dir,
				 .output = o->output ? o->output : "-", .force = o->force,
				 .quiet = o->quiet};
	struct tt_session run;
	struct tt_analysis_run a = {&run, o, spikes};
	int rc = tt_session_open(&run, &ro);
	if (rc == 0)
		rc = tt_session_text(&run, tt_analysis_write, &a);
	snprintf(run.what, sizeof(run.what), "%s", spikes ? "spikes" : "flat profile");
	return tt_session_close(&run, rc);
}

int tt_report(struct tt_report_opts *o)
{
	return tt_run_analysis(o, false);
}

int tt_spikes(struct tt_report_opts *o)
{
	return tt_thresholds_load(&o->thresholds) < 0 ? -1 : tt_run_analysis(o, true);
}

static const char tt_report_usage[] =
	"usage: ticktrace report RUN.ttr [MORE.ttr ...] [options]\n"
	"\n"
	"The flat profile: per scope name or function, the calls, the total time, the self\n"
	"time (total less the time in scopes nested in it), the time in children, and\n"
	"min, max, mean, p50, p95 and p99 of one call, over all threads (or per thread).\n"
	"Self and children add up to the total exactly (integer nanoseconds); a name\n"
	"called inside itself (recursion) has the total of its outermost calls, which\n"
	"hold the inner ones, and the mean, min, max and percentiles of every call. The\n"
	"percentiles are nearest-rank values from a histogram of 32 buckets per power of\n"
	"two: within 1/64 (1.6%) of the exact value, exact below 64 ns.\n"
	"\n"
	"      --frames        the frame times instead (TT_FRAME_MARK: the first frames\n"
	"                      marked): mean, p50, p95, p99, max, the frames over\n"
	"                      --budget, and the scopes with the most self time in each\n"
	"                      of the five worst frames\n"
	"      --budget TIME   a frame's budget (default 16.667ms: 60 frames a second)\n"
	"  -o, --output FILE   where to write (default: standard output)\n"
	"  -f, --force         replace an existing output file\n"
	"      --sort KEY      order of the rows, largest first: self (default), total,\n"
	"                      children, calls, min, max, mean, p50, p95, p99; or name\n"
	"      --by-thread     a table per thread instead of all threads together\n"
	"      --csv           CSV, times in integer nanoseconds\n"
	"      --svg           a plot: each name's durations on a log axis (min, p50,\n"
	"                      p95, p99, max, mean) and its share of the self time\n"
	"      --json          one JSON object (cJSON), times in integer nanoseconds\n"
	"      --from TIME, --to TIME\n"
	"                      only the time in this window (slices cut at its edges)\n"
	"      --thread T      only the threads whose tid or name is T (repeatable)\n"
	"  -q, --quiet         no summary line on stderr (warnings are still printed)\n"
	"      --debug-dir DIR where to look for debug info first (see convert)\n"
	"  -h, --help          this text\n"
	"\n"
	"A filter that keeps nothing (a --thread no thread matches, a window past the\n"
	"run) is said on stderr; the report is then empty, and the status 0.\n"
	"\n"
	"Exit status: 0 reported, 1 bad input, 2 usage.\n";

static const char tt_spikes_usage[] =
	"usage: ticktrace spikes RUN.ttr [MORE.ttr ...] [--threshold TIME] [--thresholds FILE]\n"
	"\n"
	"Every scope that lasted longer than its threshold: its thread, start time (since\n"
	"the trace start), duration and threshold, the scopes around it with how long\n"
	"each had been open when it ended (one a line), and its TT_DESCRIBE text; with\n"
	"frames (TT_FRAME_MARK), the frame it began in and its length in frames (of the\n"
	"mean frame so far): \"spike: Tick @ frame 2323 took 16.576 ms (0.995 frames)\".\n"
	"A scope's threshold\n"
	"is the first of: its TT_THRESHOLD_NS; the first line of --thresholds FILE that\n"
	"matches its name; the TT_CHILDREN_THRESHOLD_NS of the nearest scope around it\n"
	"that set one; --threshold. TT_IGNORE and TT_IGNORE_CHILDREN exempt scopes.\n"
	"A spike's time counts as explained in the scopes around it: one of them is a\n"
	"spike too only if its time less the explained time is still over its threshold,\n"
	"so a parent slow only because of its child is shown once, as the child.\n"
	"Spikes are listed as they end (to within 100 us between threads).\n"
	"Where the file has its thread's states (ticktrace(7), THREAD STATES), a spike says\n"
	"how its time split: on CPU, preempted (runnable, waiting for a CPU), blocked\n"
	"(asleep, a lock, I/O, and the wait for a CPU once woken) and unknown (no state\n"
	"covers it: before the states were asked for, switches the kernel lost), summing to\n"
	"its duration (--json: on_cpu_ns, preempted_ns, blocked_ns, unknown_ns); a thread\n"
	"without states has no split, and each of its spikes says why (--json: no_split).\n"
	"It says from where: causes_from \"switches\" (exact) or \"schedstat\" (the\n"
	"thread's counters read around it, perf refused: causes_error_ns says how near;\n"
	"text marks it ~), or \"thread-times\" (a Windows run: its CPU time read around\n"
	"it, the time off CPU unknown, preempted and blocked not told apart; all on CPU\n"
	"where its count of switches did not move); stolen_ns (within stolen_error_ns;\n"
	"causes_error_ns bounds the parts, 0 for the switches but where kernel_moved_ns\n"
	"says the kernel's own figures put a switch's edge elsewhere, or\n"
	"kernel_cpu_ahead_at_most_ns its CPU time may run ahead) where the kernel\n"
	"accounts stolen time, or no switch lets it be told (stolen_unknown: why a\n"
	"spike's is not, no reading after it, stolen_error_ns then all its on CPU);\n"
	"major_faults,\n"
	"minor_faults where the counters were read around it (faults_at_most: those\n"
	"readings reach outside it, faults_read_ns apart, so at most; faults_at_least:\n"
	"inside it alone, at least; ticktrace(7), THE THREADS' COUNTERS).\n"
	"A spike whose end was among dropped events ends at the last time known and says\n"
	"how much later it may have ended (end_late_ns; the split covers the time before).\n"
	"One whose beginning was not recorded (before the oldest record its thread kept,\n"
	"or among dropped events) took at least its duration, said so, and says how much\n"
	"earlier it may have begun (start_early_ns; -1: not known); so do the scopes of\n"
	"its stack begun so.\n"
	"A snapshot's own spike (TICKTRACE_SNAPSHOTS) is reported with its threshold\n"
	"and its source as the runtime had them, without --threshold, and said to be\n"
	"the one the snapshot was written for (--json: \"snapshot\", its number); if its\n"
	"scope is not whole in the snapshot, as the snapshot says it, with no stack.\n"
	"\n"
	"      --threshold TIME   the threshold of every scope with no other\n"
	"      --thresholds FILE  lines \"PATTERN TIME\": GameTick 16.6ms, script_* 0.1ms\n"
	"                         (shell patterns: * ? [..]; # starts a comment)\n"
	"                         TIME is a number with ns, us, ms or s (default s)\n"
	"  -o, --output FILE      where to write (default: standard output)\n"
	"  -f, --force            replace an existing output file\n"
	"      --json             one JSON object per spike, one a line\n"
	"      --depth N          show the N innermost scopes of each spike's stack\n"
	"      --suggest          instead of the spikes, the markup worth adding: a\n"
	"                         TT_THRESHOLD_NS of its own (its p99) for a scope over\n"
	"                         --threshold on most of its calls, TT_IGNORE for the few\n"
	"                         long calls that hold others, and the GCC flag that leaves\n"
	"                         out of -finstrument-functions the functions whose median\n"
	"                         call is within 3 x what recording a call costs here, when\n"
	"                         they make most of the calls; calls counted over the\n"
	"                         whole run (those TICKTRACE_MIN_DUR erased, and those\n"
	"                         dropped with a buffer full, in the zero-markup build)\n"
	"      --exclude-list FILE  with --suggest: those functions merged into FILE\n"
	"                         (made if need be), the lines it had kept, what it added\n"
	"                         said; the zero-markup build leaves the functions it\n"
	"                         names unpatched when run with TICKTRACE_EXCLUDE=FILE\n"
	"  -q, --quiet            no summary line on stderr\n"
	"      --debug-dir DIR    where to look for debug info first (see convert)\n"
	"  -h, --help             this text\n"
	"\n"
	"Exit status: 0 done (spikes or none), 1 bad input, 2 usage.\n";

enum { OPT_SORT = 256, OPT_BY_THREAD, OPT_CSV, OPT_JSON, OPT_THRESHOLD, OPT_THRESHOLDS,
       OPT_FRAMES, OPT_BUDGET, OPT_DEPTH, OPT_SUGGEST, OPT_SVG, OPT_DEBUG_DIR, OPT_FROM, OPT_TO,
       OPT_THREAD, OPT_EXCLUDE_LIST };
const struct option tt_report_options[] = {
	{"output", required_argument, NULL, 'o'}, {"force", no_argument, NULL, 'f'},
	{"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
	{"sort", required_argument, NULL, OPT_SORT}, {"by-thread", no_argument, NULL, OPT_BY_THREAD},
	{"csv", no_argument, NULL, OPT_CSV},      {"json", no_argument, NULL, OPT_JSON},
	{"frames", no_argument, NULL, OPT_FRAMES}, {"budget", required_argument, NULL, OPT_BUDGET},
	{"svg", no_argument, NULL, OPT_SVG},
	{"from", required_argument, NULL, OPT_FROM}, {"to", required_argument, NULL, OPT_TO},
	{"thread", required_argument, NULL, OPT_THREAD},
	{"debug-dir", required_argument, NULL, OPT_DEBUG_DIR},
	{NULL, 0, NULL, 0},
};
const struct option tt_spikes_options[] = {
	{"output", required_argument, NULL, 'o'}, {"force", no_argument, NULL, 'f'},
	{"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
	{"json", no_argument, NULL, OPT_JSON},
	{"threshold", required_argument, NULL, OPT_THRESHOLD},
	{"thresholds", required_argument, NULL, OPT_THRESHOLDS},
	{"depth", required_argument, NULL, OPT_DEPTH}, {"suggest", no_argument, NULL, OPT_SUGGEST},
	{"exclude-list", required_argument, NULL, OPT_EXCLUDE_LIST},
	{"debug-dir", required_argument, NULL, OPT_DEBUG_DIR},
	{NULL, 0, NULL, 0},
};
const struct tt_cmd_arg tt_report_args[] = {
	{'o', TT_ARG_FILE, NULL},
	{OPT_SORT, TT_ARG_VALUES, tt_an_sort_names},
	{OPT_DEBUG_DIR, TT_ARG_DIR, NULL},
	{0, 0, NULL},
};

const struct tt_cmd_arg tt_spikes_args[] = {
	{'o', TT_ARG_FILE, NULL},
	{OPT_THRESHOLDS, TT_ARG_FILE, NULL},
	{OPT_EXCLUDE_LIST, TT_ARG_FILE, NULL},
	{OPT_DEBUG_DIR, TT_ARG_DIR, NULL},
	{0, 0, NULL},
};

/* report and spikes: the same options, each taking those its usage lists; --thread's
 * values go to `threads`, which has room for argc. */
static int tt_cmd_analysis_into(int argc, char **argv, bool spikes, const char **threads)
{
	const char *usage = spikes ? tt_spikes_usage : tt_report_usage;
	struct tt_report_opts o = {.thresholds.global = TT_AN_NO_THRESHOLD, .budget = 16666667,
				   .filter = {.threads = threads, .clip = true}};
	int c, sort;
	while ((c = getopt_long(argc, argv, "o:fqh", spikes ? tt_spikes_options : tt_report_options, NULL)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case 'f': o.force = true; break;
		case 'q': o.quiet = true; break;
		case 'h': fputs(usage, stdout); return 0;
		case OPT_BY_THREAD: o.by_thread = true; break;
		case OPT_CSV: o.format = TT_REPORT_CSV; break;
		case OPT_SVG: o.format = TT_REPORT_SVG; break;
		case OPT_JSON: o.format = TT_REPORT_JSON; break;
		case OPT_SORT:
			if ((sort = tt_an_sort_named(optarg)) < 0)
				return tt_usage_error(usage, "report: --sort is one of self, total, children, "
						      "calls, min, max, mean, p50, p95, p99, name");
			o.sort = (enum tt_an_sort)sort;
			break;
		case OPT_FRAMES: o.frames = true; break;
		case OPT_DEBUG_DIR: o.debug_dir = optarg; break;
		case OPT_SUGGEST: o.suggest = true; break;
		case OPT_EXCLUDE_LIST: o.exclude_list = optarg; break;
		case OPT_DEPTH: {
			uint64_t depth;
			if (!tt_count_option(optarg, 1, UINT32_MAX, &depth))
				return tt_usage_error(usage, "spikes: --depth is a number of scopes, 1 or more");
			o.depth = (uint32_t)depth;
			break;
		}
		case OPT_BUDGET:
			if (tt_an_parse_duration(optarg, &o.budget) < 0)
				return tt_usage_error(usage, "report: --budget is a TIME");
			break;
		case OPT_THRESHOLD:
		case OPT_THRESHOLDS:
			if (tt_threshold_option(c == OPT_THRESHOLD, optarg, &o.thresholds) < 0)
				return tt_usage_error(usage, "spikes: --threshold is a TIME");
			break;
		case OPT_FROM:
		case OPT_TO:
			if (tt_window_option(c == OPT_FROM, optarg, &o.filter) < 0)
				return tt_usage_error(usage, "report: a TIME is a number with ns, us, ms or s");
			break;
		case OPT_THREAD: threads[o.filter.nthreads++] = optarg; break;
		default: return tt_usage_error(usage, NULL);
		}
	}
	if (optind >= argc)
		return tt_usage_error(usage, spikes ? "spikes: no input file" : "report: no input file");
	o.inputs = argv + optind;
	o.ninputs = (size_t)(argc - optind);
	if (o.filter.has_from && o.filter.has_to && o.filter.from > o.filter.to)
		return tt_usage_error(usage, "report: --from is after --to");
	if (o.exclude_list && !o.suggest)
		return tt_usage_error(usage, "spikes: --exclude-list goes with --suggest");
	int rc = spikes ? tt_spikes(&o) : tt_report(&o);
	tt_thresholds_free(&o.thresholds);
	return rc == 0 ? 0 : 1;
}

static int tt_cmd_analysis(int argc, char **argv, bool spikes)
{
	const char **threads = calloc((size_t)argc, sizeof(*threads));
	if (!threads)
		return tt_error("out of memory"), 1;
	int rc = tt_cmd_analysis_into(argc, argv, spikes, threads);
	free(threads);
	return rc;
}

int tt_cmd_report(int argc, char **argv)
{
	return tt_cmd_analysis(argc, argv, false);
}

int tt_cmd_spikes(int argc, char **argv)
{
	return tt_cmd_analysis(argc, argv, true);
}
