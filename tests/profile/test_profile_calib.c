/* Written in assembly so that the offsets are exact: no compiler may move, unroll
 * or merge the loops. */
#include <time.h>

#include "test_profile_calib.h"

__asm__(".pushsection tt_prof_calib, \"ax\", @progbits\n"
	".balign 64\n"
	".globl tt_test_calib_begin\n"
	".hidden tt_test_calib_begin\n"
	".globl tt_test_calib_a\n"
	".hidden tt_test_calib_a\n"
	".type tt_test_calib_a, @function\n"
	"tt_test_calib_begin:\n"
	"tt_test_calib_a:\n"
	"1:	dec %rdi\n"
	"	jnz 1b\n"
	"	ret\n"
	".size tt_test_calib_a, . - tt_test_calib_a\n"
	".balign 64\n"
	".globl tt_test_calib_b\n"
	".hidden tt_test_calib_b\n"
	".type tt_test_calib_b, @function\n"
	"tt_test_calib_b:\n"
	"2:	dec %rdi\n"
	"	jnz 2b\n"
	"	ret\n"
	".size tt_test_calib_b, . - tt_test_calib_b\n"
	".balign 64\n"
	".popsection\n");

uint64_t tt_test_thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t tt_test_calib_iterations(uint64_t ns)
{
	static uint64_t per_ms;
	if (!per_ms) {
		/* Best of a few short runs: a preempted or throttled run only looks slower. */
		enum { PROBE = 1000000 };
		uint64_t best = UINT64_MAX;
		for (int i = 0; i < 5; i++) {
			uint64_t t0 = tt_test_thread_cpu_ns();
			tt_test_calib_a(PROBE);
			uint64_t dt = tt_test_thread_cpu_ns() - t0;
			if (dt && dt < best)
				best = dt;
		}
		per_ms = (uint64_t)PROBE * 1000000u / best;
		if (!per_ms)
			per_ms = 1;
	}
	uint64_t n = per_ms * ns / 1000000u;
	return n ? n : 1;
}
