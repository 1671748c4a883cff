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

/* The events a full buffer drops go by kind into the count and the gap: how many
 * scopes they closed that were open before (2), and how many they left open (3),
 * across many of the scratch chunk's 4,095-record rounds, one- and two-record events
 * mixed. */
struct tt_test_gap_run {
	uint64_t attempted;
	uint64_t last_kept_tsc;
};

static void *tt_test_drop_scopes(void *arg)
{
	struct tt_test_gap_run *run = arg;
	uint64_t n = 0;
	TT_BEGIN("outer-1");
	TT_BEGIN("outer-2");
	n += 2;
	for (uint32_t i = 0; i < 20000; i++, n++) /* 40,000 records: the buffer fills */
		TT_INSTANT_ARG("fill", i);
	TT_END();
	TT_END();
	n += 2;
	for (uint32_t i = 0; i < 10000; i++, n += 4) {
		TT_BEGIN("dropped-scope");
		TT_COUNTER("dropped-counter", i);
		TT_INSTANT("dropped-instant");
		TT_END();
	}
	for (int i = 0; i < 3; i++, n++)
		TT_BEGIN("left-open");
	run->attempted = n;
	return NULL;
}

static void test_dropped_events_keep_their_count_and_depth(void **state)
{
	(void)state;
	struct tt_test_gap_run run = {0};
	pthread_t thread;
	pthread_create(&thread, NULL, tt_test_drop_scopes, &run);
	pthread_join(thread, NULL);
	struct tt_test_trace trace;
	tt_test_dump(&trace);
	const struct tt_thread *th = NULL;
	for (size_t t = 0; t < trace.file.nthreads; t++)
		if (trace.file.threads[t].dropped_total > 30000)
			th = &trace.file.threads[t];
	assert_non_null(th);
	/* Its last section ends with the gap: DROPPED (count, first time) and VALUE (last
	 * time, closes and opens). */
	const struct tt_events *last = &th->sections[th->nsections - 1];
	assert_true(last->count >= 2);
	const struct tt_record *dropped = &tt_section_records(th, th->nsections - 1)[last->count - 2];
	assert_int_equal(TT_RECORD_KIND(dropped->word), TT_REC_DROPPED);
	uint64_t kept = 0; /* events in the file but the gap */
	for (size_t sec = 0; sec < th->nsections; sec++)
		for (size_t i = 0; i < th->sections[sec].count; i++)
			kept += TT_RECORD_HAS_TIME(TT_RECORD_KIND(tt_section_records(th, sec)[i].word));
	kept--;
	assert_int_equal(TT_RECORD_PAYLOAD(dropped->word), run.attempted - kept);
	assert_int_equal(th->dropped[TT_DROP_FULL], run.attempted - kept);
	uint64_t depths = TT_RECORD_PAYLOAD(dropped[1].word);
	assert_int_equal(TT_GAP_CLOSES(depths), 2);
	assert_int_equal(TT_GAP_OPENS(depths), 3);
	assert_true(dropped->tsc <= dropped[1].tsc);
	assert_true(dropped[-1].tsc <= dropped->tsc);
	tt_test_close(&trace);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_buffer_keeps_first_and_counts_the_rest),
		cmocka_unit_test(test_dropped_events_keep_their_count_and_depth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
