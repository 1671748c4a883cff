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
 *   work       scopes a live spike log splits from the counters alone where tt-sched
 *              sees no scope open: "afterwork" records a scope "helper" first, then
 *              spins 40 ms of CPU recording nothing (its last record a scope's end);
 *              "dense" spins 200 ms of CPU recording a scope "step" each few us,
 *              and 150 ms more after it
 *   dense      main's DENSE_SCOPES scopes "outer" of some 25 ms, each of 100 calls that
 *              spin 0.1 ms of CPU ("call") and 100 that sleep 0.1 ms ("nap"), a scope
 *              each; between them and 40 ms after the last, a scope "step" each few us:
 *              the thread never goes 2 ms without a record, inside its scopes or out
 *   flood      FLOOD_THREADS threads record empty scopes "drop" flat out for 0.4 s (a
 *              line {"tt_sched_cpu_ns", ...}: below)
 *   heavy      HEAVY_THREADS threads record empty scopes "tick" (3 million records a
 *              second each), more than tt-sched's share lets it follow, and in them,
 *              HEAVY_ROUNDS times, a scope "h_work" (30 ms of CPU time, ticking
 *              inside), "h_quiet" (20 ms of CPU time, no record inside) and
 *              "h_sleep" (10 ms asleep), their
 *              lines as above, then tt-sched's CPU time's (below)
 *   blindnaps  HEAVY_THREADS threads record empty scopes "tick" flat out (twice heavy's
 *              rate), and between them BLIND_NAPS scopes "b_nap" (5 to 10 ms asleep,
 *              inside scope "b_run" all along: a long function of short calls, as a
 *              program recorded with record -f whose calls sleep or wait), their lines
 *              as above, then tt-sched's CPU time's (below)
 *   blindfirst as blindnaps, but 1 s of ticks first, then BLIND_FIRST_NAPS naps of 5
 *              ms, 1 ms of ticks apart
 *   short      SHORT_THREADS pthread_create'd threads, 50 at a time, each one
 *              instant "short" and gone (most end before tt-sched looks at them)
 *   crowd      CROWD_THREADS threads, each CROWD_NAPS 3 ms sleeps in scope "nap" (no
 *              lines but tt-sched's CPU time's: below): more readings than
 *              tt-sched's budget allows against the little CPU time they use
 *   crowdfork  as crowd, then a forked child sleeps 150 ms in scope "sleep150" ({"child_pid": its pid})
 *   nested     NESTED_THREADS threads nap 4 ms in scopes "nap" by turns (tt-sched's
 *              budget spent on them all along, and on them first: they came first; none
 *              a spike of 5 ms that pays its readings back, but on a loaded machine), and
 *              a thread started after them, 100 ms on, opens scope "outer" for
 *              NESTED_INNER 1 ms naps in scopes "inner" each (a long function of many
 *              short calls), then NESTED_MIDS scopes "mid" inside it (their lines
 *              as above), each NESTED_MID_CALLS calls "inner" that spin 0.5 ms of
 *              CPU time (TT_IGNORE_CHILDREN: mid the spike), then sleeps 300 ms
 *              outside any scope (its own reading at its exit far from it); the
 *              crowd stops then
 *   afterfree  FREE_THREADS threads at once, each a 20 ms sleep in scope "free" (tt-sched's
 *              first scopes, free of its budget), then main a 30 ms sleep in "late"
 *   lastscope  a thread sleeps 10 ms in scope "exiting" and exits at once; then main
 *              sleeps 10 ms in "ending" and returns at once: no look of tt-sched's
 *              comes between a scope's end and its thread's exit or the run's
 *   hang       as sleep, then a line {"hung": 1} and a wait to be killed
 *   burst      main's BURST_SPIKES scopes of 5 to 20 ms one after another, each named
 *              "bNN_sleep", "bNN_lock" (a mutex a helper holds that long) or "bNN_spin"
 *              (CPU time), with a 1 to 3 ms sleep "sNN_short" and 0.3 ms of work
 *              between: a run of some 250 ms that mostly sleeps
 *   hundred    HUNDRED_THREADS threads started together, each 0.2 ms of work, one
 *              scope "h_sleep" (5 to 10 ms asleep; "h_spin" in one of ten: 5 ms of
 *              CPU time) and 0.2 ms of work
 *   oneby      ONEBY_THREADS threads one after another, each started once the last
 *              ended, its first event a scope "o_first" (6 ms asleep), while main
 *              waits in no scope: each starts within microseconds of its
 *              pthread_create but where the machine is loaded
 *   idle       IDLE_THREADS threads started together, each a scope "i_nap" (6 ms
 *              asleep), then IDLE_MS asleep in no scope before it ends, while main
 *              waits for them in no scope either
 *   sixty      SIXTY_THREADS threads started together, each 0.2 ms of work, a scope
 *              "x_first" (5 to 10 ms asleep), 0.2 ms of work, a scope "x_second" (6 to
 *              9 ms asleep) and 0.2 ms of work, while main waits for them in "x_join"
 *   sparse     SPARSE_THREADS threads started together, each asleep (no scope) until
 *              its turn, one each 25 ms from 1 s after main began, then one scope
 *              "p_sleep" (6 to 10 ms asleep): a program that mostly sleeps, its spikes
 *              all past its first second
 *   bursty     main and a peer, each BURSTY_ROUNDS times a burst (a scope "y_burst" of
 *              BURSTY_TINY empty scopes "y_tiny"), then BURSTY_NAP_MS asleep in no scope; main, each second
 *              round, a scope "y_sleep" (asleep) or "y_spin" (CPU time) between them,
 *              6 ms and 0.5 ms longer each time (outside test ot30 F2's program: one
 *              that mostly sleeps, its threads recording in bursts; perf refused,
 *              a fifth of its spikes unsplit)
 *   many       MANY_THREADS threads started together, each MANY_SCOPES scopes "m_sleep"
 *              one after another, 5 to 14 ms asleep each (outside recheck r47 F10's
 *              many.c: a program that mostly sleeps in scopes)
 *   pingpong N M  main and a peer pass a byte back and forth over pipes N times (more
 *              switches than the kernel's ring for a thread holds between two drains),
 *              then main spins 15 ms of wall time in "pp_spin" while the peer sleeps
 *              60 ms in "pp_sleep" (its switches lost and not yet said as main's spike
 *              ends: its snapshot's window), M times more, and the peer sleeps 20 ms in
 *              "pp_late"; a line {"switches": {TID: N}}: each thread's switches off
 *              its CPU (voluntary and involuntary) from its start to its end
 *   shared     SHARED_THREADS threads pinned to one CPU, SHARED_SCOPES rounds started
 *              together, each a scope "shared" that spins exactly 8 ms of its thread's
 *              CPU time, read inside it: a line {"scope", "tid", "inside_run_ns"}
 *              after each (each preempted by the others; the CPU time inside is at
 *              most the scope's)
 *   livewake   LIVEWAKE_THREADS threads one after another, each a scope "livewake" (12
 *              ms asleep, the figures read and its line written inside it), then gone: the only
 *              reading after each spike is its thread's own as it exits, after its
 *              switches were read the last time
 *   readwait   main and READWAIT_SPINNERS spinners pinned to one CPU (the spinners in no
 *              scope): main's READWAIT_SCOPES scopes "readwait", each 4 ms of its CPU
 *              time with a 2 ms sleep between (outside recheck r43's one.c): a line
 *              {"scope", "tid", "in_run_ns", "in_wait_ns", "out_run_ns", "out_wait_ns"}
 *              after each, its CPU time and run-queue wait read just inside it and
 *              just outside it (the scope's own lie between the two)
 *   fullbuf MS  main and a spinner pinned to one CPU; main spins MS ms of CPU time in
 *              scope "fullbuf", recording an empty scope "tick" flat out (a small
 *              TICKTRACE_BUFFER fills early: its end dropped), then exits inside it,
 *              as a program that calls exit() from main does: its line as above, and
 *              {"inside_ns": CLOCK_MONOTONIC} read inside it after the rest
 *   fullwoken MS  as fullbuf, scope "fullwoken", beside a waker (as woken's: each
 *              wake-up preempts main) rather than a spinner, main napping 0.2 ms
 *              each 10 ms of its CPU time (wake-ups of its own between readings)
 *   seccomp [WHAT]  as WHAT (sleep, lock or spin; sleep by default), perf_event_open
 *              denied (EACCES) by a seccomp filter set before ticktrace starts
 *   seccomp-kill [WHAT]  the same, the filter killing the process that asks (SIGSYS:
 *              systemd's SystemCallFilter= default action) instead
 *              (PR_SET_SECCOMP's filter, on every thread: SECCOMP_FILTER_FLAG_TSYNC;
 *              then the program again, under it)
 *
 * Snapshots (TICKTRACE_SNAPSHOTS=DIR, which the program polls for the files it
 * expects before it goes on):
 *
 *   snapshots TABLE  sleep, lock and spin one after the other, then
 *              tt_trigger(TRIGGER_WHY) between the instants "before trigger" and
 *              "after trigger" (a line {"trigger": its return}), while a thread
 *              ticks ("tick", its count, every millisecond: the window's edges
 *              have records) and a noisy one records bursts of counters "noise"
 *              (0, 1, ...), each after reading the TSC into TABLE (one uint64 per
 *              counter, written at the end, a line {"noise_events": N}): the
 *              ticks of the TSC around each lost record, to check what a cut says
 *   snapcap    SNAP_NAPS scopes TRIGGER_NAP that sleep 1.5 ms, each after the last
 *              one's snapshot was written (while TICKTRACE_SNAPSHOT_MAX, default
 *              16, allows one), then tt_trigger("late") ({"late": its return}: the
 *              triggers have their own TICKTRACE_SNAPSHOT_MAX)
 *   flatout TABLE  a thread recording counters "flat" (0, 1, ...) as fast as it
 *              can from 150 ms before a 3 ms sleep (a spike) and a tt_trigger("flat
 *              out") until both snapshots are written, reading the TSC into TABLE
 *              before every 64th ({"flat_events": N, "flat_stride": 64}) */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
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
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

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

/* The figures before a scope (`before`) or after it. Its wall time is read first
 * before it and last after it: the window it spans holds every other reading, and
 * what a reading may add beyond the scope is within what the window exceeds it by (a
 * thread preempted between reading its run-queue wait and its wall clock before a
 * scope, at a load of 30 on 2 cores 2 to 5 % of sixty's scopes for over 1 ms, had the
 * wait counted in its figures for the scope, where the window did not show it). */
static void kernel_now(struct kernel_figures *k, int before)
{
	char path[64];
	if (before)
		k->wall_ns = now_ns(CLOCK_MONOTONIC);
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
	/* (the CPU time's: exact, where schedstat's lags a tick) */
	k->run_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
	if (!before)
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
		kernel_now(&before_, 1);                                           \
		TT_BEGIN(scope);                                                   \
		body;                                                              \
		TT_END();                                                          \
		kernel_now(&after_, 0);                                            \
		say(scope, &before_, &after_);                                     \
	} while (0)

static void sleep_ms(int ms)
{
	struct timespec ts = {0, ms * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* (Each thread asks the kernel for its own switches as it starts, ticktrace's
 * pthread_create and its constructor for main: the planted scopes have states from
 * their beginning, with nothing to wait for.) */

/* Snapshots: the helpers stay until main lets them go, so that the count of threads
 * with states only grows (an exited thread's perf event closes when tt-sched sees
 * it), and their records stay those of live threads. */
static int linger;
static pthread_barrier_t leave;
static atomic_int spun;

static void stay_until_the_end(void)
{
	if (linger)
		pthread_barrier_wait(&leave);
}

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t ready;
static atomic_int locking; /* main is inside "lockwait" */

/* Holds the mutex 2 ms from when main is inside its scope, not from the barrier: the
 * kernel's figures read before the scope took over 1 ms in a CI run (AddressSanitizer,
 * loaded), and main found the mutex held 0.34 ms of its 1.8 ms scope. */
static void *holder(void *unused)
{
	(void)unused;
	TT_INSTANT("holder starts");
	pthread_mutex_lock(&held);
	pthread_barrier_wait(&ready);
	while (!atomic_load(&locking)) {
		struct timespec poll = {0, 50000};
		nanosleep(&poll, NULL);
	}
	sleep_ms(2);
	pthread_mutex_unlock(&held);
	stay_until_the_end();
	return NULL;
}

static void spin_cpu(long long ns)
{
	long long until = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < until)
		;
}

#define MAX_THREADS 128

/* n threads of `body` (MAX_THREADS at most), each given its index, started together
 * and joined. */
static void run_threads(long n, void *(*body)(void *))
{
	pthread_t t[MAX_THREADS];
	if (n > MAX_THREADS)
		abort();
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, body, (void *)i);
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* Both threads of `mixed` on CPU 0: one spins, the other works and sleeps in turn,
 * each wake-up a wait for the CPU the spinner holds (the switches' blocked, the
 * kernel's run-queue wait). */
static void pin_to_cpu0(void)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof one, &one) != 0) {
		perror("sched_setaffinity");
		exit(1);
	}
}

static void work_and_sleep(void)
{
	for (int i = 0; i < 4; i++) {
		spin_cpu(1000000);
		sleep_ms(1);
	}
}

static void *mixed_thread(void *arg)
{
	pin_to_cpu0();
	pthread_barrier_wait(&ready);
	if (arg)
		AROUND("mixed", work_and_sleep());
	else
		spin_cpu(12000000);
	return NULL;
}

static void *spinner(void *unused)
{
	(void)unused;
	pin_to_cpu0();
	TT_INSTANT("spinner pinned");
	pthread_barrier_wait(&ready);
	AROUND("spin", spin_cpu(6000000));
	atomic_fetch_add(&spun, 1);
	stay_until_the_end();
	return NULL;
}

/* shared: the scope's CPU time read inside it, never more than the scope's own. */
#define SHARED_THREADS 3
#define SHARED_SCOPES 10

static void *shared_spinner(void *unused)
{
	(void)unused;
	pin_to_cpu0();
	for (int i = 0; i < SHARED_SCOPES; i++) {
		pthread_barrier_wait(&ready);
		TT_BEGIN("shared");
		long long from = now_ns(CLOCK_THREAD_CPUTIME_ID), to;
		while ((to = now_ns(CLOCK_THREAD_CPUTIME_ID)) - from < 8000000)
			;
		TT_END();
		pthread_mutex_lock(&print_lock);
		printf("{\"scope\":\"shared\",\"tid\":%d,\"inside_run_ns\":%lld}\n", (int)gettid(), to - from);
		fflush(stdout);
		pthread_mutex_unlock(&print_lock);
	}
	return NULL;
}

/* readwait: main's scopes beside spinners on its CPU, each long wait for it ending
 * as the others' slices do. */
#define READWAIT_SPINNERS 2
#define READWAIT_SCOPES 16
static atomic_int readwait_done;

static void *readwait_spinner(void *unused)
{
	(void)unused;
	pin_to_cpu0();
	pthread_barrier_wait(&ready);
	while (!atomic_load(&readwait_done))
		;
	return NULL;
}

static void readwait(void)
{
	pthread_t t[READWAIT_SPINNERS];
	pthread_barrier_init(&ready, NULL, READWAIT_SPINNERS + 1);
	for (int i = 0; i < READWAIT_SPINNERS; i++)
		pthread_create(&t[i], NULL, readwait_spinner, NULL);
	pin_to_cpu0();
	pthread_barrier_wait(&ready);
	for (int i = 0; i < READWAIT_SCOPES; i++) {
		struct kernel_figures out_a, in_a, in_b, out_b;
		kernel_now(&out_a, 1);
		TT_BEGIN("readwait");
		kernel_now(&in_a, 1);
		spin_cpu(4000000);
		kernel_now(&in_b, 0);
		TT_END();
		kernel_now(&out_b, 0);
		printf("{\"scope\":\"readwait\",\"tid\":%d,\"in_run_ns\":%lld,\"in_wait_ns\":%lld,"
		       "\"out_run_ns\":%lld,\"out_wait_ns\":%lld}\n",
		       (int)gettid(), in_b.run_ns - in_a.run_ns, in_b.wait_ns - in_a.wait_ns, out_b.run_ns - out_a.run_ns,
		       out_b.wait_ns - out_a.wait_ns);
		fflush(stdout);
		sleep_ms(2);
	}
	atomic_store(&readwait_done, 1);
	for (int i = 0; i < READWAIT_SPINNERS; i++)
		pthread_join(t[i], NULL);
}

/* woken: two threads spin on CPU 0 ("busy", 30 ms of their CPU time each, three
 * times) beside a third there that sleeps 30 us and works 15 us in turn: each of its
 * wake-ups preempts a spinner, whose CPU time the kernel stops at the wake-up and its
 * switch record at the switch. The third stops once both are done, or after 20 s. */
#define WOKEN_SCOPES 3
static atomic_int woken_done;

static void *woken_spinner(void *unused)
{
	(void)unused;
	pin_to_cpu0();
	pthread_barrier_wait(&ready);
	for (int i = 0; i < WOKEN_SCOPES; i++)
		AROUND("busy", spin_cpu(30000000));
	atomic_fetch_add(&woken_done, 1);
	return NULL;
}

static void *woken_waker(void *unused)
{
	(void)unused;
	pin_to_cpu0();
	pthread_barrier_wait(&ready);
	long long give_up = now_ns(CLOCK_MONOTONIC) + 20000000000LL;
	while (atomic_load(&woken_done) < 2 && now_ns(CLOCK_MONOTONIC) < give_up) {
		struct timespec nap = {0, 30000};
		nanosleep(&nap, NULL);
		long long until = now_ns(CLOCK_MONOTONIC) + 15000;
		while (now_ns(CLOCK_MONOTONIC) < until)
			;
	}
	return NULL;
}

static void woken(void)
{
	TT_INSTANT("main starts");
	pthread_t t[3];
	pthread_barrier_init(&ready, NULL, 3);
	pthread_create(&t[0], NULL, woken_waker, NULL);
	for (int i = 1; i < 3; i++)
		pthread_create(&t[i], NULL, woken_spinner, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
}

/* pingpong: main writes to the peer, the peer answers. */
static int to_peer[2], to_main[2];

static void pass(int in, int out, long times, int first)
{
	char c = 'x';
	for (long i = 0; i < times; i++)
		if ((!first && read(in, &c, 1) != 1) || write(out, &c, 1) != 1 || (first && read(in, &c, 1) != 1))
			exit(1);
}

static long long switches_so_far(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

static long pingpong_n, pingpong_m;
static long long peer_switches;
static pid_t peer_tid;

static void *peer(void *unused)
{
	(void)unused;
	long long since = switches_so_far();
	pass(to_peer[0], to_main[1], pingpong_n, 0);
	AROUND("pp_sleep", sleep_ms(60));
	pass(to_peer[0], to_main[1], pingpong_m, 0);
	AROUND("pp_late", sleep_ms(20));
	peer_tid = gettid();
	peer_switches = switches_so_far() - since;
	return NULL;
}

static void pingpong(void)
{
	long long since = switches_so_far();
	pthread_t t;
	if (pipe(to_peer) || pipe(to_main) || pthread_create(&t, NULL, peer, NULL))
		exit(1);
	pass(to_main[0], to_peer[1], pingpong_n, 1);
	AROUND("pp_spin", {
		long long until = now_ns(CLOCK_MONOTONIC) + 15000000;
		while (now_ns(CLOCK_MONOTONIC) < until)
			;
	});
	pass(to_main[0], to_peer[1], pingpong_m, 1);
	pthread_join(t, NULL);
	printf("{\"switches\":{\"%d\":%lld,\"%d\":%lld}}\n", (int)gettid(), switches_so_far() - since,
	       (int)peer_tid, peer_switches);
}

static void afterwork(void)
{
	TT_BEGIN("helper");
	TT_END();
	spin_cpu(40000000);
}

static void steps(long long ns)
{
	long long until = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < until) {
		TT_BEGIN("step");
		spin_cpu(2000);
		TT_END();
	}
}

#define DENSE_SCOPES 3

static void dense_scope(void)
{
	for (int i = 0; i < 100; i++) {
		TT_BEGIN("call");
		spin_cpu(100000);
		TT_ENDBEGIN("nap");
		struct timespec nap = {0, 100000};
		nanosleep(&nap, NULL);
		TT_END();
	}
}

static void dense(void)
{
	TT_INSTANT("main starts");
	for (int i = 0; i < DENSE_SCOPES; i++) {
		steps(10000000);
		AROUND("outer", dense_scope());
	}
	steps(40000000); /* (its last scope's end: records on, no look of tt-sched's finds it idle) */
}

#define SHORT_THREADS 200

static void *short_thread(void *unused)
{
	(void)unused;
	TT_INSTANT("short");
	return NULL;
}

static void short_threads(void)
{
	TT_INSTANT("main starts");
	for (int r = 0; r < SHORT_THREADS / 50; r++)
		run_threads(50, short_thread);
}

/* A line {"tt_sched_cpu_ns", "tt_spikes_cpu_ns", "process_cpu_ns", "wall_ns",
 * "tt_sched_switches"}: ticktrace's tt-sched's and tt-spikes' CPU time so far (their
 * threads' CPU clocks, found by their names; -1: no such thread), the process's, the
 * time since main began, and tt-sched's voluntary switches so far (status's
 * voluntary_ctxt_switches: each a sleep of its, woken again), for tt-sched's budget,
 * what tt-spikes says it cost and how often tt-sched wakes. */
static long long main_began_ns;

/* The number after `key` in /proc/self/task/ID/FILE (-1: none). */
static long long task_number(const char *id, const char *file, const char *key)
{
	char path[320], line[256];
	long long n = -1;
	snprintf(path, sizeof path, "/proc/self/task/%s/%s", id, file);
	FILE *f = fopen(path, "re");
	while (f && n < 0 && fgets(line, sizeof line, f))
		if (strncmp(line, key, strlen(key)) == 0 && sscanf(line + strlen(key), "%lld", &n) != 1)
			n = -1;
	if (f)
		fclose(f);
	return n;
}

/* Thread `id`'s CPU time by its CPU clock (Linux's clock id of a thread by its tid):
 * schedstat's first field leaves out what a thread running as it is read ran since the
 * kernel last charged it (up to a tick: tt-spikes said 1.3 ms more than the file
 * allowed in a CI run); -1: no such thread. */
static long long task_cpu_ns(const char *id)
{
	struct timespec ts;
	clockid_t clock = (clockid_t)((~(unsigned)atoi(id) << 3) | 6);
	return clock_gettime(clock, &ts) ? -1 : ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Of the thread named `name`: its CPU time, or with `switches` its voluntary switches;
 * -1: no such thread. */
static long long thread_number(const char *name, int switches)
{
	DIR *tasks = opendir("/proc/self/task");
	long long n = -1;
	for (struct dirent *e; tasks && (e = readdir(tasks));) {
		char path[320], comm[32] = "";
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		int named = fgets(comm, sizeof comm, f) && strncmp(comm, name, strlen(name)) == 0 &&
			    comm[strlen(name)] == '\n';
		fclose(f);
		if (named)
			n = switches ? task_number(e->d_name, "status", "voluntary_ctxt_switches:")
				     : task_cpu_ns(e->d_name);
	}
	if (tasks)
		closedir(tasks);
	return n;
}

static void say_tt_sched_cpu(void)
{
	long long sched_ns = thread_number("tt-sched", 0), spikes_ns = thread_number("tt-spikes", 0);
	printf("{\"tt_sched_cpu_ns\":%lld,\"tt_spikes_cpu_ns\":%lld,\"process_cpu_ns\":%lld,\"wall_ns\":%lld,"
	       "\"tt_sched_switches\":%lld}\n",
	       sched_ns, spikes_ns, now_ns(CLOCK_PROCESS_CPUTIME_ID), now_ns(CLOCK_MONOTONIC) - main_began_ns,
	       thread_number("tt-sched", 1));
}

#define CROWD_THREADS 64
#define CROWD_NAPS 20

/* Naps of 3 ms, each in a scope "nap": a spike whose counters tt-sched would read
 * twice, against a few microseconds of the thread's CPU time. */
static void *crowd_thread(void *unused)
{
	(void)unused;
	for (int i = 0; i < CROWD_NAPS; i++) {
		TT_SCOPE("nap");
		sleep_ms(3);
	}
	return NULL;
}

/* n threads of `body`, joined, then tt-sched's CPU time said. */
static void threads_then_cpu(int n, void *(*body)(void *))
{
	run_threads(n, body);
	say_tt_sched_cpu();
}

static void crowd(void)
{
	threads_then_cpu(CROWD_THREADS, crowd_thread);
}

#define NESTED_THREADS 120
#define NESTED_INNER 300
#define NESTED_MIDS 6
#define NESTED_MID_CALLS 80

static int nested_done;

static void *nested_nap_thread(void *unused)
{
	(void)unused;
	while (!__atomic_load_n(&nested_done, __ATOMIC_ACQUIRE)) {
		TT_SCOPE("nap");
		sleep_ms(4);
	}
	return NULL;
}

/* 0.5 ms of CPU time in scopes "inner", n of them, none a spike of its own (the
 * scope around them is) */
static void nested_calls(int n)
{
	TT_IGNORE_CHILDREN();
	for (int i = 0; i < n; i++) {
		TT_SCOPE("inner");
		spin_cpu(500000);
	}
}

static void *nested_outer_thread(void *unused)
{
	(void)unused;
	sleep_ms(100);
	{
		TT_SCOPE("outer");
		for (int i = 0; i < NESTED_INNER; i++) {
			TT_SCOPE("inner");
			sleep_ms(1);
		}
		for (int i = 0; i < NESTED_MIDS; i++)
			AROUND("mid", nested_calls(NESTED_MID_CALLS));
	}
	sleep_ms(300);
	__atomic_store_n(&nested_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The crowd first (tt-sched's list in the order the threads came), then the thread of
 * the long scope. */
static void nested(void)
{
	pthread_t t[NESTED_THREADS + 1];
	for (long i = 0; i < NESTED_THREADS; i++)
		pthread_create(&t[i], NULL, nested_nap_thread, NULL);
	pthread_create(&t[NESTED_THREADS], NULL, nested_outer_thread, NULL);
	for (long i = 0; i <= NESTED_THREADS; i++)
		pthread_join(t[i], NULL);
	say_tt_sched_cpu();
}

#define FLOOD_THREADS 2
#define FLOOD_NS 400000000LL

/* Scopes of a few ns, flat out for FLOOD_NS: each thread's every record read by
 * tt-sched, which follows their scopes. */
static void *flood_thread(void *unused)
{
	(void)unused;
	long long until = now_ns(CLOCK_MONOTONIC) + FLOOD_NS;
	while (now_ns(CLOCK_MONOTONIC) < until)
		for (int i = 0; i < 1000; i++) {
			TT_BEGIN("drop");
			TT_END();
		}
	return NULL;
}


#define HEAVY_THREADS 2
#define HEAVY_ROUNDS 3
#define HEAVY_BETWEEN_NS 150000000LL
#define HEAVY_SPIN 100 /* (between two ticks) */
/* 200 ticks take this long at least: 3 million records a second, xz's workers' rate
 * under record -f 'lzma_*' twice over, and 5 to 6 million of a thread's run within its
 * buffer (sched_causes.py's 8 Mi records): flat out, a quiet machine's 8 to 12 million
 * a second filled it, and the last planted scopes were dropped */
#define HEAVY_BATCH_NS 133000
/* TT_TEST_HEAVY_RATE=K: K times as many (sched_causes.py's again, where tt-sched read
 * 3 million a second within its share: 1.5 ns a record on a quiet EPYC) */
static long long heavy_batch_ns(void)
{
	const char *rate = getenv("TT_TEST_HEAVY_RATE");
	long long k = rate ? atoll(rate) : 1;
	return HEAVY_BATCH_NS / (k > 0 ? k : 1);
}

/* Empty scopes "tick" (3 million records a second) until the thread's CPU clock (or,
 * `wall`, the monotonic clock) has gone `ns` further. */
static void heavy_ticks(long long ns, int wall)
{
	clockid_t clock = wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID;
	long long until = now_ns(clock) + ns, batch_ns = heavy_batch_ns();
	while (now_ns(clock) < until) {
		long long batch_end = now_ns(CLOCK_MONOTONIC) + batch_ns;
		for (int i = 0; i < 200; i++) {
			TT_BEGIN("tick");
			TT_END();
			for (volatile int k = 0; k < HEAVY_SPIN; k++)
				;
		}
		while (now_ns(CLOCK_MONOTONIC) < batch_end)
			;
	}
}

/* Ticks flat out all along, more records than tt-sched's share lets it follow; in
 * them, each round, the planted scopes: "h_work" (30 ms of CPU time, ticking inside),
 * "h_quiet" (20 ms of CPU time, no record inside) and "h_sleep" (10 ms asleep). */
static void *heavy_thread(void *unused)
{
	(void)unused;
	heavy_ticks(HEAVY_BETWEEN_NS, 1);
	for (int i = 0; i < HEAVY_ROUNDS; i++) {
		AROUND("h_work", heavy_ticks(30000000, 0));
		heavy_ticks(HEAVY_BETWEEN_NS, 1);
		AROUND("h_quiet", spin_cpu(20000000));
		heavy_ticks(HEAVY_BETWEEN_NS, 1);
		AROUND("h_sleep", sleep_ms(10));
		heavy_ticks(HEAVY_BETWEEN_NS, 1);
	}
	return NULL;
}

/* Ticks flat out, BLIND_NAPS naps of 5 to 10 ms in them, all inside "b_run". */
#define BLIND_NAPS 60
#define BLIND_BETWEEN_NS 30000000LL
static void *blind_thread(void *unused)
{
	(void)unused;
	TT_BEGIN("b_run");
	heavy_ticks(HEAVY_BETWEEN_NS, 1);
	for (int i = 0; i < BLIND_NAPS; i++) {
		AROUND("b_nap", sleep_ms(5 + i % 6));
		heavy_ticks(BLIND_BETWEEN_NS, 1);
	}
	TT_END();
	return NULL;
}

/* Ticks flat out 1 s (read blind all along: what that costs tt-sched is the records'
 * share's, not the budget's), then BLIND_FIRST_NAPS naps of 5 ms, each 1 ms of ticks
 * after the last (closer than tt-sched's readings in a blind one's stead past its
 * budget: 8 ms), all inside "b_run". */
#define BLIND_FIRST_NAPS 20
static void *blind_first_thread(void *unused)
{
	(void)unused;
	TT_BEGIN("b_run");
	heavy_ticks(1000000000LL, 1);
	for (int i = 0; i < BLIND_FIRST_NAPS; i++) {
		AROUND("b_nap", sleep_ms(5));
		heavy_ticks(1000000, 1);
	}
	TT_END();
	return NULL;
}

#define FREE_THREADS 8 /* counters.c: TT__COUNTERS_BUDGET_FREE */

static void *free_thread(void *unused)
{
	(void)unused;
	pthread_barrier_wait(&ready);
	TT_SCOPE("free");
	sleep_ms(20);
	return NULL;
}

static void after_free(void)
{
	pthread_barrier_init(&ready, NULL, FREE_THREADS);
	run_threads(FREE_THREADS, free_thread);
	AROUND("late", sleep_ms(30));
}

static void *last_scope_thread(void *unused)
{
	(void)unused;
	TT_BEGIN("exiting");
	sleep_ms(10);
	TT_END();
	return NULL;
}

#define LIVEWAKE_THREADS 6

static void *livewake_thread(void *unused)
{
	(void)unused;
	/* (the figures read inside it, its line said there: its thread ends with it. Their
	 * wall time read inside the others, theirs as much longer as it may be shorter than
	 * the scope: the test allows twice what it leaves out of it) */
	struct kernel_figures before, after;
	TT_BEGIN("livewake");
	kernel_now(&before, 0);
	sleep_ms(12);
	kernel_now(&after, 1);
	say("livewake", &before, &after);
	TT_END();
	return NULL;
}

static void last_scopes(void)
{
	pthread_t t;
	pthread_create(&t, NULL, last_scope_thread, NULL);
	pthread_join(t, NULL);
	TT_BEGIN("ending");
	sleep_ms(10);
	TT_END();
}

/* burst and hundred: the kernel's figures around a scope named at run time. */
static void around_named(const char *name, void (*body)(long), long arg)
{
	struct kernel_figures before, after;
	kernel_now(&before, 1);
	TT_BEGIN_DYN(name);
	body(arg);
	TT_END();
	kernel_now(&after, 0);
	say(name, &before, &after);
}

static void sleep_for(long ms)
{
	sleep_ms((int)ms);
}

static void spin_for(long ms)
{
	spin_cpu(ms * 1000000);
}

static pthread_mutex_t burst_held = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t burst_go, burst_locked;
static long burst_hold_ms; /* (set before burst_go; 0: the holder leaves) */

static void *burst_holder(void *unused)
{
	(void)unused;
	for (;;) {
		pthread_barrier_wait(&burst_go);
		if (!burst_hold_ms)
			return NULL;
		pthread_mutex_lock(&burst_held);
		pthread_barrier_wait(&burst_locked);
		sleep_ms((int)burst_hold_ms);
		pthread_mutex_unlock(&burst_held);
	}
}

static void lock_wait(long unused)
{
	(void)unused;
	pthread_mutex_lock(&burst_held);
}

#define BURST_SPIKES 25

static void burst(void)
{
	static const int ms[] = {5, 8, 12, 20, 6, 15, 10, 7, 18, 5, 9, 14};
	pthread_t holder_thread;
	pthread_barrier_init(&burst_go, NULL, 2);
	pthread_barrier_init(&burst_locked, NULL, 2);
	pthread_create(&holder_thread, NULL, burst_holder, NULL);
	TT_INSTANT("main starts");
	char name[32];
	for (int i = 0; i < BURST_SPIKES; i++) {
		long len = ms[i % (sizeof ms / sizeof *ms)];
		switch (i % 3) {
		case 0:
			snprintf(name, sizeof name, "b%02d_sleep", i);
			around_named(name, sleep_for, len);
			break;
		case 1:
			burst_hold_ms = len;
			pthread_barrier_wait(&burst_go);
			pthread_barrier_wait(&burst_locked);
			snprintf(name, sizeof name, "b%02d_lock", i);
			around_named(name, lock_wait, 0);
			pthread_mutex_unlock(&burst_held);
			break;
		default: /* (on CPU: 5 to 10 ms of its time) */
			snprintf(name, sizeof name, "b%02d_spin", i);
			around_named(name, spin_for, len > 10 ? len / 2 : len);
		}
		spin_cpu(300000);
		snprintf(name, sizeof name, "s%02d_short", i);
		around_named(name, sleep_for, 1 + i % 3);
	}
	burst_hold_ms = 0;
	pthread_barrier_wait(&burst_go);
	pthread_join(holder_thread, NULL);
	say_tt_sched_cpu();
}

#define HUNDRED_THREADS 100

static void *hundred_thread(void *arg)
{
	long i = (long)arg;
	spin_cpu(200000);
	if (i % 10 == 9)
		around_named("h_spin", spin_for, 5);
	else
		around_named("h_sleep", sleep_for, 5 + i % 6);
	spin_cpu(200000);
	return NULL;
}

static void hundred(void)
{
	TT_INSTANT("main starts");
	threads_then_cpu(HUNDRED_THREADS, hundred_thread);
}

#define ONEBY_THREADS 24

static void *oneby_thread(void *unused)
{
	(void)unused;
	around_named("o_first", sleep_for, 6);
	return NULL;
}

static void oneby(void)
{
	for (int i = 0; i < ONEBY_THREADS; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, oneby_thread, NULL) != 0) {
			perror("sched_causes_prog: oneby");
			exit(1);
		}
		pthread_join(t, NULL);
	}
}

#define WORKERS_THREADS 8
#define WORKERS_TASKS 30

/* A worker's task: 3 ms asleep (its I/O), then 2 ms of CPU time (an r37 tester's
 * daemon.c) */
static void worker_task(long unused)
{
	(void)unused;
	sleep_ms(3);
	spin_cpu(2000000);
}

static void *workers_thread(void *unused)
{
	(void)unused;
	for (int i = 0; i < WORKERS_TASKS; i++) {
		around_named("w_task", worker_task, 0);
		sleep_ms(5);
	}
	return NULL;
}

static void workers(void)
{
	TT_INSTANT("main starts");
	threads_then_cpu(WORKERS_THREADS, workers_thread);
}

#define IDLE_THREADS 4
#define IDLE_MS 40

static void *idle_thread(void *unused)
{
	(void)unused;
	around_named("i_nap", sleep_for, 6);
	sleep_ms(IDLE_MS);
	return NULL;
}

static void idle(void)
{
	TT_INSTANT("main starts");
	threads_then_cpu(IDLE_THREADS, idle_thread);
}

#define SIXTY_THREADS 60

static void *sixty_thread(void *arg)
{
	long i = (long)arg;
	spin_cpu(200000);
	around_named("x_first", sleep_for, 5 + i % 6);
	spin_cpu(200000);
	around_named("x_second", sleep_for, 6 + i % 4);
	spin_cpu(200000);
	return NULL;
}

static void sixty_join(long unused)
{
	(void)unused;
	run_threads(SIXTY_THREADS, sixty_thread);
}

static void sixty(void)
{
	around_named("x_join", sixty_join, 0);
	say_tt_sched_cpu();
}

#define SPARSE_THREADS 60
#define SPARSE_FROM_NS 1000000000LL /* (past the first second) */
#define SPARSE_EVERY_NS 25000000LL  /* (60 of them over 1.5 s) */

/* sparse: each thread sleeps until its turn, then one scope "p_sleep" of 6 to 10 ms
 * asleep: a program that mostly sleeps, its spikes after its first second. */
static void *sparse_thread(void *arg)
{
	long i = (long)arg;
	long long turn = main_began_ns + SPARSE_FROM_NS + i * SPARSE_EVERY_NS;
	struct timespec at = {turn / 1000000000, turn % 1000000000};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) != 0)
		;
	around_named("p_sleep", sleep_for, 6 + i % 5);
	return NULL;
}

static void sparse(void)
{
	TT_INSTANT("main starts");
	threads_then_cpu(SPARSE_THREADS, sparse_thread);
}

#define BURSTY_ROUNDS 100
#define BURSTY_TINY 2000
#define BURSTY_NAP_MS 50

static void bursty_burst(void)
{
	TT_SCOPE("y_burst");
	for (int i = 0; i < BURSTY_TINY; i++) {
		TT_SCOPE("y_tiny");
	}
}

static void *bursty_peer(void *unused)
{
	(void)unused;
	for (int i = 0; i < BURSTY_ROUNDS; i++) {
		bursty_burst();
		sleep_ms(BURSTY_NAP_MS);
	}
	return NULL;
}

static void bursty_spike(long k)
{
	long long ns = 6000000 + k * 500000;
	if (k % 2) {
		spin_cpu(ns);
		return;
	}
	struct timespec nap = {ns / 1000000000, ns % 1000000000};
	while (nanosleep(&nap, &nap) != 0)
		;
}

static void bursty(void)
{
	TT_INSTANT("main starts");
	pthread_t peer;
	if (pthread_create(&peer, NULL, bursty_peer, NULL) != 0) {
		perror("sched_causes_prog: bursty");
		exit(1);
	}
	for (long i = 0; i < BURSTY_ROUNDS; i++) {
		bursty_burst();
		if (i % 2)
			around_named(i / 2 % 2 ? "y_spin" : "y_sleep", bursty_spike, i / 2);
		sleep_ms(BURSTY_NAP_MS);
	}
	pthread_join(peer, NULL);
	say_tt_sched_cpu();
}

#define MANY_THREADS 64
#define MANY_SCOPES 6

/* many: back-to-back scopes "m_sleep" of 5 to 14 ms asleep, each thread's own order. */
static void *many_thread(void *arg)
{
	long i = (long)arg;
	for (long k = 0; k < MANY_SCOPES; k++)
		around_named("m_sleep", sleep_for, 5 + (i + k) % 10);
	return NULL;
}

static void many(void)
{
	TT_INSTANT("main starts");
	threads_then_cpu(MANY_THREADS, many_thread);
}

/* perf_event_open fails with EACCES from now on, in every thread of the process, or
 * (`kill`) kills the process that calls it. */
static void deny_perf(int kill)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, kill ? SECCOMP_RET_KILL_PROCESS : SECCOMP_RET_ERRNO | 13 /* EACCES */),
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

/* ---- snapshots ----------------------------------------------------------------- */

#define TRIGGER_WHY "deadline missed: frame 7"
#define SNAP_NAPS 20
#define TRIGGER_NAP "nap 1.5ms/x"
#define NOISE_BURST 256
#define NOISE_MAX (UINT64_C(1) << 24)

static atomic_int finishing;

/* The snapshot files of this process in TICKTRACE_SNAPSHOTS so far (complete ones:
 * named .ttr). */
static int snapshots_written(void)
{
	const char *dir = getenv("TICKTRACE_SNAPSHOTS");
	DIR *d = dir ? opendir(dir) : NULL;
	char spike[32], trigger[32];
	snprintf(spike, sizeof spike, "spike-%d-", (int)getpid());
	snprintf(trigger, sizeof trigger, "trigger-%d-", (int)getpid());
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		n += (strncmp(e->d_name, spike, strlen(spike)) == 0 ||
		      strncmp(e->d_name, trigger, strlen(trigger)) == 0) &&
		     len > 4 && strcmp(e->d_name + len - 4, ".ttr") == 0;
	}
	if (d)
		closedir(d);
	return n;
}

/* Polls until `n` snapshots are written, or a minute after the first call (a loaded
 * machine; a run whose snapshots never come goes on, for the test to say so). */
static void wait_snapshots(int n)
{
	static long long give_up;
	if (!give_up)
		give_up = now_ns(CLOCK_MONOTONIC) + 60000000000LL;
	while (snapshots_written() < n && now_ns(CLOCK_MONOTONIC) < give_up)
		sleep_ms(2);
}

static atomic_int ticks;

static void *ticker(void *unused)
{
	(void)unused;
	while (!atomic_load(&finishing)) {
		TT_INSTANT_ARG("tick", atomic_load(&ticks));
		atomic_fetch_add(&ticks, 1);
		sleep_ms(1);
	}
	return NULL;
}

static uint64_t *noise_tsc;
static uint64_t noise_events;

static void *noisy(void *unused)
{
	(void)unused;
	while (!atomic_load(&finishing) && noise_events + NOISE_BURST <= NOISE_MAX) {
		for (int i = 0; i < NOISE_BURST; i++, noise_events++) {
			/* Stored before the counter is recorded, the next one read after it:
			 * the counter's own TSC lies between the two. */
			noise_tsc[noise_events] = __rdtsc();
			TT_COUNTER("noise", (int64_t)noise_events);
		}
		struct timespec pause = {0, 200000};
		nanosleep(&pause, NULL);
	}
	return NULL;
}

static void write_table(const char *path, const uint64_t *table, uint64_t n)
{
	FILE *f = fopen(path, "we");
	if (!f || fwrite(table, sizeof *table, n, f) != n || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

static void snapshots(const char *table)
{
	noise_tsc = malloc(NOISE_MAX * sizeof *noise_tsc);
	if (!noise_tsc) {
		fprintf(stderr, "sched_causes_prog: no memory for the noise table\n");
		exit(1);
	}
	linger = 1;
	pthread_barrier_init(&leave, NULL, 4); /* holder, the spinners, main */
	TT_INSTANT("main starts");
	pthread_t tick, noise, hold, spin[2];
	pthread_create(&tick, NULL, ticker, NULL);
	pthread_create(&noise, NULL, noisy, NULL);
	/* A window's worth of history (TICKTRACE_SNAPSHOT_BEFORE's 100 ms, and more)
	 * before the first spike: its window does not begin before the run. */
	while (atomic_load(&ticks) < 150)
		sleep_ms(1);
	AROUND("sleep3", sleep_ms(3));

	pthread_barrier_init(&ready, NULL, 2);
	pthread_create(&hold, NULL, holder, NULL);
	pthread_barrier_wait(&ready);
	AROUND("lockwait", (atomic_store(&locking, 1), pthread_mutex_lock(&held)));
	pthread_mutex_unlock(&held);

	pthread_barrier_destroy(&ready);
	pthread_barrier_init(&ready, NULL, 2);
	for (int i = 0; i < 2; i++)
		pthread_create(&spin[i], NULL, spinner, NULL);
	while (atomic_load(&spun) < 2)
		sleep_ms(1);

	TT_INSTANT("before trigger");
	int rc = tt_trigger(TRIGGER_WHY);
	TT_INSTANT("after trigger");
	printf("{\"trigger\":%d}\n", rc);
	wait_snapshots(5); /* sleep3, lockwait, the two spins, the trigger */
	atomic_store(&finishing, 1);
	pthread_barrier_wait(&leave);
	pthread_join(tick, NULL);
	pthread_join(noise, NULL);
	pthread_join(hold, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(spin[i], NULL);
	write_table(table, noise_tsc, noise_events);
	printf("{\"noise_events\":%llu}\n", (unsigned long long)noise_events);
	free(noise_tsc);
}

static void snapcap(void)
{
	const char *max = getenv("TICKTRACE_SNAPSHOT_MAX");
	int cap = max ? atoi(max) : 16;
	TT_INSTANT("main starts");
	for (int i = 1; i <= SNAP_NAPS; i++) {
		TT_BEGIN(TRIGGER_NAP);
		struct timespec nap = {0, 1500000};
		while (nanosleep(&nap, &nap) != 0)
			;
		TT_END();
		/* One at a time: none waits for its window while the next is taken. */
		if (i <= cap)
			wait_snapshots(i);
	}
	printf("{\"late\":%d}\n", tt_trigger("late"));
}

#define FLAT_STRIDE 64
#define FLAT_TABLE (UINT64_C(1) << 24)

static atomic_ullong flat_events;
static uint64_t *flat_tsc;

static void *flat_out(void *unused)
{
	(void)unused;
	unsigned long long n = 0;
	while (!atomic_load_explicit(&finishing, memory_order_relaxed) &&
	       n < FLAT_TABLE * FLAT_STRIDE) {
		/* the TSC before every FLAT_STRIDE-th counter: counter n's own lies between
		 * flat_tsc[n / FLAT_STRIDE] and the next */
		if (n % FLAT_STRIDE == 0)
			flat_tsc[n / FLAT_STRIDE] = __rdtsc();
		TT_COUNTER("flat", (int64_t)n);
		n++;
		if (n % 1024 == 0)
			atomic_store_explicit(&flat_events, n, memory_order_relaxed);
	}
	atomic_store(&flat_events, n);
	return NULL;
}

static void flatout(const char *table)
{
	flat_tsc = malloc(FLAT_TABLE * sizeof *flat_tsc);
	if (!flat_tsc) {
		fprintf(stderr, "sched_causes_prog: no memory for the flat table\n");
		exit(1);
	}
	TT_INSTANT("main starts");
	pthread_t t;
	pthread_create(&t, NULL, flat_out, NULL);
	/* a window's worth of it before the spike: the windows begin after it began */
	while (atomic_load(&flat_events) == 0)
		sleep_ms(1);
	long long began = now_ns(CLOCK_MONOTONIC);
	while (now_ns(CLOCK_MONOTONIC) - began < 150000000)
		sleep_ms(1);
	TT_BEGIN("sleep3");
	sleep_ms(3);
	TT_END();
	printf("{\"trigger\":%d}\n", tt_trigger("flat out"));
	wait_snapshots(2);
	atomic_store(&finishing, 1);
	pthread_join(t, NULL);
	unsigned long long n = atomic_load(&flat_events);
	write_table(table, flat_tsc, (n + FLAT_STRIDE - 1) / FLAT_STRIDE);
	printf("{\"flat_events\":%llu,\"flat_stride\":%d}\n", n, FLAT_STRIDE);
	free(flat_tsc);
}

static atomic_int spin_on;

static void *pinned_spinner(void *unused)
{
	(void)unused;
	pin_to_cpu0();
	while (atomic_load(&spin_on))
		;
	return NULL;
}

/* The scope is left open: what closes it is its thread's last event, among those the
 * full buffer dropped. `woken`: beside a waker, napping now and then (fullwoken). */
static void fullbuf(long long ms, int woken)
{
	pthread_t t;
	pin_to_cpu0();
	atomic_store(&spin_on, 1);
	if (woken)
		pthread_barrier_init(&ready, NULL, 2);
	pthread_create(&t, NULL, woken ? woken_waker : pinned_spinner, NULL);
	if (woken)
		pthread_barrier_wait(&ready);
	const char *scope = woken ? "fullwoken" : "fullbuf";
	struct kernel_figures before, after;
	kernel_now(&before, 1);
	TT_BEGIN_DYN(scope);
	long long nap_at = 10000000;
	/* (32 ticks a reading of its CPU clock, a system call: under a hypervisor that makes
	 * them dear, 3.5 us, one tick a reading left the buffer short of full, 42,000 ticks
	 * in 150 ms, nothing dropped) */
	for (long long ran; (ran = now_ns(CLOCK_THREAD_CPUTIME_ID) - before.run_ns) < ms * 1000000;) {
		for (int i = 0; i < 32; i++) {
			TT_BEGIN("tick");
			TT_END();
		}
		if (woken && ran >= nap_at) {
			struct timespec nap = {0, 200000};
			nanosleep(&nap, NULL);
			nap_at += 10000000;
		}
	}
	kernel_now(&after, 0);
	say(scope, &before, &after);
	printf("{\"inside_ns\":%lld}\n", after.wall_ns); /* (a moment it was still in its scope) */
	fflush(stdout);
	atomic_store(&spin_on, 0);
	atomic_store(&woken_done, 2);
	pthread_join(t, NULL);
	exit(0);
}

extern char **environ;

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	main_began_ns = now_ns(CLOCK_MONOTONIC);
	if (strcmp(what, "seccomp") == 0 || strcmp(what, "seccomp-kill") == 0) {
		/* As a sandbox set up before the program runs: the filter first, then this
		 * program again (the system call, not ticktrace's execve, which would end this
		 * image's run in the same file), whose ticktrace starts under it. */
		deny_perf(strcmp(what, "seccomp-kill") == 0);
		char *again[] = {argv[0], "seccomp-denied", argc > 2 ? argv[2] : "sleep", NULL};
		syscall(SYS_execve, "/proc/self/exe", again, environ);
		perror("sched_causes_prog: execve");
		return 1;
	}
	if (strcmp(what, "seccomp-denied") == 0 && argc > 2)
		what = argv[2];
	if (strcmp(what, "sleep") == 0) {
		TT_INSTANT("main starts");
		AROUND("sleep3", sleep_ms(3));
	} else if (strcmp(what, "livewake") == 0) {
		for (int i = 0; i < LIVEWAKE_THREADS; i++)
			run_threads(1, livewake_thread);
	} else if (strcmp(what, "lock") == 0) {
		TT_INSTANT("main starts");
		pthread_t t;
		pthread_barrier_init(&ready, NULL, 2);
		pthread_create(&t, NULL, holder, NULL);
		pthread_barrier_wait(&ready);
		AROUND("lockwait", (atomic_store(&locking, 1), pthread_mutex_lock(&held)));
		pthread_mutex_unlock(&held);
		pthread_join(t, NULL);
	} else if (strcmp(what, "spin") == 0) {
		pthread_barrier_init(&ready, NULL, 2);
		run_threads(2, spinner);
	} else if (strcmp(what, "woken") == 0) {
		woken();
	} else if (strcmp(what, "shared") == 0) {
		pthread_barrier_init(&ready, NULL, SHARED_THREADS);
		run_threads(SHARED_THREADS, shared_spinner);
	} else if (strcmp(what, "readwait") == 0) {
		readwait();
	} else if (strcmp(what, "mixed") == 0) {
		pthread_barrier_init(&ready, NULL, 2);
		run_threads(2, mixed_thread);
	} else if (strcmp(what, "fullbuf") == 0 && argc > 2) {
		fullbuf(atoll(argv[2]), 0);
	} else if (strcmp(what, "fullwoken") == 0 && argc > 2) {
		fullbuf(atoll(argv[2]), 1);
	} else if (strcmp(what, "work") == 0) {
		TT_INSTANT("main starts");
		AROUND("afterwork", afterwork());
		AROUND("dense", steps(200000000));
		steps(150000000); /* (no scope tt-sched watches right after it) */
	} else if (strcmp(what, "heavy") == 0) {
		threads_then_cpu(HEAVY_THREADS, heavy_thread);
	} else if (strcmp(what, "blindnaps") == 0) {
		threads_then_cpu(HEAVY_THREADS, blind_thread);
	} else if (strcmp(what, "blindfirst") == 0) {
		threads_then_cpu(HEAVY_THREADS, blind_first_thread);
	} else if (strcmp(what, "flood") == 0) {
		threads_then_cpu(FLOOD_THREADS, flood_thread);
	} else if (strcmp(what, "dense") == 0) {
		dense();
	} else if (strcmp(what, "hang") == 0) {
		TT_INSTANT("main starts");
		AROUND("sleep3", sleep_ms(3));
		printf("{\"hung\": 1}\n");
		fflush(stdout);
		for (;;)
			pause();
	} else if (strcmp(what, "pingpong") == 0 && argc > 3) {
		pingpong_n = atol(argv[2]);
		pingpong_m = atol(argv[3]);
		pingpong();
	} else if (strcmp(what, "short") == 0) {
		short_threads();
	} else if (strcmp(what, "crowd") == 0) {
		crowd();
	} else if (strcmp(what, "nested") == 0) {
		nested();
	} else if (strcmp(what, "burst") == 0) {
		burst();
	} else if (strcmp(what, "hundred") == 0) {
		hundred();
	} else if (strcmp(what, "oneby") == 0) {
		oneby();
	} else if (strcmp(what, "idle") == 0) {
		idle();
	} else if (strcmp(what, "workers") == 0) {
		workers();
	} else if (strcmp(what, "sixty") == 0) {
		sixty();
	} else if (strcmp(what, "sparse") == 0) {
		sparse();
	} else if (strcmp(what, "bursty") == 0) {
		bursty();
	} else if (strcmp(what, "many") == 0) {
		many();
	} else if (strcmp(what, "afterfree") == 0) {
		after_free();
	} else if (strcmp(what, "lastscope") == 0) {
		last_scopes();
	} else if (strcmp(what, "crowdfork") == 0) {
		crowd();
		fflush(stdout);
		pid_t child = fork();
		if (child == 0) { /* (150 ms: tt-sched, new in the child, started 30 ms late at a load of 20) */
			AROUND("sleep150", sleep_ms(150));
			return 0;
		}
		int status;
		if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
		printf("{\"child_pid\":%d}\n", (int)child);
	} else if (strcmp(what, "snapshots") == 0 && argc > 2) {
		snapshots(argv[2]);
	} else if (strcmp(what, "snapcap") == 0) {
		snapcap();
	} else if (strcmp(what, "flatout") == 0 && argc > 2) {
		flatout(argv[2]);
	} else {
		fprintf(stderr, "usage: sched_causes_prog sleep|lock|spin|woken|mixed|readwait|work|dense|flood|heavy|hang|pingpong N M|short|crowd|burst|hundred|oneby|sparse|many|crowdfork|afterfree|"
			"lastscope|livewake|seccomp|seccomp-kill|snapshots TABLE|"
			"snapcap|flatout TABLE|fullbuf MS|fullwoken MS\n");
		return 2;
	}
	return 0;
}
