/* Issue 24 item 17: an argument of a signed type (TT_INSTANT_ARG(name, -5)) was shown
 * as the hex string of its two's complement. The site says at compile time that its
 * argument is signed (from the argument's type), the file says so (ARG_NAMES), and
 * the trace shows the value as a signed integer; unsigned arguments stay as they were. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ticktrace.h"
#include "tt_check.h"
#include "tt_test_trace.h"

/* The args of the first instant named `name`, printed. */
static char *arg_of(cJSON *root, const char *name)
{
	cJSON *ev = tt_json_find(root, "i", name);
	if (!ev)
		fail_msg("no instant %s", name);
	return cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(ev, "args"));
}

static void test_signed_args(void **state)
{
	(void)state;
	int minus_five = -5;
	int64_t lowest = INT64_MIN;
	uint64_t highest = UINT64_MAX;
	unsigned seven = 7;
	TT_INSTANT_ARG("int", minus_five);
	TT_INSTANT_ARG("int64", lowest);
	TT_INSTANT_ARG("uint64", highest);
	TT_INSTANT_ARG("unsigned", seven);
	TT_INSTANT_NAMED_ARG("named", "delta", -3);
	struct tt_test_trace trace;
	tt_test_dump(&trace);
	char json[128];
	snprintf(json, sizeof json, "%s.json", trace.path);
	struct tt_run r;
	TT_RUN(&r, "convert", "-q", trace.path, "-o", json);
	free(r.out);
	if (r.status != 0)
		fail_msg("convert: %s", r.err);
	cJSON *root = tt_json_load(json);
	remove(json); /* (before any check can end the test) */
	assert_non_null(root);
	static const char *const want[][2] = {
		{"int", "{\"arg\":-5}"},
		{"int64", "{\"arg\":\"-9223372036854775808\"}"}, /* past 2^53: a string */
		{"uint64", "{\"arg\":\"0xffffffffffffffff\"}"},
		{"unsigned", "{\"arg\":7}"},
		{"named", "{\"delta\":-3}"},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		char *args = arg_of(root, want[i][0]);
		if (strcmp(args, want[i][1]) != 0)
			fail_msg("%s: args %s, not %s", want[i][0], args, want[i][1]);
		free(args);
	}
	cJSON_Delete(root);
	tt_test_close(&trace);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_signed_args)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
