/* `ticktrace record`: runs a program with the detour library preloaded (which pulls
 * in the runtime), the functions to patch in TICKTRACE_DETOUR, then converts its raw
 * file or says how. */
#include "cmd.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


/* The detour library: TICKTRACE_DETOUR_LIB, else the build tree's when this command
 * is the build tree's, else the installed one. */
static const char *tt_record_library(void)
{
	const char *lib = getenv("TICKTRACE_DETOUR_LIB");
	if (lib && *lib)
		return lib;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		if (strcmp(self, TT_RECORD_TOOL_BUILD) == 0)
			return TT_RECORD_LIB_BUILD;
	}
	return TT_RECORD_LIB_INSTALL;
}

/* The raw file's path: `out` with %p replaced by the pid (as the runtime does). */
static void tt_record_path(const char *out, pid_t pid, char *path, size_t cap)
{
	size_t n = 0;
	for (const char *p = out; *p && n + 1 < cap; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			n += (size_t)snprintf(path + n, cap - n, "%d", (int)pid);
			if (n >= cap)
				n = cap - 1;
			p++;
		} else {
			path[n++] = *p;
		}
	}
	path[n] = 0;
}

/* In the child: the environment, then the program. */
static _Noreturn void tt_record_exec(const struct tt_record_opts *o, const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *preload = NULL;
	char *patterns = NULL;
	size_t len = 1;
	for (size_t i = 0; i < o->npatterns; i++)
		len += strlen(o->patterns[i]) + 1;
	patterns = calloc(1, len);
	if (asprintf(&preload, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "") < 0 ||
	    !patterns) {
		fprintf(stderr, "ticktrace: record: out of memory\n");
		_exit(127);
	}
	for (size_t i = 0; i < o->npatterns; i++) {
		strcat(patterns, o->patterns[i]);
		strcat(patterns, "\n");
	}
	setenv("LD_PRELOAD", preload, 1);
	if (o->npatterns)
		setenv("TICKTRACE_DETOUR", patterns, 1);
	else
		unsetenv("TICKTRACE_DETOUR");
	setenv("TICKTRACE_OUT", o->out, 1);
	execvp(o->argv[0], o->argv);
	fprintf(stderr, "ticktrace: record: cannot run %s: %s\n", o->argv[0], strerror(errno));
	_exit(127);
}

int tt_record(const struct tt_record_opts *o)
{
	const char *lib = tt_record_library();
	if (access(lib, R_OK) != 0) {
		fprintf(stderr, "ticktrace: record: no detour library at %s (%s); set "
			"TICKTRACE_DETOUR_LIB\n", lib, strerror(errno));
		return 1;
	}
	/* Ctrl-C is for the program: this waits for it, then converts what it wrote. */
	struct sigaction ignore = {.sa_handler = SIG_IGN}, old_int, old_quit;
	sigaction(SIGINT, &ignore, &old_int);
	sigaction(SIGQUIT, &ignore, &old_quit);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "ticktrace: record: cannot fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		tt_record_exec(o, lib);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "ticktrace: record: waiting for %s: %s\n", o->argv[0], strerror(errno));
			return 1;
		}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (WIFSIGNALED(status))
		fprintf(stderr, "ticktrace: record: %s was killed by signal %d\n", o->argv[0],
			WTERMSIG(status));
	if (rc == 127 && WIFEXITED(status))
		return rc; /* not run (said so), or its own 127 */
	char path[PATH_MAX];
	tt_record_path(o->out, pid, path, sizeof path);
	/* The runtime writes a file of the user's there (replacing what was planted);
	 * a link, or another user's file, is no trace of this run: never read. */
	struct stat st;
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		fprintf(stderr, "ticktrace: record: %s wrote no trace at %s (TICKTRACE=0, or it "
			"died before writing)%s\n", o->argv[0], path,
			lstat(path, &st) == 0 ? "; the file there is not one it wrote" : "");
		return rc ? rc : 1;
	}
	if (!o->convert) {
		fprintf(stderr, "ticktrace: recorded %s; see it with: ticktrace convert %s -o trace.pftrace\n",
			path, path);
		return rc;
	}
	char *inputs[] = {path};
	struct tt_convert_opts c = {.inputs = inputs, .ninputs = 1, .output = o->convert,
				    .force = o->force, .thresholds.global = TT__NO_THRESHOLD};
	if (tt_convert(&c, NULL) != 0)
		return rc ? rc : 1;
	return rc;
}
