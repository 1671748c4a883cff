/* The scope machine (src/common/common.h), alone: what it tells its driver (the tools'
 * decoder, the runtime's analysis) to open and close, and what it counts, for each
 * rule: ENDBEGIN, unmatched ends, FUNC_EXIT over scopes left open inside its function
 * or into a scope a run of lost events began, runs of lost events, scopes left out past
 * max_depth, the end of a thread's records, and the scan for scopes a ring's window
 * begins inside. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "common.h"

#define F(addr) ((uint64_t)(addr) | TT_KEY_FUNC)
#define SITE_A UINT64_C(0x401000)
#define SITE_B UINT64_C(0x401040)

static void open_ok(struct tt_scopes *s, uint64_t key)
{
	assert_int_equal(tt_scopes_open(s, key, 0), 1);
}

static void test_end_and_endbegin(void **state)
{
	(void)state;
	struct tt_scopes s = {0};
	open_ok(&s, SITE_A);
	/* ENDBEGIN: the innermost closes, then its scope opens */
	assert_true(tt_scopes_end(&s, 10));
	open_ok(&s, SITE_B);
	assert_int_equal(s.depth, 1);
	assert_int_equal(s.keys[0], SITE_B);
	assert_true(tt_scopes_end(&s, 20));
	assert_int_equal(s.depth, 0);
	assert_int_equal(s.unmatched, 0);
	tt_scopes_free(&s);
}

static void test_unmatched_end(void **state)
{
	(void)state;
	struct tt_scopes s = {0};
	assert_false(tt_scopes_end(&s, 32));
	assert_false(tt_scopes_end(&s, 48));
	assert_int_equal(s.unmatched, 2);
	assert_int_equal(s.first_unmatched, 32);
	assert_int_equal(s.unmatched_exits, 0);
	assert_int_equal(s.depth, 0);
	tt_scopes_free(&s);
}

/* A longjmp or an exception left scopes open inside the function: its exit closes
 * them too, the inner ones (all but the last) unterminated. */
static void test_func_exit_closes_what_it_left_open(void **state)
{
	(void)state;
	struct tt_scopes s = {0};
	open_ok(&s, SITE_A);
	open_ok(&s, F(0x1000));
	open_ok(&s, SITE_A);
	open_ok(&s, F(0x2000));
	open_ok(&s, SITE_B);
	assert_int_equal(tt_scopes_func_exit(&s, F(0x1000), 0, 0), 4);
	assert_int_equal(s.depth, 1);
	assert_int_equal(s.keys[0], SITE_A);
	assert_int_equal(s.unmatched, 0);
	tt_scopes_free(&s);
}

static void test_func_exit_unmatched(void **state)
{
	(void)state;
	struct tt_scopes s = {0};
	open_ok(&s, SITE_A);
	open_ok(&s, F(0x1000));
	assert_int_equal(tt_scopes_func_exit(&s, F(0x3000), 64, 777), 0);
	assert_int_equal(tt_scopes_func_exit(&s, F(0x4000), 80, 888), 0);
	/* nothing closed; counted as an unmatched end, and as an exit, the first named */
	assert_int_equal(s.depth, 2);
	assert_int_equal(s.unmatched, 2);
	assert_int_equal(s.unmatched_exits, 2);
	assert_int_equal(s.first_unmatched, 64);
	assert_int_equal(s.first_unmatched_exit, 64);
	assert_int_equal(s.unmatched_exit_key, F(0x3000));
	assert_int_equal(s.unmatched_exit_tsc, 777);
	tt_scopes_free(&s);
}

/* A function not open since the innermost scope a run of lost events began (of no
 * known function) is that scope: its entry was lost. */
static void test_func_exit_into_unbegun(void **state)
{
	(void)state;
	struct tt_scopes s = {0};
	open_ok(&s, F(0x1000));
	assert_int_equal(tt_scopes_unbegun(&s, TT_KEY_UNBEGUN, 0), 1);
	open_ok(&s, SITE_A);
	/* 0x1000 is open, but further out than the unbegun scope: that one closes */
	assert_int_equal(tt_scopes_func_exit(&s, F(0x1000), 0, 0), 2);
	assert_int_equal(s.depth, 1);
	assert_int_equal(s.keys[0], F(0x1000));
	assert_int_equal(s.unbegun, 1);
	/* a scope begun of a known function is matched by that function alone */
	assert_int_equal(tt_scopes_unbegun(&s, F(0x5000), 0), 1);
	assert_int_equal(tt_scopes_func_exit(&s, F(0x6000), 0, 0), 0);
	assert_int_equal(tt_scopes_func_exit(&s, F(0x5000), 0, 0), 1);
	assert_int_equal(s.unbegun, 2);
	tt_scopes_free(&s);
}

/* Past max_depth scopes are left out: their ends (END, FUNC_EXIT, a gap's) close them
 * first, notes on them are dropped, and the scopes around them stay as they were. */
static void test_left_out_past_max_depth(void **state)
{
	(void)state;
	struct tt_scopes s = {.max_depth = 2};
	open_ok(&s, F(0x1000));
	open_ok(&s, SITE_A);
	assert_false(tt_scopes_left_out(&s));
	assert_int_equal(tt_scopes_open(&s, SITE_B, 96), 0);
	assert_int_equal(tt_scopes_open(&s, F(0x1000), 112), 0);
	assert_true(tt_scopes_left_out(&s));
	assert_int_equal(s.too_deep_total, 2);
	assert_int_equal(s.first_too_deep, 96);
	/* its own exit closes the left-out 0x1000, not the kept one */
	assert_int_equal(tt_scopes_func_exit(&s, F(0x1000), 0, 0), 0);
	assert_false(tt_scopes_end(&s, 0));
	assert_false(tt_scopes_left_out(&s));
	assert_int_equal(s.depth, 2);
	assert_true(tt_scopes_end(&s, 0));
	assert_int_equal(s.unmatched, 0);
	/* no limit: 0 */
	struct tt_scopes deep = {0};
	for (int i = 0; i < 1000; i++)
		open_ok(&deep, SITE_A + (uint64_t)i);
	assert_int_equal(deep.depth, 1000);
	assert_int_equal(deep.keys[999], SITE_A + 999);
	assert_int_equal(tt_scopes_finish(&deep), 1000);
	tt_scopes_free(&deep);
	tt_scopes_free(&s);
}

/* A run of lost events closes the scopes that ended in it, the left-out ones first,
 * and no more than are open. */
static void test_gap(void **state)
{
	(void)state;
	struct tt_scopes s = {.max_depth = 3};
	open_ok(&s, SITE_A);
	open_ok(&s, SITE_B);
	open_ok(&s, SITE_A);
	assert_int_equal(tt_scopes_open(&s, SITE_B, 0), 0);
	assert_int_equal(tt_scopes_open(&s, SITE_B, 0), 0);
	assert_int_equal(tt_scopes_gap(&s, 4), 2);
	assert_int_equal(s.depth, 1);
	assert_false(tt_scopes_left_out(&s));
	assert_int_equal(s.gap_closed, 4);
	assert_int_equal(tt_scopes_gap(&s, 5), 1);
	assert_int_equal(s.depth, 0);
	assert_int_equal(s.gap_closed, 5);
	assert_int_equal(tt_scopes_gap(&s, 3), 0);
	assert_int_equal(s.gap_closed, 5);
	assert_int_equal(s.unmatched, 0);
	tt_scopes_free(&s);
}

static void test_finish(void **state)
{
	(void)state;
	struct tt_scopes s = {.max_depth = 1};
	open_ok(&s, SITE_A);
	assert_int_equal(tt_scopes_open(&s, SITE_B, 0), 0);
	assert_int_equal(tt_scopes_finish(&s), 1);
	assert_int_equal(s.depth, 0);
	assert_false(tt_scopes_left_out(&s));
	/* what came after is as on a fresh thread */
	open_ok(&s, SITE_B);
	assert_int_equal(s.keys[0], SITE_B);
	tt_scopes_free(&s);
}

#define REC(kind, payload) {.tsc = 1, .word = TT_RECORD_WORD(kind, payload)}

/* Closes with nothing open before them are scopes begun before the first record:
 * the innermost first, each by its FUNC_EXIT's function or 0. */
static void test_unbegun_scan(void **state)
{
	(void)state;
	const struct tt_record first[] = {
		REC(TT_REC_END, 0),
		REC(TT_REC_BEGIN, SITE_A), REC(TT_REC_END, 0),          /* matched */
		REC(TT_REC_FUNC_EXIT, 0x1000),
	};
	const struct tt_record second[] = {
		REC(TT_REC_ENDBEGIN, SITE_B), /* closes one begun before, opens one */
		REC(TT_REC_FUNC_EXIT, 0x2000), /* closes the one ENDBEGIN opened */
		REC(TT_REC_BEGIN_ARG, SITE_A), {.tsc = 5, .word = TT_RECORD_WORD(TT_REC_VALUE, 0)},
		REC(TT_REC_FUNC_ENTER, 0x3000),
		REC(TT_REC_END, 0), REC(TT_REC_END, 0),
		REC(TT_REC_END, 0),
	};
	struct tt_unbegun_scan u = {.max = 16};
	/* in two pieces, as sections come */
	assert_int_equal(tt_unbegun_scan(&u, first, sizeof first / sizeof *first), 0);
	assert_int_equal(tt_unbegun_scan(&u, second, sizeof second / sizeof *second), 0);
	assert_int_equal(u.n, 4);
	assert_int_equal(u.keys[0], 0);
	assert_int_equal(u.keys[1], 0x1000);
	assert_int_equal(u.keys[2], 0);
	assert_int_equal(u.keys[3], 0);
	/* at most max: past it, ends are unmatched */
	struct tt_unbegun_scan few = {.max = 1};
	assert_int_equal(tt_unbegun_scan(&few, second, sizeof second / sizeof *second), 0);
	assert_int_equal(few.n, 1);
	free(few.keys);
	free(u.keys);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_end_and_endbegin),
		cmocka_unit_test(test_unmatched_end),
		cmocka_unit_test(test_func_exit_closes_what_it_left_open),
		cmocka_unit_test(test_func_exit_unmatched),
		cmocka_unit_test(test_func_exit_into_unbegun),
		cmocka_unit_test(test_left_out_past_max_depth),
		cmocka_unit_test(test_gap),
		cmocka_unit_test(test_finish),
		cmocka_unit_test(test_unbegun_scan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
