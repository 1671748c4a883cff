/* Converter throughput: generates a large synthetic raw file (several threads whose
 * events interleave finely in time, nested scopes, instants, counters, flows), then
 * converts it repeatedly, each time in a child process so that its peak RSS is its
 * own, and prints one JSON object:
 *
 *   ticktrace-convert-bench [--events N] [--threads T] [--repeats R] [--dir DIR] [--keep]
 *                           [--scopes N]
 *   {"convert_json_events_per_s": ..., "convert_perfetto_events_per_s": ...,
 *    "report_events_per_s": ..., "report_vs_json": ..., "convert_peak_rss_mb": ...,
 *    "perfetto_bytes_per_event": ..., ...}
 *
 * A rate is the median over the repeats of logical events (records that are not
 * PAD or VALUE) per second of wall time for the whole conversion, output written
 * to DIR (default /dev/shm, memory, so that the figure is the converter's and not
 * the disk's). `ticktrace report` (the flat profile, text) runs on the same file in
 * the same rounds; report_vs_json is its median rate over the JSON one. The peak RSS is the largest of all conversions. --keep leaves the
 * raw file in DIR, for profiling. Issue 3's figure: --events 50000000.
 * --scopes N: the scopes' names drawn from N (a few often, most rarely: the i-th
 * name about 1/i as often) and their durations spread over eight octaves, as in a
 * large program: the flat profile's histograms then outgrow the caches (issue 26's
 * "thousands of scopes"); without it, the 7 names and fixed durations above. */
#include <getopt.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "tt_tw.h"

#define TT_BENCH_CHUNK 65536 /* records per EVENTS section, as the runtime's chunks */

static const struct tt_tw_site tt_bench_sites[] = {
	{0x1000, "frame", "bench.c", "run", 10},     {0x1010, "update", "bench.c", "run", 11},
	{0x1020, "physics", "bench.c", "run", 12},   {0x1030, "render", "bench.c", "run", 13},
	{0x1040, "submit", "bench.c", "run", 14},    {0x1050, "queue_depth", "bench.c", "run", 15},
	{0x1060, "job", "bench.c", "run", 16},
};

/* --scopes: the i-th name's call site */
#define TT_BENCH_SCOPE_SITE(i) (UINT64_C(0x100000) + (uint64_t)(i) * 16)

/* One thread's records, a pattern of 16 records (14 events) repeated: scopes nested
 * three deep, ENDBEGIN, an instant, a BEGIN_ARG, a counter. Each thread's clock is
 * offset by a few ticks, so the threads' events interleave in time. */
static void tt_bench_fill(struct tt_record *r, size_t n, uint64_t first, uint32_t thread, uint32_t scopes)
{
	static const struct {
		unsigned kind;
		uint64_t payload;
	} pattern[16] = {
		{TT_REC_BEGIN, 0x1000},    {TT_REC_BEGIN, 0x1010},   {TT_REC_BEGIN, 0x1020},
		{TT_REC_END, 0},           {TT_REC_ENDBEGIN, 0x1030}, {TT_REC_INSTANT, 0x1040},
		{TT_REC_END, 0},           {TT_REC_END, 0},          {TT_REC_BEGIN_ARG, 0x1060},
		{TT_REC_VALUE, 0},         {TT_REC_COUNTER, 0x1050}, {TT_REC_VALUE, 0},
		{TT_REC_END, 0},           {TT_REC_BEGIN, 0x1040},   {TT_REC_END, 0},
		{TT_REC_INSTANT, 0x1040},
	};
	for (size_t i = 0; i < n; i++) {
		uint64_t k = first + i;
		unsigned p = (unsigned)(k % 16);
		uint64_t payload = pattern[p].payload;
		r[i].tsc = pattern[p].kind == TT_REC_VALUE ? k / 16 : 1000 + k * 40 + thread * 7;
		if (scopes && pattern[p].kind != TT_REC_VALUE) {
			/* a pattern's records step 1 to 256 ticks apart (within its 16 x 256) */
			uint64_t h = (k / 16 + thread * UINT64_C(0x100000001)) * UINT64_C(0x9E3779B97F4A7C15);
			r[i].tsc = 1000 + k / 16 * 4096 + p * (1 + (h >> 56)) + thread * 7;
			bool scope = pattern[p].kind == TT_REC_BEGIN || pattern[p].kind == TT_REC_ENDBEGIN ||
				     pattern[p].kind == TT_REC_BEGIN_ARG;
			uint64_t pick = (h ^ (p * UINT64_C(0xBF58476D1CE4E5B9))) >> 8;
			if (scope) /* uniform below a uniform bound: about 1/i */
				payload = TT_BENCH_SCOPE_SITE(pick % (1 + (pick >> 28) % scopes));
		}
		r[i].word = TT_RECORD_WORD(pattern[p].kind, payload);
	}
}

/* Writes the file; returns the number of logical events, or 0 on failure. */
static uint64_t tt_bench_generate(const char *path, uint64_t records_per_thread, uint32_t threads,
				  uint32_t scopes)
{
	struct tt_tw w;
	if (tt_tw_open_file(&w, path) < 0)
		return 0;
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "bench");
	tt_tw_sites(&w, tt_bench_sites, sizeof(tt_bench_sites) / sizeof(tt_bench_sites[0]));
	struct tt_tw_site *named = calloc(scopes, sizeof(*named));
	char *names = malloc((size_t)scopes * 20);
	if (scopes && (!named || !names)) {
		free(named);
		free(names);
		return 0;
	}
	for (uint32_t i = 0; i < scopes; i++) {
		snprintf(names + (size_t)i * 20, 20, "scope_%u", i);
		named[i] = (struct tt_tw_site){TT_BENCH_SCOPE_SITE(i), names + (size_t)i * 20, "bench.c", "run", i};
	}
	if (scopes)
		tt_tw_sites(&w, named, scopes);
	free(named);
	for (uint32_t t = 0; t < threads; t++) {
		char name[32];
		snprintf(name, sizeof(name), "worker-%u", t);
		tt_tw_thread(&w, t, 5000 + t, name, records_per_thread, 0);
	}
	struct tt_record *chunk = malloc(TT_BENCH_CHUNK * sizeof(*chunk));
	/* Chunks of the threads alternate in the file, as the runtime's stream mode
	 * writes them. */
	for (uint64_t first = 0; chunk && first < records_per_thread; first += TT_BENCH_CHUNK) {
		size_t n = records_per_thread - first < TT_BENCH_CHUNK ? records_per_thread - first :
									   TT_BENCH_CHUNK;
		for (uint32_t t = 0; t < threads; t++) {
			tt_bench_fill(chunk, n, first, t, scopes);
			tt_tw_events(&w, t, first, chunk, n);
		}
	}
	free(chunk);
	free(names);
	tt_tw_end(&w);
	if (tt_tw_close(&w) < 0)
		return 0;
	/* 14 events in each 16 records; patterns are whole when the count is a multiple */
	return records_per_thread / 16 * 14 * threads;
}

static double tt_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int tt_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

enum { TT_BENCH_JSON, TT_BENCH_PERFETTO, TT_BENCH_REPORT, TT_BENCH_COMPRESSED, TT_BENCH_KINDS };

/* One conversion (or report) in a child process: its wall time and peak RSS (KiB). */
static int tt_bench_convert_once(int kind, char *in, const char *out, double *seconds, long *rss_kb)
{
	unlink(out);
	double t0 = tt_now();
	pid_t pid = fork();
	if (pid == 0) {
		struct tt_convert_opts opts = {
			.inputs = &in, .ninputs = 1, .output = out, .quiet = true,
			.compress = kind == TT_BENCH_COMPRESSED ? TT_PACK_ALWAYS : TT_PACK_LARGE,
		};
		struct tt_report_opts report = {
			.inputs = &in, .ninputs = 1, .output = out, .quiet = true,
		};
		_exit((kind == TT_BENCH_REPORT ? tt_report(&report) : tt_convert(&opts, NULL)) == 0 ? 0 : 1);
	}
	int st;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &st, 0, &ru) < 0)
		return -1;
	*seconds = tt_now() - t0;
	*rss_kb = ru.ru_maxrss;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	uint64_t events = 12000000;
	uint32_t threads = 4, scopes = 0;
	int repeats = 3;
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	bool keep = false;
	static const struct option longopts[] = {
		{"events", required_argument, NULL, 'e'}, {"threads", required_argument, NULL, 't'},
		{"repeats", required_argument, NULL, 'r'}, {"dir", required_argument, NULL, 'd'},
		{"keep", no_argument, NULL, 'k'},          {"help", no_argument, NULL, 'h'},
		{"scopes", required_argument, NULL, 's'},
		{NULL, 0, NULL, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "e:t:r:d:s:kh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e': events = strtoull(optarg, NULL, 0); break;
		case 't': threads = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'r': repeats = atoi(optarg); break;
		case 'd': dir = optarg; break;
		case 'k': keep = true; break;
		case 's': scopes = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'h':
			printf("usage: ticktrace-convert-bench [--events N] [--threads T] [--repeats R] "
			       "[--dir DIR] [--keep] [--scopes N]\n");
			return 0;
		default: return 2;
		}
	}
	if (threads == 0 || repeats < 1 || repeats > 99 || events < 16 * threads) {
		fprintf(stderr, "ticktrace-convert-bench: need threads >= 1, 1..99 repeats, and "
				"at least 16 events per thread\n");
		return 2;
	}
	char in[4096], outs[TT_BENCH_KINDS][4096];
	static const char *const ext[TT_BENCH_KINDS] = {"json", "pftrace", "txt", "z.pftrace"};
	snprintf(in, sizeof(in), "%s/tt-convert-bench-%d.ttr", dir, (int)getpid());
	for (int k = 0; k < TT_BENCH_KINDS; k++)
		snprintf(outs[k], sizeof(outs[k]), "%s/tt-convert-bench-%d.%s", dir, (int)getpid(), ext[k]);
	/* Whole patterns per thread: records = events * 16 / 14. */
	uint64_t per_thread = (events / threads + 13) / 14 * 16;
	uint64_t n = tt_bench_generate(in, per_thread, threads, scopes);
	if (n == 0) {
		fprintf(stderr, "ticktrace-convert-bench: cannot write %s\n", in);
		unlink(in);
		return 1;
	}
	/* JSON, Perfetto and the report alternate, so that all see the same machine load. */
	double rates[TT_BENCH_KINDS][99];
	long rss_kb = 0;
	long long sizes[TT_BENCH_KINDS] = {-1, -1, -1, -1};
	int rc = 0;
	for (int i = 0; i < repeats && rc == 0; i++) {
		for (int f = 0; f < TT_BENCH_KINDS && rc == 0; f++) {
			double s = 0;
			long kb = 0;
			rc = tt_bench_convert_once(f, in, outs[f], &s, &kb);
			rates[f][i] = (double)n / s;
			if (kb > rss_kb && f != TT_BENCH_REPORT)
				rss_kb = kb;
			struct stat st;
			if (stat(outs[f], &st) == 0)
				sizes[f] = (long long)st.st_size;
			unlink(outs[f]);
		}
	}
	struct stat st_in;
	long long raw = stat(in, &st_in) == 0 ? (long long)st_in.st_size : -1;
	if (!keep)
		unlink(in);
	if (rc < 0) {
		fprintf(stderr, "ticktrace-convert-bench: the conversion failed\n");
		return 1;
	}
	for (int f = 0; f < TT_BENCH_KINDS; f++)
		qsort(rates[f], (size_t)repeats, sizeof(double), tt_cmp_double);
	double json = rates[TT_BENCH_JSON][repeats / 2], report = rates[TT_BENCH_REPORT][repeats / 2];
	printf("{\"convert_json_events_per_s\": %.0f, \"convert_perfetto_events_per_s\": %.0f, "
	       "\"report_events_per_s\": %.0f, \"report_vs_json\": %.2f, "
	       "\"convert_peak_rss_mb\": %.1f, \"events\": %" PRIu64 ", \"threads\": %u, "
	       "\"repeats\": %d, \"raw_bytes\": %lld, \"json_bytes\": %lld, "
	       "\"perfetto_bytes\": %lld, \"perfetto_bytes_per_event\": %.2f, "
	       "\"convert_perfetto_compressed_events_per_s\": %.0f, "
	       "\"perfetto_compressed_bytes_per_event\": %.2f}\n",
	       json, rates[TT_BENCH_PERFETTO][repeats / 2], report, report / json,
	       (double)rss_kb / 1024.0, n, threads, repeats, raw, sizes[0], sizes[1],
	       (double)sizes[1] / (double)n, rates[TT_BENCH_COMPRESSED][repeats / 2],
	       (double)sizes[TT_BENCH_COMPRESSED] / (double)n);
	return 0;
}
