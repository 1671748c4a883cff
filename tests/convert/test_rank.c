/* tt_rank_test: the Mann-Whitney test from two histograms gives what the test gives
 * on the calls themselves (ties and all), computed here the slow way, pair by pair. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "report/report.h"

static void fill(struct tt_an_hist *h, const int64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		assert_int_equal(tt_an_hist_add(h, v[i]), 0);
}

/* The textbook test on raw values (below 64 ns every value is a bucket of its own):
 * U by pairs, the tie correction from the pooled values' repeats. */
static void by_pairs(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *z, double *p)
{
	double u = 0, ties = 0;
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			u += b[j] > a[i] ? 1 : b[j] == a[i] ? 0.5 : 0;
	for (int64_t v = 0; v < 64; v++) {
		double t = 0;
		for (size_t i = 0; i < na; i++)
			t += a[i] == v;
		for (size_t j = 0; j < nb; j++)
			t += b[j] == v;
		ties += t * t * t - t;
	}
	double n = (double)(na + nb), mean = (double)na * (double)nb / 2;
	double var = (double)na * (double)nb / 12 * ((n + 1) - ties / (n * (n - 1)));
	double off = fabs(u - mean) - 0.5;
	*z = off > 0 ? copysign(off, u - mean) / sqrt(var) : 0;
	*p = erfc(fabs(*z) / sqrt(2));
}

static void check(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
	struct tt_an_hist ha = {0}, hb = {0};
	fill(&ha, a, na);
	fill(&hb, b, nb);
	struct tt_rank_test r;
	tt_rank_test(&ha, &hb, &r);
	double z, p;
	by_pairs(a, na, b, nb, &z, &p);
	assert_int_equal(r.base_calls, na);
	assert_int_equal(r.new_calls, nb);
	assert_true(fabs(r.z - z) < 1e-9);
	assert_true(fabs(r.p_value - p) < 1e-9);
	free(ha.counts);
	free(hb.counts);
}

/* Apart: scipy.stats.mannwhitneyu([1..5], [6..10]) gives p = 0.01219 (two-sided,
 * continuity-corrected, asymptotic). */
static void test_separate(void **state)
{
	(void)state;
	const int64_t a[] = {1, 2, 3, 4, 5}, b[] = {6, 7, 8, 9, 10};
	struct tt_an_hist ha = {0}, hb = {0};
	fill(&ha, a, 5);
	fill(&hb, b, 5);
	struct tt_rank_test r;
	tt_rank_test(&ha, &hb, &r);
	assert_true(fabs(r.p_value - 0.01219) < 1e-5);
	assert_true(r.z > 0);
	assert_true(r.superiority == 1.0);
	tt_rank_test(&hb, &ha, &r); /* the other way: the same p, a shift down */
	assert_true(fabs(r.p_value - 0.01219) < 1e-5);
	assert_true(r.z < 0 && r.superiority == 0.0);
	check(a, 5, b, 5);
	free(ha.counts);
	free(hb.counts);
}

static void test_ties(void **state)
{
	(void)state;
	const int64_t a[] = {1, 1, 2, 2, 3, 3, 3, 7}, b[] = {2, 3, 3, 4, 4, 4, 9, 9, 12};
	check(a, 8, b, 9);
	const int64_t c[] = {5, 5, 5, 6}, d[] = {5, 6, 6, 6, 6, 40};
	check(c, 4, d, 6);
	check(d, 6, c, 4);
}

/* Random samples, shifted or not, against the pairwise test. */
static void test_random(void **state)
{
	(void)state;
	unsigned seed = 7;
	int64_t a[200], b[300];
	for (int round = 0; round < 20; round++) {
		int shift = round % 4;
		for (size_t i = 0; i < 200; i++)
			a[i] = rand_r(&seed) % 40;
		for (size_t i = 0; i < 300; i++)
			b[i] = rand_r(&seed) % 40 + shift;
		check(a, 200, b, 300);
	}
}

/* Calls in one bucket ([1008, 1024): 1.6 % wide) tie: durations that close cannot be told apart,
 * and all-tied histograms give p = 1, not a division by zero. */
static void test_resolution(void **state)
{
	(void)state;
	struct tt_an_hist ha = {0}, hb = {0};
	for (int i = 0; i < 10000; i++) {
		assert_int_equal(tt_an_hist_add(&ha, 1008), 0);
		assert_int_equal(tt_an_hist_add(&hb, 1015), 0);
	}
	struct tt_rank_test r;
	tt_rank_test(&ha, &hb, &r);
	assert_true(r.p_value == 1 && r.z == 0 && r.superiority == 0.5);
	/* a bucket apart, with as many calls, is a certain shift */
	for (int i = 0; i < 10000; i++)
		assert_int_equal(tt_an_hist_add(&hb, 1040), 0);
	tt_rank_test(&ha, &hb, &r);
	assert_true(r.p_value < 1e-100 && r.z > 0);
	free(ha.counts);
	free(hb.counts);
}

/* A side without calls: nothing to compare. */
static void test_empty(void **state)
{
	(void)state;
	struct tt_an_hist empty = {0}, h = {0};
	assert_int_equal(tt_an_hist_add(&h, 100), 0);
	struct tt_rank_test r;
	tt_rank_test(&empty, &h, &r);
	assert_true(r.p_value == 1 && r.base_calls == 0 && r.new_calls == 1);
	tt_rank_test(&h, &empty, &r);
	assert_true(r.p_value == 1);
	free(h.counts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_separate), cmocka_unit_test(test_ties), cmocka_unit_test(test_random),
		cmocka_unit_test(test_resolution), cmocka_unit_test(test_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
