/* The subcommands ticktrace.exe leaves out (ticktrace.c's table lists them on every
 * system): asked for, each says why and what to run instead. */
#include <stdio.h>

#include "cmd.h"

const struct option tt_open_options[] = {{0}}, tt_rec_options[] = {{0}};
const struct tt_cmd_arg tt_open_args[] = {{0}}, tt_rec_args[] = {{0}};

static int tt_absent(const char *name, const char *why)
{
	fprintf(stderr, "ticktrace %s: not in ticktrace.exe: %s\n", name, why);
	return TT_EXIT_USAGE;
}

int tt_cmd_open(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return tt_absent("open", "its server for ui.perfetto.dev is Linux's (sockets, sendfile); "
				 "convert the run and open the trace in https://ui.perfetto.dev");
}

int tt_cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return tt_absent("record", "it patches a Linux program's ELF code, its library preloaded "
				   "(LD_PRELOAD); on Windows, build with -finstrument-functions or TT_SCOPE and "
				   "link libticktrace");
}
