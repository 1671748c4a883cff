/* Bucket arithmetic: instruction pointers fed straight to the accounting that the
 * drain thread and the signal handler use, over a range nothing executes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sampler/sampler.h"

enum { START = 0x10000, SIZE = 130 };

/* The offsets fed, each once; then where each bucket size must put them. */
static const uintptr_t offsets[] = {0, 3, 4, 63, 64, 129};

static struct tt_profile *fed_profile(size_t bucket, uint64_t *counts, size_t n,
				      struct tt_profile_stats *st)
{
	struct tt_profile_config cfg = {.start = (const void *)START, .size = SIZE,
					.bucket_size = bucket};
	struct tt_profile *p = NULL;
	assert_int_equal(tt_profile_create(&p, &cfg), 0);
	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++)
		tt__profile_account(p, START + offsets[i]);
	/* Just past either end, and far away in both directions. */
	tt__profile_account(p, START + SIZE);
	tt__profile_account(p, START - 1);
	tt__profile_account(p, 0);
	tt__profile_account(p, UINTPTR_MAX);
	assert_int_equal(tt_profile_read(p, counts, n, st), 0);
	assert_int_equal(st->outside, 4);
	assert_int_equal(st->samples, 6);
	return p;
}

static void expect(size_t bucket, size_t nbuckets, const size_t *nonzero, const uint64_t *want,
		   size_t nwant)
{
	uint64_t counts[SIZE] = {0};
	struct tt_profile_stats st;
	struct tt_profile *p = fed_profile(bucket, counts, SIZE, &st);
	assert_int_equal(st.buckets, nbuckets);
	uint64_t expected[SIZE] = {0};
	for (size_t i = 0; i < nwant; i++)
		expected[nonzero[i]] = want[i];
	assert_memory_equal(counts, expected, sizeof(counts));
	tt_profile_close(p);
}

static void test_bucket_1(void **state)
{
	(void)state;
	const size_t at[] = {0, 3, 4, 63, 64, 129};
	const uint64_t n[] = {1, 1, 1, 1, 1, 1};
	expect(1, 130, at, n, 6);
}

static void test_bucket_4(void **state)
{
	(void)state;
	const size_t at[] = {0, 1, 15, 16, 32}; /* 0 and 3 share bucket 0 */
	const uint64_t n[] = {2, 1, 1, 1, 1};
	expect(4, 33, at, n, 5);
}

static void test_bucket_64(void **state)
{
	(void)state;
	const size_t at[] = {0, 1, 2}; /* 130 bytes: the last bucket is partial */
	const uint64_t n[] = {4, 1, 1};
	expect(64, 3, at, n, 3);
}

static void test_bucket_default_and_large(void **state)
{
	(void)state;
	const size_t at4[] = {0, 1, 15, 16, 32};
	const uint64_t n4[] = {2, 1, 1, 1, 1};
	expect(0, 33, at4, n4, 5); /* 0 means 4 */
	const size_t at[] = {0};
	const uint64_t n[] = {6};
	expect((size_t)1 << 40, 1, at, n, 1);
}

static void test_short_read(void **state)
{
	(void)state;
	uint64_t counts[3] = {0, 0, 99};
	struct tt_profile_stats st;
	struct tt_profile *p = fed_profile(64, counts, 2, &st); /* 3 buckets, room for 2 */
	assert_int_equal(counts[0], 4);
	assert_int_equal(counts[1], 1);
	assert_int_equal(counts[2], 99);
	tt_profile_close(p);
}

static void test_not_power_of_two(void **state)
{
	(void)state;
	const size_t bad[] = {3, 6, 48, 65};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tt_profile_config cfg = {.start = (const void *)START, .size = SIZE,
						.bucket_size = bad[i]};
		struct tt_profile *p = NULL;
		assert_int_equal(tt_profile_create(&p, &cfg), -EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_1),
		cmocka_unit_test(test_bucket_4),
		cmocka_unit_test(test_bucket_64),
		cmocka_unit_test(test_bucket_default_and_large),
		cmocka_unit_test(test_short_read),
		cmocka_unit_test(test_not_power_of_two),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
