/* runtime/nproc.sh's program: starts N threads that all live until the last has
 * started (each records a scope), as a program under a low RLIMIT_NPROC would; says
 * "started N" and exits 0 (by _exit with a second argument "_exit"), or which one
 * the kernel refused and exits 1. Built with
 * ticktrace and without (TT_NPROC_PLAIN): the same program untraced. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef TT_NPROC_PLAIN
#define TT_SCOPE(name) ((void)0)
#else
#include <ticktrace.h>
#endif

static pthread_barrier_t tt_all;

static void *tt_worker(void *unused)
{
	(void)unused;
	TT_SCOPE("worker");
	pthread_barrier_wait(&tt_all);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;
	if (n < 1 || n > 64) {
		fprintf(stderr, "usage: nproc_prog N [_exit] (1 to 64 threads)\n");
		return 2;
	}
	TT_SCOPE("main");
	pthread_t threads[64];
	pthread_barrier_init(&tt_all, NULL, (unsigned)n);
	for (int i = 0; i < n; i++) {
		int err = pthread_create(&threads[i], NULL, tt_worker, NULL);
		if (err) {
			/* (the barrier's waiters would wait for ever: the exit ends them) */
			printf("thread %d of %d refused: %s\n", i + 1, n, strerror(err));
			fflush(stdout);
			_exit(1);
		}
	}
	for (int i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	printf("started %d\n", n);
	fflush(stdout);
	if (argc > 2 && strcmp(argv[2], "_exit") == 0)
		_exit(0);
	return 0;
}
