/* What a user looks at, through the ticktrace command (and, where a limit cannot be
 * reached in a test's time, tt_convert itself): the warning about JSON too large for
 * a viewer; --clip cutting slices at the --from/--to window; `info` sites. */
#include <fcntl.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt_check.h"
#include "tt_convert.h"
#include "tt_demo.h"

/* Runs tt_convert in this process with stderr into `err` (cap bytes); its status. */
static int convert_capturing(const struct tt_convert_opts *opts, char *err, size_t cap)
{
	char path[] = "/tmp/tt-stderr-XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	fflush(stderr);
	dup2(fd, 2);
	int rc = tt_convert(opts, NULL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ssize_t n = pread(fd, err, cap - 1, 0);
	err[n > 0 ? n : 0] = 0;
	close(fd);
	unlink(path);
	return rc;
}

/* JSON over what viewers load gets a warning that says what to do instead; JSON
 * under it, and Perfetto's format, none. (The real limit is 512 MB: the test lowers
 * it to the size of the demo's JSON.) */
static void test_json_too_large(void **state)
{
	struct tt_fixture *fx = *state;
	assert_int_equal(tt_demo_write(fx->in), 0);
	char *inputs[] = {fx->in}, err[4096];
	struct tt_convert_opts opts = {.inputs = inputs, .ninputs = 1, .output = fx->out,
				       .quiet = true, .thresholds.global = TT__NO_THRESHOLD};
	assert_int_equal(convert_capturing(&opts, err, sizeof(err)), 0);
	assert_null(strstr(err, "JSON"));
	off_t size = lseek(open(fx->out, O_RDONLY | O_CLOEXEC), 0, SEEK_END);
	assert_true(size > 100);

	opts.force = true;
	opts.json_limit = (uint64_t)size; /* exactly at the limit: loads */
	assert_int_equal(convert_capturing(&opts, err, sizeof(err)), 0);
	assert_null(strstr(err, "JSON"));
	opts.json_limit = (uint64_t)size - 1;
	assert_int_equal(convert_capturing(&opts, err, sizeof(err)), 0);
	if (!strstr(err, "warning: ") || !strstr(err, "of JSON, more than the") ||
	    !strstr(err, "Perfetto's format") || !strstr(err, "--min-dur"))
		fail_msg("no warning, or not the advice:\n%s", err);

	opts.output = fx->aux;
	opts.format = TT_FORMAT_PERFETTO;
	opts.json_limit = 1;
	assert_int_equal(convert_capturing(&opts, err, sizeof(err)), 0);
	assert_null(strstr(err, "JSON"));
}

static const char *check_perfetto, *perfetto_proto; /* tests/consumers/, tools/ */

static double number(const cJSON *o, const char *key)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static bool flag(const cJSON *slice, const char *key)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(slice, "args"), key));
}

/* --clip cuts every slice at the window and flags the cut ones; the Perfetto output
 * holds the same slices (tests/consumers/check-perfetto.py). Without it, "main"
 * spans more than the window. */
static void test_clip(void **state)
{
	struct tt_fixture *fx = *state;
	assert_int_equal(tt_demo_write(fx->in), 0);
	struct tt_run r;
	TT_RUN(&r, "convert", "-q", fx->in, "-o", fx->out, "--from", "5us", "--to", "6us");
	assert_int_equal(r.status, 0);
	free(r.out);
	cJSON *whole = tt_json_load(fx->out);
	const cJSON *main_whole = tt_json_find(whole, "X", "main");
	assert_true(number(main_whole, "dur") > 1.5);
	assert_false(flag(main_whole, "clipped_begin"));

	TT_RUN(&r, "convert", "-q", "-f", fx->in, "-o", fx->out, "--from", "5us", "--to", "6us", "--clip");
	assert_int_equal(r.status, 0);
	free(r.out);
	cJSON *root = tt_json_load(fx->out);
	const cJSON *main_cut = tt_json_find(root, "X", "main");
	assert_non_null(main_cut);
	assert_true(flag(main_cut, "clipped_begin") && flag(main_cut, "clipped_end"));
	double from = number(main_cut, "ts"), to = from + number(main_cut, "dur");
	assert_true(to - from > 0.999 && to - from < 1.001); /* the window: 1 us */
	assert_true(from > number(main_whole, "ts"));
	const cJSON *ev;
	size_t slices = 0, cut = 0;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
		if (strcmp(ph->valuestring, "X") != 0)
			continue;
		double ts = number(ev, "ts"), end = ts + number(ev, "dur");
		if (ts < from - 1e-6 || end > to + 1e-6)
			fail_msg("a slice outside the window [%.3f, %.3f]: %.3f..%.3f", from, to, ts, end);
		slices++;
		cut += flag(ev, "clipped_begin") || flag(ev, "clipped_end");
	}
	assert_true(slices >= 3 && cut >= 2);
	cJSON_Delete(root);
	cJSON_Delete(whole);

	TT_RUN(&r, "convert", "-q", fx->in, "-o", fx->aux, "-F", "perfetto", "--from", "5us", "--to",
	       "6us", "--clip");
	assert_int_equal(r.status, 0);
	free(r.out);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s' '%s' '%s'", check_perfetto, fx->aux,
		 perfetto_proto, fx->out);
	int st = system(cmd);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		print_message("no protoc: the Perfetto output is not compared\n");
	else
		assert_int_equal(WEXITSTATUS(st), 0);

	TT_RUN(&r, "convert", fx->in, "-o", "-", "--clip");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--clip"));
	free(r.out);
}

static int setup(void **state)
{
	return tt_fixture_setup(state, "run.ttr", "run.json");
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test_viewers CHECK_PERFETTO_PY PERFETTO_PROTO\n");
		return 2;
	}
	check_perfetto = argv[1];
	perfetto_proto = argv[2];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_clip, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_json_too_large, setup, tt_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
