/* What a SCHED section says before its own states (common.h): the tools' reader and
 * the runtime's analysis read a thread's states through it alike; and why a thread
 * has none, and which of ticktrace's threads it ended for the program's, as both say
 * them. */
#include <stdio.h>
#include <string.h>

#include "common.h"

size_t tt_sched_head(int64_t *last_ns, uint64_t lost, int64_t since_ns,
		     const struct tt_sched_state *states, size_t n, struct tt_sched_state head[2])
{
	size_t k = 0;
	if (lost || *last_ns == INT64_MIN || since_ns > *last_ns) {
		head[k++] = (struct tt_sched_state){.ns = *last_ns, .what = TT_SCHED_UNKNOWN,
						    .cpu = lost > UINT32_MAX ? UINT32_MAX : (uint32_t)lost};
		/* every switch from since_ns on is here: up to a first switch out, or with
		 * none, all along, it ran */
		if ((n ? states[0].what != TT_SCHED_RUNNING && since_ns < states[0].ns : !lost))
			head[k++] = (struct tt_sched_state){.ns = since_ns, .cpu = TT_NO_CPU,
							    .what = TT_SCHED_RUNNING};
	}
	if (n)
		*last_ns = states[n - 1].ns;
	else if (*last_ns == INT64_MIN)
		*last_ns = since_ns;
	return k;
}

const char *tt_sched_none_text(uint32_t thread_flags, char *buf, size_t cap)
{
	switch (TT_THREAD_NO_STATES(thread_flags)) {
	case TT_NO_STATES_OFF:
		snprintf(buf, cap, "thread states are off (TICKTRACE_SCHED=0)");
		break;
	case TT_NO_STATES_REFUSED:
		snprintf(buf, cap, "the kernel refused its thread states (perf_event_open: %s)",
			 strerror((int)TT_THREAD_NO_STATES_ERRNO(thread_flags)));
		break;
	case TT_NO_STATES_TOO_SHORT:
		snprintf(buf, cap, "its thread ended before its states were asked for (a thread "
			 "not made by pthread_create: tt-sched asks at its next drain)");
		break;
	case TT_NO_STATES_NOT_ASKED:
		snprintf(buf, cap, "ticktrace had no tt-sched to ask for thread states (not started, or "
			 "ended for the program's threads: RLIMIT_NPROC or pids.max)");
		break;
	case TT_NO_STATES_WINDOWS:
		snprintf(buf, cap, "a Windows thread's switches come from the kernel's events (ETW) "
			 "alone, which need an administrator: not elevated, or the session was refused "
			 "(its CPU time is read)");
		break;
	case TT_NO_STATES_COUNTERS:
		snprintf(buf, cap, "its switches were not asked for (TICKTRACE_SCHED=schedstat): its "
			 "counters stand in");
		break;
	case TT_NO_STATES_LIVE:
		snprintf(buf, cap, "a live file (the run crashed, was killed, still runs, or could not "
			 "write its trace at exit): its thread "
			 "states (or the counters standing in for them) were in the run's memory only, "
			 "written with its trace at its end");
		break;
	default:
		snprintf(buf, cap, "the file does not say why its thread has no states (written before "
			 "ticktrace said)");
		break;
	}
	return buf;
}

const char *tt_gave_back_text(uint32_t file_flags, char *buf, size_t cap)
{
	static const struct {
		uint32_t flag;
		const char *text;
	} gave[] = {
		{TT_FILE_GAVE_PREFAULT, "tt-prefault (the writers faulted their memory in themselves)"},
		{TT_FILE_GAVE_LIVE, "tt-live (the live file's descriptions of threads and call sites "
				    "not brought up to date after it: a run killed later has names "
				    "missing; the trace written at exit whole)"},
		{TT_FILE_GAVE_SPIKES, "tt-spikes (no live spike log nor snapshot after it)"},
		{TT_FILE_GAVE_SCHED, "tt-sched (thread states after it: only the switches the "
				     "kernel's rings held as the trace was written, no counters read, "
				     "none for threads started later)"},
		{TT_FILE_GAVE_DUMP, "tt-dump (no trace written at a crash nor on "
				    "TICKTRACE_DUMP_SIGNAL after it)"},
	};
	size_t len = 0;
	for (size_t i = 0; i < sizeof gave / sizeof gave[0] && len < cap; i++)
		if (file_flags & gave[i].flag) {
			int n = snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", gave[i].text);
			len += n > 0 ? (size_t)n : 0;
		}
	return len ? buf : NULL;
}
