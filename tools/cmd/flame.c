/* `ticktrace flame`: the flame graph sink (sinks/flame.c) fed through the pipeline,
 * written as an SVG or folded stacks. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

int tt_flame(const struct tt_flame_opts *o)
{
	struct tt_session_opts ro = {.inputs = o->inputs, .ninputs = o->ninputs, .debug_dir = o->debug_dir,
				 .output = o->output, .force = o->force, .quiet = o->quiet};
	struct tt_session run;
	struct tt_sink *flame = tt_flame_sink_new(), *filter = NULL;
	int rc = tt_session_open(&run, &ro);
	if (rc == 0 && !flame)
		rc = tt_error("out of memory");
	if (rc == 0 && tt_filter_active(&o->filter) && !(filter = tt_filter_sink_new(flame, &o->filter)))
		rc = tt_error("out of memory");
	struct tt_sink *first = filter ? filter : flame;
	if (rc == 0)
		rc = tt_session_decode(&run, &first, 1);
	/* the output opens once the input decoded */
	if (rc == 0)
		rc = tt_session_output(&run);
	FILE *stream = rc == 0 ? tt_out_stream(&run.out) : NULL;
	if (rc == 0 && !stream)
		rc = tt_error("out of memory");
	char title[512];
	snprintf(title, sizeof(title), "ticktrace flame graph: %s%s", o->inputs[0],
		 o->ninputs > 1 ? " ..." : "");
	size_t frames = 0, stacks = 0;
	if (rc == 0)
		rc = tt_flame_write(flame, stream, o->svg, title, &frames, &stacks);
	if (stream && fclose(stream) != 0 && rc == 0)
		rc = tt_error("%s: cannot write", o->output);
	snprintf(run.what, sizeof(run.what), "%zu frames, %zu stacks", frames, stacks);
	tt_sink_free(filter); /* while the trace they read is still open */
	tt_sink_free(flame);
	return tt_session_close(&run, rc);
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

/* svg first: the format of -F's values */
static const char tt_flame_formats[] = "svg, folded";

enum { OPT_FROM = 256, OPT_TO, OPT_THREAD, OPT_DEBUG_DIR };
const struct option tt_flame_options[] = {
	{"output", required_argument, NULL, 'o'}, {"format", required_argument, NULL, 'F'},
	{"force", no_argument, NULL, 'f'},        {"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},         {"from", required_argument, NULL, OPT_FROM},
	{"to", required_argument, NULL, OPT_TO},  {"thread", required_argument, NULL, OPT_THREAD},
	{"debug-dir", required_argument, NULL, OPT_DEBUG_DIR}, {NULL, 0, NULL, 0},
};
const struct tt_cmd_arg tt_flame_args[] = {
	{'o', TT_ARG_FILE, NULL},
	{'F', TT_ARG_VALUES, tt_flame_formats},
	{OPT_DEBUG_DIR, TT_ARG_DIR, NULL},
	{0, 0, NULL},
};

int tt_cmd_flame(int argc, char **argv)
{
	struct tt_flame_opts o = {.filter.clip = true};
	const char **threads = calloc((size_t)argc, sizeof(*threads));
	const char *format = NULL;
	int c, rc = -1;
	while (rc < 0 && (c = getopt_long(argc, argv, "o:F:fqh", tt_flame_options, NULL)) != -1) {
		switch (c) {
		case 'o': o.output = optarg; break;
		case 'F': format = optarg; break;
		case 'f': o.force = true; break;
		case 'q': o.quiet = true; break;
		case OPT_FROM:
		case OPT_TO:
			o.filter.has_from |= c == OPT_FROM;
			o.filter.has_to |= c == OPT_TO;
			if (tt__parse_duration(optarg, c == OPT_FROM ? &o.filter.from : &o.filter.to) < 0)
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
	else if (format && tt_value_index(tt_flame_formats, format) < 0)
		rc = tt_usage_error(tt_flame_usage, "flame: --format is svg or folded");
	else if (o.filter.has_from && o.filter.has_to && o.filter.from > o.filter.to)
		rc = tt_usage_error(tt_flame_usage, "flame: --from is after --to");
	if (rc < 0) {
		o.svg = format ? tt_value_index(tt_flame_formats, format) == 0 : tt_ends_with(o.output, ".svg");
		o.inputs = argv + optind;
		o.ninputs = (size_t)(argc - optind);
		rc = tt_flame(&o) == 0 ? 0 : 1;
	}
	free(threads);
	return rc;
}
