/* Self-profiling from hardware sources. Needs a PMU that perf exposes (and perf
 * allowed): where there is none, exits 77 (skipped) and says why. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_profile_calib.h"
#include "ticktrace/profile.h"

static struct tt_profile *calib_profile(enum tt_profile_source source, uint64_t interval)
{
	struct tt_profile_config cfg = {.bucket_size = 64, .source = source, .interval = interval};
	TT_PROFILE_SECTION(&cfg, calib);
	struct tt_profile *p = NULL;
	assert_int_equal(tt_profile_create(&p, &cfg), 0);
	return p;
}

/* A runs three times B's iterations of the same two instructions: the instruction
 * share is 3/4 by construction, whatever the machine's speed. */
static void test_instruction_shares(void **state)
{
	(void)state;
	struct tt_profile *p = calib_profile(TT_PROFILE_INSTRUCTIONS, 100003);
	uint64_t n_b = tt_test_calib_iterations(500000), counts[2];
	assert_int_equal(tt_profile_start(p), 0);
	for (int i = 0; i < 2000; i++) {
		tt_test_calib_a(3 * n_b);
		tt_test_calib_b(n_b);
	}
	assert_int_equal(tt_profile_stop(p), 0);
	assert_int_equal(tt_profile_read(p, counts, 2, NULL), 0);
	tt_profile_close(p);
	double n = (double)(counts[0] + counts[1]), share = (double)counts[0] / n;
	double tol = 5 * sqrt(0.75 * 0.25 / n) + 0.01; /* 0.01: skid across the boundary */
	printf("# %.0f samples, A share %.4f (3/4 by construction, tolerance %.4f)\n", n, share, tol);
	assert_true(n >= 1000);
	assert_true(fabs(share - 0.75) <= tol);
}

/* Each loop mispredicts its exit once per call: many short calls are many misses,
 * all at the loops' branches. */
static void test_branch_misses_land_in_the_loops(void **state)
{
	(void)state;
	struct tt_profile *p = calib_profile(TT_PROFILE_BRANCH_MISSES, 101);
	struct tt_profile_stats st;
	assert_int_equal(tt_profile_start(p), 0);
	for (uint64_t i = 0; i < 200000; i++)
		tt_test_calib_a(20 + (i * 7919) % 37); /* varying trip counts defeat the predictor */
	assert_int_equal(tt_profile_stop(p), 0);
	assert_int_equal(tt_profile_read(p, NULL, 0, &st), 0);
	tt_profile_close(p);
	printf("# branch misses: %llu in range, %llu outside\n", (unsigned long long)st.samples,
	       (unsigned long long)st.outside);
	assert_int_equal(st.source, TT_PROFILE_BRANCH_MISSES);
	assert_true(st.samples > 0);
}

static void test_every_hardware_source_opens(void **state)
{
	(void)state;
	const enum tt_profile_source sources[] = {TT_PROFILE_INSTRUCTIONS, TT_PROFILE_CYCLES,
						  TT_PROFILE_BRANCH_MISSES, TT_PROFILE_CACHE_MISSES};
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		struct tt_profile *p = calib_profile(sources[i], 0);
		struct tt_profile_stats st;
		assert_int_equal(tt_profile_start(p), 0);
		tt_test_calib_a(tt_test_calib_iterations(20000000));
		assert_int_equal(tt_profile_stop(p), 0);
		assert_int_equal(tt_profile_read(p, NULL, 0, &st), 0);
		assert_int_equal(st.source, sources[i]);
		assert_int_equal(st.mechanism, TT_PROFILE_PERF);
		assert_int_equal(st.effective_interval_ns, 0); /* an event count, not time */
		tt_profile_close(p);
	}
}

int main(void)
{
	struct tt_profile_config cfg = {.source = TT_PROFILE_INSTRUCTIONS};
	TT_PROFILE_SECTION(&cfg, calib);
	struct tt_profile *p = NULL;
	int rc = tt_profile_create(&p, &cfg);
	if (rc == -ENODEV) {
		printf("SKIP: no hardware PMU is exposed to perf on this machine (a VM without "
		       "PMU passthrough?): hardware sources cannot be sampled here\n");
		return 77;
	}
	if (rc == -EACCES || rc == -EPERM || rc == -ENOSYS) {
		printf("SKIP: perf_event_open is denied here (%s); hardware sources need it\n",
		       strerror(-rc));
		return 77;
	}
	if (rc != 0) {
		printf("FAIL: creating an instructions profile: %s\n", strerror(-rc));
		return 1;
	}
	tt_profile_close(p);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_instruction_shares),
		cmocka_unit_test(test_branch_misses_land_in_the_loops),
		cmocka_unit_test(test_every_hardware_source_opens),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
