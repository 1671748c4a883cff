/* Long runs that fork, or whose TICKTRACE_OUT is relative.
 * Each test starts tt_longrun_prog (path in argv[1]) with the mode in its
 * environment, then reads the raw file it left with the tools' reader and
 * converts it with the ticktrace command ($TICKTRACE); see test_longrun.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt_check.h"
#include "read/read.h"
#include "tt_edges.h"
#include "longrun_support.h"

/* A relative TICKTRACE_OUT names a file in the directory the program started in,
 * wherever it is when the file is written, in every mode. */
static void test_relative_out_where_the_run_began(void **state)
{
	(void)state;
	char dir[64], path[128], elsewhere[160], moved[192], here[4096];
	tt_lr_tmpfile(dir, sizeof dir, path, sizeof path);
	snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", dir);
	snprintf(moved, sizeof moved, "%s/run.ttr", elsewhere);
	assert_int_equal(mkdir(elsewhere, 0700), 0);
	assert_non_null(getcwd(here, sizeof here));
	static const char *const modes[] = {"TICKTRACE_MODE=stop", "TICKTRACE_MODE=ring", "TICKTRACE_MODE=stream"};
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		struct tt_lr_child c;
		/* (The child starts in the test's directory.) */
		assert_int_equal(chdir(dir), 0);
		tt_lr_start(&c, TT_LR_SETTINGS(modes[i], "TICKTRACE_OUT=run.ttr", "TICKTRACE_LIVE=0"),
			    TT_LR_SETTINGS("moves", elsewhere, "1000"));
		assert_int_equal(chdir(here), 0);
		assert_int_equal(tt_lr_wait(&c), 0);
		if (access(moved, F_OK) == 0)
			fail_msg("%s: the file went to %s", modes[i], moved);
		struct tt_file f;
		assert_int_equal(tt_file_open(&f, path), 0);
		struct tt_lr_seq s;
		tt_lr_walk_seq(tt_lr_only_thread(&f), &s, false);
		assert_int_equal(s.kept, 2000);
		tt_file_close(&f);
		unlink(path);
	}
	tt_rmdir(dir);
}

/* ---- fork ---- */

/* The parent's events in its file only, the child's in its own, whole, whether it
 * leaves by exit or by _exit (`leave`: tt_longrun_prog's HOW); both convert, merged into one timeline.
 * `out_pattern` is TICKTRACE_OUT relative to the test's directory; the child's file is
 * found by its pid. */
static void tt_lr_check_fork(const char *mode, const char *out_pattern, const char *child_name,
			     const char *extra, const char *leave)
{
	enum { EVENTS = 30000 };
	char dir[64], unused[128], setting[192], mode_setting[64], line[64];
	tt_lr_tmpfile(dir, sizeof dir, unused, sizeof unused);
	snprintf(setting, sizeof setting, "TICKTRACE_OUT=%s/%s", dir, out_pattern);
	snprintf(mode_setting, sizeof mode_setting, "TICKTRACE_MODE=%s", mode);
	struct tt_lr_child c;
	tt_lr_start(&c, TT_LR_SETTINGS(mode_setting, setting, extra), TT_LR_SETTINGS("fork", "30000", leave));
	assert_non_null(fgets(line, sizeof line, c.out));
	pid_t parent = c.pid;
	assert_int_equal(tt_lr_wait(&c), 0);
	int child = atoi(line);
	assert_true(child > 0);

	char paths[2][256];
	snprintf(paths[0], sizeof paths[0], "%s/%s", dir, out_pattern);
	char *p = strstr(paths[0], "%p");
	if (p)
		snprintf(p, sizeof paths[0] - (size_t)(p - paths[0]), "%d.ttr", (int)parent);
	snprintf(paths[1], sizeof paths[1], "%s/", dir);
	snprintf(paths[1] + strlen(paths[1]), sizeof paths[1] - strlen(paths[1]), child_name, child);
	for (int i = 0; i < 2; i++) {
		struct tt_file f;
		assert_int_equal(tt_file_open(&f, paths[i]), 0);
		assert_false(f.cut_short);
		struct tt_lr_seq s;
		tt_lr_walk_seq(tt_lr_only_thread(&f), &s, false);
		assert_int_equal(s.number, i == 0 ? 1 : 2);
		assert_int_equal(s.kept, i == 0 ? 2 * EVENTS : EVENTS);
		assert_int_equal(f.process.pid, i == 0 ? (uint32_t)parent : (uint32_t)child);
		if (i == 1)
			assert_int_equal(f.process.ppid, parent);
		tt_file_close(&f);
	}
	char out[160];
	snprintf(out, sizeof out, "%s/all.json", dir);
	struct tt_run r;
	TT_RUN(&r, "convert", paths[0], paths[1], "-o", out);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, " 90000 events, "));
	/* (The instants of a getenv that ticktrace called are dropped, as many as it
	 * made calls.) */
	if (strcmp(leave, "getenv") != 0)
		assert_non_null(strstr(r.err, " 0 dropped, "));
	assert_null(strstr(r.err, "crashed"));
	free(r.out);
	tt_rmdir(dir);
}

static void test_fork_each_process_its_own_file(void **state)
{
	(void)state;
	tt_lr_check_fork("stop", "%p.ttr", "%d.ttr", "TICKTRACE_LIVE=0", "exit");
	tt_lr_check_fork("ring", "%p.ttr", "%d.ttr", "TICKTRACE_LIVE=0", "exit");
	tt_lr_check_fork("stream", "%p.ttr", "%d.ttr", "TICKTRACE_LIVE=0", "exit");
	/* Without %p, the child's file is the name followed by its pid. */
	tt_lr_check_fork("stop", "run.ttr", "run.ttr.%d", "TICKTRACE_LIVE=0", "exit");
	tt_lr_check_fork("stream", "run.ttr", "run.ttr.%d", "TICKTRACE_LIVE=0", "exit");
	/* The child maps a live file of its own over the parent's buffers. */
	tt_lr_check_fork("stop", "%p.ttr", "%d.ttr", "TICKTRACE_LIVE=1", "exit");
	tt_lr_check_fork("ring", "run.ttr", "run.ttr.%d", "TICKTRACE_LIVE=1", "exit");
}

/* A forked child that leaves by _exit, as a child should: its run ends first, as
 * before an exec. */
static void test_fork_child_leaves_by_exit(void **state)
{
	(void)state;
	tt_lr_check_fork("stop", "%p.ttr", "%d.ttr", "TICKTRACE_LIVE=0", "_exit");
	tt_lr_check_fork("ring", "%p.ttr", "%d.ttr", "TICKTRACE_LIVE=0", "_exit");
	tt_lr_check_fork("stream", "%p.ttr", "%d.ttr", "TICKTRACE_LIVE=0", "_exit");
	tt_lr_check_fork("ring", "run.ttr", "run.ttr.%d", "TICKTRACE_LIVE=1", "_exit");
}

/* The program's own getenv records while fork runs, as bash's does under `ticktrace
 * record -f '*'`: ticktrace's reset of the child reaches it (for the live file's name).
 * That event must not register the child's thread halfway, with a chunk of the
 * parent's mapping that the child's own live file then replaced (its header zeroed:
 * the trace at exit failed with EFAULT); it is dropped and counted. */
static void test_fork_child_reset_reaches_program(void **state)
{
	(void)state;
	tt_lr_check_fork("stop", "run.ttr", "run.ttr.%d", "TICKTRACE_LIVE=1", "getenv");
	tt_lr_check_fork("ring", "%p.ttr", "%d.ttr", "TICKTRACE_LIVE=1", "getenv");
	tt_lr_check_fork("stop", "run.ttr", "run.ttr.%d", "TICKTRACE_LIVE=0", "getenv");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_each_process_its_own_file),
		cmocka_unit_test(test_relative_out_where_the_run_began),
		cmocka_unit_test(test_fork_child_leaves_by_exit),
		cmocka_unit_test(test_fork_child_reset_reaches_program),
	};
	return tt_lr_main(argc, argv, "test_longrun_fork", tests, sizeof tests / sizeof tests[0]);
}
