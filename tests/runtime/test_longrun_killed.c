/* Long runs that end by SIGKILL (modes stream and live), by a crash, or by SIGTERM,
 * SIGINT or SIGHUP.
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

/* ---- runs that end by SIGKILL ---- */

/* While the program runs, what it has written (the streamed file, or its live
 * buffers) is read as a file still being written, not as a crashed run's. Returns
 * what was wrong, to fail with once the program is gone, or NULL. */
static char *tt_lr_still_running_problem(const char *path)
{
	char live[160];
	snprintf(live, sizeof live, "%s.live", path);
	const char *written = access(path, F_OK) == 0 ? path : access(live, F_OK) == 0 ? live : NULL;
	if (!written)
		return NULL; /* (modes stop and ring without live buffers write at the end) */
	char *problem = NULL;
	struct tt_run r;
	TT_RUN(&r, "info", written);
	if (r.status != 0 || (written == path && !strstr(r.out, "ended:    not yet: process ")))
		problem = strdup(r.out);
	free(r.out);
	TT_RUN(&r, "convert", written, "-o", "-");
	if (!problem && (r.status != 0 || !strstr(r.err, "is still ") || strstr(r.err, "crashed")))
		problem = strdup(r.err);
	free(r.out);
	return problem;
}

/* Starts "hold", waits until it has recorded, kills it; returns the file's path. */
static void tt_lr_kill_holder(const char *mode, const char *events, const char *flush,
			      const char *extra, const char *buffer, char *dir, size_t cap, char *path,
			      size_t path_cap)
{
	tt_lr_tmpfile(dir, cap, path, path_cap);
	char setting[192], mode_setting[64];
	snprintf(setting, sizeof setting, "TICKTRACE_OUT=%s", path);
	snprintf(mode_setting, sizeof mode_setting, "TICKTRACE_MODE=%s", mode);
	struct tt_lr_child c;
	tt_lr_start(&c, TT_LR_SETTINGS(mode_setting, setting, extra, buffer),
		    TT_LR_SETTINGS("hold", events, flush));
	char line[32];
	assert_non_null(fgets(line, sizeof line, c.out));
	assert_string_equal(line, "ready\n");
	char *problem = tt_lr_still_running_problem(path);
	kill(c.pid, SIGKILL);
	assert_int_equal(tt_lr_wait(&c), 128 + SIGKILL);
	if (problem)
		fail_msg("a running program's file, read:\n%s", problem);
}

/* The converter reads a killed run's file and says the run crashed. */
static void tt_lr_convert_crashed(const char *dir, const char *path)
{
	tt_lr_convert_says(dir, path, "the run crashed or was killed");
	struct tt_run r;
	TT_RUN(&r, "info", path);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "ended:    NO"));
	free(r.out);
}

/* Mode stream, killed: the file holds the events in order from the first, undamaged,
 * however many the drain had written; after tt_dump(), every one. */
static void tt_lr_check_stream_killed(bool dumped)
{
	char dir[64], path[128];
	tt_lr_kill_holder("stream", "100000", dumped ? "1" : "0", "TICKTRACE_LIVE=0",
			  "TICKTRACE_BUFFER=1048576", dir, sizeof dir, path, sizeof path);
	struct tt_file f;
	assert_int_equal(tt_file_open(&f, path), 0);
	assert_true(f.cut_short);
	struct tt_lr_seq s;
	if (dumped) {
		tt_lr_walk_seq(tt_lr_only_thread(&f), &s, false);
		assert_int_equal(s.kept, 100000);
	}
	/* (Killed early, the recording thread may not be in the file yet.) */
	for (size_t i = 0; i < f.nthreads; i++) {
		tt_lr_walk_seq(&f.threads[i], &s, false);
		assert_int_equal(s.lost, 0);
		assert_true(s.next <= 100000);
	}
	tt_file_close(&f);
	tt_lr_convert_crashed(dir, path);
	tt_rmdir(dir);
}

static void test_stream_killed_after_dump_keeps_all(void **state)
{
	(void)state;
	tt_lr_check_stream_killed(true);
}

static void test_stream_killed_keeps_a_clean_prefix(void **state)
{
	(void)state;
	tt_lr_check_stream_killed(false);
}

/* Mode stream, tt_dump(path), then killed: the copy at path is a complete run with
 * every event, while the streamed file goes on (and is cut short by the kill). */
static void test_stream_dump_to_a_path_is_a_complete_copy(void **state)
{
	(void)state;
	char copy_dir[64], copy[128], dir[64], path[128];
	tt_tmpdir(copy_dir, sizeof copy_dir);
	snprintf(copy, sizeof copy, "%s/copy.ttr", copy_dir);
	tt_lr_kill_holder("stream", "100000", copy, "TICKTRACE_LIVE=0", "TICKTRACE_BUFFER=1048576",
			  dir, sizeof dir, path, sizeof path);
	struct tt_file f;
	assert_int_equal(tt_file_open(&f, copy), 0);
	assert_false(f.cut_short);
	assert_true(f.header.flags & TT_FILE_STREAMED);
	struct tt_lr_seq s;
	tt_lr_walk_seq(tt_lr_only_thread(&f), &s, false);
	assert_int_equal(s.kept, 100000);
	assert_int_equal(s.lost, 0);
	tt_file_close(&f);
	assert_int_equal(tt_file_open(&f, path), 0);
	assert_true(f.cut_short);
	tt_file_close(&f);
	struct tt_run r;
	TT_RUN(&r, "info", copy);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "ended:    NO"));
	free(r.out);
	char json[192];
	snprintf(json, sizeof json, "%s/copy.json", copy_dir);
	TT_RUN(&r, "convert", copy, "-o", json);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.err, "killed"));
	free(r.out);
	tt_rmdir(copy_dir);
	tt_rmdir(dir);
}

/* Modes stop and ring with TICKTRACE_LIVE=1, killed: the buffers, a shared mapping
 * of TICKTRACE_OUT.live, hold every event recorded (stop) or the latest (ring). */
static void tt_lr_check_live_killed(const char *mode, bool window)
{
	char dir[64], path[128], live[160];
	/* A ring of five chunks wraps many times over. */
	tt_lr_kill_holder(mode, "100000", "0", "TICKTRACE_LIVE=1",
			  window ? "TICKTRACE_BUFFER=20000" : "TICKTRACE_BUFFER=1048576", dir, sizeof dir,
			  path, sizeof path);
	assert_int_not_equal(access(path, F_OK), 0); /* no trace was written */
	snprintf(live, sizeof live, "%s.live", path);
	struct tt_file f;
	assert_int_equal(tt_file_open(&f, live), 0);
	assert_true(f.header.flags & TT_FILE_LIVE);
	struct tt_lr_seq s;
	tt_lr_walk_seq(tt_lr_only_thread(&f), &s, window);
	assert_int_equal(s.next, 100000);
	/* A ring keeps at least its window, up to the last event: the chunks it
	 * recycled last may still hold theirs, not yet cleaned. */
	if (!window)
		assert_int_equal(s.kept, 100000);
	else
		assert_true(s.kept >= 4 * 4095 / 2);
	tt_file_close(&f);
	tt_lr_convert_says(dir, live, "these are its live buffers, with every event it recorded");
	tt_rmdir(dir);
}

static void test_live_killed_keeps_every_event(void **state)
{
	(void)state;
	tt_lr_check_live_killed("stop", false);
	tt_lr_check_live_killed("ring", true);
}

/* A live run that ends normally leaves its trace and no live file. */
static void test_live_normal_exit_removes_the_live_file(void **state)
{
	(void)state;
	char dir[64], path[128], live[160], setting[192];
	tt_lr_tmpfile(dir, sizeof dir, path, sizeof path);
	snprintf(setting, sizeof setting, "TICKTRACE_OUT=%s", path);
	tt_lr_run(TT_LR_SETTINGS("TICKTRACE_LIVE=1", setting), TT_LR_SETTINGS("seq", "2", "1000"), NULL, 0);
	snprintf(live, sizeof live, "%s.live", path);
	assert_int_not_equal(access(live, F_OK), 0);
	struct tt_file f;
	assert_int_equal(tt_file_open(&f, path), 0);
	assert_false(f.cut_short);
	assert_int_equal(f.records, 2 * 2 * 1000);
	tt_file_close(&f);
	tt_rmdir(dir);
}

/* ---- crashes ---- */


/* Runs "crash HOW" in `mode`; the program must die of `sig` having written all its
 * events, and the converter must say it crashed. With `own`, the program's own
 * handler (installed before ticktrace's) runs too. */
static void tt_lr_check_crash(const char *mode, const char *how, int sig, bool own)
{
	char dir[64], path[128], setting[192], mode_setting[64], line[64] = "";
	tt_lr_tmpfile(dir, sizeof dir, path, sizeof path);
	snprintf(setting, sizeof setting, "TICKTRACE_OUT=%s", path);
	snprintf(mode_setting, sizeof mode_setting, "TICKTRACE_MODE=%s", mode);
	const char *saved = tt_lr_prog;
	if (own)
		tt_lr_prog = tt_lr_static_prog;
	struct tt_lr_child c;
	tt_lr_start(&c, TT_LR_SETTINGS(mode_setting, setting, own ? "TT_PROG_OWN_HANDLER=1" : "TT_PROG_OWN_HANDLER=0"),
		    TT_LR_SETTINGS("crash", how, "50000"));
	tt_lr_prog = saved;
	if (!fgets(line, sizeof line, c.out))
		line[0] = 0;
	int status = tt_lr_wait(&c);
	/* AddressSanitizer's SIGSEGV handler was there first: ticktrace chains to it, and
	 * it reports the fault and ends the program its own way. */
	if (TT_LR_ASAN && sig == SIGSEGV && !own)
		assert_int_not_equal(status, 0);
	else
		assert_int_equal(status, 128 + sig);
	assert_string_equal(line, own ? "own handler\n" : "");

	struct tt_file f;
	assert_int_equal(tt_file_open(&f, path), 0);
	assert_true(f.header.flags & TT_FILE_CRASHED);
	assert_int_equal(f.header.crash_signal, sig);
	struct tt_lr_seq s;
	tt_lr_walk_seq(tt_lr_only_thread(&f), &s, false);
	assert_int_equal(s.kept, 50000);
	assert_int_equal(s.events, 50001); /* and the scope it crashed in */
	tt_file_close(&f);

	tt_lr_convert_says(dir, path, "the run crashed: the program died of signal");
	tt_rmdir(dir);
}

static void test_crash_segv_every_mode(void **state)
{
	(void)state;
	tt_lr_check_crash("stop", "segv", SIGSEGV, false);
	tt_lr_check_crash("ring", "segv", SIGSEGV, false);
	tt_lr_check_crash("stream", "segv", SIGSEGV, false);
}

static void test_crash_abort(void **state)
{
	(void)state;
	tt_lr_check_crash("stop", "abort", SIGABRT, false);
	tt_lr_check_crash("stream", "abort", SIGABRT, false);
}

static void test_crash_chains_to_the_programs_handler(void **state)
{
	(void)state;
	tt_lr_check_crash("stop", "abort", SIGABRT, true);
	tt_lr_check_crash("ring", "segv", SIGSEGV, true);
}

/* ---- runs ended by SIGTERM, SIGINT or SIGHUP ---- */

/* "hold" in `mode`, ended by `sig` with its default action: the program dies of it as
 * it would untraced, having written every event. */
static void tt_lr_check_ended_by(const char *mode, int sig)
{
	char dir[64], path[128], setting[192], mode_setting[64], line[64] = "";
	tt_lr_tmpfile(dir, sizeof dir, path, sizeof path);
	snprintf(setting, sizeof setting, "TICKTRACE_OUT=%s", path);
	snprintf(mode_setting, sizeof mode_setting, "TICKTRACE_MODE=%s", mode);
	struct tt_lr_child c;
	tt_lr_start(&c, TT_LR_SETTINGS(mode_setting, setting), TT_LR_SETTINGS("hold", "50000", "0"));
	assert_non_null(fgets(line, sizeof line, c.out));
	assert_string_equal(line, "ready\n");
	kill(c.pid, sig);
	assert_int_equal(tt_lr_wait(&c), 128 + sig);

	struct tt_file f;
	assert_int_equal(tt_file_open(&f, path), 0);
	assert_int_equal(f.header.crash_signal, sig);
	struct tt_lr_seq s;
	tt_lr_walk_seq(tt_lr_only_thread(&f), &s, false);
	assert_int_equal(s.kept, 50000);
	tt_file_close(&f);
	tt_lr_convert_says(dir, path, "the run was ended by signal");
	tt_rmdir(dir);
}

static void test_sigterm_writes_the_trace(void **state)
{
	(void)state;
	tt_lr_check_ended_by("stop", SIGTERM);
	tt_lr_check_ended_by("ring", SIGTERM);
	tt_lr_check_ended_by("stop", SIGINT);
	tt_lr_check_ended_by("stop", SIGHUP);
}

/* A SIGTERM handler the program installs (finding the default action there) is the
 * program's: it runs, the program goes on, ticktrace writes nothing; its second
 * SIGTERM (SA_RESETHAND: the default it was reset to is ticktrace's) has the trace
 * written, then ends the program by the default action, as untraced. */
static void test_sigterm_handler_of_the_program_kept(void **state)
{
	(void)state;
	char dir[64], path[128], setting[192], line[64] = "";
	tt_lr_tmpfile(dir, sizeof dir, path, sizeof path);
	snprintf(setting, sizeof setting, "TICKTRACE_OUT=%s", path);
	struct tt_lr_child c;
	tt_lr_start(&c, TT_LR_SETTINGS("TICKTRACE_MODE=stop", setting, "TT_PROG_TERM_HANDLER=1"),
		    TT_LR_SETTINGS("hold", "1000", "0"));
	const char *wrong = NULL;
	if (!fgets(line, sizeof line, c.out) || strcmp(line, "ready\n") != 0)
		wrong = "the program did not find SIGTERM's and SIGINT's default action";
	else if (kill(c.pid, SIGTERM), !fgets(line, sizeof line, c.out) ||
		 strcmp(line, "own handler\n") != 0)
		wrong = "the program's SIGTERM handler did not run";
	else if (waitpid(c.pid, NULL, WNOHANG) != 0)
		wrong = "the program did not go on after its SIGTERM handler";
	else if (access(path, F_OK) == 0)
		wrong = "ticktrace wrote the trace on a SIGTERM the program handles";
	if (wrong) { /* (the program waits to be killed) */
		kill(c.pid, SIGKILL);
		tt_lr_wait(&c);
		fail_msg("%s (it said \"%s\")", wrong, line);
	}
	kill(c.pid, SIGTERM);
	assert_int_equal(tt_lr_wait(&c), 128 + SIGTERM);
	assert_int_equal(access(path, F_OK), 0);
	tt_rmdir(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_killed_after_dump_keeps_all),
		cmocka_unit_test(test_stream_killed_keeps_a_clean_prefix),
		cmocka_unit_test(test_stream_dump_to_a_path_is_a_complete_copy),
		cmocka_unit_test(test_live_killed_keeps_every_event),
		cmocka_unit_test(test_live_normal_exit_removes_the_live_file),
		cmocka_unit_test(test_crash_segv_every_mode),
		cmocka_unit_test(test_crash_abort),
		cmocka_unit_test(test_crash_chains_to_the_programs_handler),
		cmocka_unit_test(test_sigterm_writes_the_trace),
		cmocka_unit_test(test_sigterm_handler_of_the_program_kept),
	};
	return tt_lr_main(argc, argv, "test_longrun_killed", tests, sizeof tests / sizeof tests[0]);
}
