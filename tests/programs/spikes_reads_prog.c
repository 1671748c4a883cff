/* spikes_reads.py's program: a second of short scopes "tick" (a few us each, a
 * millisecond's sleep between them), then one scope "spike" of 1.5 ms of CPU time,
 * too short for tt-sched to watch (TT__COUNTERS_AFTER_NS, 2 ms), then a second and a
 * half more of ticks. Prints "spike BEGIN END" (CLOCK_MONOTONIC ns) on stdout. */
#include <stdio.h>
#include <time.h>

#include <ticktrace.h>

static long long now_ns(int clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Spins for `ns` of the thread's CPU time. */
static void spin(long long ns)
{
	long long until = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < until)
		;
}

static void ticks(long long for_ns)
{
	long long until = now_ns(CLOCK_MONOTONIC) + for_ns;
	while (now_ns(CLOCK_MONOTONIC) < until) {
		{
			TT_SCOPE("tick");
			spin(5000);
		}
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
}

int main(void)
{
	ticks(1000000000);
	long long begin = now_ns(CLOCK_MONOTONIC);
	TT_BEGIN("spike");
	spin(1500000);
	TT_END();
	long long end = now_ns(CLOCK_MONOTONIC);
	ticks(1500000000);
	printf("spike %lld %lld\n", begin, end);
	return 0;
}
