/* snapshot_lost.py's program: a thread "worker" whose first spike's whole window its
 * ring overwrites before the window ends, and a lesser spike after it whose window the
 * ring keeps. In order: a scope "lost" of a sleep of 8 ms; 60 ms with no record (the
 * spike detector finds it meanwhile, its window not ended); 200 ms of instants written
 * as fast as it can (a small ring recycles the window, which ends 80 ms after the
 * spike, many times over); 60 ms with no record; a scope "kept" of a sleep of 3 ms.
 * The main thread records nothing. Run with TICKTRACE_SNAPSHOT_AFTER=80ms. */
#include <pthread.h>
#include <time.h>

#include <ticktrace.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void nap_ms(double ms)
{
	double until = now_ms() + ms;
	for (double left = ms; left > 0; left = until - now_ms()) {
		struct timespec ts = {0, (long)(left * 1e6)};
		nanosleep(&ts, NULL);
	}
}

static void *worker(void *unused)
{
	(void)unused;
	tt_thread_name("worker");
	{
		TT_SCOPE("lost");
		nap_ms(8);
	}
	nap_ms(60);
	for (double until = now_ms() + 200; now_ms() < until;)
		for (int i = 0; i < 1000; i++)
			TT_INSTANT("fill");
	nap_ms(60);
	{
		TT_SCOPE("kept");
		nap_ms(3);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	return 0;
}
