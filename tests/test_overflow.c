/* A full buffer (mode stop): the first events are kept, every later one is counted
 * as dropped, and nothing is written outside the buffer. Run with
 * TICKTRACE_BUFFER=10000 (meson sets it). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ticktrace.h"
#include "tt_test_trace.h"

enum { OVERFLOWING = 25000, NEIGHBOUR = 3000 };

struct tt_test_kept {
	uint32_t overflow_next, neighbour_next;
	const struct tt_thread *overflow_thread;
};

static void tt_test_check_kept(const struct tt_test_event *e, void *arg)
{
	struct tt_test_kept *k = arg;
	if (strcmp(e->name, "overflow") == 0) {
		assert_int_equal(e->value, k->overflow_next); /* the first ones, in order */
		k->overflow_next++;
		k->overflow_thread = e->thread;
	} else if (strcmp(e->name, "neighbour") == 0) {
		assert_int_equal(e->value, k->neighbour_next); /* undamaged */
		k->neighbour_next++;
	}
}

static void *tt_test_neighbour(void *arg)
{
	pthread_barrier_t *start = arg;
	pthread_barrier_wait(start);
	for (uint32_t i = 0; i < NEIGHBOUR; i++)
		TT_INSTANT_ARG("neighbour", i);
	return NULL;
}

static void test_full_buffer_keeps_first_and_counts_the_rest(void **state)
{
	(void)state;
	assert_string_equal(getenv("TICKTRACE_BUFFER"), "10000");
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, 2);
	pthread_t neighbour;
	pthread_create(&neighbour, NULL, tt_test_neighbour, &start);
	pthread_barrier_wait(&start);
	for (uint32_t i = 0; i < OVERFLOWING; i++)
		TT_INSTANT_ARG("overflow", i);
	pthread_join(neighbour, NULL);

	struct tt_test_trace trace;
	tt_test_dump(&trace);
	struct tt_test_kept kept = {0};
	tt_test_each_event(&trace, tt_test_check_kept, &kept);
	assert_non_null(kept.overflow_thread);
	/* 10,000 records, rounded up to whole chunks of 4,095; two records an event,
	 * and the last record of each chunk is left over. */
	uint32_t per_chunk = 4095 / 2, chunks = (10000 + 4094) / 4095;
	assert_int_equal(kept.overflow_next, per_chunk * chunks);
	assert_int_equal(kept.overflow_thread->dropped[TT_DROP_FULL], OVERFLOWING - kept.overflow_next);
	assert_int_equal(kept.overflow_thread->dropped_total, OVERFLOWING - kept.overflow_next);
	assert_int_equal(kept.neighbour_next, NEIGHBOUR);
	assert_int_equal(trace.file.dropped, OVERFLOWING - kept.overflow_next);
	tt_test_close(&trace);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_buffer_keeps_first_and_counts_the_rest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
