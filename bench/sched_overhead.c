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

#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
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

#define TT_BENCH_SCHED_DRAIN_NS 10000000 /* as ticktrace's tt-sched drains */
#define TT_BENCH_SCHED_DATA_PAGES 8       /* as ticktrace's ring (base/switches.c) */

/* sched_kernel_floor_pct: a thread's own switch records, as ticktrace asks for them
 * (base/switches.c), with no ticktrace. */
struct tt_bench_ring {
	_Atomic(void *) map;
	size_t map_size;
	uint64_t records; /* moved out by the drain */
};

struct tt_bench_pipes {
	int to_echo[2], back[2];
	long work; /* loop count of tt_bench_sched_work per hop */
	int own_events;
	struct tt_bench_ring rings[2]; /* the hopping thread's, the echo's */
	atomic_int done;
};

/* The calling thread's switch records into `ring`: 0, or -1 (said). */
static int tt_bench_ring_open(struct tt_bench_ring *ring)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof attr,
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
		.context_switch = 1,
		.exclude_kernel = 1,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		perror("ticktrace-bench: perf_event_open");
		return -1;
	}
	ring->map_size = (1 + TT_BENCH_SCHED_DATA_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
	void *map = mmap(NULL, ring->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		perror("ticktrace-bench: mmap of a perf ring");
		return -1;
	}
	atomic_store(&ring->map, map);
	return 0;
}

/* Moves every record out of the ring, as ticktrace's drain copies them into a store. */
static void tt_bench_ring_drain(struct tt_bench_ring *ring)
{
	struct perf_event_mmap_page *meta = atomic_load(&ring->map);
	if (!meta)
		return;
	const unsigned char *data = (const unsigned char *)meta + meta->data_offset;
	uint64_t size = meta->data_size;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE), tail = meta->data_tail;
	static unsigned char copy[64];
	while (tail < head) {
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof h; i++)
			((unsigned char *)&h)[i] = data[(tail + i) & (size - 1)];
		if (h.size < sizeof h)
			break;
		for (size_t i = 0; i < h.size && i < sizeof copy; i++)
			copy[i] = data[(tail + i) & (size - 1)];
		ring->records++;
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

static void *tt_bench_sched_drain(void *arg)
{
	struct tt_bench_pipes *p = arg;
	while (!atomic_load(&p->done)) {
		tt_bench_ring_drain(&p->rings[0]);
		tt_bench_ring_drain(&p->rings[1]);
		struct timespec period = {0, TT_BENCH_SCHED_DRAIN_NS};
		nanosleep(&period, NULL);
	}
	return NULL;
}

void tt_bench_sched_work(long n)
{
	uint64_t x = 1;
	for (long i = 0; i < n; i++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		__asm__ volatile("" : "+r"(x));
	}
}

/* The loop count for TT_BENCH_SCHED_WORK_NS here: the fastest of a few timings. */
long tt_bench_sched_calibrate(void)
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
	if (p->own_events && tt_bench_ring_open(&p->rings[1]))
		return NULL; /* (the hops fail) */
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

int tt_bench_sched_child(long work, int own_events)
{
	static struct tt_bench_pipes p;
	p.work = work;
	p.own_events = own_events;
	pthread_t echo, drain;
	if (own_events && (tt_bench_ring_open(&p.rings[0]) ||
			   pthread_create(&drain, NULL, tt_bench_sched_drain, &p)))
		return 1;
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
	if (own_events) {
		atomic_store(&p.done, 1);
		pthread_join(drain, NULL);
		/* (the kernel wrote them: the figure is theirs) */
		if (p.rings[0].records + p.rings[1].records < TT_BENCH_SCHED_ROUND_HOPS) {
			fprintf(stderr, "ticktrace-bench: the kernel wrote %llu switch records\n",
				(unsigned long long)(p.rings[0].records + p.rings[1].records));
			err = -1;
		}
	}
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
	snprintf(args, sizeof args, TT_BENCH_SCHED_CHILD " %ld %d", work, strstr(env, "OWN_EVENTS") != NULL);
	if (tt_bench_child(env, args, 2, figures))
		return -1;
	*cpu_ns = figures[0];
	*switches_per_s = figures[1];
	return 0;
}

/* The children of each kind, `repeats` times, in turns (each turn begins with the
 * next kind, so that drift favours none). A loaded machine moves every child's figure
 * by more than the difference sought, and moves it for a while: each turn's four
 * children are compared with one another (what states add over what the kernel's
 * records alone add, in ns a hop, over the hop without states), and the figures are
 * the medians of the turns'. */
#define TT_BENCH_SCHED_KINDS 4
enum { TT_BENCH_SCHED_ON, TT_BENCH_SCHED_OFF, TT_BENCH_SCHED_OWN, TT_BENCH_SCHED_NONE };
static const char *const tt_bench_sched_envs[TT_BENCH_SCHED_KINDS] = {
	[TT_BENCH_SCHED_ON] = "TICKTRACE_SCHED=1",
	[TT_BENCH_SCHED_OFF] = "TICKTRACE_SCHED=0",
	/* (read by tt_bench_sched_run alone: the child opens its own events) */
	[TT_BENCH_SCHED_OWN] = "TICKTRACE=0 OWN_EVENTS=1",
	[TT_BENCH_SCHED_NONE] = "TICKTRACE=0",
};

int tt_bench_sched_overhead(int repeats, struct tt_bench_sched *out)
{
	double *ns[TT_BENCH_SCHED_KINDS], *figures[3], *rate = calloc((size_t)repeats, sizeof(double)), unused;
	int err = rate ? 0 : -1;
	for (int k = 0; k < TT_BENCH_SCHED_KINDS; k++)
		if (!(ns[k] = calloc((size_t)repeats, sizeof(double))))
			err = -1;
	for (int f = 0; f < 3; f++)
		if (!(figures[f] = calloc((size_t)repeats, sizeof(double))))
			err = -1;
	long work = tt_bench_sched_calibrate();
	for (int r = 0; !err && r < repeats; r++) {
		for (int i = 0; !err && i < TT_BENCH_SCHED_KINDS; i++) {
			int k = (r + i) % TT_BENCH_SCHED_KINDS;
			err = tt_bench_sched_run(tt_bench_sched_envs[k], work, &ns[k][r],
						 k == TT_BENCH_SCHED_ON ? &rate[r] : &unused);
		}
		double on = ns[TT_BENCH_SCHED_ON][r], off = ns[TT_BENCH_SCHED_OFF][r];
		double own = ns[TT_BENCH_SCHED_OWN][r], none = ns[TT_BENCH_SCHED_NONE][r];
		figures[0][r] = (on / off - 1) * 100;
		figures[1][r] = (own / none - 1) * 100;
		figures[2][r] = ((on - off) - (own - none)) / off * 100;
	}
	if (!err) {
		out->on_ns = tt_bench_median(ns[TT_BENCH_SCHED_ON], repeats);
		out->off_ns = tt_bench_median(ns[TT_BENCH_SCHED_OFF], repeats);
		out->floor_on_ns = tt_bench_median(ns[TT_BENCH_SCHED_OWN], repeats);
		out->floor_off_ns = tt_bench_median(ns[TT_BENCH_SCHED_NONE], repeats);
		out->pct = tt_bench_median(figures[0], repeats);
		out->floor_pct = tt_bench_median(figures[1], repeats);
		out->above_floor_pct = tt_bench_median(figures[2], repeats);
		tt_bench_median_bounds(figures[2], repeats, &out->above_floor_lo, &out->above_floor_hi);
		out->switches_per_s = tt_bench_median(rate, repeats);
	}
	for (int k = 0; k < TT_BENCH_SCHED_KINDS; k++)
		free(ns[k]);
	for (int f = 0; f < 3; f++)
		free(figures[f]);
	free(rate);
	return err;
}

/* ---- thread_start_us ---- */

#define TT_BENCH_THREAD_STARTS 301

static void *tt_bench_first_event(void *arg)
{
	TT_INSTANT("first");
	*(int64_t *)arg = tt_bench_now_ns();
	return NULL;
}

int tt_bench_thread_start_child(void)
{
	static double us[TT_BENCH_THREAD_STARTS];
	for (int i = 0; i < TT_BENCH_THREAD_STARTS; i++) {
		pthread_t thread;
		int64_t t0 = tt_bench_now_ns(), first;
		if (pthread_create(&thread, NULL, tt_bench_first_event, &first) || pthread_join(thread, NULL)) {
			perror("ticktrace-bench: " TT_BENCH_THREAD_START_CHILD);
			return 1;
		}
		us[i] = (double)(first - t0) / 1000.0;
	}
	printf("%.3f\n", tt_bench_median(us, TT_BENCH_THREAD_STARTS));
	return 0;
}

int tt_bench_thread_start(int repeats, struct tt_bench_thread_start *out)
{
	double *on = calloc((size_t)repeats, sizeof(double)), *off = calloc((size_t)repeats, sizeof(double));
	int err = !on || !off ? -1 : 0;
	for (int r = 0; !err && r < repeats; r++) {
		/* Alternate which goes first, so that drift favours neither. */
		err = tt_bench_child(r % 2 ? "TICKTRACE=0" : "", TT_BENCH_THREAD_START_CHILD, 1, r % 2 ? &off[r] : &on[r]);
		if (!err)
			err = tt_bench_child(r % 2 ? "" : "TICKTRACE=0", TT_BENCH_THREAD_START_CHILD, 1,
					     r % 2 ? &on[r] : &off[r]);
	}
	if (!err) {
		out->on_us = tt_bench_median(on, repeats);
		out->off_us = tt_bench_median(off, repeats);
		out->us = out->on_us - out->off_us;
	}
	free(on);
	free(off);
	return err;
}
