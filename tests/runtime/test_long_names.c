/* Run-time names of any length (issue 24 item 5): a name longer than a reader takes
 * (TT_NAME_MAX) is kept as its first bytes and "...", in memory the writer knows, so
 * that the file names it (a name over 262,100 bytes was once named "(unloaded
 * library)", and one over 65,536 made every reader refuse the file). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ticktrace.h"
#include "tt_test_trace.h"

static void test_long_names_cut(void **state)
{
	(void)state;
	static const size_t lengths[] = {70000, 300000, 300000};
	for (size_t i = 0; i < 3; i++) {
		char *name = malloc(lengths[i] + 1);
		assert_non_null(name);
		memset(name, i == 2 ? 'b' : 'a', lengths[i]);
		name[lengths[i]] = 0;
		TT_INSTANT_DYN(name);
		free(name);
	}
	TT_INSTANT_DYN("short");
	struct tt_test_trace trace;
	tt_test_dump(&trace);
	/* the two names of 'a' share their first bytes: one site; the 'b' name another */
	size_t cut = 0;
	bool a = false, b = false;
	for (size_t i = 0; i < trace.file.nsites; i++) {
		const struct tt_str *name = &trace.file.sites[i].name;
		if (name->len <= 100)
			continue;
		assert_int_equal(name->len, TT_NAME_MAX);
		assert_memory_equal(name->ptr + TT_NAME_MAX - 3, "...", 3);
		a |= name->ptr[0] == 'a';
		b |= name->ptr[0] == 'b';
		cut++;
	}
	assert_true(a && b);
	assert_int_equal(cut, 2);
	tt_test_close(&trace);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_long_names_cut)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
