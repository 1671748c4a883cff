/* What a SCHED section says before its own states (common.h): the tools' reader and
 * the runtime's analysis read a thread's states through it alike. */
#include "common.h"

size_t tt_sched_head(int64_t *last_ns, uint64_t lost, int64_t since_ns,
		     const struct tt_sched_state *states, size_t n, struct tt_sched_state head[2])
{
	size_t k = 0;
	if (lost || *last_ns == INT64_MIN || since_ns > *last_ns) {
		head[k++] = (struct tt_sched_state){.ns = *last_ns, .what = TT_SCHED_UNKNOWN};
		/* every switch from since_ns on is here: up to a first switch out, it ran */
		if (n && states[0].what != TT_SCHED_RUNNING && since_ns < states[0].ns)
			head[k++] = (struct tt_sched_state){.ns = since_ns, .cpu = TT_NO_CPU,
							    .what = TT_SCHED_RUNNING};
	}
	if (n)
		*last_ns = states[n - 1].ns;
	else if (*last_ns == INT64_MIN)
		*last_ns = since_ns;
	return k;
}
