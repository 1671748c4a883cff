/* event_during_snapshot_ns and snapshot_ms. The settings are read when the library
 * starts, so each run is a child process in mode ring with TICKTRACE_SNAPSHOTS, in which
 * 8 threads record as a densely instrumented program does: each wakes every 2 ms and
 * records a batch of 1,024 begin/end pairs (after 64 pairs untimed, which bring its
 * lines back into the cache after the sleep), about 1.1 million events a second a
 * thread, into rings of 262,144 events (about 240 ms), wrapped before the first
 * snapshot, so that the rings recycle their chunks as in a long run. The main thread
 * calls tt_trigger and looks for the snapshot's file every 100 us.
 *
 * event_during_snapshot_ns: the median per event of the batches recorded while a
 * snapshot was written, the threads recording on (its window about 1.3 million
 * events). A batch counts only when it lies wholly within the writing, as far as the
 * child can know it: begun after the clock anchor in the file's header (taken by
 * tt-spikes after it held the chunks and found every thread's window in them, so after
 * the writing began) and ended before the last look that did not find the file (it is
 * named when complete, after the chunks are let go). The writing's first part, finding
 * the windows, is left out rather than time outside the writing counted in; when the
 * looks came so late that fewer than 8 batches are known to lie within it, another
 * snapshot is taken. Beside it, for the difference the writing makes, the same
 * threads' batches in the 150 ms before the trigger.
 *
 * snapshot_ms: then one more snapshot, the threads idle from its trigger on:
 * tt-spikes's CPU time (/proc/self/task/TID/schedstat) from the end of its window to
 * its file's appearance. Its looks at the threads meanwhile find nothing new, so the
 * time is the writing's alone (on an idle core, its wall time; a loaded machine
 * stretches that by what it runs instead). TICKTRACE_SNAPSHOT_AFTER is 50 ms, so that
 * the look that reads the threads' last records (within 20 ms of the trigger) is over
 * when the window ends. */
#include "snapshot_bench.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#define TT_BENCH_SNAP_AFTER "50ms"
#define TT_BENCH_SNAP_AFTER_NS 50000000
#define TT_BENCH_SNAP_LOOK_NS 100000
#define TT_BENCH_SNAP_WAIT_NS 20000000000 /* a snapshot not there by then: the child fails */
#define TT_BENCH_SNAP_MAX_BATCHES 1024    /* a thread's, logged: 2 s of them */
#define TT_BENCH_SNAP_MIN_BATCHES 8       /* fewer counted in a writing: another snapshot */
#define TT_BENCH_SNAP_TRIES 3

/* The figures a child prints, in this order. */
enum {
	TT_BENCH_SNAP_FIG_DURING_NS, TT_BENCH_SNAP_FIG_QUIET_NS, TT_BENCH_SNAP_FIG_BATCHES,
	TT_BENCH_SNAP_FIG_DURING_EVENTS, TT_BENCH_SNAP_FIG_MS, TT_BENCH_SNAP_FIG_EVENTS, TT_BENCH_SNAP_FIGURES
};

struct tt_bench_batch {
	int64_t from, to; /* CLOCK_MONOTONIC */
};

struct tt_bench_recorder {
	pthread_t thread;
	int64_t wake; /* the next batch, CLOCK_MONOTONIC */
	int batches;  /* logged: published once its times are (the main thread reads them) */
	struct tt_bench_batch batch[TT_BENCH_SNAP_MAX_BATCHES];
};

enum tt_bench_snap_state { TT_BENCH_SNAP_RECORD, TT_BENCH_SNAP_IDLE, TT_BENCH_SNAP_END };

static struct {
	pthread_mutex_t mutex;
	pthread_cond_t changed;
	enum tt_bench_snap_state state;
	struct tt_bench_recorder recorders[TT_BENCH_SNAP_THREADS];
} tt_bench_snap = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, TT_BENCH_SNAP_RECORD, {{0}}};

static void tt_bench_snap_set(enum tt_bench_snap_state state)
{
	pthread_mutex_lock(&tt_bench_snap.mutex);
	tt_bench_snap.state = state;
	pthread_cond_broadcast(&tt_bench_snap.changed);
	pthread_mutex_unlock(&tt_bench_snap.mutex);
}

static void tt_bench_snap_sleep_until(int64_t ns)
{
	struct timespec at = {ns / 1000000000, ns % 1000000000};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL))
		;
}

static void *tt_bench_snap_recorder(void *arg)
{
	struct tt_bench_recorder *r = arg;
	for (;;) {
		tt_bench_snap_sleep_until(r->wake);
		r->wake += TT_BENCH_SNAP_PERIOD_NS;
		pthread_mutex_lock(&tt_bench_snap.mutex);
		while (tt_bench_snap.state == TT_BENCH_SNAP_IDLE)
			pthread_cond_wait(&tt_bench_snap.changed, &tt_bench_snap.mutex);
		enum tt_bench_snap_state state = tt_bench_snap.state;
		pthread_mutex_unlock(&tt_bench_snap.mutex);
		if (state == TT_BENCH_SNAP_END)
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

/* tt-spikes's thread id, from the threads' names. */
static int tt_bench_snap_spikes_tid(void)
{
	DIR *tasks = opendir("/proc/self/task");
	int found = 0;
	for (struct dirent *e; tasks && !found && (e = readdir(tasks));) {
		char path[300], comm[32] = "";
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (f && fgets(comm, sizeof comm, f) && strcmp(comm, "tt-spikes\n") == 0)
			found = atoi(e->d_name);
		if (f)
			fclose(f);
	}
	if (tasks)
		closedir(tasks);
	return found;
}

/* A thread's CPU time so far (the kernel's sum_exec_runtime), or -1. */
static int64_t tt_bench_snap_cpu_ns(int tid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
	FILE *f = fopen(path, "r");
	long long ns = -1;
	if (!f || fscanf(f, "%lld", &ns) != 1)
		ns = -1;
	if (f)
		fclose(f);
	return ns;
}

/* A snapshot's file, looked for until it is there. */
struct tt_bench_written {
	int64_t missed_at; /* the last look that did not find it began then */
	int64_t anchor_ns; /* its header's clock anchor: the writing had begun */
	uint64_t records;
	int64_t cpu_ns;    /* with `spikes`: tt-spikes's CPU time from the window's end */
};

/* Calls tt_trigger, and looks for the file of snapshot `number` until it is there
 * (then reads and removes it). With `spikes` (tt-spikes's thread id), the threads go
 * idle after the trigger, and tt-spikes's CPU time from the window's end to the file
 * is measured. 0 or -1 (said on stderr). */
static int tt_bench_snap_take(const char *dir, int number, int spikes, struct tt_bench_written *w)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/trigger-%d-%d-bench.ttr", dir, (int)getpid(), number);
	int err = tt_trigger("bench");
	if (err) {
		fprintf(stderr, "ticktrace-bench: tt_trigger: %s\n", strerror(-err));
		return -1;
	}
	int64_t cpu_from = 0;
	if (spikes) {
		tt_bench_snap_set(TT_BENCH_SNAP_IDLE);
		tt_bench_snap_sleep_until(tt_bench_now_ns() + TT_BENCH_SNAP_AFTER_NS);
		cpu_from = tt_bench_snap_cpu_ns(spikes);
	}
	int64_t deadline = tt_bench_now_ns() + TT_BENCH_SNAP_WAIT_NS;
	for (int64_t look; (look = tt_bench_now_ns()), access(path, F_OK) != 0;) {
		w->missed_at = look;
		if (look > deadline) {
			fprintf(stderr, "ticktrace-bench: %s was not written\n", path);
			return -1;
		}
		nanosleep(&(struct timespec){0, TT_BENCH_SNAP_LOOK_NS}, NULL);
	}
	if (spikes)
		w->cpu_ns = tt_bench_snap_cpu_ns(spikes) - cpu_from;
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
	if (spikes && (cpu_from < 0 || w->cpu_ns < 0)) {
		fprintf(stderr, "ticktrace-bench: no schedstat for tt-spikes\n");
		return -1;
	}
	w->anchor_ns = header.end.monotonic_ns;
	return 0;
}

/* tt_bench_snapshot's figures, for one child: 0 or -1 (said on stderr). */
static int tt_bench_snap_measure(const char *dir, double figures[TT_BENCH_SNAP_FIGURES])
{
	int64_t trigger = tt_bench_now_ns();
	int quiet_batches, batches = 0, number = 0;
	figures[TT_BENCH_SNAP_FIG_QUIET_NS] =
		tt_bench_snap_batches_within(trigger - TT_BENCH_SNAP_QUIET_NS, trigger, &quiet_batches);
	/* The threads record on. (Again when the looks came so late that too few batches
	 * are known to lie within the writing.) */
	while (batches < TT_BENCH_SNAP_MIN_BATCHES && number < TT_BENCH_SNAP_TRIES) {
		struct tt_bench_written w = {0};
		if (tt_bench_snap_take(dir, ++number, 0, &w))
			return -1;
		figures[TT_BENCH_SNAP_FIG_DURING_NS] = tt_bench_snap_batches_within(w.anchor_ns, w.missed_at, &batches);
		figures[TT_BENCH_SNAP_FIG_DURING_EVENTS] = (double)w.records;
	}
	figures[TT_BENCH_SNAP_FIG_BATCHES] = batches;
	if (batches < TT_BENCH_SNAP_MIN_BATCHES || quiet_batches < TT_BENCH_SNAP_MIN_BATCHES) {
		fprintf(stderr, "ticktrace-bench: %d batches known to be recorded while a snapshot was "
			"written, %d before: too few\n", batches, quiet_batches);
		return -1;
	}
	int spikes = tt_bench_snap_spikes_tid();
	struct tt_bench_written idle = {0};
	if (!spikes) {
		fprintf(stderr, "ticktrace-bench: no thread tt-spikes\n");
		return -1;
	}
	if (tt_bench_snap_take(dir, ++number, spikes, &idle))
		return -1;
	figures[TT_BENCH_SNAP_FIG_MS] = (double)idle.cpu_ns / 1e6;
	figures[TT_BENCH_SNAP_FIG_EVENTS] = (double)idle.records;
	return 0;
}

int tt_bench_snapshot_child(void)
{
	const char *dir = getenv("TICKTRACE_SNAPSHOTS");
	if (!dir) {
		fprintf(stderr, "ticktrace-bench: " TT_BENCH_SNAPSHOT_CHILD ": no TICKTRACE_SNAPSHOTS\n");
		return 1;
	}
	int64_t start = tt_bench_now_ns();
	int threads = 0;
	for (; threads < TT_BENCH_SNAP_THREADS; threads++) {
		struct tt_bench_recorder *r = &tt_bench_snap.recorders[threads];
		/* (their batches spread over the period) */
		r->wake = start + (int64_t)threads * TT_BENCH_SNAP_PERIOD_NS / TT_BENCH_SNAP_THREADS;
		if (pthread_create(&r->thread, NULL, tt_bench_snap_recorder, r))
			break;
	}
	double figures[TT_BENCH_SNAP_FIGURES];
	int err = threads < TT_BENCH_SNAP_THREADS ? -1 : 0;
	if (!err) {
		tt_bench_snap_sleep_until(start + TT_BENCH_SNAP_FILL_NS);
		err = tt_bench_snap_measure(dir, figures);
	}
	tt_bench_snap_set(TT_BENCH_SNAP_END);
	for (int t = 0; t < threads; t++)
		pthread_join(tt_bench_snap.recorders[t].thread, NULL);
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
		fprintf(stderr, "ticktrace-bench: cannot make %s\n", dir);
		return -1;
	}
	snprintf(env, sizeof env,
		 "TICKTRACE_MODE=ring TICKTRACE_BUFFER=" TT_BENCH_SNAP_BUFFER " TICKTRACE_SNAPSHOTS='%s' "
		 "TICKTRACE_SNAPSHOT_AFTER=" TT_BENCH_SNAP_AFTER, dir);
	double *figures[TT_BENCH_SNAP_FIGURES];
	int err = 0;
	for (int f = 0; f < TT_BENCH_SNAP_FIGURES; f++)
		err |= !(figures[f] = calloc((size_t)repeats, sizeof(double)));
	for (int r = 0; !err && r < repeats; r++) {
		double run[TT_BENCH_SNAP_FIGURES];
		err = tt_bench_child(env, TT_BENCH_SNAPSHOT_CHILD, TT_BENCH_SNAP_FIGURES, run);
		for (int f = 0; !err && f < TT_BENCH_SNAP_FIGURES; f++)
			figures[f][r] = run[f];
	}
	if (!err)
		*out = (struct tt_bench_snapshot){
			.during_ns = tt_bench_median(figures[TT_BENCH_SNAP_FIG_DURING_NS], repeats),
			.quiet_ns = tt_bench_median(figures[TT_BENCH_SNAP_FIG_QUIET_NS], repeats),
			.batches = tt_bench_median(figures[TT_BENCH_SNAP_FIG_BATCHES], repeats),
			.during_window_events = tt_bench_median(figures[TT_BENCH_SNAP_FIG_DURING_EVENTS], repeats),
			.snapshot_ms = tt_bench_median(figures[TT_BENCH_SNAP_FIG_MS], repeats),
			.window_events = tt_bench_median(figures[TT_BENCH_SNAP_FIG_EVENTS], repeats),
		};
	for (int f = 0; f < TT_BENCH_SNAP_FIGURES; f++)
		free(figures[f]);
	tt_bench_snap_remove(dir);
	return err ? -1 : 0;
}
