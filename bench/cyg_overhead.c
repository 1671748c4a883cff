/* cyg_call_overhead_ns: 10,000,000 calls of a noinline function, instrumented with
 * -finstrument-functions (two events each, through __cyg_profile_func_enter/exit)
 * and not; the difference per call, the median of 1,000 rounds of 10,000. Each
 * measurement runs in a child process whose one thread's buffer holds every event, so
 * that none is dropped and the parent's memory does not grow by 320 MB a repeat. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "cyg_overhead.h"

#define TT_BENCH_CYG_CALLS 10000000
#define TT_BENCH_CYG_BUFFER "20500000" /* events: 2 per call, and the warm-up's */

static int tt_bench_cyg_compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double tt_bench_cyg_median(double *v)
{
	qsort(v, TT_BENCH_CYG_ROUNDS, sizeof(v[0]), tt_bench_cyg_compare);
	return (v[TT_BENCH_CYG_ROUNDS / 2 - 1] + v[TT_BENCH_CYG_ROUNDS / 2]) / 2;
}

double tt_bench_cyg_rdtsc(int reads)
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

int tt_bench_cyg_child(void)
{
	const int calls = TT_BENCH_CYG_CALLS / TT_BENCH_CYG_ROUNDS;
	static double added[TT_BENCH_CYG_ROUNDS], rdtsc[TT_BENCH_CYG_ROUNDS];
	tt_bench_cyg_loop_plain(calls / 10); /* code and buffer warm */
	tt_bench_cyg_loop_instrumented(calls / 10);
	for (int r = 0; r < TT_BENCH_CYG_ROUNDS; r++) {
		int64_t plain = tt_bench_cyg_loop_plain(calls);
		int64_t instrumented = tt_bench_cyg_loop_instrumented(calls);
		added[r] = (double)(instrumented - plain) / calls;
		rdtsc[r] = tt_bench_cyg_rdtsc(2 * calls);
	}
	printf("%.4f %.4f\n", tt_bench_cyg_median(added), tt_bench_cyg_median(rdtsc));
	return 0;
}

double tt_bench_cyg_overhead(const char *env, double *rdtsc_ns)
{
	char envs[4200];
	double figures[2];
	snprintf(envs, sizeof envs, "%s TICKTRACE_BUFFER=" TT_BENCH_CYG_BUFFER, env);
	if (tt_bench_child(envs, TT_BENCH_CYG_CHILD, 2, figures))
		return -1;
	*rdtsc_ns = figures[1];
	return figures[0];
}
