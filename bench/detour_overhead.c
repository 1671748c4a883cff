/* detour_call_overhead_ns, patchable_call_overhead_ns: 5,000,000 calls each of a
 * noinline function patched by libticktrace-detour (its first instructions moved to a
 * trampoline; or its -fpatchable-function-entry NOPs made a call), less the same
 * calls of an unpatched copy; the median of 1,000 rounds of 5,000, as
 * cyg_overhead.c does. In a child process with the library preloaded, as `ticktrace
 * record -f` runs a program, whose buffer holds every event. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "detour_overhead.h"

#define TT_BENCH_DETOUR_CALLS 5000000
#define TT_BENCH_DETOUR_BUFFER "21000000" /* events: 2 per call of each, and the warm-up's */
#define TT_BENCH_DETOUR_ROUNDS 1000

static int tt_bench_detour_compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double tt_bench_detour_median(double *v)
{
	qsort(v, TT_BENCH_DETOUR_ROUNDS, sizeof(v[0]), tt_bench_detour_compare);
	return (v[TT_BENCH_DETOUR_ROUNDS / 2 - 1] + v[TT_BENCH_DETOUR_ROUNDS / 2]) / 2;
}

static double tt_bench_detour_rdtsc(int reads)
{
	struct timespec t0, t1;
	uint64_t sum = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < reads; i++)
		sum += __builtin_ia32_rdtsc();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	__asm__ volatile("" : : "r"(sum));
	return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / reads;
}

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
	const int calls = TT_BENCH_DETOUR_CALLS / TT_BENCH_DETOUR_ROUNDS;
	static double relocated[TT_BENCH_DETOUR_ROUNDS], patchable[TT_BENCH_DETOUR_ROUNDS],
		rdtsc[TT_BENCH_DETOUR_ROUNDS];
	tt_bench_detour_loop_plain(calls / 10); /* code and buffer warm */
	tt_bench_detour_loop_relocated(calls / 10);
	tt_bench_detour_loop_patchable(calls / 10);
	for (int r = 0; r < TT_BENCH_DETOUR_ROUNDS; r++) {
		int64_t plain = tt_bench_detour_loop_plain(calls);
		relocated[r] = (double)(tt_bench_detour_loop_relocated(calls) - plain) / calls;
		patchable[r] = (double)(tt_bench_detour_loop_patchable(calls) - plain) / calls;
		rdtsc[r] = tt_bench_detour_rdtsc(2 * calls);
	}
	printf("%.4f %.4f %.4f\n", tt_bench_detour_median(relocated), tt_bench_detour_median(patchable),
	       tt_bench_detour_median(rdtsc));
	return 0;
}

int tt_bench_detour_overhead(double *relocated_ns, double *patchable_ns, double *rdtsc_ns)
{
	char self[4096], cmd[8400];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	snprintf(cmd, sizeof(cmd),
		 "TICKTRACE_BUFFER=" TT_BENCH_DETOUR_BUFFER " TICKTRACE_OUT=/dev/null "
		 "TICKTRACE_DETOUR='tt_bench_detour_callee_relocated\ntt_bench_detour_callee_patchable' "
		 "LD_PRELOAD='%s' '%s' " TT_BENCH_DETOUR_CHILD " 2>/dev/null",
		 TT_BENCH_DETOUR_LIB, self);
	FILE *child = popen(cmd, "r");
	if (!child)
		return -1;
	int got = fscanf(child, "%lf %lf %lf", relocated_ns, patchable_ns, rdtsc_ns);
	if (pclose(child) != 0 || got != 3)
		return -1;
	return 0;
}
