/* TSC ticks to CLOCK_MONOTONIC nanoseconds: exact integer results, compared with a
 * plain 128-bit division, for clock rates from 1 Hz to 2^62 Hz and tick counts up to
 * years (tt_clock_span_fits, the converter's, too); the perf conversion as the header
 * documents it; refusals of unusable clocks; and the microsecond text with exactly
 * three fraction digits. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "read/read.h"
#include "base/base.h"
#include <ticktrace/format.h>

typedef unsigned __int128 u128;

static struct tt_clock anchors_clock(uint64_t hz)
{
	struct tt_file_header h = {.tsc_source = TT_TSC_ANCHORS, .tsc_hz = hz};
	h.start.tsc = 1000000;
	h.start.monotonic_ns = 7000000000;
	struct tt_clock c;
	const char *why;
	assert_int_equal(tt_clock_init(&c, &h, &why), 0);
	return c;
}

/* xorshift: reproducible tick counts of every magnitude */
static uint64_t next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_anchors_exact(void **state)
{
	(void)state;
	static const uint64_t rates[] = {1, 3, 999999999, 1000000000, 1000000001, 2400000000,
					 2899999973, 3000000007, UINT64_C(1) << 40,
					 UINT64_C(1) << 62};
	uint64_t seed = 88172645463325252u;
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		struct tt_clock c = anchors_clock(rates[i]);
		for (int k = 0; k < 20000; k++) {
			/* up to about 2^(k % 56) ticks past the start anchor */
			uint64_t ticks = next_random(&seed) >> (8 + k % 56);
			u128 want = (u128)ticks * 1000000000u / rates[i];
			if (want > INT64_MAX - 7000000000)
				continue;
			int64_t got = tt_clock_ns(&c, 1000000 + ticks);
			if ((u128)(got - 7000000000) != want)
				fail_msg("hz %llu ticks %llu: %lld, expected %llu", (unsigned long long)rates[i],
					 (unsigned long long)ticks, (long long)got - 7000000000,
					 (unsigned long long)want);
			/* the converter's, for spans known to fit (shifts below and past 64) */
			if ((u128)tt_clock_span_fits(&c, ticks) != want)
				fail_msg("hz %llu ticks %llu: tt_clock_span_fits %lld, expected %llu",
					 (unsigned long long)rates[i], (unsigned long long)ticks,
					 (long long)tt_clock_span_fits(&c, ticks), (unsigned long long)want);
		}
		/* before the start anchor: the same span, backwards */
		assert_int_equal(tt_clock_ns(&c, 1000000 - 0), 7000000000);
	}
	struct tt_clock c = anchors_clock(3000000000);
	assert_int_equal(tt_clock_ns(&c, 1000000 - 3000), 7000000000 - 1000);
	assert_int_equal(tt_clock_ns(&c, 1000000 + 3000000000), 8000000000);
	assert_int_equal(tt_clock_ns(&c, 1000000 + 2), 7000000000); /* 0.67 ns floors to 0 */
	/* a hostile TSC saturates instead of wrapping */
	c = anchors_clock(1);
	assert_int_equal(tt_clock_ns(&c, UINT64_MAX), INT64_MAX);
}

static void test_refusals(void **state)
{
	(void)state;
	struct tt_clock c;
	const char *why = NULL;
	struct tt_file_header h = {.tsc_source = TT_TSC_ANCHORS, .tsc_hz = 0};
	assert_int_equal(tt_clock_init(&c, &h, &why), -1);
	assert_non_null(strstr(why, "tsc_hz"));
	h.tsc_hz = (UINT64_C(1) << 62) + 1;
	assert_int_equal(tt_clock_init(&c, &h, &why), -1);
	h.tsc_source = 9;
	assert_int_equal(tt_clock_init(&c, &h, &why), -1);
	assert_non_null(strstr(why, "tsc_source"));
}

/* The formatters behind every timestamp and number in the JSON. */
static void test_microseconds_text(void **state)
{
	(void)state;
	static const struct {
		int64_t ns;
		const char *text;
	} cases[] = {
		{0, "0.000"}, {7, "0.007"}, {999, "0.999"}, {1000, "1.000"}, {1234567, "1234.567"},
		{-1500, "-1.500"}, {INT64_MAX, "9223372036854775.807"},
	};
	struct tt_out o = {.buf = malloc(TT_OUT_BUFFER)};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		o.len = 0;
		tt_out_us(&o, cases[i].ns);
		tt_out_char(&o, 0);
		assert_string_equal(o.buf, cases[i].text);
	}
	o.len = 0;
	/* against printf: both sides of every power of ten (the fast path's edge at 10^11
	 * ns among them) and many values of every length, either sign */
	char want[48];
	uint64_t seed = 88172645463325252u, p = 1;
	for (int k = 0; k < 19 * 3 + 40000; k++) {
		int64_t ns;
		if (k < 57) {
			ns = (int64_t)(p + (uint64_t)(k % 3) - 1); /* 10^n - 1, 10^n, 10^n + 1 */
			if (k % 3 == 2)
				p *= 10;
		} else {
			ns = (int64_t)(next_random(&seed) >> (1 + k % 63));
		}
		if (k % 2)
			ns = -ns;
		uint64_t mag = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
		snprintf(want, sizeof(want), "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", mag / 1000,
			 (unsigned)(mag % 1000));
		o.len = 0;
		tt_out_us(&o, ns);
		tt_out_char(&o, 0);
		assert_string_equal(o.buf, want);
	}
	/* n / 10^places, against printf: every places from 0 to 19, n of every length */
	for (int k = 0; k < 40000; k++) {
		unsigned places = (unsigned)k % 20;
		uint64_t n = next_random(&seed) >> (k / 20 % 64), unit = 1;
		for (unsigned i = 0; i < places; i++)
			unit *= 10;
		if (places)
			snprintf(want, sizeof(want), "%" PRIu64 ".%0*" PRIu64, n / unit, (int)places,
				 n % unit);
		else
			snprintf(want, sizeof(want), "%" PRIu64 ".", n);
		o.len = 0;
		tt_out_decimal(&o, n, places);
		tt_out_char(&o, 0);
		assert_string_equal(o.buf, want);
	}
	o.len = 0;
	tt_out_u64(&o, UINT64_MAX);
	tt_out_char(&o, ' ');
	tt_out_i64(&o, INT64_MIN);
	tt_out_char(&o, ' ');
	tt_out_hex(&o, 0xabc);
	tt_out_char(&o, 0);
	assert_string_equal(o.buf, "18446744073709551615 -9223372036854775808 0xabc");
	free(o.buf);
}

/* Integers as text, against printf: both sides of every power of ten, and many
 * values of every length. */
static void test_integer_text(void **state)
{
	(void)state;
	struct tt_out o = {.buf = malloc(TT_OUT_BUFFER)};
	char want[32];
	uint64_t seed = 2463534242u, p = 1;
	for (int k = 0; k < 20 * 3 + 20000; k++) {
		uint64_t v;
		if (k < 60) {
			v = p + (uint64_t)(k % 3) - 1; /* 10^n - 1, 10^n, 10^n + 1 */
			if (k % 3 == 2)
				p *= 10;
		} else {
			v = next_random(&seed) >> (k % 64);
		}
		o.len = 0;
		tt_out_u64(&o, v);
		tt_out_char(&o, 0);
		snprintf(want, sizeof(want), "%" PRIu64, v);
		assert_string_equal(o.buf, want);
	}
	free(o.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_anchors_exact),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_microseconds_text),
		cmocka_unit_test(test_integer_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
