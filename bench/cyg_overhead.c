/* cyg_call_overhead_ns: 10,000,000 calls of a noinline function, instrumented with
 * -finstrument-functions (two events each, through __cyg_profile_func_enter/exit)
 * and not; the difference per call. Each measurement runs in a child process whose
 * one thread's buffer holds every event, so that none is dropped and the parent's
 * memory does not grow by 320 MB a repeat. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cyg_overhead.h"

#define TT_BENCH_CYG_CALLS 10000000
#define TT_BENCH_CYG_BUFFER "24000000" /* events: 2 per call, and the warm-up's */

int tt_bench_cyg_child(void)
{
	tt_bench_cyg_loop_plain(TT_BENCH_CYG_CALLS / 10); /* code and buffer warm */
	tt_bench_cyg_loop_instrumented(TT_BENCH_CYG_CALLS / 10);
	int64_t plain = tt_bench_cyg_loop_plain(TT_BENCH_CYG_CALLS);
	int64_t instrumented = tt_bench_cyg_loop_instrumented(TT_BENCH_CYG_CALLS);
	printf("%.4f\n", (double)(instrumented - plain) / TT_BENCH_CYG_CALLS);
	return 0;
}

double tt_bench_cyg_overhead(void)
{
	char self[4096], cmd[4200];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	/* no trace file: the child's records are only measured */
	snprintf(cmd, sizeof(cmd), "TICKTRACE_BUFFER=" TT_BENCH_CYG_BUFFER " TICKTRACE_OUT=/dev/null "
		 "'%s' " TT_BENCH_CYG_CHILD, self);
	FILE *child = popen(cmd, "r");
	double ns;
	if (!child)
		return -1;
	int got = fscanf(child, "%lf", &ns);
	if (pclose(child) != 0 || got != 1)
		return -1;
	return ns;
}
