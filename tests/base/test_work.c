/* base/threads.c: the work of ticktrace's own threads, one at a time
 * (tt__background_work), and a long piece of it that gives way between its steps
 * (tt__background_give_way): tt-live described every record of a thread that recorded
 * faster than it read for as long as the thread did (45 s of sqlite3's speedtest1
 * under `record -f`, its buffer as large as the run had advised), holding the work,
 * and tt-spikes' snapshot, which waited for it, found its window overwritten. Here: a
 * thread in a long work (up to 10 s of 1 ms steps) and another that waits for the
 * work: the second has it while the first is still at it, and the first goes on only
 * once the second let it go; with none waiting, giving way lets nobody in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "base/base.h"

/* (what threads.c calls of the files this test does not link) */
uint64_t tt__address_room(void)
{
	return UINT64_MAX;
}
FILE *tt__err_stream(void)
{
	return stderr;
}

#define TT_LONG_STEPS 10000 /* 1 ms each: the long work, unless let go earlier */

static struct {
	int holding;      /* the long work began */
	int waiter_in;    /* the waiter holds the work now */
	int waiter_done;  /* the waiter had it and let it go */
	int steps;        /* the long work's steps when it ended */
	int overlapped;   /* the long work went on while the waiter held it */
} tt_long;

static void *tt_long_work(void *unused)
{
	(void)unused;
	tt__background_work(1);
	__atomic_store_n(&tt_long.holding, 1, __ATOMIC_SEQ_CST);
	int step = 0;
	for (; step < TT_LONG_STEPS && !__atomic_load_n(&tt_long.waiter_done, __ATOMIC_SEQ_CST); step++) {
		tt_os_sleep_ns(1000000);
		tt__background_give_way();
		if (__atomic_load_n(&tt_long.waiter_in, __ATOMIC_SEQ_CST))
			__atomic_store_n(&tt_long.overlapped, 1, __ATOMIC_SEQ_CST);
	}
	tt_long.steps = step;
	tt__background_work(0);
	return NULL;
}

static void test_waiter_gets_in(void **state)
{
	(void)state;
	struct tt_os_thread thread;
	assert_int_equal(tt_os_thread_start(&thread, tt_long_work, NULL, 0), 0);
	while (!__atomic_load_n(&tt_long.holding, __ATOMIC_SEQ_CST))
		tt_os_sleep_ns(1000000);
	tt__background_work(1);
	__atomic_store_n(&tt_long.waiter_in, 1, __ATOMIC_SEQ_CST);
	tt_os_sleep_ns(20000000); /* (the long work would go on meanwhile, were it not held) */
	__atomic_store_n(&tt_long.waiter_in, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&tt_long.waiter_done, 1, __ATOMIC_SEQ_CST);
	tt__background_work(0);
	tt_os_thread_join(&thread);
	if (tt_long.steps >= TT_LONG_STEPS)
		fail_msg("the waiter had the work only once the long work ended (%d steps): giving way "
			 "let it not in", tt_long.steps);
	assert_false(tt_long.overlapped); /* (one at a time still) */
}

/* With none waiting, the work is not let go: a thread that takes it meanwhile (none
 * here) would; the holder's steps go on at once. */
static void test_alone(void **state)
{
	(void)state;
	tt__background_work(1);
	int64_t from = tt_os_monotonic_ns();
	for (int i = 0; i < 1000; i++)
		tt__background_give_way();
	int64_t took = tt_os_monotonic_ns() - from;
	tt__background_work(0);
	/* (1000 waits of a millisecond were 1 s; 1000 looks at a count, microseconds) */
	assert_true(took < 500000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waiter_gets_in),
		cmocka_unit_test(test_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
