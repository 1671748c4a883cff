/* The run `convert --split` is tested on: THREADS threads "worker-N" (named), each one
 * scope "run" open all along around SCOPES scopes "step", every MARKSth (1000th by
 * default) with an instant "mark" inside; the main thread "main" records a scope
 * "setup" first.
 *
 *   shards_prog THREADS SCOPES [NAP [MARKS [STAGGER]]]   (TICKTRACE_OUT: where the run goes)
 *
 * With NAP (not 0), every NAPth step sleeps 20 us: the threads leave their CPUs all
 * along the run, so that their states cross every shard's boundary. With STAGGER (not
 * 0), worker-N takes SCOPES >> N steps: the threads exit one after the other, the
 * later shards have threads that are gone.
 *
 * "run" crosses every shard's boundary: it belongs to the first shard, whole, and
 * the later shards hold its children without it. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ticktrace.h"

static unsigned long scopes, nap, marks = 1000, stagger;

static void *worker(void *arg)
{
	char name[32];
	snprintf(name, sizeof(name), "worker-%u", (unsigned)(uintptr_t)arg);
	tt_thread_name(name);
	TT_BEGIN("run");
	unsigned long steps = stagger ? scopes >> (uintptr_t)arg : scopes;
	for (unsigned long i = 0; i < steps; i++) {
		TT_BEGIN("step");
		if (i % marks == 0)
			TT_INSTANT("mark");
		if (nap && i % nap == nap - 1)
			nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
		TT_END();
	}
	TT_END();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 6 || (argc >= 5 && strtoul(argv[4], NULL, 10) == 0)) {
		fputs("usage: shards_prog THREADS SCOPES [NAP [MARKS [STAGGER]]]\n", stderr);
		return 2;
	}
	unsigned threads = (unsigned)strtoul(argv[1], NULL, 10);
	scopes = strtoul(argv[2], NULL, 10);
	nap = argc >= 4 ? strtoul(argv[3], NULL, 10) : 0;
	if (argc >= 5)
		marks = strtoul(argv[4], NULL, 10);
	stagger = argc == 6 ? strtoul(argv[5], NULL, 10) : 0;
	tt_thread_name("main");
	TT_BEGIN("setup");
	TT_END();
	pthread_t *t = calloc(threads, sizeof(*t));
	for (unsigned i = 0; i < threads; i++)
		if (!t || pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) != 0)
			return 1;
	for (unsigned i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	free(t);
	return 0;
}
