/* Built with -DTT_DISABLE and without the library: the profiling API still
 * compiles and links, the macros still find the section, and every call says
 * -ENOSYS. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "ticktrace/profile.h"

TT_PROFILED(disabled_probe) static int probe(int x)
{
	return x + 1;
}

static void test_disabled(void **state)
{
	(void)state;
	struct tt_profile_config cfg = {0};
	TT_PROFILE_SECTION(&cfg, disabled_probe);
	assert_true(cfg.size > 0);
	struct tt_profile *p = NULL;
	assert_int_equal(tt_profile_create(&p, &cfg), -ENOSYS);
	assert_null(p);
	assert_int_equal(tt_profile_start(p), -ENOSYS);
	assert_int_equal(tt_profile_stop(p), -ENOSYS);
	assert_int_equal(tt_profile_read(p, NULL, 0, NULL), -ENOSYS);
	assert_null(tt_profile_source_name(TT_PROFILE_TIME));
	tt_profile_close(p);
	assert_int_equal(probe(1), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_disabled)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
