/* The demo trace through `ticktrace convert` and then a real consumer:
 *   test_consumers devtools CHECK.mjs        the DevTools Performance panel's trace
 *     engine (consumers/check-devtools.mjs): no error or warning, and the expected
 *     slices, flows and counters on the expected threads;
 *   test_consumers perfetto CHECK.py SCHEMA  the .pftrace decoded by protoc with the
 *     project's schema (consumers/check-perfetto.py) holds the same slices,
 *     counters, flows and names as the JSON of the same file, whole and filtered to
 *     a window.
 * Exit 77 (skipped) without node, the engine (`npm ci` in tests/consumers), python3
 * or protoc. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tt_check.h"
#include "tt_demo.h"

static const char devtools_expect[] =
	"{\"slices\": {\"101\": [\"main 0\", \"child 1\", \"flow_out 2\", \"next 0\", \"0x401000 1\","
	" \"flow_in 2\"], \"102\": [\"work 0\", \"flow_in 1\", \"flow_out 1\"]},"
	" \"flows\": [[\"flow_out@101\", \"flow_in@102\"], [\"flow_out@102\", \"flow_in@101\"]],"
	" \"counters\": {\"queue_depth\": 1}}";

/* Runs argv; its exit status, or 1. */
static int tt_spawn(char *const *argv)
{
	pid_t pid = fork();
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* Converts the demo raw file to `out`, all of it or a window of it; 0 or -1. */
static int tt_convert_demo(const char *in, const char *out, bool window)
{
	struct tt_run r;
	if (window)
		TT_RUN(&r, "convert", "--force", in, "-o", out, "--from", "5us", "--to", "6us");
	else
		TT_RUN(&r, "convert", in, "-o", out);
	free(r.out);
	if (r.status != 0)
		fprintf(stderr, "ticktrace convert %s failed (%d):\n%s", out, r.status, r.err);
	return r.status == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	bool devtools = argc == 3 && strcmp(argv[1], "devtools") == 0;
	bool perfetto = argc == 4 && strcmp(argv[1], "perfetto") == 0;
	if (!devtools && !perfetto) {
		fprintf(stderr, "usage: test_consumers devtools CHECK.mjs | perfetto CHECK.py SCHEMA\n");
		return 2;
	}
	const char *runner = devtools ? "node" : "python3";
	char probe[64];
	snprintf(probe, sizeof(probe), "%s --version >/dev/null 2>&1", runner);
	if (system(probe) != 0) {
		printf("skip: %s is not installed\n", runner);
		return 77;
	}
	char dir[64], in[128], json[128], pf[128], exp[128];
	tt_tmpdir(dir, sizeof(dir));
	snprintf(in, sizeof(in), "%s/demo.ttr", dir);
	snprintf(json, sizeof(json), "%s/demo.json", dir);
	snprintf(pf, sizeof(pf), "%s/demo.pftrace", dir);
	snprintf(exp, sizeof(exp), "%s/expect.json", dir);
	int status = 1;
	if (tt_demo_write(in) < 0 ||
	    (devtools && tt_tw_save(exp, devtools_expect, strlen(devtools_expect)) < 0)) {
		fprintf(stderr, "cannot write the test files in %s\n", dir);
	} else if (devtools) {
		char *node_argv[] = {"node", argv[2], json, "--expect", exp, NULL};
		if (tt_convert_demo(in, json, false) == 0)
			status = tt_spawn(node_argv);
	} else {
		/* the whole trace, then a window (the filter holds back begins for Perfetto) */
		char *py_argv[] = {"python3", argv[2], pf, argv[3], json, NULL};
		status = 0;
		for (int window = 0; window < 2 && status == 0; window++)
			status = tt_convert_demo(in, json, window) == 0 &&
						 tt_convert_demo(in, pf, window) == 0 ?
					 tt_spawn(py_argv) :
					 1;
	}
	tt_rmdir(dir);
	return status;
}
