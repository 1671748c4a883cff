/* ticktrace-bench.exe's children (../child.h), as Linux's: this program again, through
 * cmd.exe, with TICKTRACE_OUT=NUL and then each of `env`'s "VAR=value" set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "../child.h"

static int tt_bench_children;

int tt_bench_children_started(void)
{
	return tt_bench_children;
}

int tt_bench_child(const char *env, const char *args, int n, double *figures)
{
	tt_bench_children++;
	char self[MAX_PATH], cmd[8400], sets[4200] = "", vars[4200];
	GetModuleFileNameA(NULL, self, sizeof self);
	snprintf(vars, sizeof vars, "%s", env);
	size_t len = 0;
	for (char *save, *var = strtok_r(vars, " ", &save); var; var = strtok_r(NULL, " ", &save))
		len += (size_t)snprintf(sets + len, len < sizeof sets ? sizeof sets - len : 0, "set %s&& ", var);
	/* (cmd.exe's own quoting: the whole line in quotes) */
	snprintf(cmd, sizeof cmd, "\"set TICKTRACE_OUT=NUL&& %s\"%s\" %s\"", sets, self, args);
	FILE *child = _popen(cmd, "r");
	int got = 0;
	while (child && got < n && fscanf(child, "%lf", &figures[got]) == 1)
		got++;
	if (child && _pclose(child) == 0 && got == n)
		return 0;
	fprintf(stderr, "ticktrace-bench: the child %s (%s) failed\n", args, env);
	return -1;
}

const char *tt_bench_dir(void)
{
	const char *dir = getenv("TICKTRACE_BENCH_DIR");
	if (!dir)
		dir = getenv("TEMP");
	return dir ? dir : ".";
}
