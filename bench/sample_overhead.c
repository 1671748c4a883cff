#include "sample_overhead.h"

#include <stdlib.h>
#include <time.h>

#ifdef _WIN32
/* (Windows' process CPU time, GetProcessTimes under winpthread's clock, moves in steps
 * of the system's tick, 10 to 16 ms: at 50 ms a run it read 0 or 16.7 % under Wine.
 * Runs of a second keep a step under 1.6 %; fewer pairs keep the time spent.) */
enum { PAIRS = 7, WORDS = 32 * 1024, TARGET_RUN_NS = 1000000000 };
#else
enum { PAIRS = 21, WORDS = 32 * 1024, TARGET_RUN_NS = 50000000 };
#endif

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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Keeps churn's result live. */
static volatile uint64_t sink;

/* One run of the loop, profiled (p started and stopped around it) or not. */
static int timed_run(uint64_t *words, unsigned rounds, struct tt_profile *p, uint64_t *ns)
{
	uint64_t t0 = process_cpu_ns();
	int rc = p ? tt_profile_start(p) : 0;
	if (rc != 0)
		return rc;
	sink = churn(words, rounds);
	rc = p ? tt_profile_stop(p) : 0;
	*ns = process_cpu_ns() - t0;
	return rc;
}

int tt_bench_sample_overhead(struct tt_bench_overhead *out)
{
	static uint64_t words[WORDS];
	uint64_t base[PAIRS], prof[PAIRS], ns;
	double ratio[PAIRS];
	for (size_t i = 0; i < WORDS; i++)
		words[i] = i;

	/* Rounds for about TARGET_RUN_NS per run: a run is then 50 samples long (Windows:
	 * 1,000). */
	unsigned rounds = 1;
	timed_run(words, rounds, NULL, &ns);
	while (ns < TARGET_RUN_NS / 4) {
		rounds *= 2;
		timed_run(words, rounds, NULL, &ns);
	}
	rounds = (unsigned)((uint64_t)rounds * TARGET_RUN_NS / (ns ? ns : 1)) + 1;

	struct tt_profile_config cfg = {0};
	TT_PROFILE_SECTION(&cfg, overhead);
	struct tt_profile *p;
	int rc = tt_profile_create(&p, &cfg);
	if (rc != 0)
		return rc;
	for (unsigned i = 0; rc == 0 && i < PAIRS; i++) {
		/* Alternate which goes first, so that drift favours neither. */
		struct tt_profile *first = (i & 1) ? p : NULL;
		uint64_t t_first, t_second;
		rc = timed_run(words, rounds, first, &t_first);
		if (rc == 0)
			rc = timed_run(words, rounds, first ? NULL : p, &t_second);
		base[i] = first ? t_second : t_first;
		prof[i] = first ? t_first : t_second;
		ratio[i] = (double)prof[i] / (double)base[i];
	}
	struct tt_profile_stats st;
	tt_profile_read(p, NULL, 0, &st);
	tt_profile_close(p);
	if (rc != 0)
		return rc;
	qsort(base, PAIRS, sizeof(base[0]), cmp_u64);
	qsort(prof, PAIRS, sizeof(prof[0]), cmp_u64);
	qsort(ratio, PAIRS, sizeof(ratio[0]), cmp_double);
	*out = (struct tt_bench_overhead){
		.pct = (ratio[PAIRS / 2] - 1) * 100,
		.baseline_ns = base[PAIRS / 2],
		.profiled_ns = prof[PAIRS / 2],
		.pairs = PAIRS,
		.samples = st.samples + st.outside + st.lost,
		.mechanism = st.mechanism,
	};
	return 0;
}
