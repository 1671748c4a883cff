/* schedstat_overhead_pct: 64 threads record scopes, most of them short (about 18 us
 * of work), every tenth one long (a 2 ms sleep, which tt-sched watches and reads the
 * counters of); the figure is the process CPU time of the whole (the recording
 * threads', tt-sched's reads and looks, the kernel's work for them), with the
 * counters (TICKTRACE_SCHED=schedstat) against none (TICKTRACE_SCHED=0), a child of
 * each in a turn, the median of the turns' ratios. A child's CPU time varies by 5 to
 * 10 % from one to the next on a loaded machine, far more than the 1 % it looks for:
 * 5 turns put the median anywhere from 1 to 7 % (s14: 5.83 then 1.77 on one build),
 * so at least TT_BENCH_SCHEDSTAT_TURNS. tt-sched's own CPU time, read from its
 * schedstat in the child, over the same turn's CPU time without states, is the part
 * of it the noise spares (schedstat_tt_sched_pct): over the child's wall time it
 * would fall as load stretches the run (1.08 % of one CPU at load 20, 0.42 at 70,
 * its CPU time alike). */
#include "schedstat_overhead.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "child.h"
#include "median.h"
#include "sched_overhead.h"
#include "ticktrace.h"
#include "timing.h"

#define TT_BENCH_SCHEDSTAT_THREADS 64
#define TT_BENCH_SCHEDSTAT_ROUNDS 100 /* scopes a thread records, every tenth long */
#define TT_BENCH_SCHEDSTAT_LONG_NS 2000000
/* turns at least, whatever --repeats (about 0.3 s each here quiet, 0.8 s at load 40):
 * the key's 90 % spread 2 points with 31 at load 40, 6 with 5 */
#define TT_BENCH_SCHEDSTAT_TURNS 31

static long tt_bench_schedstat_work;
static pthread_barrier_t tt_bench_schedstat_go;

static void *tt_bench_schedstat_thread(void *unused)
{
	(void)unused;
	pthread_barrier_wait(&tt_bench_schedstat_go);
	for (int i = 0; i < TT_BENCH_SCHEDSTAT_ROUNDS; i++) {
		if (i % 10 == 9) {
			TT_SCOPE("long");
			struct timespec nap = {0, TT_BENCH_SCHEDSTAT_LONG_NS};
			while (nanosleep(&nap, &nap) != 0)
				;
		} else {
			TT_SCOPE("short");
			tt_bench_sched_work(tt_bench_schedstat_work);
		}
	}
	return NULL;
}

/* tt-sched's CPU time so far, ns (its schedstat's first field); 0 where it has none
 * (TICKTRACE_SCHED=0). */
static double tt_bench_tt_sched_ns(void)
{
	DIR *tasks = opendir("/proc/self/task");
	struct dirent *task;
	double ns = 0;
	while (tasks && (task = readdir(tasks))) {
		char path[300], comm[32] = "";
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", task->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		int named = fgets(comm, sizeof comm, f) && strcmp(comm, "tt-sched\n") == 0;
		fclose(f);
		snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", task->d_name);
		if (named && (f = fopen(path, "r"))) {
			if (fscanf(f, "%lf", &ns) != 1)
				ns = 0;
			fclose(f);
		}
	}
	if (tasks)
		closedir(tasks);
	return ns;
}

int tt_bench_schedstat_child(long work)
{
	tt_bench_schedstat_work = work;
	pthread_t threads[TT_BENCH_SCHEDSTAT_THREADS];
	pthread_barrier_init(&tt_bench_schedstat_go, NULL, TT_BENCH_SCHEDSTAT_THREADS + 1);
	for (int i = 0; i < TT_BENCH_SCHEDSTAT_THREADS; i++)
		if (pthread_create(&threads[i], NULL, tt_bench_schedstat_thread, NULL)) {
			perror("ticktrace-bench: " TT_BENCH_SCHEDSTAT_CHILD);
			return 1;
		}
	double sched0 = tt_bench_tt_sched_ns();
	int64_t wall0 = tt_bench_now_ns(), cpu0 = tt_bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	pthread_barrier_wait(&tt_bench_schedstat_go);
	for (int i = 0; i < TT_BENCH_SCHEDSTAT_THREADS; i++)
		pthread_join(threads[i], NULL);
	int64_t cpu = tt_bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0, wall = tt_bench_now_ns() - wall0;
	printf("%.3f %.3f %.3f\n", (double)cpu / 1e6, (tt_bench_tt_sched_ns() - sched0) / 1e6, (double)wall / 1e6);
	return 0;
}

int tt_bench_schedstat_overhead(int repeats, struct tt_bench_schedstat *out)
{
	static const char *const envs[2] = {"TICKTRACE_SCHED=schedstat", "TICKTRACE_SCHED=0"};
	int turns = repeats > TT_BENCH_SCHEDSTAT_TURNS ? repeats : TT_BENCH_SCHEDSTAT_TURNS;
	/* each child's CPU ms, tt-sched's and its wall time; each turn's ratio, tt-sched's share */
	double(*figures)[2][3] = calloc((size_t)turns, sizeof *figures);
	double *ms[2] = {calloc((size_t)turns, sizeof(double)), calloc((size_t)turns, sizeof(double))};
	double *pct = calloc((size_t)turns, sizeof(double)), *tt_sched = calloc((size_t)turns, sizeof(double));
	int err = figures && ms[0] && ms[1] && pct && tt_sched ? 0 : -1;
	char args[64];
	snprintf(args, sizeof args, TT_BENCH_SCHEDSTAT_CHILD " %ld", 2 * tt_bench_sched_calibrate());
	for (int r = 0; !err && r < turns; r++) {
		for (int i = 0; !err && i < 2; i++) {
			int k = (r + i) % 2; /* (each turn begins with the other: drift favours neither) */
			err = tt_bench_child(envs[k], args, 3, figures[r][k]);
		}
		ms[0][r] = figures[r][0][0];
		ms[1][r] = figures[r][1][0];
		pct[r] = (ms[0][r] / ms[1][r] - 1) * 100;
		tt_sched[r] = figures[r][0][1] / ms[1][r] * 100;
	}
	if (!err) {
		out->turns = turns;
		out->on_ms = tt_bench_median(ms[0], turns);
		out->off_ms = tt_bench_median(ms[1], turns);
		out->pct = tt_bench_median(pct, turns);
		tt_bench_median_bounds(pct, turns, &out->lo, &out->hi);
		out->tt_sched_pct = tt_bench_median(tt_sched, turns);
		for (int r = 0; r < turns; r++)
			tt_sched[r] = figures[r][0][1];
		out->tt_sched_ms = tt_bench_median(tt_sched, turns);
		for (int r = 0; r < turns; r++)
			tt_sched[r] = figures[r][0][1] / figures[r][0][2] * 100;
		out->tt_sched_wall_pct = tt_bench_median(tt_sched, turns);
	}
	free(figures);
	free(ms[0]);
	free(ms[1]);
	free(pct);
	free(tt_sched);
	return err;
}
