/* ticktrace-bench: what an event costs, against a bare RDTSC measured in the same
 * run. Every figure is the median over --repeats runs; every traced loop runs on a
 * new thread, so it records into a buffer of its own.
 *
 *   ticktrace-bench [--repeats N] [--json FILE] [--hot | --schedstat | --sched | --snapshot]
 *
 * Without --hot it runs bench/real_program.sh too (zero_markup_cpu_ratio, zero_markup_start_ms). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "child.h"
#include "cyg_overhead.h"
#include "detour_overhead.h"
#include "file_bytes.h"
#include "median.h"
#include "sample_overhead.h"
#include "sched_overhead.h"
#include "schedstat_overhead.h"
#include "snapshot_bench.h"
#include "stream_bench.h"
#include "ticktrace.h"
#include "ticktrace/format.h"
#include "timing.h"

#define TT_BENCH_BUFFER "16777216"     /* events per thread: room for all of the above */

/* The parts of the benchmark that can fail (a child under load, a file, a tool): where
 * one fails, the rest are measured all the same; its keys are null in the JSON, whose
 * "failed" says why for each, and the exit status is 1. */
enum tt_bench_part {
	TT_BENCH_IN_PROCESS, /* measured here: none fails */
	TT_BENCH_CYG, TT_BENCH_DETOUR, TT_BENCH_DROPPED, TT_BENCH_NO_MEMORY, TT_BENCH_OFF,
	TT_BENCH_CYG_OFF, TT_BENCH_FILTERED, TT_BENCH_BYTES, TT_BENCH_THREAD_START,
	TT_BENCH_SAMPLE, TT_BENCH_SCHED, TT_BENCH_SCHEDSTAT, TT_BENCH_SNAPSHOT, TT_BENCH_STREAM,
	TT_BENCH_CONVERT, TT_BENCH_REAL, TT_BENCH_PARTS
};
static char tt_bench_failed[TT_BENCH_PARTS][512]; /* why; "" where it did not fail */

/* `part` ran: where it `failed`, why is what it said last (tt_bench_why). */
static void tt_bench_part_ran(enum tt_bench_part part, int failed)
{
	if (failed && !tt_bench_failed[part][0])
		snprintf(tt_bench_failed[part], sizeof tt_bench_failed[part], "%s",
			 tt_bench_why()[0] ? tt_bench_why() : "failed (said above)");
	tt_bench_why_clear();
}

/* ---- the loops: each returns nanoseconds per event ---- */

/* floor_ns: the least a recorder of this design can cost on this host, the issue's
 * "minimal recorder": an inline RDTSC and one 16-byte store into a thread-local
 * buffer, bounds-checked, with no call, lookup or reservation. */
static __thread struct tt_bench_floor_buffer {
	uint64_t *cursor, *end;
} tt_bench_floor_buffer;

static double tt_bench_floor(void)
{
	static uint64_t records[2 * 2 * TT_BENCH_PAIRS];
	struct tt_bench_floor_buffer *b = &tt_bench_floor_buffer;
	b->cursor = records;
	b->end = records + sizeof records / sizeof records[0];
	int64_t t0 = tt_bench_now_ns();
	for (int i = 0; i < 2 * TT_BENCH_PAIRS; i++) {
		uint64_t tsc = __builtin_ia32_rdtsc();
		uint64_t *at = b->cursor;
		if (__builtin_expect(at + 2 > b->end, 0))
			abort();
		at[0] = tsc;
		at[1] = (uint64_t)i;
		b->cursor = at + 2;
		__asm__ volatile("" : : : "memory"); /* one event after the other, as a call */
	}
	return (double)(tt_bench_now_ns() - t0) / (2.0 * TT_BENCH_PAIRS);
}

/* The median nanoseconds per event of begin/end pairs over short rounds, in a process
 * whose set-up (a full buffer, recording off) the parent chose: printed for it. */
#define TT_BENCH_PAIRS_CHILD "--pairs-child"
#define TT_BENCH_PAIRS_ROUNDS 500

static double tt_bench_pairs_rounds(void)
{
	static double round_ns[TT_BENCH_PAIRS_ROUNDS];
	for (int r = 0; r < TT_BENCH_PAIRS_ROUNDS; r++)
		round_ns[r] = tt_bench_pairs(TT_BENCH_PAIRS / 50);
	return tt_bench_median(round_ns, TT_BENCH_PAIRS_ROUNDS);
}

static void *tt_bench_pairs_late(void *ns)
{
	*(double *)ns = tt_bench_pairs_rounds();
	return NULL;
}

/* `late`: also a thread that starts once the first filled the run's memory (it gets no
 * buffer); the slower of the two. */
static int tt_bench_pairs_child(int late)
{
	/* Twice the child's buffer (or its memory): in mode stop, the rest is dropped. */
	tt_bench_pairs(2 * 65536);
	double ns = tt_bench_pairs_rounds(), late_ns = 0;
	pthread_t thread;
	if (late && (pthread_create(&thread, NULL, tt_bench_pairs_late, &late_ns) ||
		     pthread_join(thread, NULL)))
		return 1;
	printf("%.4f\n", ns > late_ns ? ns : late_ns);
	return 0;
}

/* -1 where the child failed (said). */
static double tt_bench_pairs_in_child(const char *env, int late)
{
	double ns;
	return tt_bench_child(env, late ? TT_BENCH_PAIRS_CHILD " late" : TT_BENCH_PAIRS_CHILD, 1, &ns) ? -1 : ns;
}

/* ---- each measurement on a thread of its own ---- */

struct tt_bench_job {
	enum tt_bench_kind kind;
	pthread_barrier_t *start; /* NULL, or a barrier shared with a concurrent job */
	double result;
};

static void *tt_bench_thread(void *arg)
{
	struct tt_bench_job *job = arg;
	if (job->start)
		pthread_barrier_wait(job->start);
	job->result = tt_bench_kind_run(job->kind);
	return NULL;
}

static double tt_bench_on_thread(enum tt_bench_kind kind)
{
	struct tt_bench_job job = {.kind = kind};
	pthread_t thread;
	if (pthread_create(&thread, NULL, tt_bench_thread, &job)) {
		perror("ticktrace-bench: pthread_create");
		exit(1);
	}
	pthread_join(thread, NULL);
	return job.result;
}

/* Two threads recording at once: per event per thread, the mean of the two. */
static double tt_bench_two_threads(void)
{
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, 2);
	struct tt_bench_job jobs[2] = {{TT_BENCH_WARM, &start, 0}, {TT_BENCH_WARM, &start, 0}};
	pthread_t threads[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&threads[i], NULL, tt_bench_thread, &jobs[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	pthread_barrier_destroy(&start);
	return (jobs[0].result + jobs[1].result) / 2;
}

struct tt_bench_bytes {
	double records; /* bytes of records per event */
	double file;    /* bytes of file per event, headers included */
};

/* records -1 where a dump failed (said). */
static struct tt_bench_bytes tt_bench_bytes_per_event(void)
{
	char before[] = "/tmp/ticktrace-bench-XXXXXX", after[sizeof before];
	int fd = mkstemp(before);
	close(fd);
	memcpy(after, before, sizeof before);
	after[sizeof after - 2] = 'Z';
	uint64_t rec0, rec1, file0, file1;
	const int events = 2 * TT_BENCH_PAIRS;
	int err = tt_dump(before);
	tt_bench_on_thread(TT_BENCH_WARM);
	if (err || tt_dump(after) || tt_bench_file_bytes(before, &rec0, &file0) ||
	    tt_bench_file_bytes(after, &rec1, &file1)) {
		tt_bench_say("could not dump to %s", before);
		unlink(before);
		unlink(after);
		return (struct tt_bench_bytes){-1, -1};
	}
	unlink(before);
	unlink(after);
	/* A warm job records its warm-up too. */
	double recorded = events + events / 10.0;
	return (struct tt_bench_bytes){(double)(rec1 - rec0) / recorded, (double)(file1 - file0) / recorded};
}

/* The converter's figures come from ticktrace-convert-bench, run as a child so that
 * its peak memory is its own: one JSON object on its standard output. */
static cJSON *tt_bench_convert(void)
{
	/* Issue 3's figures are for a 50,000,000-event file. Five repeats: on this VM the
	 * kernel's side of writing the same 3.2 GB of JSON took from 1.3 to 9 s of system
	 * time from one run to the next (the formatting, 1.1 s, did not vary), and a
	 * median of five outlasts such a run. */
	FILE *child = popen(TT_BENCH_CONVERT_TOOL " --events 50000000 --repeats 5", "r");
	if (!child)
		return NULL;
	static char text[1 << 16];
	size_t len = fread(text, 1, sizeof text - 1, child);
	text[len] = 0;
	if (pclose(child) != 0)
		return NULL;
	return cJSON_Parse(text);
}

/* zero_markup_cpu_ratio, uftrace_cpu_ratio and zero_markup_start_ms from
 * bench/real_program.sh, run as a child with 5 repeats (its uftrace runs take seconds
 * each): NULL where it cannot run here (exit 77: no deb-src, no uftrace, a sanitizer
 * build; it says why), and *failed set where it failed. */
static cJSON *tt_bench_real_program(int *failed)
{
	FILE *child = popen("bash " TT_BENCH_REAL_PROGRAM " " TT_BENCH_BUILD_ROOT " 5 --json -", "r");
	if (!child) {
		*failed = 1;
		return NULL;
	}
	static char text[1 << 12];
	size_t len = fread(text, 1, sizeof text - 1, child);
	text[len] = 0;
	int status = pclose(child);
	*failed = !(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 77));
	return status == 0 ? cJSON_Parse(text) : NULL;
}

/* A figure of the converter's; NAN where it failed (`object` NULL), or gave none (said:
 * the converter's part failed). */
static double tt_bench_number(const cJSON *object, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
	if (object && !cJSON_IsNumber(item)) {
		tt_bench_say("%s gave no %s", TT_BENCH_CONVERT_TOOL, key);
		tt_bench_part_ran(TT_BENCH_CONVERT, 1);
	}
	return cJSON_IsNumber(item) ? item->valuedouble : NAN;
}

/* A figure of real_program.sh's; NAN (null in the JSON) where it did not run. */
static double tt_bench_real(const cJSON *real, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(real, key);
	return cJSON_IsNumber(item) ? item->valuedouble : NAN;
}

/* A name made at run time (timing.h's TT_BENCH_DYNAMIC_NAME), each run on a new
 * thread: the median per event. */
static void *tt_bench_dynamic_name_thread(void *arg)
{
	*(double *)arg = tt_bench_kind_run(TT_BENCH_DYNAMIC_NAME);
	return NULL;
}

static double tt_bench_dynamic_name(int repeats)
{
	double *ns = calloc((size_t)repeats, sizeof(double));
	for (int r = 0; r < repeats; r++) {
		pthread_t thread;
		if (pthread_create(&thread, NULL, tt_bench_dynamic_name_thread, &ns[r]) == 0)
			pthread_join(thread, NULL);
	}
	double median = tt_bench_median(ns, repeats);
	free(ns);
	return median;
}

/* ---- the report ---- */

struct tt_bench_row {
	const char *key;
	const char *unit;
	double value;
	double ratio_max; /* the target, as a multiple of rdtsc_ns (or of `base`); 0: none */
	const char *what;
	const struct tt_bench_row *base; /* the row the target is a multiple of; NULL: rdtsc_ns */
	double also_max; /* a second target, as a multiple of `also_base`; 0: none */
	const struct tt_bench_row *also_base;
	enum tt_bench_part part; /* what measured it */
};

/* "0.981 <= 1.05 x event_warm_ns yes": the figure's ratio to its base, against the target. */
static int tt_bench_target(char *buf, size_t size, const struct tt_bench_row *row, double max,
			   const struct tt_bench_row *base, double rdtsc)
{
	double of = row->value / (base ? base->value : rdtsc);
	return snprintf(buf, size, "%.3f <= %.2f x %s %s", of, max, base ? base->key : "rdtsc",
			of <= max ? "yes" : "NO");
}

/* The table, and the JSON at `json_path`: 0, or 1 where a part failed. */
static int tt_bench_report(struct tt_bench_row *rows, int n, double rdtsc, const char *json_path)
{
	printf("%-26s %17s %8s %-36s  %s\n", "key", "value", "/rdtsc", "target (met?)", "what");
	int failed = 0;
	for (int i = 0; i < n; i++) {
		const char *why = tt_bench_failed[rows[i].part];
		if (why[0]) {
			printf("%-26s %17s %8s %-36s  %s\n", rows[i].key, "FAILED", "", "", why);
			failed = 1;
			continue;
		}
		char ratio[32] = "", target[160] = "";
		if (strcmp(rows[i].unit, "ns") == 0)
			snprintf(ratio, sizeof ratio, "%.3f", rows[i].value / rdtsc);
		int len = 0;
		if (rows[i].ratio_max > 0)
			len = tt_bench_target(target, sizeof target, &rows[i], rows[i].ratio_max, rows[i].base,
					      rdtsc);
		if (rows[i].also_max > 0 && len > 0)
			len += snprintf(target + len, sizeof target - (size_t)len, "; ");
		if (rows[i].also_max > 0)
			tt_bench_target(target + len, sizeof target - (size_t)len, &rows[i], rows[i].also_max,
					rows[i].also_base, rdtsc);
		printf("%-26s %14.3f %-2s %8s %-36s  %s\n", rows[i].key, rows[i].value, rows[i].unit,
		       ratio, target, rows[i].what);
	}
	if (!json_path)
		return failed;
	cJSON *root = cJSON_CreateObject(), *why = failed ? cJSON_CreateObject() : NULL;
	for (int i = 0; i < n; i++) {
		const char *failure = tt_bench_failed[rows[i].part];
		if (failure[0]) {
			cJSON_AddNullToObject(root, rows[i].key);
			cJSON_AddStringToObject(why, rows[i].key, failure);
		} else {
			cJSON_AddNumberToObject(root, rows[i].key, rows[i].value);
		}
	}
	if (why)
		cJSON_AddItemToObject(root, "failed", why);
	char *text = cJSON_Print(root);
	FILE *f = fopen(json_path, "w");
	if (!f || fprintf(f, "%s\n", text) < 0 || fclose(f)) {
		fprintf(stderr, "ticktrace-bench: cannot write %s: %s\n", json_path, strerror(errno));
		exit(1);
	}
	free(text);
	cJSON_Delete(root);
	return failed;
}


/* schedstat_overhead_pct's and schedstat_tt_sched_pct's rows (their texts in `what`). */
static void tt_bench_schedstat_rows(const struct tt_bench_schedstat *s, char what[2][320], struct tt_bench_row rows[2])
{
	snprintf(what[0], 320,
		 "64 threads recording scopes of 18 us, every tenth a 2 ms sleep: process CPU %.1f ms with "
		 "the threads' counters as the source (TICKTRACE_SCHED=schedstat), %.1f ms without states; "
		 "the median of %d turns' ratios, 95 %% sure within %.2f .. %.2f (target <= 1)",
		 s->on_ms, s->off_ms, s->turns, s->lo, s->hi);
	snprintf(what[1], 320,
		 "tt-sched's own CPU time in those children over the same turn's process CPU without states "
		 "(the part of schedstat_overhead_pct that is tt-sched's): %.2f ms a child, %.2f %% of one CPU "
		 "over its wall time", s->tt_sched_ms, s->tt_sched_wall_pct);
	rows[0] = (struct tt_bench_row){"schedstat_overhead_pct", "%", s->pct, 0, what[0], NULL, 0, NULL, TT_BENCH_SCHEDSTAT};
	rows[1] = (struct tt_bench_row){"schedstat_tt_sched_pct", "%", s->tt_sched_pct, 0, what[1], NULL, 0, NULL,
					TT_BENCH_SCHEDSTAT};
}

/* sched_overhead_pct's, sched_kernel_floor_pct's and sched_above_floor_pct's rows (their
 * texts in `what`). */
static void tt_bench_sched_rows(const struct tt_bench_sched *s, int repeats, char what[3][240],
				struct tt_bench_row rows[3])
{
	snprintf(what[0], 240,
		 "two threads handing on a byte through pipes, %.0f switches/s, an event per hop: CPU per hop "
		 "%.0f ns with thread states, %.0f ns without (target <= 2)",
		 s->switches_per_s, s->on_ns, s->off_ns);
	snprintf(what[1], 240,
		 "the same hops with no ticktrace, each thread opening the same switch records for itself, "
		 "a thread draining them every 10 ms: %.0f ns a hop, %.0f ns without (sched_overhead_pct - "
		 "this = %.2f)", s->floor_on_ns, s->floor_off_ns, s->pct - s->floor_pct);
	snprintf(what[2], 240,
		 "what states add a hop beyond the kernel's records, each turn's four children compared, over "
		 "the hop without states: the median of %d turns, 95 %% sure within %.2f .. %.2f (target <= 1)",
		 repeats, s->above_floor_lo, s->above_floor_hi);
	rows[0] = (struct tt_bench_row){"sched_overhead_pct", "%", s->pct, 0, what[0], NULL, 0, NULL, TT_BENCH_SCHED};
	rows[1] = (struct tt_bench_row){"sched_kernel_floor_pct", "%", s->floor_pct, 0, what[1], NULL, 0, NULL,
					TT_BENCH_SCHED};
	rows[2] = (struct tt_bench_row){"sched_above_floor_pct", "%", s->above_floor_pct, 0, what[2], NULL, 0, NULL,
					TT_BENCH_SCHED};
}

/* sample_overhead_pct's, sample_kernel_floor_pct's and sample_above_floor_pct's rows
 * (their texts in `what`). */
static void tt_bench_sample_rows(const struct tt_bench_overhead *o, char what[3][240],
				 struct tt_bench_row rows[3])
{
	snprintf(what[0], 240,
		 "slowdown of a loop while self-profiled at 1 ms (%s): CPU %.1f ms a run against %.1f, "
		 "%.1f us a sample; the median of %u turns, 95 %% sure within %.2f .. %.2f (target <= 3)",
		 o->mechanism == TT_PROFILE_PERF ? "perf" : "timer", o->profiled_ns / 1e6,
		 o->baseline_ns / 1e6, o->sample_cost_us, o->turns, o->pct_lo, o->pct_hi);
	snprintf(what[1], 240,
		 "the same loop under the kernel's sampling alone: the event ticktrace opens, enabled and "
		 "drained by the benchmark, %.1f ms a run, %llu samples (null: not perf)",
		 o->floor_ns / 1e6, (unsigned long long)o->floor_samples);
	snprintf(what[2], 240,
		 "what ticktrace adds beyond that event, each turn's runs compared, over the unprofiled run: "
		 "the median of the turns");
	rows[0] = (struct tt_bench_row){"sample_overhead_pct", "%", o->pct, 0, what[0], NULL, 0, NULL, TT_BENCH_SAMPLE};
	rows[1] = (struct tt_bench_row){"sample_kernel_floor_pct", "%", o->floor_pct, 0, what[1], NULL, 0, NULL,
					TT_BENCH_SAMPLE};
	rows[2] = (struct tt_bench_row){"sample_above_floor_pct", "%", o->above_floor_pct, 0, what[2], NULL, 0, NULL,
					TT_BENCH_SAMPLE};
}

/* The snapshots' rows (event_during_snapshot_ns against `warm`, event_warm_ns's row;
 * NULL: no target). */
static void tt_bench_snapshot_rows(const struct tt_bench_snapshot *snapshot, const struct tt_bench_row *warm,
				   char what[3][240], struct tt_bench_row rows[3])
{
	snprintf(what[0], 240,
		 "per event while a snapshot of 8 threads is written, each recording about 1.1 M events/s "
		 "(mode ring): %.0f batches of 2,048 within the writing; %.3f ns before its trigger",
		 snapshot->batches, snapshot->quiet_ns);
	snprintf(what[1], 240,
		 "writing one snapshot of those 8 threads, its window %.0f events (%.1f MB), from its file's "
		 "opening to its naming", snapshot->window_events,
		 snapshot->window_events * sizeof(struct tt_record) / 1e6);
	snprintf(what[2], 240,
		 "the process's CPU time with TICKTRACE_SNAPSHOTS on (tt-spikes reading every record, no "
		 "snapshot taken) against off, those 8 threads recording 0.5 s, mode ring: %.1f ms against %.1f",
		 snapshot->on_ms, snapshot->off_ms);
	rows[0] = (struct tt_bench_row){"event_during_snapshot_ns", "ns", snapshot->during_ns, warm ? 1.10 : 0, what[0], warm, 0,
					NULL, TT_BENCH_SNAPSHOT};
	rows[1] = (struct tt_bench_row){"snapshot_ms", "ms", snapshot->snapshot_ms, 0, what[1], NULL, 0, NULL,
					TT_BENCH_SNAPSHOT};
	rows[2] = (struct tt_bench_row){"snapshot_overhead_pct", "%", snapshot->overhead_pct, 0, what[2], NULL, 0,
					NULL, TT_BENCH_SNAPSHOT};
}

/* --snapshot: the snapshots' figures alone (an A/B of a change to them, without the
 * rest's half hour on a loaded machine); event_during_snapshot_ns's target is the full
 * run's, against event_warm_ns measured there. */
static int tt_bench_snapshot_only(int repeats, const char *json_path)
{
	struct tt_bench_snapshot snapshot = {0};
	tt_bench_part_ran(TT_BENCH_SNAPSHOT, tt_bench_snapshot(repeats, &snapshot) != 0);
	char what[3][240];
	struct tt_bench_row rows[3];
	tt_bench_snapshot_rows(&snapshot, NULL, what, rows);
	return tt_bench_report(rows, 3, 0, json_path);
}

int main(int argc, char **argv)
{
	/* Each child this starts is a run of its own, measured alone, not one this run
	 * started (ticktrace(7): TICKTRACE_PROGRAM_PID): its file is where it says. */
	unsetenv("TICKTRACE_PROGRAM_PID");
	/* For tests alone (bench/README.md): the child named fails, as one under load may. */
	const char *fail = getenv("TICKTRACE_BENCH_FAIL");
	if (argc >= 2 && fail && strstr(argv[1], "-child") && strcmp(argv[1], fail) == 0) {
		fprintf(stderr, "ticktrace-bench: %s: failed on purpose (TICKTRACE_BENCH_FAIL)\n", argv[1]);
		return 1;
	}
	if (argc == 2 && strcmp(argv[1], "--stream-child") == 0)
		return tt_bench_stream_child();
	/* The buffer size is read when the library starts, before main: set it and start
	 * again, so that every measured event fits and none is dropped. */
	if (!getenv("TICKTRACE_BUFFER")) {
		setenv("TICKTRACE_BUFFER", TT_BENCH_BUFFER, 1);
		setenv("TICKTRACE_OUT", "/dev/null", 0);
		execv("/proc/self/exe", argv);
		perror("ticktrace-bench: execv");
		return 1;
	}
	if (argc == 2 && strcmp(argv[1], TT_BENCH_CYG_CHILD) == 0)
		return tt_bench_cyg_child();
	if (argc >= 2 && argc <= 3 && strcmp(argv[1], TT_BENCH_PAIRS_CHILD) == 0)
		return tt_bench_pairs_child(argc == 3 && strcmp(argv[2], "late") == 0);
	if (argc == 2 && strcmp(argv[1], TT_BENCH_DETOUR_CHILD) == 0)
		return tt_bench_detour_child();
	if (argc == 4 && strcmp(argv[1], TT_BENCH_SCHED_CHILD) == 0)
		return tt_bench_sched_child(atol(argv[2]), atoi(argv[3]));
	if (argc == 3 && strcmp(argv[1], TT_BENCH_SCHEDSTAT_CHILD) == 0)
		return tt_bench_schedstat_child(atol(argv[2]));
	if (argc == 2 && strcmp(argv[1], TT_BENCH_THREAD_START_CHILD) == 0)
		return tt_bench_thread_start_child();
	if (argc == 2 && strcmp(argv[1], TT_BENCH_SNAPSHOT_CHILD) == 0)
		return tt_bench_snapshot_child();
	if (argc == 2 && strcmp(argv[1], TT_BENCH_SNAPSHOT_COST_CHILD) == 0)
		return tt_bench_snapshot_cost_child();
	int repeats = 11;
	const char *json_path = NULL;
	int hot_only = 0; /* --hot: the hot path's figures only, without stream, converter, sampler */
	int schedstat_only = 0; /* --schedstat: the threads' counters' figures only */
	int sched_only = 0; /* --sched: the switches' figures only (sched_overhead_pct and its floor) */
	int snapshot_only = 0; /* --snapshot: the snapshots' figures only, beside event_warm_ns */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
			repeats = atoi(argv[++i]);
		else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
			json_path = argv[++i];
		else if (strcmp(argv[i], "--hot") == 0)
			hot_only = 1;
		else if (strcmp(argv[i], "--schedstat") == 0)
			schedstat_only = 1;
		else if (strcmp(argv[i], "--sched") == 0)
			sched_only = 1;
		else if (strcmp(argv[i], "--snapshot") == 0)
			snapshot_only = 1;
		else {
			fprintf(stderr, "usage: ticktrace-bench [--repeats N] [--json FILE] [--hot | --schedstat | --sched | "
				"--snapshot]\n");
			return 2;
		}
	}
	if (repeats < 1 || repeats > 1000) {
		fprintf(stderr, "ticktrace-bench: --repeats takes 1 to 1000\n");
		return 2;
	}
	if (sched_only) {
		struct tt_bench_sched sched = {0};
		tt_bench_part_ran(TT_BENCH_SCHED, tt_bench_sched_overhead(repeats, &sched) != 0);
		char what[3][240];
		struct tt_bench_row rows[3];
		tt_bench_sched_rows(&sched, repeats, what, rows);
		return tt_bench_report(rows, 3, 0, json_path);
	}
	if (snapshot_only)
		return tt_bench_snapshot_only(repeats, json_path);
	if (schedstat_only) {
		struct tt_bench_schedstat schedstat = {0};
		tt_bench_part_ran(TT_BENCH_SCHEDSTAT, tt_bench_schedstat_overhead(repeats, &schedstat) != 0);
		char what[2][320];
		struct tt_bench_row rows[2];
		tt_bench_schedstat_rows(&schedstat, what, rows);
		return tt_bench_report(rows, 2, 0, json_path);
	}

	double *rdtsc = calloc((size_t)repeats, sizeof(double));
	double *warm = calloc((size_t)repeats, sizeof(double));
	double *cold = calloc((size_t)repeats, sizeof(double));
	double *first = calloc((size_t)repeats, sizeof(double));
	double *endbegin = calloc((size_t)repeats, sizeof(double));
	double *two = calloc((size_t)repeats, sizeof(double));
	double *cyg = calloc((size_t)repeats, sizeof(double));
	double *cyg_rdtsc = calloc((size_t)repeats, sizeof(double));
	double *floor = calloc((size_t)repeats, sizeof(double));
	double *paused = calloc((size_t)repeats, sizeof(double));
	double *detour = calloc((size_t)repeats, sizeof(double));
	double *patchable = calloc((size_t)repeats, sizeof(double));
	double *detour_rdtsc = calloc((size_t)repeats, sizeof(double));
	/* Interleaved, so that a noisy moment on a shared machine touches every figure. */
	for (int r = 0; r < repeats; r++) {
		rdtsc[r] = tt_bench_rdtsc(2 * TT_BENCH_PAIRS);
		floor[r] = tt_bench_floor();
		warm[r] = tt_bench_on_thread(TT_BENCH_WARM);
		paused[r] = tt_bench_on_thread(TT_BENCH_PAUSED);
		cold[r] = tt_bench_on_thread(TT_BENCH_COLD);
		first[r] = tt_bench_on_thread(TT_BENCH_FIRST);
		endbegin[r] = tt_bench_on_thread(TT_BENCH_ENDBEGIN);
		two[r] = tt_bench_two_threads();
		/* (a part that failed is not run again) */
		if (!tt_bench_failed[TT_BENCH_CYG][0]) {
			cyg[r] = tt_bench_cyg_overhead("", &cyg_rdtsc[r]);
			tt_bench_part_ran(TT_BENCH_CYG, cyg[r] < 0);
		}
		if (!tt_bench_failed[TT_BENCH_DETOUR][0])
			tt_bench_part_ran(TT_BENCH_DETOUR,
					  tt_bench_detour_overhead(&detour[r], &patchable[r], &detour_rdtsc[r]) < 0);
	}
	/* A full buffer, and recording off for the whole process, in processes of their own:
	 * 64 KiB chunks of 4,095 records, so 65,536 records take 17 chunks. */
	double dropped_ns = tt_bench_pairs_in_child("TICKTRACE_BUFFER=65536", 0);
	tt_bench_part_ran(TT_BENCH_DROPPED, dropped_ns < 0);
	/* The run's memory (1 MiB, 16 chunks) used up by the first thread. */
	double no_memory_ns = tt_bench_pairs_in_child("TICKTRACE_MEMORY=1M", 1);
	tt_bench_part_ran(TT_BENCH_NO_MEMORY, no_memory_ns < 0);
	double off_process_ns = tt_bench_pairs_in_child("TICKTRACE=0 TICKTRACE_BUFFER=65536", 0);
	tt_bench_part_ran(TT_BENCH_OFF, off_process_ns < 0);
	double unused;
	double cyg_off_ns = tt_bench_cyg_overhead("TICKTRACE=0", &unused);
	tt_bench_part_ran(TT_BENCH_CYG_OFF, cyg_off_ns < 0);
	/* every call of the benchmark's callee is shorter than that: erased at its exit */
	double filtered_ns = tt_bench_cyg_overhead("TICKTRACE_MIN_DUR=1us", &unused);
	tt_bench_part_ran(TT_BENCH_FILTERED, filtered_ns < 0);
	struct tt_bench_bytes bytes = tt_bench_bytes_per_event();
	tt_bench_part_ran(TT_BENCH_BYTES, bytes.records < 0);
	double rdtsc_ns = tt_bench_median(rdtsc, repeats);
	struct tt_bench_overhead overhead = {0};
	struct tt_bench_sched sched = {0};
	struct tt_bench_thread_start thread_start = {0};
	struct tt_bench_schedstat schedstat = {0};
	struct tt_bench_snapshot snapshot = {0};
	double stream_ns = 0;
	uint64_t stream_dropped = 0;
	cJSON *convert = NULL, *real = NULL;
	/* (a few seconds: in --hot too, beside first_event_us) */
	tt_bench_part_ran(TT_BENCH_THREAD_START, tt_bench_thread_start(repeats, &thread_start) != 0);
	if (!hot_only) {
		int err = tt_bench_sample_overhead(&overhead);
		if (err)
			tt_bench_say("self-profiler: %s", strerror(-err));
		tt_bench_part_ran(TT_BENCH_SAMPLE, err != 0);
		tt_bench_part_ran(TT_BENCH_SCHED, tt_bench_sched_overhead(repeats, &sched) != 0);
		tt_bench_part_ran(TT_BENCH_SCHEDSTAT, tt_bench_schedstat_overhead(repeats, &schedstat) != 0);
		tt_bench_part_ran(TT_BENCH_SNAPSHOT, tt_bench_snapshot(repeats, &snapshot) != 0);
		tt_bench_part_ran(TT_BENCH_STREAM, tt_bench_stream(repeats, &stream_ns, &stream_dropped) != 0);
		convert = tt_bench_convert();
		if (!convert)
			tt_bench_say("%s failed", TT_BENCH_CONVERT_TOOL);
		tt_bench_part_ran(TT_BENCH_CONVERT, !convert);
		int failed;
		real = tt_bench_real_program(&failed);
		if (failed)
			tt_bench_say("%s failed", TT_BENCH_REAL_PROGRAM);
		tt_bench_part_ran(TT_BENCH_REAL, failed);
	}
	double cyg_ns = tt_bench_failed[TT_BENCH_CYG][0] ? NAN : tt_bench_median(cyg, repeats);
	char cyg_what[160];
	snprintf(cyg_what, sizeof cyg_what,
		 "what -finstrument-functions adds to a call (two events), 10,000,000 calls; "
		 "%.2f x a bare RDTSC timed alike", cyg_ns / tt_bench_median(cyg_rdtsc, repeats));
	double paused_ns = tt_bench_median(paused, repeats);
	char off_what[160];
	snprintf(off_what, sizeof off_what,
		 "recording off, per event: the slower of tt_pause (%.3f ns) and TICKTRACE=0 (%.3f ns)",
		 paused_ns, off_process_ns);
	double detour_ns = tt_bench_median(detour, repeats), patchable_ns = tt_bench_median(patchable, repeats);
	char detour_what[2][160];
	for (int i = 0; i < 2; i++)
		snprintf(detour_what[i], sizeof detour_what[i],
			 "a call of a function patched by ticktrace record -f %s (two events); %.2f x "
			 "cyg_call_overhead_ns", i ? "at its patchable NOPs" : "by moving its first instructions",
			 (i ? patchable_ns : detour_ns) / cyg_ns);
	char start_what[200];
	snprintf(start_what, sizeof start_what,
		 "pthread_create until the new thread's first event returns: %.1f us, %.1f us with TICKTRACE=0 "
		 "(its switches asked for as it starts)", thread_start.on_us, thread_start.off_us);
	enum { RDTSC, FLOOR, WARM };
	struct tt_bench_row rows[] = {
		[RDTSC] = {"rdtsc_ns", "ns", rdtsc_ns, 0, "a bare RDTSC, per read", NULL, 0, NULL, TT_BENCH_IN_PROCESS},
		[FLOOR] = {"floor_ns", "ns", tt_bench_median(floor, repeats), 0,
			   "inline RDTSC + one bounded 16-byte store into a thread-local buffer, per event", NULL, 0, NULL, TT_BENCH_IN_PROCESS},
		[WARM] = {"event_warm_ns", "ns", tt_bench_median(warm, repeats), 1.20,
			  "begin/end pairs, per event", NULL, 1.15, &rows[FLOOR], TT_BENCH_IN_PROCESS},
		{"event_cold_ns", "ns", tt_bench_median(cold, repeats), 1.05,
		 "first 4,194,304 events of a new thread, per event", &rows[WARM], 0, NULL, TT_BENCH_IN_PROCESS},
		{"first_event_us", "us", tt_bench_median(first, repeats), 0, "first event of a new thread (target <= 20 us)", NULL, 0, NULL, TT_BENCH_IN_PROCESS},
		{"thread_start_us", "us", thread_start.us, 0, start_what, NULL, 0, NULL, TT_BENCH_THREAD_START},
		{"event_dynamic_name_ns", "ns", tt_bench_dynamic_name(repeats), 0,
		 "TT_INSTANT_DYN with 16 names in turn: the name's lookup and the event", NULL, 0, NULL, TT_BENCH_IN_PROCESS},
		{"endbegin_ns", "ns", tt_bench_median(endbegin, repeats), 0.65,
		 "TT_ENDBEGIN, per event (an end and a begin)", NULL, 0, NULL, TT_BENCH_IN_PROCESS},
		{"event_2threads_ns", "ns", tt_bench_median(two, repeats), 1.30, "per event per thread, two threads at once", NULL, 0, NULL, TT_BENCH_IN_PROCESS},
		{"cyg_call_overhead_ns", "ns", cyg_ns, 2.5, cyg_what, NULL, 0, NULL, TT_BENCH_CYG},
		{"detour_call_overhead_ns", "ns", detour_ns, 3, detour_what[0], NULL, 0, NULL, TT_BENCH_DETOUR},
		{"patchable_call_overhead_ns", "ns", patchable_ns, 3, detour_what[1], NULL, 0, NULL, TT_BENCH_DETOUR},
		{"event_dropped_ns", "ns", dropped_ns, 1.0,
		 "per event into a full buffer, mode stop (counted, not kept)", &rows[WARM], 0, NULL, TT_BENCH_DROPPED},
		{"event_dropped_no_memory_ns", "ns", no_memory_ns, 4.0,
		 "per event once TICKTRACE_MEMORY is used up (counted, not kept): the slower of the thread "
		 "that used it up and one that came after it (no buffer)", NULL, 0, NULL, TT_BENCH_NO_MEMORY},
		{"event_off_ns", "ns", paused_ns > off_process_ns ? paused_ns : off_process_ns, 0.25, off_what, NULL, 0, NULL, TT_BENCH_OFF},
		{"min_dur_filtered_call_ns", "ns", filtered_ns, 3, "what an instrumented call adds "
		 "when TICKTRACE_MIN_DUR erases it at its exit (both hooks, the rewind, its count)",
		 NULL, 0, NULL, TT_BENCH_FILTERED},
		{"cyg_off_ns", "ns", cyg_off_ns, 0, "what an instrumented call adds with TICKTRACE=0", NULL, 0, NULL, TT_BENCH_CYG_OFF},
		{"bytes_per_event", "B", bytes.records, 0, "record bytes per event in the file", NULL, 0, NULL, TT_BENCH_BYTES},
		{"file_bytes_per_event", "B", bytes.file, 0, "file growth per event, headers included", NULL, 0, NULL, TT_BENCH_BYTES},
	};
	int hot_rows = (int)(sizeof rows / sizeof rows[0]);
	printf("ticktrace-bench: medians of %d repeats\n", repeats);
	if (hot_only)
		return tt_bench_report(rows, hot_rows, rdtsc_ns, json_path);
	char sched_what[3][240], schedstat_what[2][320], sample_what[3][240];
	struct tt_bench_row sched_rows[3], schedstat_rows[2], sample_rows[3];
	tt_bench_sched_rows(&sched, repeats, sched_what, sched_rows);
	tt_bench_sample_rows(&overhead, sample_what, sample_rows);
	tt_bench_schedstat_rows(&schedstat, schedstat_what, schedstat_rows);
	char snapshot_what[3][240];
	struct tt_bench_row snapshot_rows[3];
	tt_bench_snapshot_rows(&snapshot, &rows[WARM], snapshot_what, snapshot_rows);
	struct tt_bench_row rest[] = {
		{"event_stream_ns", "ns", stream_ns, 1.05,
		 "mode stream, 100 million events while the drain writes them to disk, per event", &rows[WARM], 0, NULL, TT_BENCH_STREAM},
		{"stream_dropped", "", (double)stream_dropped, 0, "events dropped in those runs (target 0)", NULL, 0, NULL, TT_BENCH_STREAM},
		{"convert_json_events_per_s", "/s", tt_bench_number(convert, "convert_json_events_per_s"), 0,
		 "a 50M-event raw file to Chrome JSON in /dev/shm (target >= 25 M/s)", NULL, 0, NULL, TT_BENCH_CONVERT},
		{"convert_perfetto_events_per_s", "/s",
		 tt_bench_number(convert, "convert_perfetto_events_per_s"), 0,
		 "the same file to Perfetto protobuf (target >= 50 M/s)", NULL, 0, NULL, TT_BENCH_CONVERT},
		{"perfetto_bytes_per_event", "B", tt_bench_number(convert, "perfetto_bytes_per_event"), 0,
		 "its .pftrace's bytes per event (deflated by default at this size), most of them scopes' begins and ends (target <= 6)", NULL,
		 0, NULL, TT_BENCH_CONVERT},
		{"convert_perfetto_compressed_events_per_s", "/s",
		 tt_bench_number(convert, "convert_perfetto_compressed_events_per_s"), 0,
		 "the same file to a .pftrace with --compress (deflated harder than by default)", NULL, 0, NULL, TT_BENCH_CONVERT},
		{"perfetto_compressed_bytes_per_event", "B",
		 tt_bench_number(convert, "perfetto_compressed_bytes_per_event"), 0,
		 "its bytes per event (target <= 6)", NULL, 0, NULL, TT_BENCH_CONVERT},
		{"report_events_per_s", "/s", tt_bench_number(convert, "report_events_per_s"), 0,
		 "ticktrace report (flat profile) on the same file", NULL, 0, NULL, TT_BENCH_CONVERT},
		{"report_vs_json", "x", tt_bench_number(convert, "report_vs_json"), 0,
		 "its rate over the JSON conversion's, same rounds (target >= 1)", NULL, 0, NULL, TT_BENCH_CONVERT},
		{"convert_peak_rss_mb", "MB", tt_bench_number(convert, "convert_peak_rss_mb"), 0,
		 "the converter's peak memory on that file (target <= 64)", NULL, 0, NULL, TT_BENCH_CONVERT},
		sample_rows[0],
		sample_rows[1],
		sample_rows[2],
		sched_rows[0],
		sched_rows[1],
		sched_rows[2],
		schedstat_rows[0],
		schedstat_rows[1],
		snapshot_rows[0],
		snapshot_rows[1],
		snapshot_rows[2],
		{"zero_markup_cpu_ratio", "x", tt_bench_real(real, "zero_markup_cpu_ratio"), 0,
		 "Lua 5.4 built with ticktrace-instrument's flags, default settings: its CPU time over "
		 "the plain build's (target <= 1.5 and <= uftrace_cpu_ratio; null: not run here)", NULL, 0, NULL, TT_BENCH_REAL},
		{"uftrace_cpu_ratio", "x", tt_bench_real(real, "uftrace_cpu_ratio"), 0,
		 "the same Lua built with -pg under uftrace record, the same run", NULL, 0, NULL, TT_BENCH_REAL},
		{"zero_markup_no_libcalls_cpu_ratio", "x", tt_bench_real(real, "zero_markup_no_libcalls_cpu_ratio"), 0,
		 "the zero-markup Lua with TICKTRACE_LIBCALLS=0: against zero_markup_cpu_ratio, what "
		 "recording its library calls costs", NULL, 0, NULL, TT_BENCH_REAL},
		{"zero_markup_start_ms", "ms", tt_bench_real(real, "zero_markup_start_ms"), 0,
		 "the CPU a zero-markup Lua process that does nothing (lua -e '') takes more than the "
		 "plain build's, the same run (a test suite of small runs pays it each time)", NULL, 0, NULL, TT_BENCH_REAL},
	};
	struct tt_bench_row all[sizeof rows / sizeof rows[0] + sizeof rest / sizeof rest[0]];
	memcpy(all, rows, sizeof rows);
	memcpy(all + hot_rows, rest, sizeof rest);
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) { /* bases point into `rows` */
		if (all[i].base)
			all[i].base = all + (all[i].base - rows);
		if (all[i].also_base)
			all[i].also_base = all + (all[i].also_base - rows);
	}
	return tt_bench_report(all, (int)(sizeof all / sizeof all[0]), rdtsc_ns, json_path);
}
