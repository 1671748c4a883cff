#include "child.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int tt_bench_child(const char *env, const char *args, int n, double *figures)
{
	char cmd[8400];
	snprintf(cmd, sizeof cmd, "TICKTRACE_OUT=/dev/null %s /proc/%d/exe %s", env, (int)getpid(), args);
	FILE *child = popen(cmd, "r");
	int got = 0;
	while (child && got < n && fscanf(child, "%lf", &figures[got]) == 1)
		got++;
	if (child && pclose(child) == 0 && got == n)
		return 0;
	fprintf(stderr, "ticktrace-bench: the child %s (%s) failed\n", args, env);
	return -1;
}

const char *tt_bench_dir(void)
{
	const char *dir = getenv("TICKTRACE_BENCH_DIR");
	return dir ? dir : "/var/tmp";
}
