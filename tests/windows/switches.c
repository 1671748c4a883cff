/* Windows' thread states behind base.h's face (src/base/switches_windows.c), alone, as
 * core/sched.c asks for them. Where the kernel's session is
 * refused (not elevated; Wine, which has no kernel events) every thread is refused,
 * *denied set, so that the counters split spikes instead, and nothing of a refused
 * thread's is read or freed; the session is asked for once. Elevated on real Windows:
 * a thread that naps has its switches, in time order, from when it was asked for on,
 * every one there after a flush, each switch out followed by one in. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <windows.h>

#include <cmocka.h>

#include "base/base.h"

static struct tt_sched_state tt_states[4096];

static void test_refused_or_states(void **state)
{
	(void)state;
	struct tt__switches s;
	int denied = -1;
	int64_t asked = tt_os_monotonic_ns();
	int err = tt__switches_open(&s, 0, 1, &denied);
	if (err) {
		/* Refused for every thread: the second asks nothing of the kernel again */
		assert_true(err < 0);
		assert_int_equal(denied, 1);
		assert_null(s.map);
		struct tt__switches other;
		int denied_too = 0;
		assert_int_equal(tt__switches_open(&other, (int)GetCurrentThreadId(), 0, &denied_too), err);
		assert_int_equal(denied_too, 1);
		assert_int_equal(tt__switches_read(&s, tt_states, 4096), 0);
		assert_int_equal(tt__switches_grow(&s, 0), 0);
		tt__switches_flush(); /* (no session: returns) */
		tt__switches_close(&s);
		tt__switches_close(&other);
		printf("refused for every thread (%s): %d, denied\n", err == -EACCES ? "not elevated" : "no session",
		       err);
		return;
	}
	assert_int_equal(denied, 0);
	assert_non_null(s.map);
	for (int i = 0; i < 50; i++)
		Sleep(1); /* (each a switch out, blocked, and back in) */
	tt__switches_flush();
	size_t n = tt__switches_read(&s, tt_states, 4096);
	assert_true(n >= 20);
	assert_int_equal(s.gap, 0);
	for (size_t i = 0; i < n; i++) {
		assert_true(tt_states[i].ns >= asked);
		if (i) {
			assert_true(tt_states[i].ns >= tt_states[i - 1].ns);
			/* (out, then in: never two of a kind in a row) */
			assert_true((tt_states[i].what == TT_SCHED_RUNNING) != (tt_states[i - 1].what == TT_SCHED_RUNNING));
		}
	}
	tt__switches_close(&s);
	assert_null(s.map);
	printf("%zu states of 50 naps\n", n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_or_states),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
