/* A thread's own reading of its counters at its exit (core/counters.c,
 * tt__counters_read_at_exit) or at a dump of its own (tt__counters_read_now), alone: no runtime started (TICKTRACE=0). Its records since
 * its last reading hold a stretch as long as a scope tt-sched reads (2 ms): it reads
 * the stretch's end, whatever CPU time it ran since that reading, unless tt-sched is past
 * its budget and the stretch is shorter than a spike (5 ms), which it then leaves unread
 * and counts with tt-sched's (its spike names the budget). Before, it read every such
 * end: the benchmark's 64 threads each read their last 2 ms sleep's, outside the budget
 * that left most of them unread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/core_internal.h"

#define MS 1000000

/* A thread (the calling one) whose last reading was 10 ms ago, `ran_ms` of its CPU time
 * back, and whose records since are scopes' begins and ends at `at_ms` (ms before now,
 * in order; even ones begin a scope, odd ones end it). */
struct tt_thread {
	struct tt__slot slot;
	struct tt__hot hot;
	struct tt__chunk *chunk;
};

static void tt_thread_set_at(struct tt_thread *t, const double *at_ms, int records, int64_t ran_ms)
{
	memset(t, 0, sizeof *t);
	struct tt_anchor now;
	tt_os_anchor(&now);
	uint64_t hz = tt_os_anchor_hz(&tt__start_anchor, &now);
	assert_true(hz > 0);
	t->chunk = calloc(1, TT__CHUNK_SIZE);
	assert_non_null(t->chunk);
	t->chunk->size = TT__CHUNK_SIZE;
	struct tt_record *r = (struct tt_record *)(t->chunk + 1);
	for (int i = 0; i < records; i++)
		r[i] = (struct tt_record){now.tsc - (uint64_t)((double)hz * at_ms[i] * MS / 1e9),
					  i % 2 ? TT_RECORD_WORD(TT_REC_END, 0) : TT_RECORD_WORD(TT_REC_BEGIN, 1)};
	t->hot.cursor = (char *)(r + records);
	t->slot.hot = &t->hot;
	t->slot.first = t->slot.current = t->chunk;
	t->slot.tid = tt_os_thread_id();
	t->slot.sched.wanted = 1;
	struct tt__counters *c = &t->slot.sched.counters;
	c->files.handle = c->files.stat = c->files.dir = -1;
	c->early_held = 1;
	int64_t cpu_ns = tt_os_thread_cpu_ns();
	assert_true(cpu_ns >= ran_ms * MS);
	c->early = (struct tt_schedstat_sample){.ns = now.monotonic_ns - 10 * MS, .run_ns = (uint64_t)(cpu_ns - ran_ms * MS)};
	tt__counters_unread = 0;
}

/* Its records since: one scope begun 8 ms ago, `len_ms` long. */
static void tt_thread_set(struct tt_thread *t, int64_t len_ms, int64_t ran_ms)
{
	const double at_ms[2] = {8, 8 - (double)len_ms};
	tt_thread_set_at(t, at_ms, 2, ran_ms);
}

/* Its exit's reading (or none) with tt-sched past its budget or not: readings stored. */
static uint32_t tt_thread_exits(struct tt_thread *t, int past)
{
	tt__counters_past = past;
	tt__sched_lock_held_signals();
	tt__counters_read_at_exit(&t->slot);
	tt__sched_unlock_held_signals();
	return t->slot.sched.counters.n;
}

static void tt_thread_free(struct tt_thread *t)
{
	tt__counters_forget(&t->slot.sched.counters, 0);
	free(t->chunk);
}

static int setup(void **state)
{
	(void)state;
	tt__counters_on = 1;
	tt_os_anchor(&tt__start_anchor);
	struct timespec nap = {0, 20 * MS}; /* (the clock's rate from anchors apart) */
	while (nanosleep(&nap, &nap) != 0)
		;
	return 0;
}

/* A scope of `len_ms`, `ran_ms` of CPU time since the last reading, tt-sched past its
 * budget or not: the readings stored at the exit (its early one and the exit's), the
 * scopes counted unread. */
static void tt_exit_case(int64_t len_ms, int64_t ran_ms, int past, uint32_t readings, uint64_t unread)
{
	struct tt_thread t;
	tt_thread_set(&t, len_ms, ran_ms);
	assert_int_equal(tt_thread_exits(&t, past), readings);
	assert_int_equal(t.slot.sched.counters.unread, unread);
	assert_int_equal(tt__counters_unread, unread);
	tt_thread_free(&t);
}

/* Within the budget: a 3 ms scope's end read. Past it: a spike's end read all the same
 * (6 ms: it pays for its reading); a scope shorter than tt-sched reads (1 ms) never. */
static void test_read(void **state)
{
	(void)state;
	tt_exit_case(3, 0, 0, 2, 0);
	tt_exit_case(6, 0, 1, 2, 0);
	tt_exit_case(1, 0, 0, 1, 0);
	tt_exit_case(1, 0, 1, 1, 0);
}

/* Whatever CPU time it ran since its last reading (2 ms here), its scope's end is read:
 * that time may be the scope's own (a CPU-bound scope), which a reading after it
 * splits. Session 27 skipped the reading where that time and the 2 ms between the last
 * reading and the scope were each half the scope or more (as if run before it): a
 * CPU-bound 5 ms scope of sched_loaded's `hundred`, its start waiting for a CPU, then
 * said "no counters reading after its start" (2 runs in 12 at load 1.5); here, 1. */
static void test_ran_since(void **state)
{
	(void)state;
	volatile uint64_t spin = 0;
	while (tt_os_thread_cpu_ns() < 3 * MS)
		spin++;
	tt_exit_case(3, 2, 0, 2, 0);
	tt_exit_case(6, 2, 1, 2, 0);
}

/* Past it: a 3 ms scope left unread, counted once (not again where tt-sched counted it). */
static void test_past_budget_unread(void **state)
{
	(void)state;
	tt_exit_case(3, 0, 1, 1, 1);
	struct tt_thread t;
	tt_thread_set(&t, 3, 0);
	t.slot.sched.counters.unread_scope = ((struct tt_record *)(t.chunk + 1))->tsc;
	t.slot.sched.counters.unread = 1; /* (tt-sched's count: the exit line's too) */
	assert_int_equal(tt_thread_exits(&t, 1), 1);
	assert_int_equal(t.slot.sched.counters.unread, 1);
	assert_int_equal(tt__counters_unread, 0);
	tt_thread_free(&t);
}

/* A stretch further back than the last record, with records after it: its end not read
 * at the exit (the reading would bound it no better than none), within the budget or past
 * it (then counted unread, a spike); one that ended lately (2 ms or less), or with the
 * last record, is. Before, each was read: the benchmark's 64 threads, kept off the CPUs
 * 5 ms and more in some scope tens of ms before their exit, each read it there. */
static void test_ended_long_ago(void **state)
{
	(void)state;
	/* a 6 ms scope ended 3.5 ms ago, short scopes since */
	const double back_ms[8] = {9.5, 3.5, 3.2, 3, 2.5, 2.2, 1.2, 1};
	/* a 6 ms scope ended 1.5 ms ago, a short one since */
	const double lately_ms[4] = {7.5, 1.5, 1.2, 1};
	/* a 6 ms scope ended 3.5 ms ago, a 3 ms one since, which ended with the last record:
	 * within the budget that one's end read, past it the spike's, not read (one walk of
	 * the records finds both, tt__records_gaps) */
	const double spike_before_ms[4] = {9.5, 3.5, 3.2, 0.2};
	struct {
		const double *at_ms;
		int records, past;
		uint32_t readings;
		uint64_t unread;
	} cases[] = {
		{back_ms, 8, 0, 1, 0}, {back_ms, 8, 1, 1, 1}, {lately_ms, 4, 0, 2, 0}, {lately_ms, 4, 1, 2, 0},
		{spike_before_ms, 4, 0, 2, 0}, {spike_before_ms, 4, 1, 1, 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct tt_thread t;
		tt_thread_set_at(&t, cases[i].at_ms, cases[i].records, 0);
		assert_int_equal(tt_thread_exits(&t, cases[i].past), cases[i].readings);
		assert_int_equal(t.slot.sched.counters.unread, cases[i].unread);
		assert_int_equal(tt__counters_unread, cases[i].unread);
		tt_thread_free(&t);
	}
}

/* At a dump (the exit's, of a program whose main returns), the dumping thread's own
 * slot as at its exit: main's last scope, a 3 ms one that tt-sched did not watch, its
 * end read (its early reading stored first); another thread's is not walked, read only
 * where read anyway. Before, neither was (outside test ot32 D9: perf refused, main's
 * last scope before exit() unsplit in 2 to 5 runs of 40). */
static void test_dump_own(void **state)
{
	(void)state;
	for (int own = 1; own >= 0; own--) {
		struct tt_thread t;
		tt_thread_set(&t, 3, 0);
		t.slot.tid += own ? 0 : 1;
		tt__counters_past = 0;
		tt__sched_lock_held_signals();
		tt__counters_read_now(&t.slot);
		tt__sched_unlock_held_signals();
		assert_int_equal(t.slot.sched.counters.n, own ? 2 : 0);
		tt_thread_free(&t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_past_budget_unread),
		cmocka_unit_test(test_ran_since),
		cmocka_unit_test(test_ended_long_ago),
		cmocka_unit_test(test_dump_own),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
