/* A test killed by a signal leaves nothing in /tmp: meson's timeout sends SIGTERM,
 * whose handler removes the test's directories; after a SIGKILL, the next test that
 * makes a directory removes the dead one's. */
#include <setjmp.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt_check.h"

/* A child that makes a directory with a file in it, says its path and waits to be
 * killed; the path. */
static pid_t spawn_holder(char *dir, size_t cap)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char path[128];
		tt_tmpdir(dir, cap);
		snprintf(path, sizeof path, "%s/file", dir);
		FILE *f = fopen(path, "w");
		if (!f || fputs("kept until killed\n", f) < 0 || fclose(f) != 0 ||
		    write(fds[1], dir, strlen(dir) + 1) < 0)
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	ssize_t n = read(fds[0], dir, cap);
	close(fds[0]);
	assert_true(n > 0 && dir[n - 1] == 0);
	return pid;
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static void test_sigterm_removes_the_directory(void **state)
{
	(void)state;
	char dir[64];
	pid_t pid = spawn_holder(dir, sizeof dir);
	assert_true(exists(dir));
	kill(pid, SIGTERM);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	assert_false(exists(dir));
}

static void test_sigkill_leftovers_are_reaped(void **state)
{
	(void)state;
	char dead[64], mine[64];
	pid_t pid = spawn_holder(dead, sizeof dead);
	kill(pid, SIGKILL);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(exists(dead)); /* no handler ran */
	tt_tmpdir(mine, sizeof mine);
	assert_false(exists(dead));
	assert_true(exists(mine));
	tt_rmdir(mine);
	assert_false(exists(mine));
}

/* A directory named like an older test's (tt-test-XXXXXX, whose random part may
 * start with digits) or another tool's is never taken for a dead test's. */
static void test_other_names_are_left_alone(void **state)
{
	(void)state;
	char mine[64];
	const char *others[] = {"/tmp/" "tt-test-4abcde", "/tmp/" "tt-test-999999-x",
				"/tmp/" "tt-test-999999-abcdefg"};
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
		assert_true(mkdir(others[i], 0700) == 0 || errno == EEXIST);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) { /* a new process: its first tt_tmpdir reaps */
		tt_tmpdir(mine, sizeof mine);
		tt_rmdir(mine);
		_exit(0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
		assert_true(exists(others[i]));
		rmdir(others[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* first: its child reaps only if this process made no directory before */
		cmocka_unit_test(test_other_names_are_left_alone),
		cmocka_unit_test(test_sigterm_removes_the_directory),
		cmocka_unit_test(test_sigkill_leftovers_are_reaped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
