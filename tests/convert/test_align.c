/* report/align.c: the bound that flows between two machines put on the second's offset
 * (NTP's four timestamps), the placement of several machines by them, and the sink
 * that pairs flows by id across machines, against figures worked out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "report/report.h"

static struct tt_flow_pair empty(void)
{
	return (struct tt_flow_pair){.lo = INT64_MIN, .hi = INT64_MAX};
}

/* a -> b sent at 100 received at 150 (b's clock), and at 200, 230: b must move by at
 * least -30; b -> a sent at 300 (b's) received at 320, and 400, 450: by at most 20. */
static void window_of_both_ways(void **state)
{
	(void)state;
	struct tt_flow_pair p = empty();
	tt_flow_pair_add(&p, true, 100, 150);
	tt_flow_pair_add(&p, true, 200, 230);
	assert_false(tt_flow_pair_bounded(&p)); /* one way only */
	tt_flow_pair_add(&p, false, 300, 320);
	tt_flow_pair_add(&p, false, 400, 450);
	assert_int_equal(p.lo, -30);
	assert_int_equal(p.hi, 20);
	assert_int_equal(p.a_to_b, 2);
	assert_int_equal(p.b_to_a, 2);
	assert_int_equal(p.early, 0);
	assert_true(tt_flow_pair_bounded(&p));
	struct tt_flow_pair pairs[4] = {empty(), p, empty(), empty()};
	struct tt_flow_place place[2];
	tt_flow_align(pairs, 2, NULL, place);
	assert_int_equal(place[1].by, 0);
	assert_int_equal(place[1].shift_ns, -5); /* the middle of -30 .. 20 */
	assert_int_equal(place[1].lo_ns, -25);
	assert_int_equal(place[1].hi_ns, 25);
}

/* A flow received before it was sent, either way: counted, by how much, and the
 * bound it gives. */
static void early_flows(void **state)
{
	(void)state;
	struct tt_flow_pair p = empty();
	tt_flow_pair_add(&p, true, 1000, 990);  /* 10 early: b at least +10 */
	tt_flow_pair_add(&p, false, 500, 470);  /* 30 early: b at most -30 */
	tt_flow_pair_add(&p, false, 600, 700);
	assert_int_equal(p.early, 2);
	assert_int_equal(p.earliest, 30);
	assert_int_equal(p.lo, 10);
	assert_int_equal(p.hi, -30);
	/* both ways, but they disagree: the window is empty, nothing placed */
	assert_false(tt_flow_pair_bounded(&p));
	struct tt_flow_pair pairs[4] = {empty(), p, empty(), empty()};
	struct tt_flow_place place[2];
	tt_flow_align(pairs, 2, NULL, place);
	assert_int_equal(place[1].by, TT_FLOW_NOT_PLACED);
	assert_false(place[1].known);
	assert_int_equal(place[1].shift_ns, 0);
}

/* Three machines: 1 is bounded by its flows with 0 only; 2 has flows both ways with
 * 1 only (and one way with 0): it is placed by 1, after 1 moved. A fixed machine stays
 * where it is, its window around it said, and places those after it. */
static void chained_and_fixed(void **state)
{
	(void)state;
	struct tt_flow_pair pairs[9];
	for (size_t i = 0; i < 9; i++)
		pairs[i] = empty();
	tt_flow_pair_add(&pairs[0 * 3 + 1], true, 0, 1000);    /* 1 at least -1000 */
	tt_flow_pair_add(&pairs[0 * 3 + 1], false, 2000, 2100); /* 1 at most +100 */
	tt_flow_pair_add(&pairs[1 * 3 + 2], true, 0, -40);     /* 2 from 1: at least +40 */
	tt_flow_pair_add(&pairs[1 * 3 + 2], false, 0, 60);     /* at most +60 */
	tt_flow_pair_add(&pairs[0 * 3 + 2], true, 0, 5);       /* one way only */
	struct tt_flow_place place[3];
	tt_flow_align(pairs, 3, NULL, place);
	assert_int_equal(place[1].by, 0);
	assert_int_equal(place[1].shift_ns, -450);
	assert_int_equal(place[1].lo_ns, -550);
	assert_int_equal(place[1].hi_ns, 550);
	assert_int_equal(place[2].by, 1);
	assert_int_equal(place[2].shift_ns, -450 + 50);
	assert_int_equal(place[2].lo_ns, -10);
	assert_int_equal(place[2].hi_ns, 10);
	bool fixed[3] = {true, true, false};
	tt_flow_align(pairs, 3, fixed, place);
	assert_int_equal(place[1].by, 0);
	assert_int_equal(place[1].shift_ns, 0);
	assert_int_equal(place[1].lo_ns, -1000);
	assert_int_equal(place[1].hi_ns, 100);
	assert_int_equal(place[2].shift_ns, 50);
}

/* Three machines listed A, C, B: C has flows both ways with B only, B with A. C is
 * placed through B once B is (it was left where it was: no machine before it in the
 * list had flows with it), its window against B's, its uncertainty B's and its own. */
static void chained_through_a_later_one(void **state)
{
	(void)state;
	struct tt_flow_pair pairs[9];
	for (size_t i = 0; i < 9; i++)
		pairs[i] = empty();
	tt_flow_pair_add(&pairs[0 * 3 + 2], true, 0, 1000);     /* B from A: at least -1000 */
	tt_flow_pair_add(&pairs[0 * 3 + 2], false, 2000, 2100); /* at most +100 */
	tt_flow_pair_add(&pairs[1 * 3 + 2], true, 0, -40);      /* B from C: at least +40 */
	tt_flow_pair_add(&pairs[1 * 3 + 2], false, 0, 60);      /* at most +60 */
	struct tt_flow_place place[3];
	tt_flow_align(pairs, 3, NULL, place);
	assert_int_equal(place[2].by, 0);
	assert_int_equal(place[2].shift_ns, -450);
	assert_int_equal(place[2].uncertainty_ns, 550);
	assert_int_equal(place[1].by, 2);
	/* C from B: [-60, -40] after B's -450 */
	assert_int_equal(place[1].shift_ns, -450 - 50);
	assert_int_equal(place[1].lo_ns, -10);
	assert_int_equal(place[1].hi_ns, 10);
	assert_int_equal(place[1].uncertainty_ns, 550 + 10);
}

/* Bounds at the ends of the times the decoder gives (TT_TIME_LIMIT, 2^61 ns): the
 * middle without overflow, rounded toward the window's inside. */
static void far_bounds(void **state)
{
	(void)state;
	const int64_t limit = INT64_C(1) << 61;
	struct tt_flow_pair p = empty();
	tt_flow_pair_add(&p, true, limit, -limit);      /* lo 2^62 */
	tt_flow_pair_add(&p, false, -limit, 2 * limit); /* hi 3 * 2^61: lo + hi overflows */
	assert_true(tt_flow_pair_bounded(&p));
	struct tt_flow_pair pairs[4] = {empty(), p, empty(), empty()};
	struct tt_flow_place place[2];
	tt_flow_align(pairs, 2, NULL, place);
	assert_int_equal(place[1].shift_ns, 2 * limit + limit / 2);
	p = empty();
	tt_flow_pair_add(&p, true, 0, 3);   /* lo -3 */
	tt_flow_pair_add(&p, false, 0, -1); /* hi -1 */
	pairs[1] = p;
	tt_flow_align(pairs, 2, NULL, place);
	assert_int_equal(place[1].shift_ns, -2);
}

/* The sink: flows paired by id across machines, whatever order their ends come in;
 * flows within one machine and ends never met bound nothing. */
static void sink_pairs_by_id(void **state)
{
	(void)state;
	static struct tt_file files[2];
	files[1].machine_index = 1;
	const struct tt_thread on[2] = {{.file = &files[0]}, {.file = &files[1]}};
	struct tt_sink *s = tt_flow_bounds_new(2);
	assert_non_null(s);
	const struct {
		int machine;
		uint32_t dir;
		uint64_t id;
		int64_t ts;
	} flows[] = {
		{0, TT_EV_FLOW_OUT, 7, 100}, {0, TT_EV_FLOW_OUT, 9, 105}, /* within machine 0: */
		{0, TT_EV_FLOW_IN, 9, 110},                               /* (no bound) */
		{1, TT_EV_FLOW_IN, 7, 160},                               /* 0 -> 1: lo -60 */
		{1, TT_EV_FLOW_IN, 8, 170},                               /* before its out: */
		{0, TT_EV_FLOW_OUT, 8, 180},                              /* 10 early, lo 10 */
		{1, TT_EV_FLOW_OUT, 3, 200}, {0, TT_EV_FLOW_IN, 3, 290},  /* 1 -> 0: hi 90 */
		{0, TT_EV_FLOW_OUT, 4, 300},                              /* never received */
	};
	for (size_t i = 0; i < sizeof flows / sizeof flows[0]; i++) {
		struct tt_event e = {.thread = &on[flows[i].machine], .ts = flows[i].ts,
				     .value = flows[i].id, .flags = flows[i].dir};
		assert_int_equal(s->ops->flow(s, &e), 0);
	}
	const struct tt_flow_pair *p = &tt_flow_bounds_pairs(s)[0 * 2 + 1];
	assert_int_equal(p->a_to_b, 2);
	assert_int_equal(p->b_to_a, 1);
	assert_int_equal(p->lo, 10);
	assert_int_equal(p->hi, 90);
	assert_int_equal(p->early, 1);
	assert_int_equal(p->earliest, 10);
	tt_sink_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(window_of_both_ways), cmocka_unit_test(early_flows),
		cmocka_unit_test(chained_and_fixed),   cmocka_unit_test(chained_through_a_later_one),
		cmocka_unit_test(far_bounds),
		cmocka_unit_test(sink_pairs_by_id),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
