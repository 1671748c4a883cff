#include "child.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char tt_bench_why_text[512];

void tt_bench_say(const char *format, ...)
{
	va_list args;
	va_start(args, format);
	vsnprintf(tt_bench_why_text, sizeof tt_bench_why_text, format, args);
	va_end(args);
	fprintf(stderr, "ticktrace-bench: %s\n", tt_bench_why_text);
}

const char *tt_bench_why(void)
{
	return tt_bench_why_text;
}

void tt_bench_why_clear(void)
{
	tt_bench_why_text[0] = 0;
}

/* The child's stderr, in `said`, passed on to ours; its last line of the benchmark's
 * own ("ticktrace-bench: ..."), else its last line, in `last`. */
static void tt_bench_pass_on(FILE *said, char *last, size_t size)
{
	char line[512];
	int own = 0;
	last[0] = 0;
	rewind(said);
	while (fgets(line, sizeof line, said)) {
		fputs(line, stderr);
		line[strcspn(line, "\n")] = 0;
		int mine = strncmp(line, "ticktrace-bench: ", 17) == 0;
		if (line[0] && (mine || !own))
			snprintf(last, size, "%s", mine ? line + 17 : line);
		own |= mine;
	}
}

int tt_bench_child(const char *env, const char *args, int n, double *figures)
{
	char cmd[8400], path[] = "/tmp/ticktrace-bench-said-XXXXXX", last[512];
	int fd = mkstemp(path);
	/* (the child's stderr into a file of ours: what it said, kept for why it failed) */
	snprintf(cmd, sizeof cmd, "%s%s%sTICKTRACE_OUT=/dev/null %s /proc/%d/exe %s", fd >= 0 ? "exec 2>'" : "",
		 fd >= 0 ? path : "", fd >= 0 ? "'; " : "", env, (int)getpid(), args);
	FILE *child = popen(cmd, "r");
	int got = 0;
	while (child && got < n && fscanf(child, "%lf", &figures[got]) == 1)
		got++;
	int status = child ? pclose(child) : -1;
	FILE *said = fd >= 0 ? fdopen(fd, "r") : NULL;
	last[0] = 0;
	if (said) {
		tt_bench_pass_on(said, last, sizeof last);
		fclose(said);
	}
	if (fd >= 0)
		unlink(path);
	if (status == 0 && got == n)
		return 0;
	if (!last[0] && status < 0)
		snprintf(last, sizeof last, "not started");
	else if (!last[0] && WIFEXITED(status) && WEXITSTATUS(status))
		snprintf(last, sizeof last, "exit status %d", WEXITSTATUS(status));
	else if (!last[0] && WIFSIGNALED(status))
		snprintf(last, sizeof last, "killed by signal %d", WTERMSIG(status));
	else if (!last[0])
		snprintf(last, sizeof last, "%d of its %d figures printed", got, n);
	tt_bench_say("the child %s (%s) failed: %s", args, env, last);
	return -1;
}

const char *tt_bench_dir(void)
{
	const char *dir = getenv("TICKTRACE_BENCH_DIR");
	return dir ? dir : "/var/tmp";
}
