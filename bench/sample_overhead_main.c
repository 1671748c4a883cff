/* ticktrace-sample-overhead: prints the benchmark keys sample_overhead_pct,
 * sample_kernel_floor_pct and sample_above_floor_pct as JSON on stdout (null where
 * not measured); exits non-zero, saying why on stderr, if profiling fails. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sample_overhead.h"

/* A figure, or null where it was not measured. */
static void put(const char *key, double v)
{
	if (isnan(v))
		printf("\"%s\": null, ", key);
	else
		printf("\"%s\": %.3f, ", key, v);
}

int main(void)
{
	struct tt_bench_overhead o;
	int rc = tt_bench_sample_overhead(&o);
	if (rc != 0) {
		fprintf(stderr, "ticktrace-sample-overhead: %s\n", strerror(-rc));
		return 1;
	}
	printf("{");
	put("sample_overhead_pct", o.pct);
	put("sample_kernel_floor_pct", o.floor_pct);
	put("sample_above_floor_pct", o.above_floor_pct);
	put("pct_lo", o.pct_lo);
	put("pct_hi", o.pct_hi);
	put("sample_cost_us", o.sample_cost_us);
	printf("\"baseline_ns\": %llu, \"profiled_ns\": %llu, \"floor_ns\": %llu, \"turns\": %u, "
	       "\"samples\": %llu, \"floor_samples\": %llu, \"mechanism\": \"%s\"}\n",
	       (unsigned long long)o.baseline_ns, (unsigned long long)o.profiled_ns,
	       (unsigned long long)o.floor_ns, o.turns, (unsigned long long)o.samples,
	       (unsigned long long)o.floor_samples, o.mechanism == TT_PROFILE_PERF ? "perf" : "timer");
	return 0;
}
