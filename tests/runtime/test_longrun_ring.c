/* Long runs in mode ring, written on TICKTRACE_DUMP_SIGNAL.
 * Each test starts tt_longrun_prog (path in argv[1]) with the mode in its
 * environment, then reads the raw file it left with the tools' reader and
 * converts it with the ticktrace command ($TICKTRACE); see test_longrun.c. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

/* Each test's file, closed by the teardown too: a failed assertion leaves it open, and
 * the sanitizers' leak report would bury the assertion's message. */
static int tt_lr_file_setup(void **state)
{
	*state = calloc(1, sizeof(struct tt_file));
	return *state ? 0 : -1;
}

static void tt_lr_close(struct tt_file *f)
{
	tt_file_close(f);
	memset(f, 0, sizeof *f);
}

static int tt_lr_file_teardown(void **state)
{
	tt_lr_close(*state);
	free(*state);
	return 0;
}

/* ---- mode ring, written on TICKTRACE_DUMP_SIGNAL ---- */

/* Waits for a dump to appear (it is renamed into place whole): up to a minute, on a
 * machine as loaded as it may be. */
static void tt_lr_wait_for_file(const char *path)
{
	for (int i = 0; i < 6000 && access(path, F_OK) != 0; i++)
		usleep(10000);
	assert_int_equal(access(path, F_OK), 0);
}

static void test_ring_dump_on_signal_keeps_the_latest(void **state)
{
	enum { ITERATIONS = 200000 };
	char dir[64], path[128], setting[192], out[160];
	tt_lr_tmpfile(dir, sizeof dir, path, sizeof path);
	snprintf(setting, sizeof setting, "TICKTRACE_OUT=%s", path);
	struct tt_lr_child c;
	tt_lr_start(&c, TT_LR_SETTINGS("TICKTRACE_MODE=ring", "TICKTRACE_BUFFER=20000",
				       "TICKTRACE_DUMP_SIGNAL=SIGUSR2", setting),
		    TT_LR_SETTINGS("scopes", "200000"));
	char line[32];
	assert_non_null(fgets(line, sizeof line, c.out));
	assert_string_equal(line, "ready\n");
	kill(c.pid, SIGUSR2);
	tt_lr_wait_for_file(path);
	kill(c.pid, SIGKILL);
	assert_int_equal(tt_lr_wait(&c), 128 + SIGKILL);

	struct tt_file *f = *state;
	assert_int_equal(tt_file_open(f, path), 0);
	assert_true(f->header.flags & TT_FILE_RING);
	const struct tt_thread *t = tt_lr_only_thread(f);
	assert_true(t->flags & TT_THREAD_WRAPPED);
	struct tt_lr_seq s;
	tt_lr_walk_seq(t, &s, true);
	/* The latest events, up to the last one, and about as many as the buffer holds:
	 * 5 chunks of 4,095 records, 4 records an iteration. */
	assert_int_equal(s.next, ITERATIONS);
	assert_true(s.kept >= 4 * 4095 / 4 && s.kept <= 5 * 4095 / 4 + 1);
	/* Every older event is counted as overwritten. */
	assert_int_equal(s.events + t->dropped[TT_DROP_OVERWRITTEN], 3 * ITERATIONS);
	assert_int_equal(t->dropped_total, t->dropped[TT_DROP_OVERWRITTEN]);
	uint32_t tid = t->tid;
	tt_lr_close(f);

	tt_lr_convert_says(dir, path, "older ones of 1 threads were overwritten by newer ones");
	snprintf(out, sizeof out, "%s/run.json", dir);
	/* Each "iter" scope the window cut is shown from the window's start, flagged (the
	 * thread's own track: its states are on another). */
	cJSON *root = tt_json_load(out);
	assert_non_null(root);
	char *listing = tt_json_listing(root, tid);
	assert_non_null(listing);
	free(listing);
	cJSON_Delete(root);
	tt_rmdir(dir);
}

/* A ring's thread, its file at exit: the latest events up to its last one (`recorded`
 * in all), older ones counted as overwritten; with `held_drops`, also events dropped
 * while a hold of the rings outlasted them (counted, each before the window or in it),
 * else none lost. */
static void tt_lr_check_ring_latest(const struct tt_thread *t, uint64_t recorded, uint64_t window,
				    bool held_drops)
{
	struct tt_lr_seq s;
	tt_lr_walk_seq(t, &s, true);
	assert_int_equal(s.next, recorded);
	assert_true(s.kept >= window);
	uint64_t full = t->dropped[TT_DROP_FULL];
	if (!held_drops)
		assert_int_equal(full, 0);
	assert_int_equal(t->dropped_total, t->dropped[TT_DROP_OVERWRITTEN] + full);
	assert_int_equal(s.first + s.lost, t->dropped_total);
}

/* The run's standard error, in the file `err`, says of no dropped events; or, with
 * `held_ok`, only of those dropped while a hold of the rings outlasted them (the
 * runtime says so: on a loaded machine, a thread that holds them is preempted while
 * the others fill theirs twice over). Returns whether it said of such drops. */
static bool tt_lr_says_no_drops(const char *err, bool held_ok)
{
	char *text = tt_read_text(err);
	assert_non_null(text);
	bool held = held_ok && strstr(text, "held the rings while threads filled them twice over");
	if (!held && strstr(text, "dropped"))
		fail_msg("stderr:\n%s", text);
	free(text);
	return held;
}

/* Mode ring, tt_dump() from another thread while the thread records: its ring goes
 * on recycling after the dump (it grows while the dump reads it, then shrinks back). */
static void test_ring_recycles_after_a_dump(void **state)
{
	char dir[64], path[128], copy[160], setting[192], err[160], line[32];
	tt_lr_tmpfile(dir, sizeof dir, path, sizeof path);
	snprintf(setting, sizeof setting, "TICKTRACE_OUT=%s", path);
	snprintf(copy, sizeof copy, "%s/dump.ttr", dir);
	snprintf(err, sizeof err, "%s/stderr", dir);
	struct tt_lr_child c;
	tt_lr_spawn(&c, TT_LR_SETTINGS("TICKTRACE_MODE=ring", "TICKTRACE_BUFFER=20000", "TICKTRACE_LIVE=0", setting),
		    TT_LR_SETTINGS("dumped", "200000", copy), err);
	assert_non_null(fgets(line, sizeof line, c.out));
	assert_int_equal(tt_lr_wait(&c), 0);
	uint64_t recorded = strtoull(line, NULL, 10);
	assert_true(recorded >= 2 * 200000 + 10000);

	struct tt_file *f = *state;
	assert_int_equal(tt_file_open(f, path), 0);
	/* 5 chunks of 2,047 two-record events; the last may have just begun. */
	tt_lr_check_ring_latest(tt_lr_only_thread(f), recorded, 4 * 2047, false);
	tt_lr_close(f);
	tt_rmdir(dir);
}

/* Dumps while a thread records, back to back (mode ring): each file holds the
 * thread's events without a hole, and its ring grew while dumps held it by 16 MiB at
 * most (it grew with each dump, whose file was larger each time). */
static void test_ring_dumps_back_to_back(void **state)
{
	enum { DUMPS = 100 };
	char dir[64], path[128], setting[192], err[160];
	tt_lr_tmpfile(dir, sizeof dir, path, sizeof path);
	snprintf(setting, sizeof setting, "TICKTRACE_OUT=%s", path);
	snprintf(err, sizeof err, "%s/stderr", dir);
	struct tt_lr_child c;
	tt_lr_spawn(&c, TT_LR_SETTINGS("TICKTRACE_MODE=ring", "TICKTRACE_BUFFER=20000", "TICKTRACE_LIVE=0", setting),
		    TT_LR_SETTINGS("dumps", "100", dir), err);
	assert_int_equal(tt_lr_wait(&c), 0);
	for (int n = 0; n < DUMPS; n++) {
		char dump[160];
		snprintf(dump, sizeof dump, "%s/%d.ttr", dir, n);
		struct tt_file *f = *state;
		assert_int_equal(tt_file_open(f, dump), 0);
		/* (the main thread, which dumps, is in the file without events) */
		for (size_t i = 0; i < f->nthreads; i++) {
			struct tt_lr_seq s;
			tt_lr_walk_seq(&f->threads[i], &s, true);
		}
		/* 5 chunks of 4,095 records, and 256 more */
		assert_true(f->records <= (5 + 256) * 4095 + 2);
		tt_lr_close(f);
	}
	tt_rmdir(dir);
}

/* Mode ring, its chunks held (as a dump holds them) while its thread records: the
 * ring grows, then drops; let go, it recycles on past the gap's record. Every event
 * is in the file or counted once: the gap's record is no overwritten event (the
 * CI's ASan run counted one too many per recycled gap). */
static void test_ring_held_drops_counted_once(void **state)
{
	char dir[64], path[128], setting[192], err[160], line[32];
	tt_lr_tmpfile(dir, sizeof dir, path, sizeof path);
	snprintf(setting, sizeof setting, "TICKTRACE_OUT=%s", path);
	snprintf(err, sizeof err, "%s/stderr", dir);
	const char *saved = tt_lr_prog;
	tt_lr_prog = tt_lr_static_prog;
	struct tt_lr_child c;
	/* Held, the ring grows to 16 MiB (1 M records) and drops the rest of 2 M; let go, 2 M
	 * more recycle its chunks past the gap. */
	tt_lr_spawn(&c, TT_LR_SETTINGS("TICKTRACE_MODE=ring", "TICKTRACE_BUFFER=20000", setting),
		    TT_LR_SETTINGS("held", "1000000", "1000000"), err);
	tt_lr_prog = saved;
	assert_non_null(fgets(line, sizeof line, c.out));
	uint64_t recorded = strtoull(line, NULL, 10);
	assert_int_equal(tt_lr_wait(&c), 0);
	assert_true(tt_lr_says_no_drops(err, true));

	struct tt_file *f = *state;
	assert_int_equal(tt_file_open(f, path), 0);
	const struct tt_thread *t = tt_lr_only_thread(f);
	assert_true(t->dropped[TT_DROP_FULL] > 0);
	tt_lr_check_ring_latest(t, recorded, 4 * 2047, true);
	tt_lr_close(f);
	tt_rmdir(dir);
}

/* Mode ring with a live file, whose descriptions are brought up to date while the
 * threads record: the rings go on recycling, to the last event. */
static void test_ring_live_recycles(void **state)
{
	char dir[64], path[128], setting[192], err[160], line[32];
	tt_lr_tmpfile(dir, sizeof dir, path, sizeof path);
	snprintf(setting, sizeof setting, "TICKTRACE_OUT=%s", path);
	snprintf(err, sizeof err, "%s/stderr", dir);
	struct tt_lr_child c;
	/* Seconds: the live file's descriptions are brought up to date every 200 ms. */
	tt_lr_spawn(&c, TT_LR_SETTINGS("TICKTRACE_MODE=ring", "TICKTRACE_BUFFER=100000", "TICKTRACE_LIVE=1", setting),
		    TT_LR_SETTINGS("seconds", "2", "1500"), err);
	uint64_t recorded[2];
	for (int i = 0; i < 2; i++) {
		assert_non_null(fgets(line, sizeof line, c.out));
		recorded[i] = strtoull(line, NULL, 10);
	}
	assert_int_equal(tt_lr_wait(&c), 0);
	bool held_drops = tt_lr_says_no_drops(err, true);

	struct tt_file *f = *state;
	assert_int_equal(tt_file_open(f, path), 0);
	size_t seen = 0;
	for (size_t i = 0; i < f->nthreads; i++) {
		const struct tt_thread *t = &f->threads[i];
		if (t->flags & TT_THREAD_RUNTIME)
			continue;
		struct tt_lr_seq s;
		tt_lr_walk_seq(t, &s, true);
		if (s.number >= 2)
			fail_msg("thread %u \"%.*s\" (flags %#x): %" PRIu64 " events, none of seq-0 or seq-1",
				 t->tid, (int)t->name.len, t->name.ptr ? t->name.ptr : "", t->flags, s.events);
		/* 25 chunks of 2,047 two-record events. */
		tt_lr_check_ring_latest(t, recorded[s.number], 24 * 2047, held_drops);
		seen++;
	}
	assert_int_equal(seen, 2);
	tt_lr_close(f);
	tt_rmdir(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ring_dump_on_signal_keeps_the_latest, tt_lr_file_setup, tt_lr_file_teardown),
		cmocka_unit_test_setup_teardown(test_ring_recycles_after_a_dump, tt_lr_file_setup, tt_lr_file_teardown),
		cmocka_unit_test_setup_teardown(test_ring_live_recycles, tt_lr_file_setup, tt_lr_file_teardown),
		cmocka_unit_test_setup_teardown(test_ring_held_drops_counted_once, tt_lr_file_setup,
						tt_lr_file_teardown),
		cmocka_unit_test_setup_teardown(test_ring_dumps_back_to_back, tt_lr_file_setup, tt_lr_file_teardown),
	};
	return tt_lr_main(argc, argv, "test_longrun_ring", tests, sizeof tests / sizeof tests[0]);
}
