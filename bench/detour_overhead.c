/* detour_call_overhead_ns, patchable_call_overhead_ns: 5,000,000 calls each of a
 * noinline function patched by libticktrace-detour (its first instructions moved to a
 * trampoline; or its -fpatchable-function-entry NOPs made a jump), less the same
 * calls of an unpatched copy; the median of 1,000 rounds of 5,000, with
 * cyg_overhead.c's rounds. In a child process with the library preloaded, as `ticktrace
 * record -f` runs a program, whose buffer holds every event. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "cyg_overhead.h"
#include "detour_overhead.h"

#define TT_BENCH_DETOUR_CALLS 5000000
#define TT_BENCH_DETOUR_BUFFER "21000000" /* events: 2 per call of each, and the warm-up's */

/* Whether the library patched the callee (a jump at its entry). */
static int tt_bench_detour_patched(int (*fn)(int))
{
	return *(const volatile unsigned char *)(void *)fn == 0xe9;
}

int tt_bench_detour_child(void)
{
	if (!tt_bench_detour_patched(tt_bench_detour_callee_relocated) ||
	    !tt_bench_detour_patched(tt_bench_detour_callee_patchable)) {
		fprintf(stderr, "ticktrace-bench: " TT_BENCH_DETOUR_CHILD ": the callees are not patched\n");
		return 1;
	}
	const int calls = TT_BENCH_DETOUR_CALLS / TT_BENCH_CYG_ROUNDS;
	static double relocated[TT_BENCH_CYG_ROUNDS], patchable[TT_BENCH_CYG_ROUNDS],
		rdtsc[TT_BENCH_CYG_ROUNDS];
	tt_bench_detour_loop_plain(calls / 10); /* code and buffer warm */
	tt_bench_detour_loop_relocated(calls / 10);
	tt_bench_detour_loop_patchable(calls / 10);
	for (int r = 0; r < TT_BENCH_CYG_ROUNDS; r++) {
		int64_t plain = tt_bench_detour_loop_plain(calls);
		relocated[r] = (double)(tt_bench_detour_loop_relocated(calls) - plain) / calls;
		patchable[r] = (double)(tt_bench_detour_loop_patchable(calls) - plain) / calls;
		rdtsc[r] = tt_bench_cyg_rdtsc(2 * calls);
	}
	printf("%.4f %.4f %.4f\n", tt_bench_cyg_median(relocated), tt_bench_cyg_median(patchable),
	       tt_bench_cyg_median(rdtsc));
	return 0;
}

int tt_bench_detour_overhead(double *relocated_ns, double *patchable_ns, double *rdtsc_ns)
{
	double figures[3];
	if (tt_bench_child("TICKTRACE_BUFFER=" TT_BENCH_DETOUR_BUFFER " "
			   "TICKTRACE_DETOUR='tt_bench_detour_callee_relocated\ntt_bench_detour_callee_patchable' "
			   "LD_PRELOAD='" TT_BENCH_DETOUR_LIB "'",
			   TT_BENCH_DETOUR_CHILD " 2>/dev/null", 3, figures))
		return -1;
	*relocated_ns = figures[0];
	*patchable_ns = figures[1];
	*rdtsc_ns = figures[2];
	return 0;
}
