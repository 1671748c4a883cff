/* A thread's last record as tt-sched's look takes it (core/counters.c,
 * tt__counters_last), alone: no runtime started (TICKTRACE=0). The look's time is taken
 * first, the thread's records read after it; a thread that records in between (a few
 * us, longer where tt-sched is preempted there: load 40 to 60 here) has a last record
 * later than the look. Before, `now - last` wrapped: the thread counted quiet for ages,
 * and tt-sched rested 8 ms just as it recorded (readsflake's finding). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/core_internal.h"

/* A slot whose current chunk holds records at `tsc[0..n)`, its cursor after them. */
struct tt_thread {
	struct tt__slot slot;
	struct tt__hot hot;
	struct tt__chunk *chunk;
};

static void tt_thread_set(struct tt_thread *t, const uint64_t *tsc, size_t n)
{
	memset(t, 0, sizeof *t);
	t->chunk = calloc(1, TT__CHUNK_SIZE);
	assert_non_null(t->chunk);
	t->chunk->size = TT__CHUNK_SIZE;
	struct tt_record *r = (struct tt_record *)(t->chunk + 1);
	for (size_t i = 0; i < n; i++)
		r[i] = (struct tt_record){tsc[i], TT_RECORD_WORD(i % 2 ? TT_REC_END : TT_REC_BEGIN, 1)};
	t->hot.cursor = (char *)(r + n);
	t->slot.hot = &t->hot;
	t->slot.current = t->chunk;
}

/* Records before the look: the last of them, read again once the cursor stays. */
static void test_last_before_the_look(void **state)
{
	(void)state;
	struct tt_thread t;
	uint64_t tsc[] = {1000, 2000, 3000};
	tt_thread_set(&t, tsc, 3);
	assert_int_equal(tt__counters_last(&t.slot, 5000), 3000);
	assert_int_equal(tt__counters_last(&t.slot, 6000), 3000);
	free(t.chunk);
}

/* A record written after the look began stands at the look's time: not later, which
 * made the look's `now - last` wrap; also where the cursor stayed since the last look. */
static void test_last_after_the_look(void **state)
{
	(void)state;
	struct tt_thread t;
	uint64_t tsc[] = {1000, 2000, 7000};
	tt_thread_set(&t, tsc, 3);
	assert_int_equal(tt__counters_last(&t.slot, 5000), 5000);
	assert_int_equal(tt__counters_last(&t.slot, 6500), 6500);
	assert_int_equal(tt__counters_last(&t.slot, 9000), 7000);
	/* (the look's quiet as tt__counters_tick takes it: none) */
	assert_int_equal(5000 - tt__counters_last(&t.slot, 5000), 0);
	free(t.chunk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_last_before_the_look),
		cmocka_unit_test(test_last_after_the_look),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
