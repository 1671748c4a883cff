/* The `ticktrace` command: subcommands over raw files (.ttr).
 * Exit status: 0 success, 1 bad input or a failed conversion, 2 usage. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt_convert.h"
#include "tt_flame.h"
#include "tt_info.h"
#include "tt_lines.h"
#include "tt_open.h"
#include "tt_record.h"
#include "tt_report.h"

#define TT_EXIT_USAGE 2

static const char tt_usage[] =
	"usage: ticktrace <command> [options] [files]\n"
	"\n"
	"commands:\n"
	"  convert   raw files (.ttr) to a trace that Perfetto and chrome://tracing open\n"
	"  info      what raw files hold: clock, process, threads, call sites\n"
	"  open      serve a converted trace once to the Perfetto UI and print its URL\n"
	"  record    run a program, recording the calls of functions patched in it\n"
	"  report    the flat profile: calls, total, self and children time, percentiles\n"
	"  spikes    every scope that lasted longer than its threshold, with its stack\n"
	"  flame     a flame graph of where the time went: SVG, or folded stacks\n"
	"  lines     a self-profile (tt_profile_write) by bucket: function and file:line\n"
	"  help      this text\n"
	"\n"
	"'ticktrace <command> --help' describes a command; 'ticktrace --version' prints\n"
	"the version. Manual pages: ticktrace(1), and ticktrace(3) for the C API.\n";

static const char tt_convert_usage[] =
	"usage: ticktrace convert RUN.ttr [MORE.ttr ...] -o OUTPUT [options]\n"
	"\n"
	"Converts raw files into Chrome trace JSON or Perfetto's protobuf format\n"
	"(several files: one timeline, one process each, aligned on CLOCK_MONOTONIC).\n"
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
	"                      TIME is a number with ns, us, ms or s (default s)\n"
	"      --threshold TIME, --thresholds FILE, --spikes\n"
	"                      mark each spike (see 'ticktrace spikes --help') with an\n"
	"                      instant on its thread at its end, named \"spike: NAME took\n"
	"                      DURATION\"; --spikes alone uses the thresholds set in the\n"
	"                      code. Without any of them, no spikes are looked for.\n"
	"      --debug-dir DIR look for debug info here first (DIR/.build-id/xx/yyyy.debug,\n"
	"                      or by name), then in /usr/lib/debug; functions recorded with\n"
	"                      -finstrument-functions are named from the binaries' symbols\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 converted, 1 bad input or failed conversion, 2 usage.\n";

/* Prints a usage error and the command's usage, and returns the usage exit status. */
static int tt_usage_error(const char *usage, const char *msg)
{
	if (msg)
		fprintf(stderr, "ticktrace: %s\n", msg);
	fputs(usage, stderr);
	return TT_EXIT_USAGE;
}

/* --threshold TIME (global) or --thresholds FILE; 0, or -1 for a TIME that is not one. */
static int tt_threshold_option(bool global, const char *arg, struct tt_thresholds *th)
{
	if (!global) {
		th->file = arg;
		return 0;
	}
	return tt_parse_duration(arg, &th->global);
}

static int tt_cmd_convert(int argc, char **argv)
{
	enum { OPT_FROM = 256, OPT_TO, OPT_THREAD, OPT_MIN_DUR, OPT_THRESHOLD, OPT_THRESHOLDS,
	       OPT_SPIKES, OPT_DEBUG_DIR, OPT_CLIP };
	static const struct option longopts[] = {
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
		{"clip", no_argument, NULL, OPT_CLIP}, {NULL, 0, NULL, 0},
	};
	struct tt_convert_opts opts = {.thresholds.global = TT__NO_THRESHOLD};
	const char **threads = calloc((size_t)argc, sizeof(*threads));
	int c, rc = -1;
	while (rc < 0 && (c = getopt_long(argc, argv, "o:fF:qsh", longopts, NULL)) != -1) {
		int64_t *bound = c == OPT_FROM ? &opts.filter.from :
				 c == OPT_TO   ? &opts.filter.to :
						 &opts.filter.min_dur;
		switch (c) {
		case OPT_FROM:
		case OPT_TO:
		case OPT_MIN_DUR:
			opts.filter.has_from |= c == OPT_FROM;
			opts.filter.has_to |= c == OPT_TO;
			if (tt_parse_duration(optarg, bound) < 0)
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
	return rc;
}

static const char tt_info_usage[] =
	"usage: ticktrace info RUN.ttr [MORE.ttr ...] [--sites N]\n"
	"\n"
	"Describes each raw file: format version, TSC rate and how it was obtained, when\n"
	"and how long it recorded, the process, each thread with its event, dropped,\n"
	"unmatched, clamped and unterminated counts, and the call sites with their uses,\n"
	"most used first: a scope's name, file:line and (function); a function recorded\n"
	"with -finstrument-functions as name() and file:line.\n"
	"\n"
	"      --sites N       list the N most used call sites (default 25; 0: all)\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 described, 1 bad input, 2 usage.\n";

static int tt_cmd_info(int argc, char **argv)
{
	enum { OPT_SITES = 256 };
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"sites", required_argument, NULL, OPT_SITES},
		{NULL, 0, NULL, 0},
	};
	int c;
	size_t sites = TT_INFO_SITES;
	char *end;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(tt_info_usage, stdout); return 0;
		case OPT_SITES:
			sites = (size_t)strtoul(optarg, &end, 10);
			if (*end || !*optarg || *optarg == '-')
				return tt_usage_error(tt_info_usage, "info: --sites is a number (0: all)");
			break;
		default: return tt_usage_error(tt_info_usage, NULL);
		}
	}
	if (optind >= argc)
		return tt_usage_error(tt_info_usage, "info: no input file");
	return tt_info(argv + optind, (size_t)(argc - optind), sites, stdout) == 0 ? 0 : 1;
}

static const char tt_open_usage[] =
	"usage: ticktrace open TRACE.pftrace|TRACE.json|RUN.ttr [--port N]\n"
	"\n"
	"Serves the file once from 127.0.0.1 (loopback only) with the headers the\n"
	"Perfetto UI needs to fetch it, and prints the ui.perfetto.dev URL that loads it.\n"
	"Exits after the file is fetched, or on Ctrl-C. A raw file is converted to\n"
	"Perfetto's format first (in a temporary directory, removed when done); a file\n"
	"that is not a trace is refused.\n"
	"\n"
	"  -p, --port N        the port (default 9001, the one the UI may fetch from;\n"
	"                      0: any free port)\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 served, 1 cannot serve, 2 usage.\n";

static int tt_cmd_open(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"port", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c, port = TT_OPEN_PORT;
	char *end;
	while ((c = getopt_long(argc, argv, "p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			port = (int)strtol(optarg, &end, 10);
			if (*end || port < 0 || port > 65535)
				return tt_usage_error(tt_open_usage, "open: --port is 0 to 65535");
			break;
		case 'h': fputs(tt_open_usage, stdout); return 0;
		default: return tt_usage_error(tt_open_usage, NULL);
		}
	}
	if (argc - optind != 1)
		return tt_usage_error(tt_open_usage, "open: one trace file");
	return tt_open_trace(argv[optind], port, stdout) == 0 ? 0 : 1;
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
	"  -q, --quiet         no summary line on stderr (warnings are still printed)\n"
	"  -h, --help          this text\n"
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
	"                         they make most of the calls\n"
	"  -q, --quiet            no summary line on stderr\n"
	"  -h, --help             this text\n"
	"\n"
	"Exit status: 0 done (spikes or none), 1 bad input, 2 usage.\n";

/* report and spikes: the same options, each taking those its usage lists. */
static int tt_cmd_analysis(int argc, char **argv, bool spikes)
{
	enum { OPT_SORT = 256, OPT_BY_THREAD, OPT_CSV, OPT_JSON, OPT_THRESHOLD, OPT_THRESHOLDS,
	       OPT_FRAMES, OPT_BUDGET, OPT_DEPTH, OPT_SUGGEST, OPT_SVG };
	static const struct option report_opts[] = {
		{"output", required_argument, NULL, 'o'}, {"force", no_argument, NULL, 'f'},
		{"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
		{"sort", required_argument, NULL, OPT_SORT}, {"by-thread", no_argument, NULL, OPT_BY_THREAD},
		{"csv", no_argument, NULL, OPT_CSV},      {"json", no_argument, NULL, OPT_JSON},
		{"frames", no_argument, NULL, OPT_FRAMES}, {"budget", required_argument, NULL, OPT_BUDGET},
		{"svg", no_argument, NULL, OPT_SVG},
		{NULL, 0, NULL, 0},
	};
	static const struct option spikes_opts[] = {
		{"output", required_argument, NULL, 'o'}, {"force", no_argument, NULL, 'f'},
		{"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
		{"json", no_argument, NULL, OPT_JSON},
		{"threshold", required_argument, NULL, OPT_THRESHOLD},
		{"thresholds", required_argument, NULL, OPT_THRESHOLDS},
		{"depth", required_argument, NULL, OPT_DEPTH}, {"suggest", no_argument, NULL, OPT_SUGGEST},
		{NULL, 0, NULL, 0},
	};
	const char *usage = spikes ? tt_spikes_usage : tt_report_usage;
	struct tt_report_opts o = {.thresholds.global = TT__NO_THRESHOLD, .budget = 16666667};
	int c, sort;
	while ((c = getopt_long(argc, argv, "o:fqh", spikes ? spikes_opts : report_opts, NULL)) != -1) {
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
			if ((sort = tt__sort_named(optarg)) < 0)
				return tt_usage_error(usage, "report: --sort is one of self, total, children, "
						      "calls, min, max, mean, p50, p95, p99, name");
			o.sort = (enum tt__sort)sort;
			break;
		case OPT_FRAMES: o.frames = true; break;
		case OPT_SUGGEST: o.suggest = true; break;
		case OPT_DEPTH: {
			char *end;
			unsigned long depth = strtoul(optarg, &end, 10);
			if (end == optarg || *end || depth == 0 || depth > UINT32_MAX)
				return tt_usage_error(usage, "spikes: --depth is a number of scopes, 1 or more");
			o.depth = (uint32_t)depth;
			break;
		}
		case OPT_BUDGET:
			if (tt__parse_duration(optarg, &o.budget) < 0)
				return tt_usage_error(usage, "report: --budget is a TIME");
			break;
		case OPT_THRESHOLD:
		case OPT_THRESHOLDS:
			if (tt_threshold_option(c == OPT_THRESHOLD, optarg, &o.thresholds) < 0)
				return tt_usage_error(usage, "spikes: --threshold is a TIME");
			break;
		default: return tt_usage_error(usage, NULL);
		}
	}
	if (optind >= argc)
		return tt_usage_error(usage, spikes ? "spikes: no input file" : "report: no input file");
	o.inputs = argv + optind;
	o.ninputs = (size_t)(argc - optind);
	int rc = spikes ? tt_spikes(&o) : tt_report(&o);
	tt_thresholds_free(&o.thresholds);
	return rc == 0 ? 0 : 1;
}

static const char tt_record_usage[] =
	"usage: ticktrace record [-f PATTERN]... [-o RUN.ttr] [-c OUTPUT] [--no-follow] -- PROGRAM [ARGS]\n"
	"\n"
	"Runs PROGRAM with ticktrace's detour library preloaded (LD_PRELOAD), which, before\n"
	"main, patches the entry of each function whose name matches a PATTERN, so that\n"
	"its calls are recorded as if it had been built with -finstrument-functions.\n"
	"Functions built with -fpatchable-function-entry=5 (or more) get a call over their\n"
	"NOPs; the others have their first instructions moved to a trampoline. Those that\n"
	"cannot be patched safely are listed with the reason; the program runs on. With no\n"
	"-f, nothing is patched: the program records what its markup and hooks record.\n"
	"The programs it starts (shell scripts too) are traced alike, each process into a\n"
	"file of its own; what the patcher says is said once per program, and at the end\n"
	"one line names every file written (-c converts them all onto one timeline). A\n"
	"statically linked program (or script interpreter) cannot be traced: said so, it\n"
	"runs as it is.\n"
	"\n"
	"  -f, --function PATTERN  a shell glob over the symbols of the program and its\n"
	"                          libraries ('work_*', 'ZSTD_compress*'), or 0xADDR, an\n"
	"                          address of the program (as nm prints it) where a\n"
	"                          function with no symbol starts; repeatable\n"
	"  -o, --output FILE       the raw file (default ticktrace-%p.ttr, %p: the pid)\n"
	"  -c, --convert OUTPUT    then convert the run (every process's file) to OUTPUT\n"
	"                          (.json, .pftrace)\n"
	"      --force             the conversion may replace an existing OUTPUT\n"
	"      --no-follow         trace the program alone: what it runs (exec included:\n"
	"                          a script's `exec prog`) runs without ticktrace; its\n"
	"                          forks that do not exec still record\n"
	"  -h, --help              this text\n"
	"\n"
	"Exit status: the program's (128 + N if signal N killed it); as a shell's, 127 if\n"
	"it was not found, 126 if it could not be run; 1 if ticktrace failed (no detour\n"
	"library, or a program that exited 0 left no trace or one that could not be\n"
	"converted); 2 usage.\n";

static int tt_cmd_record(int argc, char **argv)
{
	enum { OPT_FORCE = 256, OPT_NO_FOLLOW };
	static const struct option longopts[] = {
		{"function", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
		{"convert", required_argument, NULL, 'c'},  {"force", no_argument, NULL, OPT_FORCE},
		{"no-follow", no_argument, NULL, OPT_NO_FOLLOW},
		{"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
	};
	const char *env_out = getenv("TICKTRACE_OUT");
	struct tt_record_opts o = {.out = env_out && *env_out ? env_out : "ticktrace-%p.ttr",
				   .follow = true};
	char **patterns = calloc((size_t)argc, sizeof(*patterns));
	int c, rc;
	if (!patterns)
		return 1;
	o.patterns = patterns;
	/* '+': options end at the program's name */
	while ((c = getopt_long(argc, argv, "+f:o:c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!*optarg || strchr(optarg, '\n')) {
				rc = tt_usage_error(tt_record_usage, "record: -f takes a non-empty pattern");
				goto out;
			}
			patterns[o.npatterns++] = optarg;
			break;
		case 'o': o.out = optarg; break;
		case 'c': o.convert = optarg; break;
		case OPT_FORCE: o.force = true; break;
		case OPT_NO_FOLLOW: o.follow = false; break;
		case 'h': fputs(tt_record_usage, stdout); rc = 0; goto out;
		default: rc = tt_usage_error(tt_record_usage, NULL); goto out;
		}
	}
	if (optind >= argc) {
		rc = tt_usage_error(tt_record_usage, "record: no program to run");
		goto out;
	}
	o.argv = argv + optind;
	rc = tt_record(&o);
out:
	free(patterns);
	return rc;
}

static const char tt_flame_usage[] =
	"usage: ticktrace flame RUN.ttr [MORE.ttr ...] -o OUTPUT.svg|OUTPUT.folded|- [options]\n"
	"\n"
	"A flame graph: each slice's self time (its duration less its children's) added\n"
	"to its path of scopes and functions, under its thread's name (threads that share\n"
	"a name share a root). An SVG that any image viewer opens (a frame's width is its\n"
	"time; hover for figures), or folded stacks, \"thread;outer;inner NANOSECONDS\" a\n"
	"line, for flamegraph.pl, inferno-flamegraph or speedscope.\n"
	"\n"
	"  -o, --output FILE   where to write; '-' is standard output\n"
	"  -F, --format FMT    svg or folded; by default .svg outputs are SVG, anything\n"
	"                      else folded\n"
	"  -f, --force         replace an existing output file\n"
	"  -q, --quiet         no summary line\n"
	"      --from TIME, --to TIME\n"
	"                      only the time in this window (slices cut at its edges)\n"
	"      --thread T      only the threads whose tid or name is T (repeatable)\n"
	"      --debug-dir DIR where to look for debug info first (see convert)\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 written, 1 bad input, 2 usage.\n";

static bool tt_ends_with_svg(const char *path)
{
	size_t n = strlen(path);
	return n >= 4 && strcmp(path + n - 4, ".svg") == 0;
}

static int tt_cmd_flame(int argc, char **argv)
{
	enum { OPT_FROM = 256, OPT_TO, OPT_THREAD, OPT_DEBUG_DIR };
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'}, {"format", required_argument, NULL, 'F'},
		{"force", no_argument, NULL, 'f'},        {"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},         {"from", required_argument, NULL, OPT_FROM},
		{"to", required_argument, NULL, OPT_TO},  {"thread", required_argument, NULL, OPT_THREAD},
		{"debug-dir", required_argument, NULL, OPT_DEBUG_DIR}, {NULL, 0, NULL, 0},
	};
	struct tt_flame_opts o = {.filter.clip = true};
	const char **threads = calloc((size_t)argc, sizeof(*threads));
	const char *format = NULL;
	int c, rc = -1;
	while (rc < 0 && (c = getopt_long(argc, argv, "o:F:fqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case 'F': format = optarg; break;
		case 'f': o.force = true; break;
		case 'q': o.quiet = true; break;
		case OPT_FROM:
		case OPT_TO:
			o.filter.has_from |= c == OPT_FROM;
			o.filter.has_to |= c == OPT_TO;
			if (tt_parse_duration(optarg, c == OPT_FROM ? &o.filter.from : &o.filter.to) < 0)
				rc = tt_usage_error(tt_flame_usage, "flame: a TIME is a number with ns, us, ms or s");
			break;
		case OPT_THREAD: threads[o.filter.nthreads++] = optarg; break;
		case OPT_DEBUG_DIR: o.debug_dir = optarg; break;
		case 'h': fputs(tt_flame_usage, stdout); rc = 0; break;
		default: rc = tt_usage_error(tt_flame_usage, NULL); break;
		}
	}
	o.filter.threads = threads;
	if (rc >= 0)
		; /* --help, or a usage error */
	else if (optind >= argc)
		rc = tt_usage_error(tt_flame_usage, "flame: no input file");
	else if (!o.output)
		rc = tt_usage_error(tt_flame_usage, "flame: no output (-o FILE.svg, or -o - for folded stacks)");
	else if (format && strcmp(format, "svg") != 0 && strcmp(format, "folded") != 0)
		rc = tt_usage_error(tt_flame_usage, "flame: --format is svg or folded");
	else if (o.filter.has_from && o.filter.has_to && o.filter.from > o.filter.to)
		rc = tt_usage_error(tt_flame_usage, "flame: --from is after --to");
	if (rc < 0) {
		o.svg = format ? strcmp(format, "svg") == 0 : tt_ends_with_svg(o.output);
		o.inputs = argv + optind;
		o.ninputs = (size_t)(argc - optind);
		rc = tt_flame(&o) == 0 ? 0 : 1;
	}
	free(threads);
	return rc;
}

static const char tt_lines_usage[] =
	"usage: ticktrace lines PROFILE.txt\n"
	"\n"
	"Names each bucket of a self-profile written by tt_profile_write (ticktrace(3)):\n"
	"its samples and share, its address in the module's file (as addr2line -e takes\n"
	"it), its source file:line and its function (function+0xOFFSET inside one), from\n"
	"the module's symbols and debug info. Run it where the profiled binary is.\n"
	"\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 named, 1 bad input, 2 usage.\n";

static int tt_cmd_lines(int argc, char **argv)
{
	static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c != 'h')
			return tt_usage_error(tt_lines_usage, NULL);
		fputs(tt_lines_usage, stdout);
		return 0;
	}
	if (argc - optind != 1)
		return tt_usage_error(tt_lines_usage, "lines: one profile file");
	return tt_lines(argv[optind], stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return tt_usage_error(tt_usage, NULL);
	const char *cmd = argv[1];
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		fputs(tt_usage, stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
		puts("ticktrace " TT_VERSION);
		return 0;
	}
	/* getopt sees the subcommand as its program name. */
	if (strcmp(cmd, "convert") == 0)
		return tt_cmd_convert(argc - 1, argv + 1);
	if (strcmp(cmd, "info") == 0)
		return tt_cmd_info(argc - 1, argv + 1);
	if (strcmp(cmd, "open") == 0)
		return tt_cmd_open(argc - 1, argv + 1);
	if (strcmp(cmd, "record") == 0)
		return tt_cmd_record(argc - 1, argv + 1);
	if (strcmp(cmd, "flame") == 0)
		return tt_cmd_flame(argc - 1, argv + 1);
	if (strcmp(cmd, "lines") == 0)
		return tt_cmd_lines(argc - 1, argv + 1);
	if (strcmp(cmd, "report") == 0 || strcmp(cmd, "spikes") == 0)
		return tt_cmd_analysis(argc - 1, argv + 1, strcmp(cmd, "spikes") == 0);
	fprintf(stderr, "ticktrace: unknown command '%s'\n", cmd);
	return tt_usage_error(tt_usage, NULL);
}
