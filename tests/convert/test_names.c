/* Names made at run time and C++'s TT_FUNC, frames, scope values and descriptions,
 * and the markup that steers the spike detector, end to end: names_program runs, its
 * trace is converted to JSON and Perfetto (which must agree, args and frames too:
 * check-perfetto.py), and the trace, spike log and report say what the program did.
 *
 *   test_names PROGRAM SUGGEST_PROGRAM CHECK_PERFETTO.py SCHEMA.proto */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tt_check.h"

static const char *program, *suggest_program, *check_py, *schema;

/* Runs the program with `args` into dir/run.ttr and converts it to dir/run.json and
 * dir/run.pftrace, which must hold the same content; returns the JSON. */
static cJSON *run_and_convert(const char *dir, const char *args)
{
	assert_int_equal(tt_sh("TICKTRACE_OUT='%s/run.ttr' '%s' %s", dir, program, args), 0);
	char ttr[256], json[256], pf[256];
	snprintf(ttr, sizeof ttr, "%s/run.ttr", dir);
	snprintf(json, sizeof json, "%s/run.json", dir);
	snprintf(pf, sizeof pf, "%s/run.pftrace", dir);
	struct tt_run r;
	TT_RUN(&r, "convert", ttr, "-o", json, "-q");
	if (r.status)
		print_message("%s", r.err);
	assert_int_equal(r.status, 0);
	free(r.out);
	TT_RUN(&r, "convert", ttr, "-o", pf, "-q");
	assert_int_equal(r.status, 0);
	free(r.out);
	cJSON *root = tt_json_load_checked(check_py, schema, pf, json, dir);
	assert_non_null(root);
	return root;
}

/* The counter samples named `name`, in order, as "v v v". */
static void counter_values(cJSON *root, const char *name, char *out, size_t cap)
{
	const cJSON *ev;
	size_t len = 0;
	out[0] = 0;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		if (strcmp(cJSON_GetObjectItemCaseSensitive(ev, "ph")->valuestring, "C") != 0 ||
		    strcmp(cJSON_GetObjectItemCaseSensitive(ev, "name")->valuestring, name) != 0)
			continue;
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
		len += (size_t)snprintf(out + len, cap - len, "%s%g", len ? " " : "",
					cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(args, "value")));
	}
}

/* A script loop names its steps with std::strings gone by the dump; C++'s TT_FUNC
 * names a member function and a function template qualified; an argument has a name. */
static void test_script_names(void **state)
{
	struct tt_fixture *fx = *state;
	cJSON *root = run_and_convert(fx->dir, "");
	char *listing = tt_json_thread_listing(root, "main");
	assert_non_null(listing);
	assert_string_equal(listing, "X script_0 0\ni step 0 0\n"
				     "X script_1 0\ni step 1 0\n"
				     "X script_2 0\ni step 2 0\n"
				     "X script_0 0\ni step 3 0\n"
				     "X script_1 0\ni step 4 0\n"
				     "i loaded 0\nX Queue::pop 0\nX checksum<int> 0\n");
	free(listing);
	/* a named argument (the Perfetto check compares the args too) */
	const cJSON *loaded = tt_json_find(root, "i", "loaded");
	assert_non_null(loaded);
	assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(
				 cJSON_GetObjectItemCaseSensitive(loaded, "args"), "bytes")), 4096);
	char values[128];
	counter_values(root, "script_0.calls", values, sizeof values);
	assert_string_equal(values, "8 8");
	counter_values(root, "script_2.calls", values, sizeof values);
	assert_string_equal(values, "8");
	cJSON_Delete(root);
}

/* Four threads record the same 3000 names at once, twice: each name is one call site
 * in the file, and every call is counted under it. */
static void test_many_names_on_threads(void **state)
{
	struct tt_fixture *fx = *state;
	assert_int_equal(tt_sh("TICKTRACE_OUT='%s' '%s' --many 3000", fx->in, program), 0);
	struct tt_run r;
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, ", 3000 call sites,"));
	free(r.out);
	TT_RUN(&r, "report", fx->in, "--json", "-q");
	assert_int_equal(r.status, 0);
	cJSON *report = cJSON_Parse(r.out);
	free(r.out);
	assert_non_null(report);
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(report, "rows"), *row;
	assert_int_equal(cJSON_GetArraySize(rows), 3000);
	cJSON_ArrayForEach(row, rows)
	{
		const char *name = cJSON_GetObjectItemCaseSensitive(row, "name")->valuestring;
		assert_int_equal(strncmp(name, "name_", 5), 0);
		assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(row, "calls")), 8);
	}
	cJSON_Delete(report);
}

/* The spike log of `ttr` (ticktrace spikes with `args`), in buf. */
static void spikes(const char *ttr, const char *arg, const char *value, char *buf, size_t cap)
{
	struct tt_run r;
	if (arg)
		TT_RUN(&r, "spikes", ttr, "-q", arg, value);
	else
		TT_RUN(&r, "spikes", ttr, "-q");
	if (r.status)
		print_message("%s", r.err);
	assert_int_equal(r.status, 0);
	snprintf(buf, cap, "%s", r.out);
	free(r.out);
}

/* The X events of a thread (by name) with one argument, as "name=value" lines. */
static void slice_args(cJSON *root, const char *thread, const char *key, char *out, size_t cap)
{
	uint32_t tid = 0;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
		if (strcmp(cJSON_GetObjectItemCaseSensitive(ev, "name")->valuestring, "thread_name") == 0 &&
		    strcmp(cJSON_GetObjectItemCaseSensitive(args, "name")->valuestring, thread) == 0)
			tid = (uint32_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ev, "tid"));
	}
	assert_int_not_equal(tid, 0);
	size_t len = 0;
	out[0] = 0;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		const cJSON *arg = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "args"), key);
		if (strcmp(cJSON_GetObjectItemCaseSensitive(ev, "ph")->valuestring, "X") != 0 || !arg ||
		    (uint32_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ev, "tid")) != tid)
			continue;
		const char *name = cJSON_GetObjectItemCaseSensitive(ev, "name")->valuestring;
		if (cJSON_IsString(arg))
			len += (size_t)snprintf(out + len, cap - len, "%s=%s\n", name, arg->valuestring);
		else
			len += (size_t)snprintf(out + len, cap - len, "%s=%g\n", name, cJSON_GetNumberValue(arg));
		assert_true(len < cap);
	}
}

/* A game loop: the frames are a track in both formats, each scope's TT_SCOPE_VALUE and
 * TT_DESCRIBE are its args in both, the spike log says in PET's words which frame the
 * slow script was in and how many frames long it was, and report --frames finds it. */
static void test_frames_values_descriptions(void **state)
{
	struct tt_fixture *fx = *state;
	cJSON *root = run_and_convert(fx->dir, "--frames");
	char *frames = tt_json_thread_listing(root, "frame");
	assert_non_null(frames);
	assert_string_equal(frames, "X frame 1 0\nX frame 2 0\nX frame 3 0\nX frame 4 0\nX frame 5 0\n"
				    "X frame 6 0\nX frame 7 0\nX frame 8 0\nX frame 9 0\nX frame 10 0\n");
	free(frames);
	char got[2048];
	slice_args(root, "main", "value", got, sizeof got);
	assert_string_equal(got, "tick=100\ntick=200\ntick=300\ntick=400\ntick=500\ntick=600\n"
				 "tick=700\ntick=800\ntick=900\ntick=1000\n");
	slice_args(root, "main", "description", got, sizeof got);
	assert_non_null(strstr(got, "script=frame 1 runs script\n"));
	assert_non_null(strstr(got, "slow_script=frame 6 runs slow_script\n"));
	assert_non_null(strstr(got, "script=frame 10 runs script\n"));
	cJSON_Delete(root);

	char log[8192];
	char ttr[256];
	snprintf(ttr, sizeof ttr, "%s/run.ttr", fx->dir);
	spikes(ttr, "--threshold", "25ms", log, sizeof log);
	const char *line = strstr(log, "spike: slow_script @ frame 6 took ");
	if (!line)
		fail_msg("no spike of slow_script in frame 6:\n%s", log);
	double ms, frames_long;
	assert_int_equal(sscanf(line, "spike: slow_script @ frame 6 took %lf ms (%lf frames)", &ms,
				&frames_long), 2);
	assert_true(ms >= 30 && frames_long > 0);

	/* report --frames: the distribution, the frames over budget, and frame 6 among the
	 * worst, slow_script taking the most of it */
	struct tt_run r;
	TT_RUN(&r, "report", ttr, "-q", "--frames", "--budget", "20ms");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "frames: 10 frames of \"frame\", "));
	assert_non_null(strstr(r.out, "frame time: mean "));
	unsigned over;
	const char *budget = strstr(r.out, "over the budget of 20.000 ms: ");
	assert_non_null(budget);
	assert_int_equal(sscanf(budget, "over the budget of 20.000 ms: %u frames", &over), 1);
	assert_true(over >= 1 && over <= 10);
	const char *worst = strstr(r.out, "\n  frame 6 took ");
	if (!worst)
		fail_msg("frame 6 is not among the worst frames:\n%s", r.out);
	assert_non_null(strstr(worst, ": slow_script "));
	assert_true(strchr(worst + 1, '\n') > strstr(worst, ": slow_script "));
	free(r.out);
}

/* TT_SCOPE_IF records only when its condition holds, TT_PAUSE_IF leaves out what
 * follows it in its block, TT_IGNORE_IF exempts its scope when it holds;
 * TT_PARENTS_THRESHOLD_NS gives every enclosing scope the threshold, so "even", slow
 * for reasons of its own beside its slow child, spikes too (it has no threshold
 * otherwise). */
static void test_conditional_and_parents_threshold(void **state)
{
	struct tt_fixture *fx = *state;
	cJSON *root = run_and_convert(fx->dir, "--conditional");
	char *listing = tt_json_thread_listing(root, "main");
	assert_non_null(listing);
	assert_string_equal(listing, "X outer 0\nX even 1\nX inner 2\nX maybe_ignored 2\n"
				     "X outer 0\nX even 1\nX inner 2\nX maybe_ignored 2\n"
				     "X outer 0\nX inner 1\nX maybe_ignored 1\n");
	free(listing);
	cJSON_Delete(root);
	char log[8192], ttr[256];
	snprintf(ttr, sizeof ttr, "%s/run.ttr", fx->dir);
	spikes(ttr, NULL, NULL, log, sizeof log);
	const char *inner = strstr(log, "spike: inner took ");
	const char *even = strstr(log, "spike: even took ");
	if (!inner || !even || even < inner)
		fail_msg("expected spikes of inner, then even:\n%s", log);
	assert_non_null(strstr(inner, "(threshold 500.000 us, TT_THRESHOLD_NS)"));
	assert_non_null(strstr(even, "(threshold 500.000 us, TT_THRESHOLD_NS)"));
	assert_null(strstr(log, "spike: outer"));
	/* 300 us over its 100 us on iterations 0 and 2; ignored on 3 */
	const char *maybe = strstr(log, "spike: maybe_ignored took ");
	assert_non_null(maybe);
	maybe = strstr(maybe + 1, "spike: maybe_ignored took ");
	assert_non_null(maybe);
	assert_null(strstr(maybe + 1, "spike: maybe_ignored took "));
}

static const cJSON *report_row(const cJSON *report, const char *name)
{
	const cJSON *row;
	cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(report, "rows"))
	{
		if (strcmp(cJSON_GetObjectItemCaseSensitive(row, "name")->valuestring, name) == 0)
			return row;
	}
	fail_msg("no row %s", name);
	return NULL;
}

static double field(const cJSON *row, const char *key)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(row, key));
}

/* The report is honest on real code: fib, recursive, takes no longer than the scope
 * around it (its outermost calls' total), while its mean is every call's; a scope
 * whose median call is within 3 x what recording a call costs is flagged, a slow one
 * not. */
static void test_report_recursion_and_overhead(void **state)
{
	struct tt_fixture *fx = *state;
	assert_int_equal(tt_sh("TICKTRACE_OUT='%s' '%s' --recursion", fx->in, program), 0);
	struct tt_run r;
	TT_RUN(&r, "report", fx->in, "--json", "-q");
	assert_int_equal(r.status, 0);
	cJSON *report = cJSON_Parse(r.out);
	free(r.out);
	assert_non_null(report);
	const cJSON *fib = report_row(report, "fib"), *run = report_row(report, "run");
	assert_int_equal(field(fib, "calls"), 465); /* fib(12) calls itself 464 times */
	assert_true(field(fib, "total_ns") <= field(run, "total_ns"));
	assert_true(field(fib, "total_ns") >= field(fib, "max_ns")); /* the outermost call */
	assert_true(field(fib, "mean_ns") * 465 > 2 * field(fib, "total_ns")); /* nested calls */
	assert_true(field(fib, "self_ns") + field(fib, "children_ns") == field(fib, "total_ns"));
	/* a name nested in itself through another call site counts once too */
	const cJSON *phase = report_row(report, "phase");
	assert_int_equal(field(phase, "calls"), 2);
	assert_int_equal(field(phase, "total_ns"), field(phase, "max_ns"));
	assert_true(field(report, "call_overhead_ns") > 0);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(report_row(report, "tiny"),
								  "near_overhead")));
	assert_null(cJSON_GetObjectItemCaseSensitive(report_row(report, "slow"), "near_overhead"));
	cJSON_Delete(report);
	TT_RUN(&r, "report", fx->in, "-q");
	assert_int_equal(r.status, 0);
	const char *tiny = strstr(r.out, "\ntiny ");
	assert_non_null(tiny);
	assert_int_equal(strncmp(strchr(tiny + 1, '\n') - 3, "  ~", 3), 0);
	assert_non_null(strstr(r.out, "\n~ median within 3 x what recording a call costs here ("));
	free(r.out);
}

/* spikes --suggest on a run without markup: tick's own threshold, main to ignore,
 * and the exact GCC flag that leaves mem_read out. */
static void test_suggest(void **state)
{
	struct tt_fixture *fx = *state;
	assert_int_equal(tt_sh("TICKTRACE_OUT='%s' '%s'", fx->in, suggest_program), 0);
	char log[8192];
	spikes(fx->in, "--threshold", "1ms", log, sizeof log);
	assert_non_null(strstr(log, "spike: tick took ")); /* the spikes, without --suggest */
	struct tt_run r;
	TT_RUN(&r, "spikes", fx->in, "-q", "--threshold", "1ms", "--suggest");
	assert_int_equal(r.status, 0);
	const char *want[] = {
		"suggested markup (global threshold 1.000 ms):\n",
		"thresholds of their own (over the global threshold on most calls):\n",
		"  tick: 50 of 50 calls over, p50 ",
		"TT_IGNORE() candidates (every call over, mostly time in others):\n  main: 1 calls, ",
		"leave out (median within 3 x what recording a call costs here, ",
		"  mem_read: 100000 calls, median ",
		"\n  -finstrument-functions-exclude-function-list=mem_read\n",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!strstr(r.out, want[i]))
			fail_msg("no \"%s\" in:\n%s", want[i], r.out);
	long long ns;
	const char *threshold = strstr(r.out, "TT_THRESHOLD_NS(");
	assert_non_null(threshold);
	assert_int_equal(sscanf(threshold, "TT_THRESHOLD_NS(%lld)", &ns), 1);
	assert_true(ns >= 1200000); /* tick's p99, rounded up */
	assert_null(strstr(r.out, "spike: "));
	free(r.out);
}

static int setup(void **state)
{
	return tt_fixture_setup(state, "run.ttr", "run.json");
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: test_names PROGRAM SUGGEST_PROGRAM CHECK_PERFETTO.py SCHEMA.proto\n");
		return 2;
	}
	program = argv[1];
	suggest_program = argv[2];
	check_py = argv[3];
	schema = argv[4];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_script_names, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_many_names_on_threads, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_frames_values_descriptions, setup,
						tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_conditional_and_parents_threshold, setup,
						tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_report_recursion_and_overhead, setup,
						tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_suggest, setup, tt_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
