/* What a user looks at, through the ticktrace command (and, where a limit cannot be
 * reached in a test's time, tt_convert itself): the warning about JSON too large for
 * a viewer; --clip cutting slices at the --from/--to window; `info` sites. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int setup(void **state)
{
	return tt_fixture_setup(state, "run.ttr", "run.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_json_too_large, setup, tt_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
