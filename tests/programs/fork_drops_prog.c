/* runtime/fork_drops.sh's program: run with TICKTRACE_MEMORY=1M. One thread uses the
 * run's memory up, a second (no buffer left for it) records DROPS events, which are
 * counted as dropped before their thread had a buffer; then the main thread forks and
 * the child ends at once, having recorded nothing. Prints the child's pid. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ticktrace.h>

enum { FILL = 200000, DROPS = 1000 };

static void *tt_fill(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < FILL; i++) /* 1 MiB holds about 65,000 records */
		TT_COUNTER("fill", i);
	return NULL;
}

static void *tt_drop(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < DROPS; i++)
		TT_COUNTER("dropped", i);
	return NULL;
}

static void tt_run(void *(*body)(void *))
{
	pthread_t t;
	if (pthread_create(&t, NULL, body, NULL) != 0 || pthread_join(t, NULL) != 0)
		exit(2);
}

int main(void)
{
	tt_run(tt_fill);
	tt_run(tt_drop);
	pid_t child = fork();
	if (child < 0)
		return 2;
	if (child == 0)
		exit(0);
	int status;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		return 2;
	printf("%d\n", (int)child);
	return 0;
}
