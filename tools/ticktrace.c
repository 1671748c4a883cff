/* The `ticktrace` command: subcommands over raw files (.ttr), each in cmd/ with its
 * usage and options (as perf's builtin-*.c); this file is main and their table.
 * Exit status: 0 success, 1 bad input or a failed conversion, 2 usage. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"

/* What a command reads: raw files (a live one too), or for open a converted trace. */
#define TT_RUNS "*.@(ttr|live)"

static const struct tt_cmd tt_cmds[] = {
	{"convert", tt_cmd_convert, "raw files (.ttr) to a trace that Perfetto and chrome://tracing open",
	 tt_convert_options, tt_convert_args, TT_RUNS},
	{"info", tt_cmd_info, "what raw files hold: clock, process, threads, call sites",
	 tt_info_options, tt_info_args, TT_RUNS},
	{"open", tt_cmd_open, "(Linux only) serve a converted trace once to the Perfetto UI",
	 tt_open_options, tt_open_args, "*.@(ttr|live|json|pftrace|perfetto-trace|pb)"},
	{"record", tt_cmd_record, "(Linux only) run a program, recording the calls of its functions",
	 tt_rec_options, tt_rec_args, "program"},
	{"report", tt_cmd_report, "the flat profile: calls, total, self and children time, percentiles",
	 tt_report_options, tt_report_args, TT_RUNS},
	{"diff", tt_cmd_diff, "two runs' flat profiles compared, significant changes marked",
	 tt_diff_options, tt_diff_args, TT_RUNS},
	{"spikes", tt_cmd_spikes, "every scope that lasted longer than its threshold, with its stack",
	 tt_spikes_options, tt_spikes_args, TT_RUNS},
	{"flame", tt_cmd_flame, "a flame graph of where the time went: SVG, or folded stacks",
	 tt_flame_options, tt_flame_args, TT_RUNS},
	{"lines", tt_cmd_lines, "a self-profile (tt_profile_write) by bucket: function and file:line",
	 tt_lines_options, tt_lines_args, "*"},
};
#define TT_NCMDS (sizeof(tt_cmds) / sizeof(tt_cmds[0]))

static void tt_usage(FILE *out)
{
	fputs("usage: ticktrace <command> [options] [files]\n\ncommands:\n", out);
	for (size_t i = 0; i < TT_NCMDS; i++)
		fprintf(out, "  %-9s %s\n", tt_cmds[i].name, tt_cmds[i].summary);
	fputs("  help      this text\n"
	      "\n"
	      "'ticktrace <command> --help' describes a command; 'ticktrace --version' prints\n"
	      "the version. Manual pages (Linux's install): ticktrace(1), and ticktrace(3) for\n"
	      "the C API.\n", out);
}

static int tt_main(int argc, char **argv)
{
	if (argc < 2) {
		tt_usage(stderr);
		return TT_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	/* `ticktrace help CMD` is `ticktrace CMD --help` */
	if (strcmp(cmd, "help") == 0 && argc == 3)
		for (size_t i = 0; i < TT_NCMDS; i++)
			if (strcmp(argv[2], tt_cmds[i].name) == 0)
				return tt_cmds[i].fn(2, (char *[]){argv[2], "--help", NULL});
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		tt_usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
		puts("ticktrace " TT_VERSION);
		return 0;
	}
	if (strcmp(cmd, "--complete") == 0) /* for the bash completion; not in the usage */
		return tt_cmd_complete(tt_cmds, TT_NCMDS, argc - 2, argv + 2, stdout);
	/* getopt sees the subcommand as its program name. */
	for (size_t i = 0; i < TT_NCMDS; i++)
		if (strcmp(cmd, tt_cmds[i].name) == 0)
			return tt_cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "ticktrace: unknown command '%s'\nsee ticktrace help\n", cmd);
	return TT_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	tt_standard_fds();
	tt_os_utf8_args(&argc, &argv);
	return tt_stdout_finish(tt_main(argc, argv));
}
