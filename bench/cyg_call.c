/* The call that cyg_call_overhead_ns times, compiled twice (bench/meson.build): with
 * -finstrument-functions, where TT_BENCH_CYG_LOOP is tt_bench_cyg_loop_instrumented,
 * and without, as tt_bench_cyg_loop_plain. Everything else is the same. */
#include <time.h>

#include "cyg_overhead.h"

/* External and opaque to the optimizer, so that each call is a real call. */
__attribute__((noinline)) int TT_BENCH_CYG_CALLEE(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

int64_t TT_BENCH_CYG_LOOP(int calls)
{
	struct timespec t0, t1;
	int x = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < calls; i++)
		x = TT_BENCH_CYG_CALLEE(x);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	__asm__ volatile("" : : "r"(x));
	return (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
}
