/* The program that runtime/sched_first.py runs: scopes that are their thread's first
 * event, each sleeping (blocked), as JSON lines on stdout naming each thread:
 *
 *   main's first event begins "startup", which sleeps 300 ms      {"main": TID}
 *   then THREADS threads, each started as the last one ended, whose first event
 *   begins "sleep3", which sleeps 3 ms                            {"thread": TID}
 *   then a forked child, whose first event begins "child", which
 *   sleeps 3 ms (its own file: TICKTRACE_OUT.PID)                 {"child": TID, "pid": PID} */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ticktrace.h"

#define THREADS 60

static void nap_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
	while (nanosleep(&t, &t) != 0)
		;
}

static void *short_thread(void *unused)
{
	(void)unused;
	TT_BEGIN("sleep3");
	nap_ms(3);
	TT_END();
	printf("{\"thread\": %d}\n", (int)gettid());
	return NULL;
}

int main(void)
{
	TT_BEGIN("startup");
	nap_ms(300);
	TT_END();
	printf("{\"main\": %d}\n", (int)gettid());
	for (int i = 0; i < THREADS; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, short_thread, NULL) != 0 || pthread_join(t, NULL) != 0) {
			perror("sched_first_prog: pthread_create");
			return 1;
		}
	}
	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		TT_BEGIN("child");
		nap_ms(3);
		TT_END();
		printf("{\"child\": %d, \"pid\": %d}\n", (int)gettid(), (int)getpid());
		return 0;
	}
	int status;
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "sched_first_prog: the child failed\n");
		return 1;
	}
	return 0;
}
