/* The call that detour_call_overhead_ns and patchable_call_overhead_ns time, compiled
 * three times (bench/meson.build): as TT_BENCH_DETOUR_LOOP tt_bench_detour_loop_plain
 * (never patched), _relocated (patched by moving its first instructions) and
 * _patchable (-fpatchable-function-entry=5). Everything else is the same. */
#include <time.h>

#include "detour_overhead.h"

/* External, opaque to the optimizer, and five bytes long (lea, ret): the least a
 * detour can move. */
__attribute__((noinline)) int TT_BENCH_DETOUR_CALLEE(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

int64_t TT_BENCH_DETOUR_LOOP(int calls)
{
	struct timespec t0, t1;
	int x = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < calls; i++)
		x = TT_BENCH_DETOUR_CALLEE(x);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	__asm__ volatile("" : : "r"(x));
	return (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
}
