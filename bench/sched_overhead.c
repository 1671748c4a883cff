/* sched_overhead_pct. Each measurement is a child process, since TICKTRACE_SCHED is
 * read when the library starts: two threads pass a byte through two pipes, each
 * recording an event per hop and working a fixed while (the same loop count in every
 * child, about 9 us) before it passes the byte on, so that the threads switch about
 * 100,000 times a second (a thread blocks at each hop; free-running, they would only
 * switch, several 100,000 times a second on a VM, and measure the switch alone). The
 * figure is process CPU time per hop, which counts what the kernel does to write
 * the switches, tt-sched's draining and the writer's, not only the two threads':
 * the median of short rounds in a child, then the median over children. */
#include "sched_overhead.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "median.h"
#include "ticktrace.h"
#include "timing.h"

#define TT_BENCH_SCHED_WARM_HOPS 2000 /* states opened by tt-sched meanwhile */
#define TT_BENCH_SCHED_ROUND_HOPS 1000 /* about 20 ms: two of tt-sched's drains */
#define TT_BENCH_SCHED_ROUNDS 25
#define TT_BENCH_SCHED_WORK_NS 9000   /* each thread's work per hop */

struct tt_bench_pipes {
	int to_echo[2], back[2];
	long work; /* loop count of tt_bench_sched_work per hop */
};

static void tt_bench_sched_work(long n)
{
	uint64_t x = 1;
	for (long i = 0; i < n; i++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		__asm__ volatile("" : "+r"(x));
	}
}

/* The loop count for TT_BENCH_SCHED_WORK_NS here: the fastest of a few timings. */
static long tt_bench_sched_calibrate(void)
{
	const long n = 1000000;
	int64_t best = INT64_MAX;
	for (int i = 0; i < 5; i++) {
		int64_t t0 = tt_bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		tt_bench_sched_work(n);
		int64_t ns = tt_bench_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		if (ns < best)
			best = ns;
	}
	return (long)((double)n * TT_BENCH_SCHED_WORK_NS / (double)(best > 0 ? best : 1));
}

/* The other side: reads a byte, records, sends it back; a 0 byte ends it. */
static void *tt_bench_sched_echo(void *arg)
{
	struct tt_bench_pipes *p = arg;
	char byte;
	while (read(p->to_echo[0], &byte, 1) == 1 && byte) {
		TT_INSTANT("echo");
		tt_bench_sched_work(p->work);
		if (write(p->back[1], &byte, 1) != 1)
			break;
	}
	return NULL;
}

static int tt_bench_sched_hops(struct tt_bench_pipes *p, int hops)
{
	char byte = 1;
	for (int i = 0; i < hops; i++) {
		TT_INSTANT("hop");
		tt_bench_sched_work(p->work);
		if (write(p->to_echo[1], &byte, 1) != 1 || read(p->back[0], &byte, 1) != 1)
			return -1;
	}
	return 0;
}

int tt_bench_sched_child(long work)
{
	struct tt_bench_pipes p = {.work = work};
	pthread_t echo;
	if (pipe(p.to_echo) || pipe(p.back) || pthread_create(&echo, NULL, tt_bench_sched_echo, &p)) {
		perror("ticktrace-bench: " TT_BENCH_SCHED_CHILD);
		return 1;
	}
	static double cpu_ns[TT_BENCH_SCHED_ROUNDS], switches_per_s[TT_BENCH_SCHED_ROUNDS];
	int err = tt_bench_sched_hops(&p, TT_BENCH_SCHED_WARM_HOPS);
	for (int r = 0; !err && r < TT_BENCH_SCHED_ROUNDS; r++) {
		int64_t cpu0 = tt_bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		int64_t wall0 = tt_bench_clock_ns(CLOCK_MONOTONIC);
		err = tt_bench_sched_hops(&p, TT_BENCH_SCHED_ROUND_HOPS);
		int64_t wall = tt_bench_clock_ns(CLOCK_MONOTONIC) - wall0;
		cpu_ns[r] = (double)(tt_bench_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0) /
			    TT_BENCH_SCHED_ROUND_HOPS;
		/* Each hop, both threads wait for the other's byte: two switches. */
		switches_per_s[r] = 2.0 * TT_BENCH_SCHED_ROUND_HOPS * 1e9 / (double)(wall ? wall : 1);
	}
	char end = 0;
	if (write(p.to_echo[1], &end, 1) != 1)
		err = -1;
	pthread_join(echo, NULL);
	if (err) {
		perror("ticktrace-bench: " TT_BENCH_SCHED_CHILD);
		return 1;
	}
	printf("%.3f %.0f\n", tt_bench_median(cpu_ns, TT_BENCH_SCHED_ROUNDS),
	       tt_bench_median(switches_per_s, TT_BENCH_SCHED_ROUNDS));
	return 0;
}

static int tt_bench_sched_run(const char *env, long work, double *cpu_ns, double *switches_per_s)
{
	char args[64];
	double figures[2];
	snprintf(args, sizeof args, TT_BENCH_SCHED_CHILD " %ld", work);
	if (tt_bench_child(env, args, 2, figures))
		return -1;
	*cpu_ns = figures[0];
	*switches_per_s = figures[1];
	return 0;
}

int tt_bench_sched_overhead(int repeats, struct tt_bench_sched *out)
{
	double *on = calloc((size_t)repeats, sizeof(double)), *off = calloc((size_t)repeats, sizeof(double));
	double *rate = calloc((size_t)repeats, sizeof(double)), unused;
	int err = !on || !off || !rate ? -1 : 0;
	long work = tt_bench_sched_calibrate();
	for (int r = 0; !err && r < repeats; r++) {
		/* Alternate which goes first, so that drift favours neither. */
		const char *first = r % 2 ? "TICKTRACE_SCHED=0" : "TICKTRACE_SCHED=1";
		const char *second = r % 2 ? "TICKTRACE_SCHED=1" : "TICKTRACE_SCHED=0";
		err = tt_bench_sched_run(first, work, r % 2 ? &off[r] : &on[r], r % 2 ? &unused : &rate[r]);
		if (!err)
			err = tt_bench_sched_run(second, work, r % 2 ? &on[r] : &off[r], r % 2 ? &rate[r] : &unused);
	}
	if (!err) {
		out->on_ns = tt_bench_median(on, repeats);
		out->off_ns = tt_bench_median(off, repeats);
		out->pct = (out->on_ns / out->off_ns - 1) * 100;
		out->switches_per_s = tt_bench_median(rate, repeats);
	}
	free(on);
	free(off);
	free(rate);
	return err;
}
