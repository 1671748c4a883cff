/* schedstat_overhead_pct: 64 threads record scopes, most of them short (about 18 us
 * of work), every tenth one long (a 2 ms sleep, which tt-sched watches and reads the
 * counters of); the figure is the process CPU time of the whole (the recording
 * threads', tt-sched's reads and looks, the kernel's work for them), with the
 * counters (TICKTRACE_SCHED=schedstat) against none (TICKTRACE_SCHED=0), each the
 * median over `repeats` children, in turns. */
#include "schedstat_overhead.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "child.h"
#include "median.h"
#include "sched_overhead.h"
#include "ticktrace.h"
#include "timing.h"

#define TT_BENCH_SCHEDSTAT_THREADS 64
#define TT_BENCH_SCHEDSTAT_ROUNDS 100 /* scopes a thread records, every tenth long */
#define TT_BENCH_SCHEDSTAT_LONG_NS 2000000

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
	int64_t cpu0 = tt_bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	pthread_barrier_wait(&tt_bench_schedstat_go);
	for (int i = 0; i < TT_BENCH_SCHEDSTAT_THREADS; i++)
		pthread_join(threads[i], NULL);
	printf("%.3f\n", (double)(tt_bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / 1e6);
	return 0;
}

int tt_bench_schedstat_overhead(int repeats, struct tt_bench_schedstat *out)
{
	static const char *const envs[2] = {"TICKTRACE_SCHED=schedstat", "TICKTRACE_SCHED=0"};
	double *ms[2] = {calloc((size_t)repeats, sizeof(double)), calloc((size_t)repeats, sizeof(double))};
	int err = ms[0] && ms[1] ? 0 : -1;
	char args[64];
	snprintf(args, sizeof args, TT_BENCH_SCHEDSTAT_CHILD " %ld", 2 * tt_bench_sched_calibrate());
	for (int r = 0; !err && r < repeats; r++)
		for (int i = 0; !err && i < 2; i++) {
			int k = (r + i) % 2; /* (each round begins with the other: drift favours neither) */
			err = tt_bench_child(envs[k], args, 1, &ms[k][r]);
		}
	if (!err) {
		out->on_ms = tt_bench_median(ms[0], repeats);
		out->off_ms = tt_bench_median(ms[1], repeats);
		out->pct = (out->on_ms / out->off_ms - 1) * 100;
	}
	free(ms[0]);
	free(ms[1]);
	return err;
}
