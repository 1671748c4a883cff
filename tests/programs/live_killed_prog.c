/* Workers that record nested scopes, all at once, then the process kills itself by
 * SIGKILL before the live file's first description (tt-live's, 200 ms in): the
 * workers' chunks are all there is of them; with `exit`, the process exits instead;
 * with `unnamed`, the workers keep the name they inherit (the process's).
 * Usage: live_killed_prog THREADS LOOPS [exit|unnamed]; prints each worker's tid and
 * name ("tid NAME") before the kill. The main thread records nothing. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ticktrace.h>

static long loops;
static int unnamed;
static pthread_barrier_t started, recorded;
static volatile long sink;

static void *worker(void *arg)
{
	char name[16];
	snprintf(name, sizeof name, "w%d", (int)(long)arg);
	if (!unnamed)
		pthread_setname_np(pthread_self(), name); /* before its first event */
	pthread_getname_np(pthread_self(), name, sizeof name);
	printf("%d %s\n", (int)gettid(), name);
	pthread_barrier_wait(&started); /* (recording all at once: their scopes overlap) */
	for (long i = 0; i < loops; i++) {
		TT_SCOPE("outer");
		{
			TT_SCOPE("inner");
			sink += i;
		}
	}
	pthread_barrier_wait(&recorded);
	pause();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4)
		return 2;
	int threads = atoi(argv[1]);
	loops = atol(argv[2]);
	unnamed = argc == 4 && strcmp(argv[3], "unnamed") == 0;
	pthread_barrier_init(&started, NULL, (unsigned)threads);
	pthread_barrier_init(&recorded, NULL, (unsigned)threads + 1);
	for (int i = 0; i < threads; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, worker, (void *)(long)i) != 0)
			return 1;
	}
	pthread_barrier_wait(&recorded);
	fflush(stdout);
	if (argc == 4 && strcmp(argv[3], "exit") == 0)
		exit(0); /* (the workers wait in pause: the trace is written at exit) */
	raise(SIGKILL);
	return 1;
}
