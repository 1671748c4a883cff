/* Names made at run time and C++'s TT_FUNC, end to end: names_program runs, its
 * trace is converted to JSON and Perfetto (which must agree, check-perfetto.py), and
 * the names are the program's: interned once per call site and name, whatever the
 * threads and however long ago the string was freed.
 *
 *   test_names PROGRAM CHECK_PERFETTO.py SCHEMA.proto */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tt_check.h"

static const char *program, *check_py, *schema;

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
	int rc = tt_check_perfetto(check_py, schema, pf, json, dir);
	assert_true(rc == 0 || rc == 77);
	cJSON *root = tt_json_load(json);
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
 * names a member function and a function template qualified. */
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
				     "X Queue::pop 0\nX checksum<int> 0\n");
	free(listing);
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

static int setup(void **state)
{
	return tt_fixture_setup(state, "run.ttr", "run.json");
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: test_names PROGRAM CHECK_PERFETTO.py SCHEMA.proto\n");
		return 2;
	}
	program = argv[1];
	check_py = argv[2];
	schema = argv[3];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_script_names, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_many_names_on_threads, setup, tt_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
