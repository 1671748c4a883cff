/* A new thread's start with the counters as the source (runtime/sched_start.py): perf
 * refused (EACCES, as perf_event_paranoid 3 refuses it) by a seccomp filter on every
 * thread of the process, ticktrace's (started before main) too, as a sandbox set up
 * at exec would be.
 *
 * - "starter" records nothing: a line {"starter": TID} (the test counts its opens).
 * - "first": its first scope, "sleep3", sleeps 3 ms; its records hold nothing else.
 *   A line {"first": TID}. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ticktrace.h"

static void deny_perf(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
		perror("sched_start_prog: seccomp");
		exit(1);
	}
}

static void *starter(void *unused)
{
	(void)unused;
	printf("{\"starter\": %d}\n", (int)gettid());
	return NULL;
}

static void *first(void *unused)
{
	(void)unused;
	{
		TT_SCOPE("sleep3");
		struct timespec nap = {0, 3000000};
		while (nanosleep(&nap, &nap) != 0)
			;
	}
	printf("{\"first\": %d}\n", (int)gettid());
	return NULL;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	deny_perf();
	void *(*made[2])(void *) = {starter, first};
	for (int i = 0; i < 2; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, made[i], NULL) != 0 || pthread_join(t, NULL) != 0)
			return 1;
	}
	return 0;
}
