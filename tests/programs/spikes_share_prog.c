/* spikes_share.py's program: one thread writing as many records a second as it can
 * (empty scopes "hot", every function a scope as a -finstrument-functions build's)
 * for 4 s of its CPU time, with a scope "spike" of 2 ms of CPU time every 100 ms of
 * it. */
#include <time.h>

#include <ticktrace.h>

static long long cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
	long long start = cpu_ns(), next = start;
	for (long long now = start; now - start < 4000000000LL; now = cpu_ns()) {
		for (int i = 0; i < 10000; i++) {
			TT_SCOPE("hot");
		}
		if (now >= next) {
			TT_SCOPE("spike");
			long long until = cpu_ns() + 2000000;
			while (cpu_ns() < until)
				;
			next = now + 100000000;
		}
	}
	return 0;
}
