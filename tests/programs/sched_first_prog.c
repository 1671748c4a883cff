/* The program that runtime/sched_first.py runs: scopes that are their thread's first
 * event, each sleeping (blocked), as JSON lines on stdout naming each thread:
 *
 *   main's first event begins "startup", which sleeps 300 ms      {"main": TID}
 *   then THREADS threads, each started as the last one ended, whose first event
 *   begins "sleep3", which sleeps 3 ms                            {"thread": TID}
 *   then a forked child, whose first event begins "child", which
 *   sleeps 3 ms (its own file: TICKTRACE_OUT.PID)                 {"child": TID, "pid": PID}
 *
 * With the argument "pingpong": two threads hand a byte back and forth through pipes
 * for 2.5 s, in a scope "pingpong", an event per hop, switching tens of thousands of
 * times a second ({"hops": N, "tenths": [hops in each 100 ms]}); with "pingpong-idle", resting 5 ms between hops (a program that
 * mostly sleeps: some hundreds of switches a second, which cost it next to nothing);
 * with "pingpong-long", the same as "pingpong" for 30 s (killed once it was told the price);
 * with "pingpong-bare", 0.4 s of hops in no scope: how often tt-sched went to sleep
 * meanwhile ({"hops": N, "sleeps": N, "ms": M}).
 *
 * With "one-by-one": main records nothing and starts 100 threads, each as the last one
 * ended, each recording one event: how often tt-sched went to sleep meanwhile (its
 * voluntary switches) and how long it took ({"threads": 100, "sleeps": N, "ms": M}).
 *
 * With "early": a thread sleeps 60 ms in a scope "long" (tt-sched watches it, looking
 * each period), while main, from 3 ms on, sleeps 1.7 ms in each of 12 scopes "nap",
 * 0.3 ms apart                                                   {"main": TID}
 *
 * With "open-at-exit": a thread leaves by pthread_exit 8 ms into its scope "left_open",
 * another is cancelled 20 ms into "cancelled" (open_at_exit). */
#include <dirent.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void nap_us(long us)
{
	struct timespec t = {0, us * 1000};
	while (nanosleep(&t, &t) != 0)
		;
}

static void *long_thread(void *unused)
{
	(void)unused;
	TT_BEGIN("long");
	nap_ms(60);
	TT_END();
	return NULL;
}

static int early(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, long_thread, NULL) != 0) {
		perror("sched_first_prog: early");
		return 1;
	}
	nap_ms(3);
	for (int i = 0; i < 12; i++) {
		TT_BEGIN("nap");
		nap_us(1700);
		TT_END();
		nap_us(300);
	}
	printf("{\"main\": %d}\n", (int)gettid());
	return pthread_join(t, NULL) != 0;
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

static int pipes[2][2];

static void *echo(void *unused)
{
	(void)unused;
	char byte;
	while (read(pipes[0][0], &byte, 1) == 1 && byte && write(pipes[1][1], &byte, 1) == 1)
		TT_INSTANT("echo");
	return NULL;
}

static long tt_sched_sleeps(void);

/* With `bare`, no scope around the hops: {"hops": N, "sleeps": tt-sched's voluntary
 * switches meanwhile, "ms": M}. */
static int pingpong(long rest_ms, long duration_ms, int bare)
{
	long before = bare ? tt_sched_sleeps() : 0;
	pthread_t t;
	if (pipe(pipes[0]) || pipe(pipes[1]) || pthread_create(&t, NULL, echo, NULL)) {
		perror("sched_first_prog: pingpong");
		return 1;
	}
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long hops = 0, elapsed_ns, tenths[26] = {0}; /* (a loaded machine's pace varies along the run) */
	char byte = 1;
	if (!bare) {
		TT_BEGIN("pingpong"); /* (a scope that switches more than the kernel's ring may hold) */
	}
	do {
		TT_INSTANT("hop");
		if (write(pipes[0][1], &byte, 1) != 1 || read(pipes[1][0], &byte, 1) != 1)
			return 1;
		hops++;
		if (rest_ms)
			nap_ms(rest_ms);
		clock_gettime(CLOCK_MONOTONIC, &now);
		elapsed_ns = (now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec);
		tenths[elapsed_ns / 100000000L < 25 ? elapsed_ns / 100000000L : 25]++;
	} while (elapsed_ns < duration_ms * 1000000L);
	if (bare) {
		long sleeps = tt_sched_sleeps();
		printf("{\"hops\": %ld, \"sleeps\": %ld, \"ms\": %.3f}\n", hops, before < 0 || sleeps < 0 ? -1 : sleeps - before,
		       (double)elapsed_ns / 1e6);
	} else {
		TT_END();
	}
	byte = 0;
	if (write(pipes[0][1], &byte, 1) != 1 || pthread_join(t, NULL))
		return 1;
	if (bare)
		return 0;
	printf("{\"hops\": %ld, \"tenths\": [", hops);
	for (int i = 0; i < 25; i++)
		printf("%s%ld", i ? ", " : "", tenths[i]);
	printf("]}\n");
	return 0;
}

static void *one_event(void *unused)
{
	(void)unused;
	TT_INSTANT("one");
	return NULL;
}

/* tt-sched's voluntary switches so far, or -1 (not found). Every task of the process
 * is looked at: on a busy machine other processes' threads take the tids after ours. */
static long tt_sched_sleeps_now(void)
{
	DIR *tasks = opendir("/proc/self/task");
	struct dirent *d;
	long sleeps = -1;
	while (tasks && sleeps < 0 && (d = readdir(tasks))) {
		char path[300], comm[32] = "", status[4096];
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", d->d_name);
		FILE *f = d->d_name[0] != '.' ? fopen(path, "r") : NULL;
		if (!f)
			continue;
		int named = fgets(comm, sizeof comm, f) && strcmp(comm, "tt-sched\n") == 0;
		fclose(f);
		snprintf(path, sizeof path, "/proc/self/task/%s/status", d->d_name);
		if (!named || !(f = fopen(path, "r")))
			continue;
		size_t n = fread(status, 1, sizeof status - 1, f);
		fclose(f);
		status[n] = 0;
		const char *at = strstr(status, "voluntary_ctxt_switches:");
		sleeps = at ? atol(at + strlen("voluntary_ctxt_switches:")) : -1;
	}
	if (tasks)
		closedir(tasks);
	return sleeps;
}

/* The same, waiting up to 10 s for tt-sched to have named itself (it may not have run
 * yet on a loaded machine). */
static long tt_sched_sleeps(void)
{
	long sleeps = tt_sched_sleeps_now();
	for (int ms = 0; sleeps < 0 && ms < 10000; ms += 10) {
		nap_ms(10);
		sleeps = tt_sched_sleeps_now();
	}
	return sleeps;
}

static int one_by_one(void)
{
	enum { STARTS = 100 };
	struct timespec t0, t1;
	long before = tt_sched_sleeps();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < STARTS; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, one_event, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long after = tt_sched_sleeps();
	if (before < 0 || after < 0) {
		fprintf(stderr, "sched_first_prog: no thread tt-sched\n");
		return 1;
	}
	printf("{\"threads\": %d, \"sleeps\": %ld, \"ms\": %.3f}\n", STARTS, after - before,
	       (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	return 0;
}

static void *exits_in_scope(void *unused)
{
	(void)unused;
	TT_BEGIN("left_open");
	nap_ms(8);
	pthread_exit(NULL);
}

/* posted once "cancelled" is open: main's 20 ms count from then (on a loaded machine
 * the thread began its scope 12 ms into main's wait, which then lasted 7.7 ms) */
static sem_t cancelled_began;

static void *cancelled_in_scope(void *unused)
{
	(void)unused;
	TT_BEGIN("cancelled");
	sem_post(&cancelled_began);
	/* (cancelled inside the C library's call: a frame of ours with locals that the
	 * cancellation unwound, never returning, left AddressSanitizer's poison behind on
	 * the stack the thread's exit then used) */
	for (;;)
		usleep(1000);
	return NULL;
}

/* Threads that leave with a scope open: one by pthread_exit after an 8 ms sleep, one
 * cancelled by main after 20 ms ({"exits": TID, "cancelled": TID}). */
static int open_at_exit(void)
{
	pthread_t exits, cancelled;
	if (sem_init(&cancelled_began, 0, 0) != 0 || pthread_create(&exits, NULL, exits_in_scope, NULL) != 0 ||
	    pthread_create(&cancelled, NULL, cancelled_in_scope, NULL) != 0) {
		perror("sched_first_prog: open-at-exit");
		return 1;
	}
	while (sem_wait(&cancelled_began) != 0)
		;
	nap_ms(20);
	pthread_cancel(cancelled);
	if (pthread_join(cancelled, NULL) != 0 || pthread_join(exits, NULL) != 0)
		return 1;
	nap_ms(10);
	printf("{\"done\": 1}\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "open-at-exit") == 0)
		return open_at_exit();
	if (argc == 2 && strcmp(argv[1], "one-by-one") == 0)
		return one_by_one();
	if (argc == 2 && strcmp(argv[1], "early") == 0)
		return early();
	if (argc == 2 && strcmp(argv[1], "pingpong") == 0)
		return pingpong(0, 2500, 0);
	if (argc == 2 && strcmp(argv[1], "pingpong-bare") == 0)
		return pingpong(0, 400, 1);
	if (argc == 2 && strcmp(argv[1], "pingpong-idle") == 0)
		return pingpong(5, 2500, 0);
	if (argc == 2 && strcmp(argv[1], "pingpong-long") == 0)
		return pingpong(0, 30000, 0);
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
