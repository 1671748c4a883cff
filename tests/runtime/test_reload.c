/* A library unloaded (dlclose), then another loaded at the same address:
 * every event is named after the library that was there when it was
 * recorded, call sites (TT_SCOPE, TT_INSTANT) and -finstrument-functions functions
 * alike, in modes stop, ring and stream (written at the end, or while the libraries
 * were loaded), and in the live file of a run killed by SIGKILL, whose last call
 * sites are named from the ELF files; in JSON, Perfetto and
 * the flat profile, with no warning; and so does the program itself, in its report at
 * exit and its spike log.
 *
 * And a program that does not use ticktrace itself, only a plugin that it unloads, goes
 * on running and exits cleanly with its trace.
 *
 * test_reload PROG ALPHA.so GAMMA.so CHECK_PY SCHEMA PLUGIN_ONLY_PROG */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tt_check.h"

static const char *prog, *alpha, *gamma_lib, *check_py, *schema, *plugin_only;

/* The main thread: alpha's call, then gamma's, each with its own names. */
static const char expected[] =
	"X alpha_run 0\n"
	"X alpha_scope 1\n"
	"i alpha_tick 2\n"
	"X alpha_square 2\n"
	"X gamma_run 0\n"
	"X gamma_scope 1\n"
	"i gamma_tick 2\n"
	"X gamma_square 2\n";

/* Runs the program in `dir` with `settings`; its exit status. */
static int run_prog(const char *dir, const char *mode, const char *const *settings)
{
	char err[160];
	snprintf(err, sizeof(err), "%s/prog.err", dir);
	/* 77: the loader put gamma elsewhere this time (the live file's mapping or a thread
	 * of ticktrace's took alpha's place: CI's clang run, once); nothing was tested, so
	 * again; its callers skip if it never does */
	int status = 77;
	for (int attempt = 0; attempt < 5 && status == 77; attempt++) {
		struct tt_child c;
		if (tt_child_spawn(&c, prog, settings, (const char *const[]){alpha, gamma_lib, mode, NULL},
				   err) < 0)
			return -1;
		status = tt_child_wait(&c, 60);
	}
	if (status != 0 && status != 128 + 9)
		tt_sh("cat '%s' >&2", err);
	return status;
}

/* Converts `ttr` in `dir` to JSON and Perfetto (which must agree) and checks the
 * names, and those of the flat profile. */
static void check_names(const char *dir, const char *ttr)
{
	char json[160], pf[160];
	snprintf(json, sizeof(json), "%s/run.json", dir);
	snprintf(pf, sizeof(pf), "%s/run.pftrace", dir);
	struct tt_run r;
	TT_RUN(&r, "convert", ttr, "-o", json, "--force");
	free(r.out);
	if (r.status != 0)
		fail_msg("convert: status %d: %s", r.status, r.err);
	/* nothing said about libraries at one address, nothing named as unloaded */
	assert_null(strstr(r.err, "overlapping"));
	assert_null(strstr(r.err, "unloaded"));
	TT_RUN(&r, "convert", ttr, "-o", pf, "--force");
	free(r.out);
	assert_int_equal(r.status, 0);
	cJSON *root = tt_json_load_checked(check_py, schema, pf, json, dir);
	assert_non_null(root);
	char *listing = tt_json_thread_listing(root, NULL);
	assert_non_null(listing);
	assert_string_equal(listing, expected);
	free(listing);
	cJSON_Delete(root);

	TT_RUN(&r, "report", ttr);
	assert_int_equal(r.status, 0);
	static const char *const names[] = {"alpha_run", "alpha_scope", "alpha_square",
					    "gamma_run", "gamma_scope", "gamma_square"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strstr(r.out, names[i]))
			fail_msg("report: no %s in:\n%s", names[i], r.out);
	free(r.out);
}

/* What the program wrote itself (its report at exit, its spike log) names each
 * library's scopes and functions after it: static functions as library+0xOFFSET. */
static void check_own_names(const char *path, const char *const *names, size_t n)
{
	char *text = tt_read_text(path);
	assert_non_null(text);
	for (size_t i = 0; i < n; i++)
		if (!strstr(text, names[i]))
			fail_msg("%s: no \"%s\" in:\n%s", path, names[i], text);
	assert_null(strstr(text, "unloaded"));
	free(text);
}

static void reload_in_mode(const char *mode, const char *how)
{
	char dir[64], ttr[160], out[200], own[200], own_setting[220];
	tt_tmpdir(dir, sizeof(dir));
	snprintf(ttr, sizeof(ttr), "%s/run.ttr", dir);
	snprintf(out, sizeof(out), "TICKTRACE_OUT=%s", ttr);
	char mode_setting[64];
	snprintf(mode_setting, sizeof(mode_setting), "TICKTRACE_MODE=%s", mode);
	/* stream: the spike log (every scope spikes), else the report at exit */
	bool stream = strcmp(mode, "stream") == 0;
	snprintf(own, sizeof(own), "%s/own.txt", dir);
	snprintf(own_setting, sizeof(own_setting), "%s=%s", stream ? "TICKTRACE_SPIKES" : "TICKTRACE_REPORT", own);
	int status = run_prog(dir, how, (const char *const[]){out, mode_setting, own_setting,
							       "TICKTRACE_SPIKE_THRESHOLD=0", NULL});
	if (status == 77) {
		tt_rmdir(dir);
		skip();
	}
	assert_int_equal(status, 0);
	check_names(dir, ttr);
	static const char *const spikes[] = {"spike: alpha_run", "spike: alpha_scope",
					     "spike: libreload_alpha.so+0x", "spike: gamma_run",
					     "spike: gamma_scope", "spike: libreload_gamma.so+0x"};
	static const char *const report[] = {"\nalpha_run ", "\nalpha_scope ", "\nlibreload_alpha.so+0x",
					     "\ngamma_run ", "\ngamma_scope ", "\nlibreload_gamma.so+0x"};
	check_own_names(own, stream ? spikes : report, 6);
	tt_rmdir(dir);
}

static void test_reload_stop(void **state)
{
	(void)state;
	reload_in_mode("stop", "exit");
}

static void test_reload_ring(void **state)
{
	(void)state;
	reload_in_mode("ring", "exit");
}

static void test_reload_stream(void **state)
{
	(void)state;
	reload_in_mode("stream", "exit");
}

/* The drain writes alpha's events and describes its call sites while alpha is
 * loaded, then says it was unloaded before gamma's events. */
static void test_reload_stream_while_loaded(void **state)
{
	(void)state;
	reload_in_mode("stream", "wait");
}

/* Killed: the live file, whose last call sites (gamma's) the run never described. */
static void test_reload_killed(void **state)
{
	(void)state;
	char dir[64], ttr[160], live[170], out[200];
	tt_tmpdir(dir, sizeof(dir));
	snprintf(ttr, sizeof(ttr), "%s/run.ttr", dir);
	snprintf(live, sizeof(live), "%s.live", ttr);
	snprintf(out, sizeof(out), "TICKTRACE_OUT=%s", ttr);
	int status = run_prog(dir, "kill", (const char *const[]){out, "TICKTRACE_LIVE=1", NULL});
	if (status == 77) {
		tt_rmdir(dir);
		skip();
	}
	assert_int_equal(status, 128 + 9);
	check_names(dir, live);
	tt_rmdir(dir);
}

/* The runtime stays loaded when the only plugin that used it goes (it was unloaded
 * under its own threads, which then crashed the program now and then: 20 runs), and
 * writes the trace at exit. */
static void test_plugin_only_user_unloads_it(void **state)
{
	(void)state;
	char dir[64], ttr[128], out[160], err[160];
	tt_tmpdir(dir, sizeof(dir));
	snprintf(ttr, sizeof(ttr), "%s/po.ttr", dir);
	snprintf(out, sizeof(out), "TICKTRACE_OUT=%s", ttr);
	snprintf(err, sizeof(err), "%s/po.err", dir);
	for (int i = 0; i < 20; i++) {
		struct tt_child c;
		assert_int_equal(tt_child_spawn(&c, plugin_only, (const char *const[]){out, NULL},
						(const char *const[]){alpha, NULL}, err), 0);
		int status = tt_child_wait(&c, 60);
		if (status != 0) {
			tt_sh("cat '%s' >&2", err);
			fail_msg("run %d: status %d", i, status);
		}
	}
	struct tt_run r;
	TT_RUN(&r, "report", ttr);
	assert_int_equal(r.status, 0);
	/* (its scopes: its dlclose, not the program's, was not seen, so not named) */
	assert_non_null(strstr(r.out, "flat profile: 1 names, 1000 calls, 1 threads"));
	free(r.out);
	tt_rmdir(dir);
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: test_reload PROG ALPHA.so GAMMA.so CHECK_PY SCHEMA "
			"PLUGIN_ONLY_PROG\n");
		return 2;
	}
	plugin_only = argv[6];
	prog = argv[1];
	alpha = argv[2];
	gamma_lib = argv[3];
	check_py = argv[4];
	schema = argv[5];
	/* The loader must put gamma where alpha was, or there is nothing to test. */
	char dir[64];
	tt_tmpdir(dir, sizeof(dir));
	int status = run_prog(dir, "exit", (const char *const[]){"TICKTRACE_OUT=/dev/null", NULL});
	tt_rmdir(dir);
	if (status == 77) {
		fprintf(stderr, "test_reload: skipped: this loader did not put the second library "
			"where the first was\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reload_stop),
		cmocka_unit_test(test_reload_ring),
		cmocka_unit_test(test_reload_stream),
		cmocka_unit_test(test_reload_stream_while_loaded),
		cmocka_unit_test(test_reload_killed),
		cmocka_unit_test(test_plugin_only_user_unloads_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
