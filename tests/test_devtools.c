/* The demo trace through `ticktrace convert` and then the DevTools Performance
 * panel's trace engine (consumers/check-devtools.mjs): no error or warning, and the
 * expected slices, flows and counters on the expected threads.
 * Usage: test_devtools CHECK_SCRIPT. Exit 77 (skipped) without node or without the
 * engine installed (`npm ci` in tests/consumers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tt_check.h"
#include "tt_demo.h"

static const char expect[] =
	"{\"slices\": {\"101\": [\"main 0\", \"child 1\", \"flow_out 2\", \"next 0\", \"0x401000 1\","
	" \"flow_in 2\"], \"102\": [\"work 0\", \"flow_in 1\", \"flow_out 1\"]},"
	" \"flows\": [[\"flow_out@101\", \"flow_in@102\"], [\"flow_out@102\", \"flow_in@101\"]],"
	" \"counters\": {\"queue_depth\": 1}}";

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_devtools CHECK_SCRIPT\n");
		return 2;
	}
	if (system("node --version >/dev/null 2>&1") != 0) {
		printf("skip: node is not installed\n");
		return 77;
	}
	char dir[64], in[128], out[128], exp[128];
	tt_tmpdir(dir, sizeof(dir));
	snprintf(in, sizeof(in), "%s/demo.ttr", dir);
	snprintf(out, sizeof(out), "%s/demo.json", dir);
	snprintf(exp, sizeof(exp), "%s/expect.json", dir);
	int status = 1;
	struct tt_run r = {0};
	if (tt_demo_write(in) < 0 || tt_tw_save(exp, expect, strlen(expect)) < 0) {
		fprintf(stderr, "cannot write the test files in %s\n", dir);
		goto done;
	}
	TT_RUN(&r, "convert", in, "-o", out);
	if (r.status != 0) {
		fprintf(stderr, "ticktrace convert failed (%d):\n%s", r.status, r.err);
		goto done;
	}
	pid_t pid = fork();
	if (pid == 0) {
		execlp("node", "node", argv[1], out, "--expect", exp, (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	status = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
done:
	free(r.out);
	tt_rmdir(dir);
	return status;
}
