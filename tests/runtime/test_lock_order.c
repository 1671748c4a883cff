/* The lock order's check (src/base/locks.c, built here with TT_LOCK_CHECK as
 * -Dlock_check builds it): locks taken in base.h's order pass; a lock taken while
 * one of its rank or a later one is held aborts, naming both. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"

static struct tt__lock tt_registry = TT__LOCK_INIT(TT__LOCK_REGISTRY);
static struct tt__lock tt_core = TT__LOCK_INIT(TT__LOCK_CORE);
static struct tt__lock tt_sched = TT__LOCK_INIT(TT__LOCK_SCHED);

/* Runs `take` in a child: its stderr, and whether SIGABRT ended it. */
static int tt_in_child(void (*take)(void), char *err, size_t cap)
{
	int pipe_fds[2];
	assert_int_equal(pipe(pipe_fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(pipe_fds[1], 2);
		take();
		_exit(0);
	}
	close(pipe_fds[1]);
	ssize_t n = read(pipe_fds[0], err, cap - 1);
	err[n > 0 ? n : 0] = 0;
	close(pipe_fds[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void tt_in_order(void)
{
	tt__lock(&tt_sched);
	tt__lock(&tt_registry);
	tt__lock(&tt_core);
	tt__unlock(&tt_core);
	tt__unlock(&tt_registry);
	tt__lock(&tt_registry); /* (again, once let go) */
	tt__unlock(&tt_registry);
	tt__unlock(&tt_sched);
	tt__lock(&tt_core); /* (one alone) */
	tt__unlock(&tt_core);
}

static void tt_inverted(void)
{
	tt__lock(&tt_core);
	tt__lock(&tt_registry);
}

static void tt_twice(void)
{
	tt__lock(&tt_registry);
	tt__lock(&tt_registry);
}

/* A fork's child forgets the parent's hold on a lock it resets. */
static void tt_reset(void)
{
	tt__lock(&tt_core);
	tt__lock_reset(&tt_core);
	tt__lock(&tt_registry);
	tt__unlock(&tt_registry);
}

static void test_in_order(void **state)
{
	(void)state;
	char err[512];
	assert_false(tt_in_child(tt_in_order, err, sizeof err));
	assert_string_equal(err, "");
	assert_false(tt_in_child(tt_reset, err, sizeof err));
	assert_string_equal(err, "");
}

static void test_broken(void **state)
{
	(void)state;
	char err[512];
	assert_true(tt_in_child(tt_inverted, err, sizeof err));
	assert_non_null(strstr(err, "the registry lock taken while the core lock is held"));
	assert_true(tt_in_child(tt_twice, err, sizeof err));
	assert_non_null(strstr(err, "the registry lock taken while the registry lock is held"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_broken),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
