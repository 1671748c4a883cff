/* The program that test_sched runs: scopes whose time is planted, each with the
 * kernel's own figures for its thread over it, as JSON lines on stdout:
 *
 *   sleep      sleeps 3 ms in scope "sleep3"                 (blocked)
 *   lock       waits ~2 ms in "lockwait" for a mutex that another thread holds
 *   spin       two threads pinned to one CPU each spin 6 ms of CPU time in "spin"
 *              (each preempted while the other runs)
 *
 * A line: {"scope", "tid", "run_ns", "wait_ns", "nvcsw", "nivcsw", "wall_ns"}: the
 * deltas over the scope of the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), its time
 * waiting on a run queue (/proc/self/task/TID/schedstat), and its voluntary and
 * involuntary switches (getrusage(RUSAGE_THREAD)).
 *
 *   seccomp    as sleep, perf_event_open denied (EACCES) by a seccomp filter first
 *              (PR_SET_SECCOMP's filter, on every thread: SECCOMP_FILTER_FLAG_TSYNC) */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "ticktrace.h"

struct kernel_figures {
	long long run_ns, wait_ns, nvcsw, nivcsw, wall_ns;
};

static long long now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void kernel_now(struct kernel_figures *k)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)gettid());
	FILE *f = fopen(path, "re");
	long long schedstat_run;
	if (!f || fscanf(f, "%lld %lld", &schedstat_run, &k->wait_ns) != 2) {
		fprintf(stderr, "sched_causes_prog: cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	k->nvcsw = ru.ru_nvcsw;
	k->nivcsw = ru.ru_nivcsw;
	/* Both clocks last, together: the file reads above fall in one window alike (the
	 * CPU time's: exact, where schedstat's lags a tick). */
	k->run_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
	k->wall_ns = now_ns(CLOCK_MONOTONIC);
}

static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void say(const char *scope, const struct kernel_figures *a, const struct kernel_figures *b)
{
	pthread_mutex_lock(&print_lock);
	printf("{\"scope\":\"%s\",\"tid\":%d,\"run_ns\":%lld,\"wait_ns\":%lld,\"nvcsw\":%lld,"
	       "\"nivcsw\":%lld,\"wall_ns\":%lld}\n",
	       scope, (int)gettid(), b->run_ns - a->run_ns, b->wait_ns - a->wait_ns,
	       b->nvcsw - a->nvcsw, b->nivcsw - a->nivcsw, b->wall_ns - a->wall_ns);
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
}

/* The kernel's figures are read just outside the scope: what they add is not in it. */
#define AROUND(scope, body)                                                        \
	do {                                                                       \
		struct kernel_figures before_, after_;                             \
		kernel_now(&before_);                                              \
		TT_BEGIN(scope);                                                   \
		body;                                                              \
		TT_END();                                                          \
		kernel_now(&after_);                                               \
		say(scope, &before_, &after_);                                     \
	} while (0)

static void sleep_ms(int ms)
{
	struct timespec ts = {0, ms * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* ticktrace asks the kernel for a thread's switches just after its first event, from
 * its own thread: waits (up to 10 s, polling) until `threads` perf events are open,
 * so that the planted scopes have states from their beginning. */
static int perf_events_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		char path[300], target[64];
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		ssize_t len = readlink(path, target, sizeof target - 1);
		target[len > 0 ? len : 0] = 0;
		n += strcmp(target, "anon_inode:[perf_event]") == 0;
	}
	if (d)
		closedir(d);
	return n;
}

static int expect_states = 1;

static void wait_states(int threads)
{
	for (int i = 0; expect_states && i < 10000 && perf_events_open() < threads; i++)
		sleep_ms(1);
}

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t ready;

static void *holder(void *unused)
{
	(void)unused;
	TT_INSTANT("holder starts");
	wait_states(2);
	pthread_mutex_lock(&held);
	pthread_barrier_wait(&ready);
	sleep_ms(2);
	pthread_mutex_unlock(&held);
	return NULL;
}

static void spin_cpu(long long ns)
{
	long long until = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < until)
		;
}

static void *spinner(void *unused)
{
	(void)unused;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof one, &one) != 0) {
		perror("sched_setaffinity");
		exit(1);
	}
	TT_INSTANT("spinner pinned");
	wait_states(2);
	pthread_barrier_wait(&ready);
	AROUND("spin", spin_cpu(6000000));
	return NULL;
}

/* perf_event_open fails with EACCES from now on, in every thread of the process. */
static void deny_perf(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 13 /* EACCES */),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof filter / sizeof filter[0], .filter = filter};
	/* Every thread of the process, ticktrace's (started before main) too, as a sandbox
	 * set up at exec would be: TSYNC. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
		perror("sched_causes_prog: seccomp");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	if (strcmp(what, "seccomp") == 0) {
		deny_perf();
		expect_states = 0;
		what = "sleep";
	}
	if (strcmp(what, "sleep") == 0) {
		TT_INSTANT("main starts");
		wait_states(1);
		AROUND("sleep3", sleep_ms(3));
	} else if (strcmp(what, "lock") == 0) {
		TT_INSTANT("main starts");
		pthread_t t;
		pthread_barrier_init(&ready, NULL, 2);
		pthread_create(&t, NULL, holder, NULL);
		wait_states(2);
		pthread_barrier_wait(&ready);
		AROUND("lockwait", pthread_mutex_lock(&held));
		pthread_mutex_unlock(&held);
		pthread_join(t, NULL);
	} else if (strcmp(what, "spin") == 0) {
		pthread_t t[2];
		pthread_barrier_init(&ready, NULL, 2);
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, spinner, NULL);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
	} else {
		fprintf(stderr, "usage: sched_causes_prog sleep|lock|spin|seccomp\n");
		return 2;
	}
	return 0;
}
