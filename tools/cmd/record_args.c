/* `ticktrace record`'s usage and options; what it runs is record.c. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static const char tt_rec_usage[] =
	"usage: ticktrace record [-f PATTERN]... [-o RUN.ttr] [-c OUTPUT] [--no-follow] [--min-dur TIME]\n"
	"                        -- PROGRAM [ARGS]\n"
	"       ticktrace record --list -f PATTERN... -- PROGRAM [ARGS]\n"
	"\n"
	"Runs PROGRAM with ticktrace's detour library preloaded (LD_PRELOAD), which, before\n"
	"main, patches the entry of each function whose name matches a PATTERN, so that\n"
	"its calls are recorded as if it had been built with -finstrument-functions.\n"
	"Functions built with -fpatchable-function-entry=5 (or more) get a jump over their\n"
	"NOPs; the others have their first instructions moved to a trampoline. Those that\n"
	"cannot be patched safely are listed with the reason; the program runs on. With no\n"
	"-f, nothing is patched: the program records what its markup and hooks record.\n"
	"The programs it starts (shell scripts too) are traced alike, each process into a\n"
	"file of its own; what the patcher says is said once per program, and at the end\n"
	"one line names every file written (-c converts them all onto one timeline). A\n"
	"statically linked program (or script interpreter) cannot be traced: said so, it\n"
	"runs as it is. A process killed before it wrote its trace leaves its buffers in\n"
	"RUN.ttr.live (TICKTRACE_LIVE=1), read instead; SIGTERM to record goes on to it.\n"
	"Every event is kept, up to the run's memory budget (TICKTRACE_MEMORY, a quarter\n"
	"of the machine's; reaching it is said), unless TICKTRACE_BUFFER or TICKTRACE_MODE\n"
	"is set.\n"
	"\n"
	"  -f, --function PATTERN  a shell glob over the symbols of the program and its\n"
	"                          libraries ('work_*', 'ZSTD_compress*'), or 0xADDR, an\n"
	"                          address of the program (as nm prints it) where a\n"
	"                          function with no symbol starts; repeatable. A\n"
	"                          stripped program's names come from its dynamic\n"
	"                          symbols, its .gnu_debugdata (MiniDebugInfo), its\n"
	"                          debug file (debuglink or build-id, beside it, in\n"
	"                          .debug/ or /usr/lib/debug); the functions still\n"
	"                          unnamed are those its .eh_frame gives, named\n"
	"                          PROGRAM+0xOFFSET as the converter names them\n"
	"      --debug-dir DIR     search DIR for debug files first (by build-id,\n"
	"                          DIR/.build-id/xx/yyyy.debug, and by debuglink,\n"
	"                          DIR/PROGRAM'S/DIRECTORY/LINK), to patch and to convert\n"
	"      --list              print what the patterns would patch (name, module,\n"
	"                          address in the file, size, or why not), one a line,\n"
	"                          and stop the program before its main (through\n"
	"                          `env NAME=VALUE... PROG`: PROG's)\n"
	"  -o, --output FILE       the raw file (default ticktrace-%p.ttr, %p: the pid;\n"
	"                          a directory, one there or DIR/: that default in it);\n"
	"                          without %p, the program's alone: every other\n"
	"                          process (however started: fork, posix_spawn, vfork,\n"
	"                          a shell) appends its pid (FILE.PID), and the image\n"
	"                          a process execs gets .execN before the extension\n"
	"  -c, --convert OUTPUT    then convert the run (every process's file) to OUTPUT\n"
	"                          (.json, .pftrace)\n"
	"      --force             the conversion may replace an existing OUTPUT\n"
	"      --no-follow         trace the program alone: what it runs (exec included:\n"
	"                          a script's `exec prog`) runs without ticktrace; its\n"
	"                          forks that do not exec still record\n"
	"      --min-dur TIME      a call that returns within TIME (500ns, 2us), having\n"
	"                          recorded nothing inside, is erased as it returns and\n"
	"                          counted for its function (TICKTRACE_MIN_DUR): `report`\n"
	"                          adds it up; default: every call kept\n"
	"  -h, --help              this text\n"
	"\n"
	"Exit status: the program's (128 + N if signal N killed it); as a shell's, 127 if\n"
	"it was not found, 126 if it could not be run; 1 if ticktrace failed (no detour\n"
	"library, or a program that exited 0 left no trace or one that could not be\n"
	"converted); 2 usage.\n";

enum { OPT_FORCE = 256, OPT_NO_FOLLOW, OPT_MIN_DUR, OPT_LIST, OPT_DEBUG_DIR };
const struct option tt_rec_options[] = {
	{"function", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
	{"convert", required_argument, NULL, 'c'},  {"force", no_argument, NULL, OPT_FORCE},
	{"no-follow", no_argument, NULL, OPT_NO_FOLLOW}, {"list", no_argument, NULL, OPT_LIST},
	{"min-dur", required_argument, NULL, OPT_MIN_DUR},
	{"debug-dir", required_argument, NULL, OPT_DEBUG_DIR},
	{"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
};
const struct tt_cmd_arg tt_rec_args[] = {
	{'o', TT_ARG_FILE, NULL},
	{'c', TT_ARG_FILE, NULL},
	{OPT_DEBUG_DIR, TT_ARG_DIR, NULL},
	{0, 0, NULL},
};

int tt_cmd_record(int argc, char **argv)
{
	const char *env_out = getenv(TT_ENV_OUT);
	struct tt_rec_opts o = {.out = env_out && *env_out ? env_out : TT_OUT_DEFAULT,
				   .follow = true};
	char **patterns = calloc((size_t)argc, sizeof(*patterns));
	int c, rc;
	if (!patterns)
		return 1;
	o.patterns = patterns;
	/* '+': options end at the program's name */
	while ((c = getopt_long(argc, argv, "+f:o:c:h", tt_rec_options, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!*optarg || strchr(optarg, '\n')) {
				rc = tt_usage_error(tt_rec_usage, "record: -f takes a pattern: one line, not empty");
				goto out;
			}
			patterns[o.npatterns++] = optarg;
			break;
		case 'o': o.out = optarg; break;
		case 'c': o.convert = optarg; break;
		case OPT_FORCE: o.force = true; break;
		case OPT_NO_FOLLOW: o.follow = false; break;
		case OPT_MIN_DUR: {
			int64_t ns;
			if (tt_an_parse_duration(optarg, &ns) < 0) {
				rc = tt_usage_error(tt_rec_usage, "record: --min-dur takes a duration (500ns, 2us, 1ms)");
				goto out;
			}
			o.min_dur = optarg;
			break;
		}
		case OPT_LIST: o.list = true; break;
		case OPT_DEBUG_DIR: o.debug_dir = optarg; break;
		case 'h': fputs(tt_rec_usage, stdout); rc = 0; goto out;
		default: rc = tt_usage_error(tt_rec_usage, NULL); goto out;
		}
	}
	if (optind >= argc) {
		rc = tt_usage_error(tt_rec_usage, "record: no program to run");
		goto out;
	}
	if (o.list && !o.npatterns) {
		rc = tt_usage_error(tt_rec_usage, "record: --list lists what -f patches: give one");
		goto out;
	}
	if (o.list && tt_stdout_needed(NULL) < 0) { /* (the list, which the program prints) */
		rc = 1;
		goto out;
	}
	o.argv = argv + optind;
	rc = tt_rec_run(&o);
out:
	free(patterns);
	return rc;
}
