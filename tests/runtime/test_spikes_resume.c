/* tt-spikes resuming where a ring recycled the chunk it stopped in (report/spikes.c,
 * tt__spikes_resume), with no runtime started (TICKTRACE=0): a thread of two chunks
 * made here, the first read whole by a look (its last record a scope's begin), the
 * second not begun yet; then the ring recycles the first (the front now the second,
 * nothing unread lost) and the scope ends in the second, a spike. Before, the detector
 * started again there as after a loss (liveflake, s15): the scope's begin forgotten,
 * the spike never found, nothing said. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "spikes_harness.h"

static const struct tt__mode_ops tt_ring_mode = {.recycle_oldest = 1};

static const struct tt_callsite tt_site_first = {"first_spike", __FILE__, "main", 1, 0, 0};
static const struct tt_callsite tt_site_filler = {"filler", __FILE__, "main", 2, 0, 0};
static const struct tt_callsite tt_site_across = {"across_spike", __FILE__, "main", 3, 0, 0};

#define SPIKE_TICKS 2000000000ull /* a spike (a second or so at any TSC rate) */
#define FIRST 101                 /* records of the first chunk */

static struct tt__slot tt_slot;

static void test_resumes_after_a_chunk_read_whole(void **state)
{
	(void)state;
	tt__mode = &tt_ring_mode;
	tt_os_anchor(&tt__start_anchor);
	uint64_t tsc = tt__start_anchor.tsc;
	struct tt__chunk *first = tt_chunk_new(), *second = tt_chunk_new();
	struct tt_record *r = (struct tt_record *)(first + 1);
	size_t i = 0;
	r[i++] = tt_rec(TT_REC_BEGIN, &tt_site_first, tsc);
	r[i++] = tt_rec(TT_REC_END, NULL, tsc + SPIKE_TICKS);
	for (; i + 1 < FIRST - 1; i += 2) { /* fillers of 10 ticks */
		r[i] = tt_rec(TT_REC_BEGIN, &tt_site_filler, tsc + SPIKE_TICKS + 20 * i);
		r[i + 1] = tt_rec(TT_REC_END, NULL, tsc + SPIKE_TICKS + 20 * i + 10);
	}
	uint64_t across = tsc + SPIKE_TICKS + 20 * i;
	r[i++] = tt_rec(TT_REC_BEGIN, &tt_site_across, across); /* the chunk's last */
	assert_int_equal(i, FIRST);
	first->size = (uint32_t)(sizeof *first + FIRST * sizeof *r);
	second->size = TT__CHUNK_SIZE;
	first->next = second; /* (left for the second, nothing written there yet) */

	tt_slot_register(&tt_slot, first, second, 2, (struct tt_record *)(second + 1), "resumes");
	struct tt_log log;
	tt_log_start(&log);
	/* (its first look read the first chunk whole: its spike logged) */
	for (int waited = 0; !strstr(tt_log_text(&log), "first_spike") && waited < 30000; waited++)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	assert_non_null(strstr(tt_log_text(&log), "first_spike"));

	/* The ring recycles the first chunk: every event of it was read. */
	__atomic_store_n(&tt_slot.first, second, __ATOMIC_RELEASE);
	__atomic_store_n(&tt_slot.recycled, 1, __ATOMIC_SEQ_CST);
	tt_slot.chunks = 1;
	__atomic_store_n(&tt_slot.dropped[TT_DROP_OVERWRITTEN], FIRST, __ATOMIC_RELEASE);
	/* The scope ends in the second chunk, a spike, and the thread records on. */
	struct tt_record *s = (struct tt_record *)(second + 1);
	s[0] = tt_rec(TT_REC_END, NULL, across + SPIKE_TICKS);
	s[1] = tt_rec(TT_REC_BEGIN, &tt_site_filler, across + SPIKE_TICKS + 20);
	s[2] = tt_rec(TT_REC_END, NULL, across + SPIKE_TICKS + 30);
	__atomic_store_n(&tt_slot.parked.cursor, (char *)(s + 3), __ATOMIC_RELEASE);
	tt__spikes_last();

	char *text = tt_log_text(&log);
	printf("%s", text);
	assert_non_null(strstr(text, "across_spike"));
	assert_null(strstr(text, "overwritten"));
	tt_log_remove(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resumes_after_a_chunk_read_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
