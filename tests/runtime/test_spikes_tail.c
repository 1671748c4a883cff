/* tt-spikes reading a thread that moves on while it reads (report/spikes.c, the chunks'
 * extent of core/extent.c), with no runtime started (TICKTRACE=0): a thread of chunks
 * made here, its current chunk's last written page held off by userfaultfd, so that
 * the detector's read of it waits while the "thread" writes past its cursor and moves
 * to a new chunk, then goes on. What snapshot_worst failed 1 run in 12 by: tt-spikes
 * took the chunk up to the cursor it saw, then followed the new chunk, skipping the
 * records written in between; a scope whose end was among them stayed open to the
 * exit (a spike made up), and a spike among them was never found. */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "spikes_harness.h"

static const struct tt__mode_ops tt_ring_mode = {.recycle_oldest = 1};

static const struct tt_callsite tt_site_filler = {"filler", __FILE__, "main", 1, 0, 0};
static const struct tt_callsite tt_site_short = {"short_one", __FILE__, "main", 2, 0, 0};
static const struct tt_callsite tt_site_tail = {"tail_spike", __FILE__, "main", 3, 0, 0};

#define PAGE 4096
#define CURSOR 299    /* records written when the reader looks: its cursor */
#define TAIL_END 302  /* and once it moved on */
#define SPIKE_TICKS 2000000000ull /* a spike in the tail (a second or so at any TSC rate) */

/* The records of the thread's first chunk, the one held off page among them. */
static struct tt_record tt_records[TAIL_END];
static struct tt__chunk *tt_first, *tt_second;
static struct tt__slot tt_slot;
static int tt_uffd;
static volatile int tt_moved; /* the thread moved on while the reader waited */

/* The page of the chunk that holds record i. */
static char *tt_page_of(struct tt__chunk *c, size_t i)
{
	uintptr_t at = (uintptr_t)((struct tt_record *)(c + 1) + i);
	return (char *)(at & ~(uintptr_t)(PAGE - 1));
}

/* The "thread": as the reader's first touch of the page before the cursor waits, it
 * writes the rest of its records (a short scope's end, a spike), leaves the chunk for
 * another and records on there; then the page is given to the reader as it now is. */
static void *tt_thread_moves_on(void *unused)
{
	(void)unused;
	struct pollfd p = {tt_uffd, POLLIN, 0};
	if (poll(&p, 1, 30000) != 1)
		return NULL; /* (no read of the page: the test fails below) */
	struct uffd_msg msg;
	if (read(tt_uffd, &msg, sizeof msg) != sizeof msg || msg.event != UFFD_EVENT_PAGEFAULT)
		return NULL;
	struct tt__chunk *second = tt_second;
	tt_first->size = (uint32_t)(sizeof *tt_first + TAIL_END * sizeof(struct tt_record));
	__atomic_store_n(&tt_first->next, second, __ATOMIC_RELEASE);
	tt_slot.current = second;
	__atomic_store_n(&tt_slot.hot->cursor, (char *)((struct tt_record *)(second + 1) + 2), __ATOMIC_RELEASE);
	/* (the held page's records, those written after the cursor too) */
	char *page = tt_page_of(tt_first, CURSOR - 1);
	static char content[PAGE] __attribute__((aligned(PAGE)));
	for (size_t i = 0; i < TAIL_END; i++) {
		char *at = (char *)((struct tt_record *)(tt_first + 1) + i);
		if (at >= page && at < page + PAGE)
			memcpy(content + (at - page), &tt_records[i], sizeof tt_records[i]);
	}
	tt_moved = 1;
	struct uffdio_copy copy = {.dst = (uintptr_t)page, .src = (uintptr_t)content, .len = PAGE};
	ioctl(tt_uffd, UFFDIO_COPY, &copy);
	return NULL;
}

/* The cursor in the first chunk, the page before it held off: the reader's look waits
 * there while the thread moves on. The spike log then has the tail's spike, read on in
 * that look once it goes on, and no other: the short scope ended in the tail, 10 ticks long (before,
 * the look went on to the second chunk past the tail: the spike never found, the short
 * scope left open and closed at the exit, a spike of a second made up). */
static void test_moves_on_while_read(void **state)
{
	(void)state;
	tt_uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (tt_uffd < 0)
		tt_uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	struct uffdio_api api = {.api = UFFD_API};
	if (tt_uffd < 0 || ioctl(tt_uffd, UFFDIO_API, &api) != 0) {
		fprintf(stderr, "test_spikes_tail: no userfaultfd here (%s): the reader cannot be held "
			"off at the page it reads\n", strerror(errno));
		exit(77);
	}
	tt__mode = &tt_ring_mode;
	tt_os_anchor(&tt__start_anchor);
	uint64_t tsc = tt__start_anchor.tsc;
	size_t i = 0;
	for (; i + 1 < CURSOR; i += 2) { /* fillers of 10 ticks */
		tt_records[i] = tt_rec(TT_REC_BEGIN, &tt_site_filler, tsc + 20 * i);
		tt_records[i + 1] = tt_rec(TT_REC_END, NULL, tsc + 20 * i + 10);
	}
	uint64_t at = tsc + 20 * i;
	tt_records[i++] = tt_rec(TT_REC_BEGIN, &tt_site_short, at); /* the cursor after it */
	assert_int_equal(i, CURSOR);
	tt_records[i++] = tt_rec(TT_REC_END, NULL, at + 10);
	tt_records[i++] = tt_rec(TT_REC_BEGIN, &tt_site_tail, at + 20);
	tt_records[i++] = tt_rec(TT_REC_END, NULL, at + 20 + SPIKE_TICKS);
	assert_int_equal(i, TAIL_END);

	tt_first = tt_chunk_new();
	tt_second = tt_chunk_new();
	char *held = tt_page_of(tt_first, CURSOR - 1);
	/* (written before the held page: the chunk's header and its first records) */
	tt_first->size = TT__CHUNK_SIZE;
	for (size_t k = 0; (char *)((struct tt_record *)(tt_first + 1) + k) < held; k++)
		((struct tt_record *)(tt_first + 1))[k] = tt_records[k];
	struct tt_record *next = (struct tt_record *)(tt_second + 1);
	tt_second->size = TT__CHUNK_SIZE;
	next[0] = tt_rec(TT_REC_BEGIN, &tt_site_filler, at + 2 * SPIKE_TICKS);
	next[1] = tt_rec(TT_REC_END, NULL, at + 2 * SPIKE_TICKS + 10);
	struct uffdio_register reg = {.range = {(uintptr_t)held, PAGE}, .mode = UFFDIO_REGISTER_MODE_MISSING};
	if (ioctl(tt_uffd, UFFDIO_REGISTER, &reg) != 0) {
		fprintf(stderr, "test_spikes_tail: userfaultfd cannot hold a page off here (%s)\n",
			strerror(errno));
		exit(77);
	}

	tt_slot_register(&tt_slot, tt_first, tt_first, 2, (struct tt_record *)(tt_first + 1) + CURSOR, "moves-on");

	pthread_t thread;
	assert_int_equal(pthread_create(&thread, NULL, tt_thread_moves_on, NULL), 0);
	struct tt_log log;
	tt_log_start(&log);
	for (int waited = 0; !tt_moved && waited < 30000; waited++)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	assert_true(tt_moved);
	pthread_join(thread, NULL);
	tt__spikes_last();

	char *text = tt_log_text(&log);
	printf("%s", text);
	assert_null(strstr(text, "short_one"));
	assert_non_null(strstr(text, "tail_spike"));
	tt_log_remove(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_moves_on_while_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
