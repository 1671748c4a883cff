/* A program's fork() never waits for ticktrace's I/O (issue 30, item 4): the fork
 * handler takes the lock ticktrace's threads hold while they allocate, and a
 * snapshot's write held it for the whole write (fork waited 404-427 ms). Starts
 * fork_wait_prog (argv[1]), which forks over and over while snapshots are written
 * to FIFOs it reads slowly, in modes ring and stop; its longest fork must stay well
 * under the same run's longest snapshot write, during which it forked (a ratio of the run's own times: the
 * machine may be loaded).
 *
 *   test_fork_wait PROG
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "tt_check.h"

static const char *tt_prog;

/* The longest fork is at most this share of the longest write: before the fix, a
 * fork that came during a write waited for most of it (a share near 1). */
#define TT_FORK_SHARE_MAX 0.4

static void tt_fork_during_snapshots(const char *mode, const char *buffer)
{
	char dir[64], snaps[128], err[128], snaps_setting[160];
	tt_tmpdir(dir, sizeof dir);
	snprintf(snaps, sizeof snaps, "%s/snaps", dir);
	snprintf(err, sizeof err, "%s/err", dir);
	snprintf(snaps_setting, sizeof snaps_setting, "TICKTRACE_SNAPSHOTS=%s", snaps);
	assert_int_equal(mkdir(snaps, 0700), 0);
	const char *settings[] = {mode, snaps_setting, "TICKTRACE_OUT=/dev/null", buffer,
				  "TICKTRACE_SNAPSHOT_AFTER=10ms", NULL};
	const char *args[] = {"3", NULL};
	struct tt_child c;
	assert_int_equal(tt_child_spawn(&c, tt_prog, settings, args, err), 0);
	char line[256] = "";
	if (!fgets(line, sizeof line, c.out))
		line[0] = 0;
	int status = tt_child_wait(&c, 120);
	char *text = tt_read_text(err);
	int snapshots = 0;
	unsigned forks = 0;
	double write_ms = 0, fork_ms = 0;
	if (status != 0 || sscanf(line, "snapshots %d write_ms_max %lf forks %u fork_ms_max %lf", &snapshots,
				  &write_ms, &forks, &fork_ms) != 4)
		fail_msg("%s: status %d, output \"%s\", stderr:\n%s", mode, status, line, text ? text : "");
	print_message("%s: %s", mode, line);
	free(text);
	tt_rmdir(dir);
	/* The writes were slow (the reader saw to it), and forks came during them. */
	assert_true(write_ms >= 50);
	assert_true(forks >= 10);
	if (fork_ms > TT_FORK_SHARE_MAX * write_ms)
		fail_msg("%s: the longest fork took %.1f ms, more than %.0f%% of a snapshot's write "
			 "(%.1f ms): it waited for the write", mode, fork_ms, 100 * TT_FORK_SHARE_MAX, write_ms);
}

static void test_ring(void **state)
{
	(void)state;
	tt_fork_during_snapshots("TICKTRACE_MODE=ring", "TICKTRACE_BUFFER=20000");
}

static void test_stop(void **state)
{
	(void)state;
	/* (room for every window: stop keeps the first events) */
	tt_fork_during_snapshots("TICKTRACE_MODE=stop", "TICKTRACE_BUFFER=400000");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_fork_wait PROG\n");
		return 2;
	}
	tt_prog = argv[1];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring),
		cmocka_unit_test(test_stop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
