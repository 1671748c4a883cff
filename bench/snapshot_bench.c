/* event_during_snapshot_ns and snapshot_ms. The settings are read when the library
 * starts, so each run is a child process in mode ring with TICKTRACE_SNAPSHOTS, in which
 * 8 threads record as a densely instrumented program does: each wakes every 2 ms and
 * records a batch of 1,024 begin/end pairs (after 64 pairs untimed, which bring its
 * lines back into the cache after the sleep), about 1.1 million events a second a
 * thread, into rings of 262,144 events (about 240 ms), wrapped before the snapshot, so
 * that the rings recycle their chunks as in a long run. The main thread calls
 * tt_trigger (the window the defaults, 100 ms before it and 10 ms after, about 960,000
 * events) and looks every 100 us at the file the snapshot is written to: open (unnamed,
 * or under a temporary name) from before tt-spikes holds the chunks, named once it is
 * complete. Open in tt-spikes' own table of descriptors, seen in /proc/self/task/TID/fd
 * alone (/proc/self/fd is the main thread's table).
 *
 * event_during_snapshot_ns: the median per event of the batches recorded while the
 * snapshot was written. A batch counts only when it lies wholly within the writing,
 * as far as the child can know it: begun after the first look that saw the file open,
 * ended before the last look that did not find it named. The writing's first and last
 * moments, up to a look each, are left out rather than time outside it counted in;
 * when the looks came so late that fewer than 8 batches are known to lie within it,
 * another snapshot is taken. Beside it, for the difference the writing makes, the same
 * threads' batches in the 150 ms before the trigger.
 *
 * snapshot_ms: the writing's wall time, the threads recording on: from the first look
 * that saw the file open to the first that found it named (each late by up to a look,
 * alike). A loaded machine stretches it by what it runs instead.
 *
 * snapshot_overhead_pct: what snapshots cost all along, taken or not (tt-spikes reads
 * every record every 20 ms and runs the spike detector on it): the same 8 threads
 * recording for TT_BENCH_SNAP_COST_NS, the process's CPU time from their start to
 * their end with TICKTRACE_SNAPSHOTS (no threshold: no spike, no snapshot written)
 * against without, mode ring both, the medians over children in turns. */
#include "snapshot_bench.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "median.h"
#include "stream_bench.h"
#include "ticktrace.h"
#include "ticktrace/format.h"
#include "timing.h"

#define TT_BENCH_SNAP_THREADS 8
#define TT_BENCH_SNAP_BATCH_PAIRS 1024
#define TT_BENCH_SNAP_WARM_PAIRS 64
#define TT_BENCH_SNAP_PERIOD_NS 2000000
#define TT_BENCH_SNAP_BUFFER "262144"
#define TT_BENCH_SNAP_FILL_NS 400000000  /* before the first trigger: every ring wrapped */
#define TT_BENCH_SNAP_QUIET_NS 150000000 /* the batches compared, before the trigger */
#define TT_BENCH_SNAP_LOOK_NS 100000
#define TT_BENCH_SNAP_WAIT_NS 20000000000 /* a snapshot not there by then: the child fails */
#define TT_BENCH_SNAP_MAX_BATCHES 1024    /* a thread's, logged: 2 s of them */
#define TT_BENCH_SNAP_MIN_BATCHES 8       /* fewer counted in a writing: another snapshot */
#define TT_BENCH_SNAP_TRIES 3
#define TT_BENCH_SNAP_COST_NS 500000000

/* The figures a child prints, in this order. */
enum {
	TT_BENCH_SNAP_FIG_DURING_NS, TT_BENCH_SNAP_FIG_QUIET_NS, TT_BENCH_SNAP_FIG_BATCHES,
	TT_BENCH_SNAP_FIG_MS, TT_BENCH_SNAP_FIG_EVENTS, TT_BENCH_SNAP_FIGURES
};

struct tt_bench_batch {
	int64_t from, to; /* CLOCK_MONOTONIC */
};

struct tt_bench_recorder {
	pthread_t thread;
	pid_t tid;    /* its table of descriptors the main thread's: not looked at */
	int64_t wake; /* the next batch, CLOCK_MONOTONIC */
	int batches;  /* logged: published once its times are (the main thread reads them) */
	struct tt_bench_batch batch[TT_BENCH_SNAP_MAX_BATCHES];
};

static struct {
	bool stop;
	struct tt_bench_recorder recorders[TT_BENCH_SNAP_THREADS];
} tt_bench_snap;

static void tt_bench_snap_sleep_until(int64_t ns)
{
	struct timespec at = {ns / 1000000000, ns % 1000000000};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL))
		;
}

static void *tt_bench_snap_recorder(void *arg)
{
	struct tt_bench_recorder *r = arg;
	__atomic_store_n(&r->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELAXED);
	for (;;) {
		tt_bench_snap_sleep_until(r->wake);
		r->wake += TT_BENCH_SNAP_PERIOD_NS;
		if (__atomic_load_n(&tt_bench_snap.stop, __ATOMIC_ACQUIRE))
			return NULL;
		tt_bench_pairs(TT_BENCH_SNAP_WARM_PAIRS);
		struct tt_bench_batch b;
		tt_bench_pairs_between(TT_BENCH_SNAP_BATCH_PAIRS, &b.from, &b.to);
		if (r->batches < TT_BENCH_SNAP_MAX_BATCHES) {
			r->batch[r->batches] = b;
			__atomic_store_n(&r->batches, r->batches + 1, __ATOMIC_RELEASE);
		}
	}
}

/* The median per event of the batches recorded wholly within [from, to]; how many. */
static double tt_bench_snap_batches_within(int64_t from, int64_t to, int *count)
{
	static double ns[TT_BENCH_SNAP_THREADS * TT_BENCH_SNAP_MAX_BATCHES];
	int n = 0;
	for (int t = 0; t < TT_BENCH_SNAP_THREADS; t++) {
		const struct tt_bench_recorder *r = &tt_bench_snap.recorders[t];
		int batches = __atomic_load_n(&r->batches, __ATOMIC_ACQUIRE);
		for (int i = 0; i < batches; i++)
			if (r->batch[i].from >= from && r->batch[i].to <= to)
				ns[n++] = (double)(r->batch[i].to - r->batch[i].from) /
					  (2.0 * TT_BENCH_SNAP_BATCH_PAIRS);
	}
	*count = n;
	return n ? tt_bench_median(ns, n) : 0;
}

/* Whether a descriptor in table `fds` (a /proc fd directory) is open on a file in `dir`. */
static bool tt_bench_snap_open_at(const char *fds, const char *dir)
{
	DIR *d = opendir(fds);
	if (!d)
		return false;
	size_t len = strlen(dir);
	bool found = false;
	for (struct dirent *e; !found && (e = readdir(d));) {
		char link[64 + sizeof e->d_name], target[PATH_MAX];
		snprintf(link, sizeof link, "%s/%s", fds, e->d_name);
		ssize_t n = readlink(link, target, sizeof target - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		found = strncmp(target, dir, len) == 0 && target[len] == '/';
	}
	closedir(d);
	return found;
}

static bool tt_bench_snap_recorder_tid(pid_t tid)
{
	for (int t = 0; t < TT_BENCH_SNAP_THREADS; t++)
		if (__atomic_load_n(&tt_bench_snap.recorders[t].tid, __ATOMIC_RELAXED) == tid)
			return true;
	return false;
}

/* Whether a descriptor of this process is open on a file in `dir`: the runtime's,
 * writing a snapshot there. Each thread's table but the recorders' (the main thread's)
 * looked at: tt-spikes writes from a table of its own, which /proc/self/fd does not show
 * (since 8e9566df no look saw a snapshot written, and the child failed: 0 batches). */
static bool tt_bench_snap_open_in(const char *dir)
{
	DIR *tasks = opendir("/proc/self/task");
	if (!tasks)
		return false;
	bool found = false;
	for (struct dirent *e; !found && (e = readdir(tasks));) {
		pid_t tid = (pid_t)atoi(e->d_name);
		char fds[64];
		snprintf(fds, sizeof fds, "/proc/self/task/%d/fd", (int)tid);
		found = tid > 0 && !tt_bench_snap_recorder_tid(tid) && tt_bench_snap_open_at(fds, dir);
	}
	closedir(tasks);
	return found;
}

/* A snapshot's writing, as the looks at its file saw it. */
struct tt_bench_written {
	int64_t opened_at; /* the first look that saw it open */
	int64_t missed_at; /* the last look that did not find it named */
	int64_t found_at;  /* the first look that did */
	uint64_t records;
};

/* Calls tt_trigger and looks at the file of snapshot `number` in `dir` (a real path)
 * until it is named (then reads and removes it). 0, 1 when it was never seen open, or
 * -1 (said on stderr). */
static int tt_bench_snap_take(const char *dir, int number, struct tt_bench_written *w)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/trigger-%d-%d-bench.ttr", dir, (int)getpid(), number);
	int err = tt_trigger("bench");
	if (err) {
		fprintf(stderr, "ticktrace-bench: tt_trigger: %s\n", strerror(-err));
		return -1;
	}
	int64_t deadline = tt_bench_now_ns() + TT_BENCH_SNAP_WAIT_NS;
	for (;;) {
		int64_t look = tt_bench_now_ns();
		if (!w->opened_at && tt_bench_snap_open_in(dir))
			w->opened_at = look;
		if (access(path, F_OK) == 0)
			break;
		w->missed_at = look;
		if (look > deadline) {
			fprintf(stderr, "ticktrace-bench: %s was not written\n", path);
			return -1;
		}
		nanosleep(&(struct timespec){0, TT_BENCH_SNAP_LOOK_NS}, NULL);
	}
	w->found_at = tt_bench_now_ns();
	struct tt_file_header header;
	uint64_t dropped;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int whole = fd >= 0 && pread(fd, &header, sizeof header, 0) == (ssize_t)sizeof header &&
		    (header.flags & TT_FILE_SNAPSHOT) && tt_bench_file_records(path, &dropped, &w->records) == 0;
	if (fd >= 0)
		close(fd);
	unlink(path);
	if (!whole) {
		fprintf(stderr, "ticktrace-bench: %s is not a whole snapshot\n", path);
		return -1;
	}
	return w->opened_at ? 0 : 1;
}

/* tt_bench_snapshot's figures, for one child: 0 or -1 (said on stderr). */
static int tt_bench_snap_measure(const char *dir, double figures[TT_BENCH_SNAP_FIGURES])
{
	int64_t trigger = tt_bench_now_ns();
	int quiet_batches, batches = 0, number = 1, seen = 0;
	figures[TT_BENCH_SNAP_FIG_QUIET_NS] =
		tt_bench_snap_batches_within(trigger - TT_BENCH_SNAP_QUIET_NS, trigger, &quiet_batches);
	for (; batches < TT_BENCH_SNAP_MIN_BATCHES && number <= TT_BENCH_SNAP_TRIES; number++) {
		struct tt_bench_written w = {0};
		int err = tt_bench_snap_take(dir, number, &w);
		if (err < 0)
			return -1;
		if (err)
			continue;
		seen++;
		figures[TT_BENCH_SNAP_FIG_DURING_NS] = tt_bench_snap_batches_within(w.opened_at, w.missed_at, &batches);
		figures[TT_BENCH_SNAP_FIG_MS] = (double)(w.found_at - w.opened_at) / 1e6;
		figures[TT_BENCH_SNAP_FIG_EVENTS] = (double)w.records;
	}
	figures[TT_BENCH_SNAP_FIG_BATCHES] = batches;
	if (batches < TT_BENCH_SNAP_MIN_BATCHES || quiet_batches < TT_BENCH_SNAP_MIN_BATCHES) {
		/* (none seen: no look found a file open, a slow look or the file where none looks) */
		fprintf(stderr, "ticktrace-bench: %d batches known to be recorded while a snapshot was "
			"written, %d before: too few (%d of %d snapshots seen being written)\n", batches,
			quiet_batches, seen, number - 1);
		return -1;
	}
	return 0;
}

/* The recorders started, spread over the period from now: how many. */
static int tt_bench_snap_start(void)
{
	int64_t start = tt_bench_now_ns();
	int threads = 0;
	for (; threads < TT_BENCH_SNAP_THREADS; threads++) {
		struct tt_bench_recorder *r = &tt_bench_snap.recorders[threads];
		/* (their batches spread over the period) */
		r->wake = start + (int64_t)threads * TT_BENCH_SNAP_PERIOD_NS / TT_BENCH_SNAP_THREADS;
		if (pthread_create(&r->thread, NULL, tt_bench_snap_recorder, r))
			break;
	}
	return threads;
}

static void tt_bench_snap_stop(int threads)
{
	__atomic_store_n(&tt_bench_snap.stop, true, __ATOMIC_RELEASE);
	for (int t = 0; t < threads; t++)
		pthread_join(tt_bench_snap.recorders[t].thread, NULL);
}

int tt_bench_snapshot_cost_child(void)
{
	int64_t cpu = tt_bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	int threads = tt_bench_snap_start();
	tt_bench_snap_sleep_until(tt_bench_now_ns() + TT_BENCH_SNAP_COST_NS);
	tt_bench_snap_stop(threads);
	if (threads < TT_BENCH_SNAP_THREADS)
		return 1;
	printf("%.3f\n", (double)(tt_bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu) / 1e6);
	/* (the runtime's lines at exit, tt-spikes' cost among them, would repeat for every child) */
	fflush(stdout);
	freopen("/dev/null", "w", stderr);
	return 0;
}

int tt_bench_snapshot_child(void)
{
	const char *snapshots = getenv("TICKTRACE_SNAPSHOTS");
	char dir[PATH_MAX]; /* as /proc/self/fd names files */
	if (!snapshots || !realpath(snapshots, dir)) {
		fprintf(stderr, "ticktrace-bench: " TT_BENCH_SNAPSHOT_CHILD ": no TICKTRACE_SNAPSHOTS\n");
		return 1;
	}
	int64_t start = tt_bench_now_ns();
	int threads = tt_bench_snap_start();
	double figures[TT_BENCH_SNAP_FIGURES];
	int err = threads < TT_BENCH_SNAP_THREADS ? -1 : 0;
	if (!err) {
		tt_bench_snap_sleep_until(start + TT_BENCH_SNAP_FILL_NS);
		err = tt_bench_snap_measure(dir, figures);
	}
	tt_bench_snap_stop(threads);
	if (err)
		return 1;
	for (int f = 0; f < TT_BENCH_SNAP_FIGURES; f++)
		printf("%.4f%c", figures[f], f + 1 < TT_BENCH_SNAP_FIGURES ? ' ' : '\n');
	/* The runtime's line at exit, the snapshots it wrote, would repeat for every child. */
	fflush(stdout);
	freopen("/dev/null", "w", stderr);
	return 0;
}

/* Removes what a failed child left in `dir`, then `dir`. */
static void tt_bench_snap_remove(const char *dir)
{
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));) {
		char path[4400];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

int tt_bench_snapshot(int repeats, struct tt_bench_snapshot *out)
{
	char dir[4096], env[4400];
	snprintf(dir, sizeof dir, "%s/ticktrace-bench-snapshots-XXXXXX", tt_bench_dir());
	if (!mkdtemp(dir)) {
		tt_bench_say("cannot make %s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(env, sizeof env,
		 "TICKTRACE_MODE=ring TICKTRACE_BUFFER=" TT_BENCH_SNAP_BUFFER " TICKTRACE_SNAPSHOTS='%s'", dir);
	double *figures[TT_BENCH_SNAP_FIGURES];
	int err = 0;
	for (int f = 0; f < TT_BENCH_SNAP_FIGURES; f++)
		err |= !(figures[f] = calloc((size_t)repeats, sizeof(double)));
	/* with snapshots and without, each round beginning with the other */
	const char *costs[2] = {env, "TICKTRACE_MODE=ring TICKTRACE_BUFFER=" TT_BENCH_SNAP_BUFFER};
	double *cost_ms[2] = {calloc((size_t)repeats, sizeof(double)), calloc((size_t)repeats, sizeof(double))};
	err |= !cost_ms[0] || !cost_ms[1];
	for (int r = 0; !err && r < repeats; r++) {
		double run[TT_BENCH_SNAP_FIGURES];
		err = tt_bench_child(env, TT_BENCH_SNAPSHOT_CHILD, TT_BENCH_SNAP_FIGURES, run);
		for (int f = 0; !err && f < TT_BENCH_SNAP_FIGURES; f++)
			figures[f][r] = run[f];
		for (int i = 0; !err && i < 2; i++) {
			int k = (r + i) % 2;
			err = tt_bench_child(costs[k], TT_BENCH_SNAPSHOT_COST_CHILD, 1, &cost_ms[k][r]);
		}
	}
	if (!err)
		*out = (struct tt_bench_snapshot){
			.during_ns = tt_bench_median(figures[TT_BENCH_SNAP_FIG_DURING_NS], repeats),
			.quiet_ns = tt_bench_median(figures[TT_BENCH_SNAP_FIG_QUIET_NS], repeats),
			.batches = tt_bench_median(figures[TT_BENCH_SNAP_FIG_BATCHES], repeats),
			.snapshot_ms = tt_bench_median(figures[TT_BENCH_SNAP_FIG_MS], repeats),
			.window_events = tt_bench_median(figures[TT_BENCH_SNAP_FIG_EVENTS], repeats),
			.on_ms = tt_bench_median(cost_ms[0], repeats),
			.off_ms = tt_bench_median(cost_ms[1], repeats),
		};
	if (!err)
		out->overhead_pct = (out->on_ms / out->off_ms - 1) * 100;
	for (int f = 0; f < TT_BENCH_SNAP_FIGURES; f++)
		free(figures[f]);
	free(cost_ms[0]);
	free(cost_ms[1]);
	tt_bench_snap_remove(dir);
	return err ? -1 : 0;
}
