#include "sample_overhead.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "median.h"

#ifdef _WIN32
/* (Windows' process CPU time, GetProcessTimes under winpthread's clock, moves in steps
 * of the system's tick, 10 to 16 ms: at 50 ms a run it read 0 or 16.7 % under Wine.
 * Runs of a second keep a step under 1.6 %; fewer turns keep the time spent.) */
enum { TURNS = 7, WORDS = 32 * 1024, TARGET_RUN_NS = 1000000000 };
#else
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { TURNS = 21, WORDS = 32 * 1024, TARGET_RUN_NS = 50000000 };
#endif

/* The runs of a turn: the loop alone, self-profiled, and (Linux, perf) under the
 * kernel's sampling alone. */
enum kind { UNPROFILED, PROFILED, KERNEL_FLOOR, KINDS };

/* A loop that reads and writes 256 KiB: the interrupts and the drain thread would
 * show as lost cache lines too, not only as stolen cycles. */
TT_PROFILED(overhead) static uint64_t churn(uint64_t *words, unsigned rounds)
{
	uint64_t x = 1;
	for (unsigned r = 0; r < rounds; r++)
		for (size_t i = 0; i < WORDS; i++) {
			x = x * 6364136223846793005u + words[i];
			words[i] = x >> 7;
		}
	return x;
}

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The kernel's part alone (sample_kernel_floor_pct): the event ticktrace's perf
 * mechanism opens (src/sampler/perf.c: this thread's task clock sampled at the
 * profile's interval, the user-mode instruction pointer into a ring of 32 pages that
 * wakes its reader at a quarter full), enabled around the run and its ring emptied
 * after it by the benchmark itself: no ticktrace code between the samples. */
struct kernel_floor {
	int fd;                /* -1: not measured (another mechanism, or refused) */
	void *map;
	size_t map_size;
	uint64_t samples;      /* records moved out of the ring */
};

#ifdef _WIN32
static void floor_open(struct kernel_floor *f, uint64_t interval)
{
	(void)interval;
	*f = (struct kernel_floor){.fd = -1};
}

static void floor_close(struct kernel_floor *f)
{
	(void)f;
}

static void floor_start(struct kernel_floor *f)
{
	(void)f;
}

static void floor_stop(struct kernel_floor *f)
{
	(void)f;
}
#else
enum { FLOOR_DATA_PAGES = 32 };

static void floor_open(struct kernel_floor *f, uint64_t interval)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	*f = (struct kernel_floor){.fd = -1, .map_size = (1 + FLOOR_DATA_PAGES) * page};
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof a,
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.sample_period = interval,
		.sample_type = PERF_SAMPLE_IP,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.watermark = 1,
		.wakeup_watermark = (uint32_t)(FLOOR_DATA_PAGES * page / 4),
	};
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return;
	void *map = mmap(NULL, f->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		close(fd);
		return;
	}
	f->fd = fd;
	f->map = map;
}

static void floor_close(struct kernel_floor *f)
{
	if (f->fd < 0)
		return;
	munmap(f->map, f->map_size);
	close(f->fd);
}

static void floor_start(struct kernel_floor *f)
{
	ioctl(f->fd, PERF_EVENT_IOC_ENABLE, 0);
}

/* Disables the event, then counts the samples in the ring and frees them, as
 * ticktrace's stop does with its own. */
static void floor_stop(struct kernel_floor *f)
{
	ioctl(f->fd, PERF_EVENT_IOC_DISABLE, 0);
	struct perf_event_mmap_page *meta = f->map;
	const unsigned char *data = (const unsigned char *)f->map + meta->data_offset;
	uint64_t mask = meta->data_size - 1;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE), tail = meta->data_tail;
	while (tail < head) {
		struct perf_event_header h;
		memcpy(&h, data + (tail & mask), sizeof h);
		if (h.size < sizeof h)
			break;
		f->samples += h.type == PERF_RECORD_SAMPLE;
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}
#endif

/* Keeps churn's result live. */
static volatile uint64_t sink;

/* One run of the loop, and what profiles it (started and stopped around it, inside
 * the time measured): the process's CPU time in *ns. */
static int timed_run(uint64_t *words, unsigned rounds, enum kind kind, struct tt_profile *p,
		     struct kernel_floor *f, uint64_t *ns)
{
	uint64_t t0 = process_cpu_ns();
	int rc = kind == PROFILED ? tt_profile_start(p) : 0;
	if (rc != 0)
		return rc;
	if (kind == KERNEL_FLOOR)
		floor_start(f);
	sink = churn(words, rounds);
	if (kind == PROFILED)
		rc = tt_profile_stop(p);
	if (kind == KERNEL_FLOOR)
		floor_stop(f);
	*ns = process_cpu_ns() - t0;
	return rc;
}

int tt_bench_sample_overhead(struct tt_bench_overhead *out)
{
	static uint64_t words[WORDS];
	uint64_t ns[KINDS];
	double base[TURNS], prof[TURNS], bare[TURNS], ratio[TURNS], floor_ratio[TURNS], above[TURNS];
	for (size_t i = 0; i < WORDS; i++)
		words[i] = i;

	/* Rounds for about TARGET_RUN_NS per run: a run is then 50 samples long (Windows:
	 * 1,000). */
	unsigned rounds = 1;
	timed_run(words, rounds, UNPROFILED, NULL, NULL, &ns[0]);
	while (ns[0] < TARGET_RUN_NS / 4) {
		rounds *= 2;
		timed_run(words, rounds, UNPROFILED, NULL, NULL, &ns[0]);
	}
	rounds = (unsigned)((uint64_t)rounds * TARGET_RUN_NS / (ns[0] ? ns[0] : 1)) + 1;

	struct tt_profile_config cfg = {0};
	TT_PROFILE_SECTION(&cfg, overhead);
	struct tt_profile *p;
	int rc = tt_profile_create(&p, &cfg);
	if (rc != 0)
		return rc;
	struct tt_profile_stats st;
	tt_profile_read(p, NULL, 0, &st);
	struct kernel_floor f = {.fd = -1};
	if (st.mechanism == TT_PROFILE_PERF)
		floor_open(&f, st.interval);
	int kinds = f.fd >= 0 ? KINDS : KERNEL_FLOOR;
	for (unsigned i = 0; rc == 0 && i < TURNS; i++) {
		/* Each kind first in turn, so that drift favours none. */
		for (int k = 0; rc == 0 && k < kinds; k++) {
			enum kind kind = (enum kind)((i + (unsigned)k) % (unsigned)kinds);
			rc = timed_run(words, rounds, kind, p, &f, &ns[kind]);
		}
		base[i] = (double)ns[UNPROFILED];
		prof[i] = (double)ns[PROFILED];
		bare[i] = (double)ns[KERNEL_FLOOR];
		ratio[i] = prof[i] / base[i];
		floor_ratio[i] = bare[i] / base[i];
		above[i] = (prof[i] - bare[i]) / base[i];
	}
	tt_profile_read(p, NULL, 0, &st);
	tt_profile_close(p);
	floor_close(&f);
	if (rc != 0)
		return rc;
	double pct = (tt_bench_median(ratio, TURNS) - 1) * 100, lo, hi;
	tt_bench_median_bounds(ratio, TURNS, &lo, &hi);
	uint64_t samples = st.samples + st.outside + st.lost;
	double baseline_ns = tt_bench_median(base, TURNS), profiled_ns = tt_bench_median(prof, TURNS);
	*out = (struct tt_bench_overhead){
		.pct = pct,
		.pct_lo = (lo - 1) * 100,
		.pct_hi = (hi - 1) * 100,
		.floor_pct = f.fd >= 0 ? (tt_bench_median(floor_ratio, TURNS) - 1) * 100 : NAN,
		.above_floor_pct = f.fd >= 0 ? tt_bench_median(above, TURNS) * 100 : NAN,
		.baseline_ns = (uint64_t)baseline_ns,
		.profiled_ns = (uint64_t)profiled_ns,
		.floor_ns = f.fd >= 0 ? (uint64_t)tt_bench_median(bare, TURNS) : 0,
		.turns = TURNS,
		.samples = samples,
		.floor_samples = f.samples,
		.sample_cost_us = samples ? (profiled_ns - baseline_ns) / ((double)samples / TURNS) / 1000 : NAN,
		.mechanism = st.mechanism,
	};
	return 0;
}
