/* spikes_share.py's program: one thread writing as many records a second as it can
 * (empty scopes "hot", every function a scope as a -finstrument-functions build's)
 * for 4 s of its CPU time, with a scope "spike" of 2 ms of CPU time every 100 ms of
 * it; beside it a thread "quiet" that writes 500 empty scopes "filler" every 20 ms
 * (some 50,000 records a second) until the first is done. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include <ticktrace.h>

static atomic_int done;

static long long cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void nap(long ns)
{
	struct timespec left = {0, ns};
	while (nanosleep(&left, &left) != 0)
		;
}

static void *quiet(void *unused)
{
	(void)unused;
	tt_thread_name("quiet");
	while (!atomic_load(&done)) {
		for (int i = 0; i < 500; i++) {
			TT_SCOPE("filler");
		}
		nap(20000000);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, quiet, NULL) != 0)
		return 1;
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
	atomic_store(&done, 1);
	pthread_join(t, NULL);
	return 0;
}
