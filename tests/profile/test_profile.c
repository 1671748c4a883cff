/* Self-profiling with the time source, through whichever mechanism this machine
 * gives: meson runs it twice, once as is (perf) and once with
 * TICKTRACE_PROFILE_NO_PERF=1 (the timer fallback), and each run checks that it got
 * the mechanism it expects. Every duration is CPU time, never wall time, and every
 * statistical bound is derived from the number of samples. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_profile_calib.h"
#include "ticktrace/profile.h"

/* Never called: the section must survive --gc-sections anyway (this test is linked
 * with it). */
TT_PROFILED(gc_probe) static int gc_probe(int x)
{
	return x * 3 + 1;
}

static bool perf_forced_off(void)
{
	const char *v = getenv("TICKTRACE_PROFILE_NO_PERF");
	return v && *v && strcmp(v, "0") != 0;
}

/* Timers when forced; otherwise perf, unless this machine denies it (a container's
 * seccomp filter, perf_event_paranoid 3), which the probe finds out. */
static enum tt_profile_mechanism expected_mechanism(void)
{
	static enum tt_profile_mechanism m;
	if (!m) {
		struct perf_event_attr a = {.size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
					    .config = PERF_COUNT_SW_TASK_CLOCK, .disabled = 1,
					    .exclude_kernel = 1, .exclude_hv = 1};
		int fd = perf_forced_off() ? -1 : (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
		m = fd >= 0 ? TT_PROFILE_PERF : TT_PROFILE_TIMER;
		if (fd >= 0)
			close(fd);
		else if (!perf_forced_off())
			printf("# perf_event_open denied here (%s): expecting the timer fallback\n",
			       strerror(errno));
	}
	return m;
}

static struct tt_profile *calib_profile(uint64_t interval, unsigned flags)
{
	struct tt_profile_config cfg = {.bucket_size = 64, .interval = interval, .flags = flags};
	TT_PROFILE_SECTION(&cfg, calib);
	struct tt_profile *p = NULL;
	assert_int_equal(tt_profile_create(&p, &cfg), 0);
	struct tt_profile_stats st;
	assert_int_equal(tt_profile_read(p, NULL, 0, &st), 0);
	assert_int_equal(st.mechanism, expected_mechanism());
	assert_int_equal(st.buckets, 2);
	return p;
}

static void test_section_bounds(void **state)
{
	(void)state;
	struct tt_profile_config cfg = {0};
	TT_PROFILE_SECTION(&cfg, calib);
	assert_ptr_equal(cfg.start, tt_test_calib_begin);
	assert_int_equal(cfg.size, TT_TEST_CALIB_SIZE);

	/* Nothing refers to gc_probe, and the section is still there. */
	TT_PROFILE_SECTION(&cfg, gc_probe);
	assert_true(cfg.size > 0);

	/* A section nothing was put in is empty, and an empty range is refused. */
	TT_PROFILE_SECTION(&cfg, nothing_here);
	assert_int_equal(cfg.size, 0);
	struct tt_profile *p = NULL;
	assert_int_equal(tt_profile_create(&p, &cfg), -EINVAL);
	assert_null(p);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	struct tt_profile *p = NULL;
	struct tt_profile_config cfg = {.start = tt_test_calib_begin, .size = 128, .bucket_size = 12};
	assert_int_equal(tt_profile_create(&p, &cfg), -EINVAL);
	cfg.bucket_size = 4;
	cfg.source = (enum tt_profile_source)99;
	assert_int_equal(tt_profile_create(&p, &cfg), -EINVAL);
	cfg.source = TT_PROFILE_TIME;
	cfg.flags = 0x80;
	assert_int_equal(tt_profile_create(&p, &cfg), -EINVAL);
	assert_null(p);
	assert_null(tt_profile_source_name((enum tt_profile_source)99));
	assert_string_equal(tt_profile_source_name(TT_PROFILE_BRANCH_MISSES), "branch-misses");
}

/* Loop A runs three times as many iterations as loop B, interleaved in short calls
 * so that drift in the machine's speed hits both alike; the truth is the CPU time
 * each took. The share of samples in A's bucket must match A's share of CPU time.
 * Each pair's length varies (0.5 to 1.5 times): a timer that fires on the kernel's
 * 4 ms tick sampled a steady 2 ms pair at one phase of it (A's share 0.84 against
 * 0.75, in a fresh-clone CI run), not at random as the tolerance assumes. */
static void test_calibration_shares(void **state)
{
	(void)state;
	struct tt_profile *p = calib_profile(250000, 0);
	uint64_t n_b = tt_test_calib_iterations(500000); /* 0.5 ms per call of B */
	uint64_t t_a = 0, t_b = 0, counts[2];
	struct tt_profile_stats st;
	uint64_t window = tt_test_thread_cpu_ns();
	struct timespec wall0, wall1;
	clock_gettime(CLOCK_MONOTONIC, &wall0);
	assert_int_equal(tt_profile_start(p), 0);
	assert_int_equal(tt_profile_start(p), -EALREADY);
	/* At least 2000 samples, or 6 s of CPU time where the timer's tick limits it. */
	uint32_t jitter = 12345;
	do {
		for (int i = 0; i < 100; i++) {
			jitter = jitter * 1103515245u + 12345u;
			uint64_t n = n_b / 2 + n_b * (jitter >> 16 & 1023) / 1024;
			uint64_t t0 = tt_test_thread_cpu_ns();
			tt_test_calib_a(3 * n);
			uint64_t t1 = tt_test_thread_cpu_ns();
			tt_test_calib_b(n);
			t_b += tt_test_thread_cpu_ns() - t1;
			t_a += t1 - t0;
		}
		assert_int_equal(tt_profile_read(p, counts, 2, &st), 0);
	} while (st.samples < 2000 && t_a + t_b < 6000000000u);
	assert_int_equal(tt_profile_stop(p), 0);
	window = tt_test_thread_cpu_ns() - window;
	clock_gettime(CLOCK_MONOTONIC, &wall1);
	uint64_t wall = (uint64_t)(wall1.tv_sec - wall0.tv_sec) * 1000000000u +
			(uint64_t)wall1.tv_nsec - (uint64_t)wall0.tv_nsec;
	assert_int_equal(tt_profile_stop(p), -EALREADY);
	assert_int_equal(tt_profile_read(p, counts, 2, &st), 0);
	tt_profile_close(p);

	double n = (double)(counts[0] + counts[1]);
	double truth = (double)t_a / (double)(t_a + t_b);
	double share = (double)counts[0] / n;
	/* Five binomial standard deviations (a false alarm once in millions of runs), plus
	 * 0.02 for what is not sampling noise: the clock reads between the loops. */
	double tol = 5 * sqrt(truth * (1 - truth) / n) + 0.02;
	printf("# samples %.0f (outside %llu, lost %llu), A share %.4f, CPU-time truth %.4f, "
	       "tolerance %.4f, effective interval %llu ns\n",
	       n, (unsigned long long)st.outside, (unsigned long long)st.lost, share, truth, tol,
	       (unsigned long long)st.effective_interval_ns);
	assert_true(n >= 300);
	assert_true(fabs(share - truth) <= tol);
	/* The loops are nearly all the CPU time, so nearly all the samples. */
	assert_true(n >= 0.9 * (double)(st.samples + st.outside));
	assert_int_equal(st.samples, counts[0] + counts[1]);
	/* The sampled CPU time lies between the loops' time and the whole window's, both
	 * measured by the thread's clock (1% for reading two clocks at different times).
	 * perf's task-clock also counts time the hypervisor stole while the thread was
	 * scheduled in, which the thread's clock leaves out: its bound is the wall time. */
	assert_true((double)st.cpu_ns >= 0.99 * (double)(t_a + t_b));
	assert_true((double)st.cpu_ns <=
		    1.01 * (double)(st.mechanism == TT_PROFILE_PERF ? wall : window));
	/* The effective interval is at least the one asked: tick-rounded for timers; for
	 * perf, plus the time the kernel spends per sample, which is charged to the
	 * thread (6% of 250 us on this VM). Twice as much would be a units mistake. */
	assert_true(st.effective_interval_ns >= st.interval * 9 / 10);
	if (st.mechanism == TT_PROFILE_PERF)
		assert_true(st.effective_interval_ns <= st.interval * 2);
}

/* Loop B runs only while the profile is stopped: not one sample may land in it, and
 * no count may change while stopped. */
static void test_nothing_outside_windows(void **state)
{
	(void)state;
	struct tt_profile *p = calib_profile(250000, 0);
	uint64_t n = tt_test_calib_iterations(1000000); /* 1 ms per call */
	uint64_t before[2], after[2];
	struct tt_profile_stats st0, st1;
	for (int window = 0; window < 4; window++) {
		assert_int_equal(tt_profile_start(p), 0);
		for (uint64_t t0 = tt_test_thread_cpu_ns(); tt_test_thread_cpu_ns() - t0 < 60000000u;)
			tt_test_calib_a(n);
		assert_int_equal(tt_profile_stop(p), 0);
		assert_int_equal(tt_profile_read(p, before, 2, &st0), 0);
		for (uint64_t t0 = tt_test_thread_cpu_ns(); tt_test_thread_cpu_ns() - t0 < 60000000u;)
			tt_test_calib_b(n);
		assert_int_equal(tt_profile_read(p, after, 2, &st1), 0);
		assert_memory_equal(before, after, sizeof(before));
		assert_int_equal(st0.outside, st1.outside);
		assert_int_equal(st0.cpu_ns, st1.cpu_ns);
	}
	tt_profile_close(p);
	printf("# A %llu, B %llu samples after 4 windows\n", (unsigned long long)after[0],
	       (unsigned long long)after[1]);
	assert_int_equal(after[1], 0);
	assert_true(after[0] > 0);
}

/* Worker thread: runs loop B until told to stop, and reports its CPU time.
 * cmocka's asserts work on the main thread only, so it records return codes. */
struct worker {
	pthread_t thread;
	int stop;
	uint64_t cpu_ns;
	bool profile_itself;
	int rc[4]; /* create, start, stop, read */
	uint64_t own_counts[2];
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct tt_profile *p = NULL;
	if (w->profile_itself) {
		struct tt_profile_config cfg = {.bucket_size = 64, .interval = 250000};
		TT_PROFILE_SECTION(&cfg, calib);
		w->rc[0] = tt_profile_create(&p, &cfg);
		w->rc[1] = p ? tt_profile_start(p) : -1;
	}
	uint64_t n = tt_test_calib_iterations(500000), t0 = tt_test_thread_cpu_ns();
	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		tt_test_calib_b(n);
		__atomic_store_n(&w->cpu_ns, tt_test_thread_cpu_ns() - t0, __ATOMIC_RELEASE);
	}
	if (p) {
		w->rc[2] = tt_profile_stop(p);
		w->rc[3] = tt_profile_read(p, w->own_counts, 2, NULL);
		tt_profile_close(p);
	}
	return NULL;
}

/* Main runs loop A, the worker loop B, both for at least 300 ms of CPU time. */
static void run_both(struct worker *w)
{
	uint64_t n = tt_test_calib_iterations(500000), t0 = tt_test_thread_cpu_ns();
	while (tt_test_thread_cpu_ns() - t0 < 300000000u ||
	       __atomic_load_n(&w->cpu_ns, __ATOMIC_ACQUIRE) < 300000000u)
		tt_test_calib_a(n);
}

static void stop_worker(struct worker *w)
{
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(w->thread, NULL), 0);
}

/* Profile from the main thread (created before the worker exists, started once it
 * runs) while main runs loop A and the worker loop B. */
static void profile_with_worker(struct worker *w, unsigned flags, uint64_t counts[2])
{
	struct tt_profile *p = calib_profile(250000, flags);
	assert_int_equal(pthread_create(&w->thread, NULL, worker_main, w), 0);
	while (__atomic_load_n(&w->cpu_ns, __ATOMIC_ACQUIRE) == 0)
		sched_yield();
	assert_int_equal(tt_profile_start(p), 0);
	run_both(w);
	assert_int_equal(tt_profile_stop(p), 0);
	stop_worker(w);
	assert_int_equal(tt_profile_read(p, counts, 2, NULL), 0);
	tt_profile_close(p);
}

/* Main's profile of itself and the worker's profile of itself see one loop each. */
static void test_one_thread_sees_only_itself(void **state)
{
	(void)state;
	struct worker w = {.profile_itself = true, .rc = {-1, -1, -1, -1}};
	uint64_t counts[2];
	profile_with_worker(&w, 0, counts);
	printf("# main's profile: A %llu, B %llu; worker's: A %llu, B %llu\n",
	       (unsigned long long)counts[0], (unsigned long long)counts[1],
	       (unsigned long long)w.own_counts[0], (unsigned long long)w.own_counts[1]);
	for (int i = 0; i < 4; i++)
		assert_int_equal(w.rc[i], 0);
	assert_true(counts[0] > 0);
	assert_int_equal(counts[1], 0);
	assert_int_equal(w.own_counts[0], 0);
	assert_true(w.own_counts[1] > 0);
}

/* The worker did not exist at create: perf inherits into new threads, the timer
 * fallback enumerates threads at start; either way both loops show. */
static void test_all_threads(void **state)
{
	(void)state;
	struct worker w = {0};
	uint64_t counts[2];
	profile_with_worker(&w, TT_PROFILE_ALL_THREADS, counts);
	printf("# all threads: A %llu, B %llu\n", (unsigned long long)counts[0],
	       (unsigned long long)counts[1]);
	/* Each loop had >= 300 ms of CPU time: at one sample per tick (4 ms at most on
	 * common kernels) that is dozens of samples each; 10 is far below chance. */
	assert_true(counts[0] >= 10);
	assert_true(counts[1] >= 10);
}

/* A child process runs the same code at the same addresses: not one of its samples
 * may reach the parent's histogram. */
static void test_fork_child_not_counted(void **state)
{
	(void)state;
	struct tt_profile *p = calib_profile(250000, TT_PROFILE_ALL_THREADS);
	assert_int_equal(tt_profile_start(p), 0);
	tt_test_calib_a(tt_test_calib_iterations(20000000));
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		uint64_t n = tt_test_calib_iterations(1000000);
		for (uint64_t t0 = tt_test_thread_cpu_ns(); tt_test_thread_cpu_ns() - t0 < 200000000u;)
			tt_test_calib_b(n);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(tt_profile_stop(p), 0);
	uint64_t counts[2];
	assert_int_equal(tt_profile_read(p, counts, 2, NULL), 0);
	tt_profile_close(p);
	printf("# parent's profile after the child ran B: A %llu, B %llu\n",
	       (unsigned long long)counts[0], (unsigned long long)counts[1]);
	assert_true(counts[0] > 0);
	assert_int_equal(counts[1], 0);
}

static void programs_own_sigprof(int sig)
{
	(void)sig;
}

/* The fallback needs SIGPROF: a program that handles it gets -EBUSY, not a profiler
 * that steals its signal. perf needs no signal and does not care. */
static void test_sigprof_taken(void **state)
{
	(void)state;
	struct sigaction mine = {.sa_handler = programs_own_sigprof}, old;
	sigemptyset(&mine.sa_mask);
	assert_int_equal(sigaction(SIGPROF, &mine, &old), 0);
	struct tt_profile_config cfg = {0};
	TT_PROFILE_SECTION(&cfg, calib);
	struct tt_profile *p = NULL;
	int rc = tt_profile_create(&p, &cfg);
	assert_int_equal(sigaction(SIGPROF, &old, NULL), 0);
	if (expected_mechanism() == TT_PROFILE_TIMER) {
		assert_int_equal(rc, -EBUSY);
	} else {
		assert_int_equal(rc, 0);
		tt_profile_close(p);
	}
}

/* A hardware source either works (a PMU), or fails saying there is none (or that
 * perf is denied), unless falling back to time is allowed. */
static void test_hardware_source(void **state)
{
	(void)state;
	struct tt_profile_config cfg = {.source = TT_PROFILE_BRANCH_MISSES};
	TT_PROFILE_SECTION(&cfg, calib);
	struct tt_profile *p = NULL;
	struct tt_profile_stats st;
	int rc = tt_profile_create(&p, &cfg);
	if (rc == 0) {
		assert_int_equal(tt_profile_read(p, NULL, 0, &st), 0);
		assert_int_equal(st.source, TT_PROFILE_BRANCH_MISSES);
		tt_profile_close(p);
	} else if (perf_forced_off()) {
		assert_int_equal(rc, -EACCES);
	} else if (expected_mechanism() == TT_PROFILE_PERF) {
		assert_int_equal(rc, -ENODEV);
	} else {
		assert_true(rc == -EACCES || rc == -EPERM || rc == -ENOSYS);
	}
	cfg.flags = TT_PROFILE_ALLOW_TIME;
	assert_int_equal(tt_profile_create(&p, &cfg), 0);
	assert_int_equal(tt_profile_read(p, NULL, 0, &st), 0);
	assert_int_equal(st.source, rc == 0 ? TT_PROFILE_BRANCH_MISSES : TT_PROFILE_TIME);
	assert_int_equal(st.interval, rc == 0 ? 10000 : 1000000);
	assert_int_equal(st.mechanism, rc == 0 ? TT_PROFILE_PERF : expected_mechanism());
	tt_profile_close(p);
}

/* The threads of this process: their count, up to `max` ids in `tids`. */
static size_t list_tasks(pid_t *tids, size_t max)
{
	DIR *d = opendir("/proc/self/task");
	assert_non_null(d);
	size_t n = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (atoi(e->d_name) > 0 && n < max)
			tids[n++] = (pid_t)atoi(e->d_name);
	closedir(d);
	return n;
}

/* How many times thread `tid` went to sleep (its voluntary switches). */
static long voluntary_switches(pid_t tid)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	long n = -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
			break;
	fclose(f);
	assert_true(n >= 0);
	return n;
}

/* perf's drain thread sleeps while nothing needs it: its ring, polled, wakes it at a
 * quarter full, and stop and read drain it themselves. Each wake-up is a timer
 * interrupt and a switch (30 to 80 us of CPU on this VM): it woke every 100 ms, 15
 * times in the 1.5 s below, for as long as a profile was open. */
static void test_drain_thread_sleeps(void **state)
{
	(void)state;
	if (expected_mechanism() != TT_PROFILE_PERF)
		skip(); /* (the timers have no thread) */
	pid_t before[64], after[64], drain = 0;
	size_t nbefore = list_tasks(before, 64);
	struct tt_profile *p = calib_profile(1000000, 0);
	size_t nafter = list_tasks(after, 64);
	for (size_t i = 0; i < nafter; i++) {
		bool known = false;
		for (size_t j = 0; j < nbefore; j++)
			known = known || after[i] == before[j];
		if (!known)
			drain = after[i];
	}
	assert_true(drain > 0);
	assert_int_equal(tt_profile_start(p), 0);
	long slept = voluntary_switches(drain);
	struct timespec wait = {1, 500000000}; /* wall time: the drain thread's timeouts are */
	while (nanosleep(&wait, &wait) != 0)
		continue;
	slept = voluntary_switches(drain) - slept;
	assert_int_equal(tt_profile_stop(p), 0);
	tt_profile_close(p);
	printf("# the drain thread slept %ld times in 1.5 s of an idle profile\n", slept);
	assert_true(slept <= 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_section_bounds),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_calibration_shares),
		cmocka_unit_test(test_nothing_outside_windows),
		cmocka_unit_test(test_one_thread_sees_only_itself),
		cmocka_unit_test(test_all_threads),
		cmocka_unit_test(test_fork_child_not_counted),
		cmocka_unit_test(test_sigprof_taken),
		cmocka_unit_test(test_hardware_source),
		cmocka_unit_test(test_drain_thread_sleeps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
