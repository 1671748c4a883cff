/* A thread's switches (base/switches.c), alone, with no runtime started (TICKTRACE=0):
 * the small ring a thread asks for as it starts, made larger once it fills half of it,
 * with no switch lost or read twice across the change, and the larger one's room in
 * use after it; a small ring that overflowed before the change, what it lost counted. */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <cmocka.h>

#include "base/base.h"

#define RECORD_BYTES 32 /* a switch record: its header and sample_id */

/* The calling thread's switches off its CPU so far, as the kernel counts them. */
static long tt_switches_so_far(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* Naps until the kernel counted `n` more times off the CPU and back: 2 n switch
 * records at least. (A nap whose timer fires before the thread gets to sleep, as on a
 * loaded machine, is no switch.) */
static void tt_naps(int n)
{
	for (long until = tt_switches_so_far() + n; tt_switches_so_far() < until;)
		nanosleep(&(struct timespec){0, 20000}, NULL);
}

static struct tt_sched_state tt_states[8192];

/* Everything in the ring(s): the states read, each checked against the one before
 * (`*last`: the last one read so far): in time order, none twice, out and back in
 * turns but across switches lost, which are added to *lost. */
static size_t tt_read_all(struct tt__switches *s, struct tt_sched_state *last, uint64_t *lost)
{
	size_t total = 0, n;
	int after_gap = 0;
	while ((n = tt__switches_read(s, tt_states, sizeof tt_states / sizeof tt_states[0])) > 0 || s->gap) {
		for (size_t i = 0; i < n; i++) {
			const struct tt_sched_state *st = &tt_states[i];
			if (last->ns) {
				assert_true(st->ns > last->ns); /* (read twice: the same time again) */
				if (!after_gap)
					assert_true((st->what == TT_SCHED_RUNNING) != (last->what == TT_SCHED_RUNNING));
			}
			after_gap = 0;
			*last = *st;
		}
		total += n;
		if (s->gap) {
			*lost += s->lost;
			s->lost = 0;
			s->gap = 0;
			after_gap = 1;
		}
	}
	return total;
}

static void tt_small_ring_grows(void **state)
{
	(void)state;
	struct tt__switches s;
	int denied;
	assert_int_equal(tt__switches_open(&s, 0, 1, &denied), 0);
	const struct perf_event_mmap_page *meta = s.map;
	uint64_t small_records = meta->data_size / RECORD_BYTES;
	struct tt_sched_state last = {0};
	uint64_t lost = 0;
	/* An eighth of the small ring: no larger one needed (unless a loaded machine's
	 * preemptions filled half of it). */
	tt_naps((int)small_records / 16);
	size_t quiet = tt_read_all(&s, &last, &lost);
	assert_true(quiet + lost >= small_records / 8);
	if (quiet + lost < small_records / 2)
		assert_int_equal(tt__switches_grow(&s, 0), 0);
	/* Over half of it between two reads (with room for a busy machine's preemptions):
	 * a larger one, which records from now on beside the small one until the small
	 * one is read to its end. (A loaded machine's preemptions may overfill it: what
	 * it lost counts.) */
	tt_naps((int)small_records * 5 / 16);
	uint64_t lost_before = lost;
	assert_true(tt_read_all(&s, &last, &lost) + (lost - lost_before) >= small_records * 5 / 8);
	assert_int_equal(tt__switches_grow(&s, 0), 1);
	assert_non_null(s.larger);
	assert_int_equal(tt__switches_grow(&s, 0), 0); /* (once) */
	/* Switches in both rings: each read once (in time order, tt_read_all). */
	tt_naps(50);
	assert_true(tt_read_all(&s, &last, &lost) >= 100);
	assert_null(s.larger);
	meta = s.map;
	uint64_t large_records = meta->data_size / RECORD_BYTES;
	assert_true(large_records >= 4 * small_records);
	/* Twice what the small ring holds, between two reads: none lost (what the small
	 * one lost before is counted above). */
	tt_naps((int)small_records);
	uint64_t lost_small = lost;
	assert_true(tt_read_all(&s, &last, &lost) >= 2 * small_records);
	assert_int_equal(lost, lost_small);
	tt__switches_close(&s);
	assert_null(s.map);
}

/* Four times what the small ring holds before its first read, then the larger one:
 * what the small one lost is counted (the kernel says it only before the next switch
 * it writes there, after the larger one began), as many as the kernel made. */
static void tt_small_ring_overflows(void **state)
{
	(void)state;
	struct tt__switches s;
	int denied;
	long switches = tt_switches_so_far();
	assert_int_equal(tt__switches_open(&s, 0, 1, &denied), 0);
	const struct perf_event_mmap_page *meta = s.map;
	uint64_t small_records = meta->data_size / RECORD_BYTES;
	struct tt_sched_state last = {0};
	uint64_t lost = 0;
	tt_naps((int)small_records * 2);
	size_t read = tt_read_all(&s, &last, &lost);
	assert_int_equal(tt__switches_grow(&s, 0), 1);
	read += tt_read_all(&s, &last, &lost);
	tt_naps(50);
	read += tt_read_all(&s, &last, &lost);
	assert_null(s.larger);
	switches = tt_switches_so_far() - switches;
	/* (the opening's and the reads' own switches: a few) */
	printf("%zu read, %" PRIu64 " lost, the kernel: %ld switches\n", read, lost, switches);
	assert_true(lost > 0);
	assert_true(read + lost <= 2 * (uint64_t)switches + 2);
	assert_true(read + lost + 16 >= 2 * (uint64_t)switches);
	tt__switches_close(&s);
}

int main(void)
{
	struct tt__switches probe;
	int denied, err = tt__switches_open(&probe, 0, 1, &denied);
	if (err) {
		printf("perf_event_open refused here (%s): nothing to test\n", strerror(-err));
		return 77;
	}
	tt__switches_close(&probe);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tt_small_ring_grows),
		cmocka_unit_test(tt_small_ring_overflows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
