/* Once the run's memory (TICKTRACE_MEMORY) is used up, each further event is dropped
 * at little cost and counted (issue 30, round 4: each cost about 2 us, the core lock
 * and two system calls that block signals taken per event). Not timed: a seccomp
 * filter on the recording thread traps rt_sigprocmask, and the test counts the calls
 * while a thread whose buffer used the memory up, and a thread that came after it
 * (no buffer), each record DROPS events: a few folds of a scratch chunk and one
 * failed registration, never a call per event. Every event of the first thread is
 * in the file or counted as dropped. Run with TICKTRACE_MEMORY=1M (meson sets it).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include <cmocka.h>

#include "ticktrace.h"
#include "tt_test_trace.h"
#include "tt_trap_masks.h"

enum { FILL = 200000, DROPS = 200000 };

static volatile long tt_test_masks; /* rt_sigprocmask calls trapped */

/* The trapped call is not made: it returns 0 (the mask stays as it was). */
static void tt_test_on_sigsys(int sig, siginfo_t *info, void *context)
{
	(void)sig;
	(void)info;
	__atomic_add_fetch(&tt_test_masks, 1, __ATOMIC_RELAXED);
	((ucontext_t *)context)->uc_mcontext.gregs[REG_RAX] = 0;
}

/* The calls DROPS events made, in this thread, with the filter on. */
static long tt_test_masks_while_dropping(void)
{
	assert_int_equal(tt_test_trap_masks(), 0);
	long before = __atomic_load_n(&tt_test_masks, __ATOMIC_RELAXED);
	for (uint64_t i = 0; i < DROPS; i++)
		TT_COUNTER("dropped", i);
	return __atomic_load_n(&tt_test_masks, __ATOMIC_RELAXED) - before;
}

static void *tt_test_late_thread(void *calls)
{
	*(long *)calls = tt_test_masks_while_dropping();
	return NULL;
}

/* The thread that uses the memory up, then the late one, then its own drops (the
 * filter stays with a thread: ticktrace's threads, started later, never have it). */
static void *tt_test_first_thread(void *calls)
{
	long *counts = calls;
	for (uint64_t i = 0; i < FILL; i++) /* 1 MiB holds about 65,000 records */
		TT_COUNTER("fill", i);
	pthread_t late;
	assert_int_equal(pthread_create(&late, NULL, tt_test_late_thread, &counts[1]), 0);
	assert_int_equal(pthread_join(late, NULL), 0);
	counts[0] = tt_test_masks_while_dropping();
	return NULL;
}

static uint64_t tt_test_kept;

static void tt_test_count(const struct tt_test_event *e, void *arg)
{
	(void)arg;
	tt_test_kept += strcmp(e->name, "fill") == 0 || strcmp(e->name, "dropped") == 0;
}

static void test_drops_after_the_memory(void **state)
{
	(void)state;
	struct sigaction sa = {.sa_sigaction = tt_test_on_sigsys, .sa_flags = SA_SIGINFO};
	assert_int_equal(sigaction(SIGSYS, &sa, NULL), 0);
	long calls[2] = {0, 0};
	pthread_t first;
	assert_int_equal(pthread_create(&first, NULL, tt_test_first_thread, calls), 0);
	assert_int_equal(pthread_join(first, NULL), 0);
	print_message("rt_sigprocmask calls for %d dropped events: %ld on the thread that used the "
		      "memory up, %ld on a thread with no buffer\n", DROPS, calls[0], calls[1]);
	/* A fold of the scratch chunk per 500 or so events, two calls each (and the late
	 * thread's registration); before, two calls an event. */
	if (calls[0] > DROPS / 100 || calls[1] > 8)
		fail_msg("dropped events blocked signals: %ld and %ld calls for %d events each",
			 calls[0], calls[1], DROPS);

	struct tt_test_trace trace;
	tt_test_dump(&trace);
	assert_int_equal(trace.file.nthreads, 1); /* the late thread had no buffer */
	tt_test_each_event(&trace, tt_test_count, NULL);
	assert_true(tt_test_kept > 0 && tt_test_kept < FILL);
	assert_int_equal(trace.file.threads[0].dropped[TT_DROP_NO_MEMORY], FILL + DROPS - tt_test_kept);
	assert_int_equal(trace.file.header.unregistered_dropped, DROPS);
	tt_test_close(&trace);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drops_after_the_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
