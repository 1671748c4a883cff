/* Hostile use: a file size limit, and a full disk. Each test starts tt_longrun_prog
 * (path in argv[1]) under the limit and checks the program ends as it would
 * without ticktrace, its trace missing or cut with a word, never silently.
 *
 *   test_hostile_limits PROG            the file size limit
 *   test_hostile_limits PROG diskfull   a full disk, on a 2 MiB tmpfs mounted for it
 *                                       (root; exits 77 where it cannot mount one)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt_check.h"
#include "read/read.h"
#include "hostile_support.h"

/* ---- a file size limit ---- */

/* No word of a disk too slow for the drain thread: the run's losses had another cause. */
static void tt_h_expect_no_behind(const char *path)
{
	const char *text = tt_h_read(path);
	if (strstr(text, "fell behind") || strstr(text, "could not write as fast"))
		fail_msg("%s says the disk fell behind:\n%s", path, text);
}

/* RLIMIT_FSIZE smaller than the trace: the program's status and output are its own
 * (no SIGXFSZ), and the trace is missing or cut, with a word; in every mode, and
 * with a live file, which cannot be made. */
static void test_file_size_limit(void **state)
{
	(void)state;
	struct tt_h_dir d;
	tt_h_dir_make(&d);
	static const char *const settings[][2] = {
		{"TICKTRACE_MODE=stop", "TICKTRACE_LIVE=0"},
		{"TICKTRACE_MODE=ring", "TICKTRACE_LIVE=0"},
		{"TICKTRACE_MODE=stream", "TICKTRACE_LIVE=0"},
		{"TICKTRACE_MODE=stop", "TICKTRACE_LIVE=1"},
	};
	struct rlimit saved, small;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
	small = saved;
	small.rlim_cur = 64 * 1024; /* `ulimit -f 64` */
	for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
		char line[64];
		/* (The child inherits the limit; nothing here writes meanwhile.) */
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
		int status = tt_h_run(TT_H(settings[i][0], settings[i][1], d.out), TT_H("churn", "2000"), d.err,
				      line, sizeof line, 60);
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
		long early, end;
		if (status != 0 || sscanf(line, "%ld %ld", &early, &end) != 2)
			fail_msg("%s %s: status %d, output \"%s\", stderr:\n%s", settings[i][0], settings[i][1],
				 status, line, tt_h_read(d.err));
		tt_h_expect_text(d.err, strerror(EFBIG));
		/* Mode stream: what the limit lost is said with its cause, never as a disk
		 * that fell behind (the drain kept up: its writes failed). */
		if (strcmp(settings[i][0], "TICKTRACE_MODE=stream") == 0) {
			tt_h_expect_text(d.err, "events not in the trace, whose writes failed (File too large)");
			tt_h_expect_no_behind(d.err);
		}
		unlink(d.path);
	}
	/* The program's own write past the limit still meets SIGXFSZ, after a dump. */
	char own[160];
	snprintf(own, sizeof own, "%s/own", d.dir);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	int status = tt_h_run(TT_H("TICKTRACE_MODE=stop", d.out), TT_H("overlimit", own), d.err, NULL, 0, 60);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
	if (status != 128 + SIGXFSZ)
		fail_msg("status %d, not %d (SIGXFSZ)", status, 128 + SIGXFSZ);
	tt_rmdir(d.dir);
}

/* ---- a full disk (items 3, 4) ---- */

static char tt_h_disk[64];

/* A 2 MiB tmpfs of the test's own, or 77 (skipped) where it cannot have one. */
static int tt_h_mount_small_disk(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "a full disk needs a tmpfs of its own: run as root\n");
		return 77;
	}
	tt_tmpdir(tt_h_disk, sizeof tt_h_disk);
	if (mount("tt-test", tt_h_disk, "tmpfs", 0, "size=2m") < 0) {
		fprintf(stderr, "cannot mount a tmpfs on %s: %s\n", tt_h_disk, strerror(errno));
		tt_rmdir(tt_h_disk);
		return 77;
	}
	return 0;
}

/* Mode stream on a disk that fills: the program's own exit status, the cause said,
 * and a file that ends with every thread's counts: each event written or counted as
 * dropped. */
static void test_disk_full_stream(void **state)
{
	(void)state;
	/* (Packed, an event takes about 7 bytes of the 2 MiB disk.) */
	enum { THREADS = 2, EVENTS = 1000000 };
	char path[128], out[160], err[160], events[16], errdir[64];
	snprintf(path, sizeof path, "%s/run.ttr", tt_h_disk);
	snprintf(out, sizeof out, "TICKTRACE_OUT=%s", path);
	tt_tmpdir(errdir, sizeof errdir);
	snprintf(err, sizeof err, "%s/stderr", errdir);
	snprintf(events, sizeof events, "%d", EVENTS);
	/* Buffers that hold the whole run: the drain never falls behind (as it would
	 * in a sanitizer's slow build), so every event it loses is the full disk's. */
	int status = tt_h_run(TT_H(out, "TICKTRACE_MODE=stream", "TICKTRACE_BUFFER=2097152"),
			      TT_H("seq", "2", events), err, NULL, 0, 60);
	assert_int_equal(status, 0);
	tt_h_expect_text(err, "No space left on device");
	tt_h_expect_text(err, "events not in the trace, whose writes failed (No space left on device)");
	tt_h_expect_no_behind(err);
	struct tt_file f;
	assert_int_equal(tt_file_open(&f, path), 0);
	assert_false(f.cut_short);
	uint64_t kept = 0, lost = 0;
	uint32_t seq_threads = 0;
	for (size_t i = 0; i < f.nthreads; i++) {
		const struct tt_thread *t = &f.threads[i];
		if (t->flags & TT_THREAD_RUNTIME)
			continue;
		seq_threads++;
		uint64_t timed = 0;
		for (size_t s = 0; s < t->nsections; s++)
			for (size_t k = 0; k < t->sections[s].count; k++) {
				unsigned kind = TT_RECORD_KIND(tt_section_records(t, s)[k].word);
				timed += TT_RECORD_HAS_TIME(kind) && kind != TT_REC_DROPPED;
			}
		kept += timed;
		lost += t->dropped[TT_DROP_BEHIND];
	}
	tt_file_close(&f);
	assert_int_equal(seq_threads, THREADS);
	assert_true(lost > 0);
	assert_int_equal(kept + lost, (uint64_t)THREADS * EVENTS);
	unlink(path);
	unlink(err);
	tt_rmdir(errdir);
}

/* TICKTRACE_LIVE=1 on a disk with no room for the live file: the program is not
 * killed (SIGBUS), and says what it does instead. */
static void test_disk_full_live(void **state)
{
	(void)state;
	char path[128], out[160], err[160], errdir[64];
	snprintf(path, sizeof path, "%s/run.ttr", tt_h_disk);
	snprintf(out, sizeof out, "TICKTRACE_OUT=%s", path);
	tt_tmpdir(errdir, sizeof errdir);
	snprintf(err, sizeof err, "%s/stderr", errdir);
	int status = tt_h_run(TT_H(out, "TICKTRACE_LIVE=1"), TT_H("seq", "1", "200000"), err, NULL, 0, 60);
	assert_int_equal(status, 0);
	tt_h_expect_text(err, "no room for a live file");
	unlink(err);
	unlink(path);
	tt_rmdir(errdir);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_hostile_limits PROG [diskfull]\n");
		return 2;
	}
	tt_h_prog = argv[1];
	if (argc == 3 && strcmp(argv[2], "diskfull") == 0) {
		int skip = tt_h_mount_small_disk();
		if (skip)
			return skip;
		const struct CMUnitTest tests[] = {
			cmocka_unit_test(test_disk_full_stream),
			cmocka_unit_test(test_disk_full_live),
		};
		int failed = cmocka_run_group_tests(tests, NULL, NULL);
		umount2(tt_h_disk, MNT_DETACH); /* (a failed test may still map a file there) */
		tt_rmdir(tt_h_disk);
		return failed;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_size_limit),
	};
	const char *only = getenv("TT_TEST_ONLY"); /* a pattern: run the tests it names */
	if (only)
		cmocka_set_test_filter(only);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
