/* ticktrace-sample-overhead: prints the benchmark key sample_overhead_pct as JSON
 * on stdout; exits non-zero, saying why on stderr, if profiling fails. */
#include <stdio.h>
#include <string.h>

#include "sample_overhead.h"

int main(void)
{
	struct tt_bench_overhead o;
	int rc = tt_bench_sample_overhead(&o);
	if (rc != 0) {
		fprintf(stderr, "ticktrace-sample-overhead: %s\n", strerror(-rc));
		return 1;
	}
	printf("{\"sample_overhead_pct\": %.3f, \"baseline_ns\": %llu, \"profiled_ns\": %llu, "
	       "\"pairs\": %u, \"samples\": %llu, \"mechanism\": \"%s\"}\n",
	       o.pct, (unsigned long long)o.baseline_ns, (unsigned long long)o.profiled_ns, o.pairs,
	       (unsigned long long)o.samples, o.mechanism == TT_PROFILE_PERF ? "perf" : "timer");
	return 0;
}
