/* tools/cmd: one file per subcommand of `ticktrace`, with its usage text, its options
 * and its code (as perf's builtin-*.c); ticktrace.c's table lists them. Each tt_cmd_*
 * takes the subcommand's argv (argv[0] is its name) and returns the exit status. */
#ifndef TT_TOOLS_CMD_H
#define TT_TOOLS_CMD_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../report/report.h"
#include "record_protocol.h"

/* ---- the subcommands, ticktrace.c's table ---- */

#define TT_EXIT_USAGE 2

/* What an option's value is, for the completion (`ticktrace --complete`, complete.c). */
enum tt_arg_kind { TT_ARG_TEXT, TT_ARG_FILE, TT_ARG_DIR, TT_ARG_VALUES };
struct tt_cmd_arg {
	int opt; /* getopt's val */
	enum tt_arg_kind kind;
	const char *values; /* TT_ARG_VALUES: "a, b, c", the list its parser reads too */
};

struct tt_cmd {
	const char *name;
	int (*fn)(int argc, char **argv); /* argv[0] is the subcommand's name */
	const char *summary;
	const struct option *options;  /* its getopt table */
	const struct tt_cmd_arg *args; /* its options' values ({0} last); others: text */
	const char *operands;          /* a bash glob of the files it reads, or "program" */
};

int tt_cmd_convert(int argc, char **argv);
int tt_cmd_info(int argc, char **argv);
int tt_cmd_open(int argc, char **argv);
int tt_cmd_record(int argc, char **argv);
int tt_cmd_report(int argc, char **argv);
int tt_cmd_spikes(int argc, char **argv);
int tt_cmd_flame(int argc, char **argv);
int tt_cmd_lines(int argc, char **argv);
int tt_cmd_diff(int argc, char **argv);
extern const struct option tt_convert_options[], tt_info_options[], tt_open_options[],
	tt_rec_options[], tt_report_options[], tt_spikes_options[], tt_flame_options[],
	tt_lines_options[], tt_diff_options[];
extern const struct tt_cmd_arg tt_convert_args[], tt_info_args[], tt_open_args[], tt_rec_args[],
	tt_report_args[], tt_spikes_args[], tt_flame_args[], tt_lines_args[], tt_diff_args[];

/* `ticktrace --complete [CMD [OPTION]]`, for the bash completion: the commands; a
 * command's operands ("@operands GLOB") and options, one a line with what its value is
 * (flag, text, file, dir, values); an option's values. */
int tt_cmd_complete(const struct tt_cmd *cmds, size_t n, int argc, char **argv, FILE *out);

/* options.c: a usage error (msg, the usage's first line and "see ticktrace CMD --help",
 * on stderr): TT_EXIT_USAGE; --threshold TIME (global) or --thresholds FILE, 0 or -1
 * (a TIME option is read by tt_an_parse_duration, as the runtime's settings are: "--from
 * 1.5" or "nan" is refused); the position of `name` in a list "a, b, c", or -1; whether
 * a path ends with `suffix` (formats by extension). */
int tt_usage_error(const char *usage, const char *msg);
/* A count option's decimal value from min to max (both tools' longs differ: Windows'
 * are 32 bits); false for anything else ("-3", "4x", beyond max). */
bool tt_count_option(const char *arg, uint64_t min, uint64_t max, uint64_t *value);
int tt_threshold_option(bool global, const char *arg, struct tt_thresholds *th);
/* --from TIME (from) or --to TIME into the filter's window; 0, or -1 for a TIME that
 * is not one. */
int tt_window_option(bool from, const char *arg, struct tt_filter *f);
int tt_value_index(const char *list, const char *name);
bool tt_ends_with(const char *s, const char *suffix);

/* `ticktrace convert` as a function, for the command and the benchmark. */

enum tt_format {
	TT_FORMAT_AUTO = 0, /* from the output's extension: .pftrace, .perfetto-trace or
	                     * .pb is Perfetto's; JSON otherwise */
	TT_FORMAT_JSON,
	TT_FORMAT_PERFETTO,
};

/* "json", "perfetto": the format, or TT_FORMAT_AUTO for an unknown name. */
enum tt_format tt_format_named(const char *name);

struct tt_convert_opts {
	char *const *inputs;
	size_t ninputs;
	const char *output; /* "-": stdout */
	enum tt_format format;
	bool force;         /* replace an existing output file */
	bool quiet;         /* no summary line (warnings are still printed) */
	bool source;        /* JSON: file and line on every slice and instant */
	struct tt_filter filter; /* all zero: everything */
	bool spikes;             /* mark spikes in the output */
	struct tt_thresholds thresholds; /* and theirs, besides those in the code */
	const char *debug_dir;   /* searched for debug info first (NULL: the system's only) */
	uint64_t json_limit;     /* JSON larger than this gets a warning (0: TT_JSON_VIEWER_LIMIT) */
	/* --offset HOST=TIME: the files of host offset_hosts[i] moved by offset_ns[i] */
	const char **offset_hosts;
	int64_t *offset_ns;
	size_t noffsets;
	bool align_flows;        /* --align flows: machines placed by their flows (report/align.c) */
	enum tt_packing compress; /* Perfetto: packets deflated in bundles (tt_perfetto_compress) */
	uint64_t split;          /* > 0: shards OUTPUT.0001.EXT ... of at most this many slices */
	unsigned shard;          /* with split, > 0: that shard (from 1) alone, into OUTPUT */
	unsigned *nshards;       /* with split: how many shards there are (may be NULL) */
};

/* What the Perfetto UI loads in a browser tab: trace_processor keeps ~600 bytes of
 * memory a slice, and a tab holds about this many. */
#define TT_UI_SLICE_LIMIT UINT64_C(3000000)

/* What a JSON trace viewer loads: Perfetto's and chrome://tracing's importers read
 * the file as one JavaScript string, and V8 strings stop at 2^29 - 24 characters. */
#define TT_JSON_VIEWER_LIMIT ((UINT64_C(1) << 29) - 24)

/* Reads, decodes and writes; 0, or -1 after reporting the problem, with no output
 * file left behind. `sum` (may be NULL) receives the totals. */
int tt_convert(const struct tt_convert_opts *opts, struct tt_summary *sum);

/* `ticktrace info` as a function. */

/* ns as seconds with nine decimals ("1.500000000 s"); an offset between two clocks,
 * its sign always said ("+1.500000000 s") */
void tt_print_seconds(FILE *out, int64_t ns);
void tt_print_offset(FILE *out, int64_t ns);

/* Describes each raw file on `out`: header, clock, process, threads with their event,
 * dropped, unmatched and clamped counts, and the max_sites (0: all) most used call
 * sites with their uses. 0, or -1 after reporting why a file cannot be read. */
int tt_info(char *const *paths, size_t n, size_t max_sites, const char *debug_dir, FILE *out);

/* The call sites info lists unless told otherwise. */
#define TT_INFO_SITES 25

/* `ticktrace open`: tt_serve_once for a trace (Chrome JSON, Perfetto protobuf), for a raw
 * file after converting it to Perfetto's format in a temporary directory (removed
 * when done, named with debug info from debug_dir first); anything else is refused
 * (-1, reported). A raw file of more slices than the Perfetto UI loads is served in
 * shards of TT_UI_SLICE_LIMIT (convert --split): `shard` (from 1; 0: the first). */
int tt_open_trace(char *path, int port, const char *debug_dir, unsigned shard, FILE *out);

/* `ticktrace record`: runs a program with functions patched to record their calls. */

struct tt_rec_opts {
	char **patterns;    /* -f: globs over symbol names, or 0xADDR */
	size_t npatterns;
	const char *out;    /* the raw file (TICKTRACE_OUT; %p: the process id) */
	const char *convert; /* after the run, convert to this file; NULL: say how */
	bool force;         /* the conversion may replace an existing file */
	bool follow;        /* the programs it starts are traced too, each into its own file */
	const char *min_dur; /* TICKTRACE_MIN_DUR for them; NULL: the environment's */
	bool list;          /* --list: say what -f would patch, run nothing past the loader */
	const char *debug_dir; /* --debug-dir: searched for debug files first, as convert's */
	char **argv;        /* the program and its arguments */
};

/* Runs the program and waits for it; its exit status (128 + signal when killed), 127
 * when it was not found and 126 when it could not be run (as a shell), or 1 when
 * ticktrace failed (no detour library, the trace not converted); each said on stderr. */
int tt_rec_run(const struct tt_rec_opts *opts);

/* `ticktrace flame` as a function. */
struct tt_flame_opts {
	char *const *inputs;
	size_t ninputs;
	const char *output; /* "-": stdout */
	bool svg;           /* an SVG; otherwise folded stacks */
	bool force, quiet;
	struct tt_filter filter;
	const char *debug_dir;
};

/* Writes the flame graph of the inputs' slices (self time by path of scopes and
 * functions, per thread name). 0, or -1 after reporting the problem, with no output
 * file left behind. */
int tt_flame(const struct tt_flame_opts *o);

/* The flat profile of the inputs; 0, or -1 after reporting the problem. */
int tt_report(struct tt_report_opts *o);
/* The spikes of the inputs; 0, or -1 after reporting the problem. */
int tt_spikes(struct tt_report_opts *o);

/* `ticktrace diff` as a function: compares o's sides (tt_diff_compare) and writes the
 * comparison to `output` ("-": stdout), with its summary line on stderr unless quiet.
 * 0, TT_EXIT_REGRESSED when o->fail_above is set and a scope regressed beyond it,
 * else TT_EXIT_UNCOMPARED when it is set and the comparison could not judge what it
 * gates (d.uncompared: a side with no scope, none in common, or scopes gone without
 * o->allow_gone), or -1 after reporting the problem, with no output file left behind. */
#define TT_EXIT_REGRESSED 3
#define TT_EXIT_UNCOMPARED 4
int tt_diff_run(const struct tt_diff_opts *o, const char *output, bool force, bool quiet);

/* `ticktrace lines` as a function. */

/* Prints each bucket of a profile file from tt_profile_write with its function and
 * file:line. 0, or -1 after reporting the problem. */
int tt_lines(const char *path, const char *debug_dir, FILE *out);

#endif
