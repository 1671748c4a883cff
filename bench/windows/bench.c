/* ticktrace-bench.exe: the hot path's figures on Windows x64 (the Linux benchmark's
 * keys for them, bench/bench.c measures alike): a bare RDTSC, the floor (an inline
 * RDTSC and one bounded 16-byte store), begin/end pairs on a warm thread, TT_ENDBEGIN,
 * events into a full buffer (a child with a small TICKTRACE_BUFFER) and while paused.
 * Medians of interleaved repeats, so that a noisy moment touches every figure.
 *
 *   ticktrace-bench.exe [--repeats N] [--json FILE] */
#include <process.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include <cJSON.h>

#include "../median.h"
#include "../timing.h"
#include "ticktrace.h"

#define TT_BENCH_PAIRS 500000
#define TT_BENCH_PAIRS_CHILD "--pairs-child"
#define TT_BENCH_BUFFER "16777216" /* events per thread: room for every measured one */

/* The floor: an inline RDTSC and one bounded 16-byte store into a buffer (a static one:
 * mingw's thread-local storage is emulated, 27 ns an access). */
static double tt_bench_floor(void)
{
	static uint64_t records[2 * 2 * TT_BENCH_PAIRS];
	static struct {
		uint64_t *cursor, *end;
	} buffer;
	buffer.cursor = records;
	buffer.end = records + sizeof records / sizeof records[0];
	__asm__ volatile("" : : : "memory");
	int64_t t0 = tt_bench_now_ns();
	for (int i = 0; i < 2 * TT_BENCH_PAIRS; i++) {
		uint64_t tsc = __builtin_ia32_rdtsc();
		uint64_t *at = buffer.cursor;
		if (__builtin_expect(at + 2 > buffer.end, 0))
			abort();
		at[0] = tsc;
		at[1] = (uint64_t)i;
		buffer.cursor = at + 2;
		__asm__ volatile("" : : : "memory");
	}
	return (double)(tt_bench_now_ns() - t0) / (2.0 * TT_BENCH_PAIRS);
}

enum tt_bench_kind { TT_BENCH_WARM, TT_BENCH_ENDBEGIN, TT_BENCH_PAUSED };
struct tt_bench_job {
	enum tt_bench_kind kind;
	double result;
};

static DWORD WINAPI tt_bench_thread(void *arg)
{
	struct tt_bench_job *job = arg;
	tt_bench_pairs(TT_BENCH_PAIRS / 10); /* the thread's buffer is in use */
	switch (job->kind) {
	case TT_BENCH_WARM:
		job->result = tt_bench_pairs(TT_BENCH_PAIRS);
		break;
	case TT_BENCH_ENDBEGIN:
		job->result = tt_bench_endbegin(TT_BENCH_PAIRS);
		break;
	case TT_BENCH_PAUSED:
		tt_pause();
		job->result = tt_bench_pairs(TT_BENCH_PAIRS);
		tt_resume();
		break;
	}
	return 0;
}

static double tt_bench_on_thread(enum tt_bench_kind kind)
{
	struct tt_bench_job job = {kind, 0};
	HANDLE t = CreateThread(NULL, 0, tt_bench_thread, &job, 0, NULL);
	if (!t) {
		fprintf(stderr, "ticktrace-bench: CreateThread failed (%lu)\n", GetLastError());
		exit(1);
	}
	WaitForSingleObject(t, INFINITE);
	CloseHandle(t);
	return job.result;
}

/* In a child whose buffer holds 65,536 events: pairs past it, each dropped (counted). */
static int tt_bench_pairs_child(void)
{
	static double round_ns[101];
	tt_bench_pairs(2 * 65536);
	for (int r = 0; r < 101; r++)
		round_ns[r] = tt_bench_pairs(TT_BENCH_PAIRS / 50);
	printf("%.4f\n", tt_bench_median(round_ns, 101));
	return 0;
}

static double tt_bench_dropped(const char *self)
{
	char cmd[2048];
	/* (cmd.exe's own quoting: the whole line in quotes) */
	snprintf(cmd, sizeof cmd, "\"set TICKTRACE_BUFFER=65536&& set TICKTRACE_OUT=NUL&& \"%s\" %s\"", self,
		 TT_BENCH_PAIRS_CHILD);
	FILE *child = _popen(cmd, "r");
	double ns = -1;
	if (!child || fscanf(child, "%lf", &ns) != 1)
		ns = -1;
	if (child && _pclose(child) != 0)
		ns = -1;
	if (ns < 0) {
		fprintf(stderr, "ticktrace-bench: the %s child failed\n", TT_BENCH_PAIRS_CHILD);
		exit(1);
	}
	return ns;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], TT_BENCH_PAIRS_CHILD) == 0)
		return tt_bench_pairs_child();
	char self[MAX_PATH];
	GetModuleFileNameA(NULL, self, sizeof self);
	/* The buffer size is read when the library starts, before main: set it and start
	 * again, so that every measured event fits and none is dropped. */
	if (!getenv("TICKTRACE_BUFFER")) {
		_putenv("TICKTRACE_BUFFER=" TT_BENCH_BUFFER);
		if (!getenv("TICKTRACE_OUT"))
			_putenv("TICKTRACE_OUT=NUL");
		intptr_t rc = _spawnv(_P_WAIT, self, (const char *const *)argv);
		if (rc < 0)
			perror("ticktrace-bench: _spawnv");
		return rc < 0 ? 1 : (int)rc;
	}
	int repeats = 11;
	const char *json_path = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
			repeats = atoi(argv[++i]);
		else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
			json_path = argv[++i];
		else {
			fprintf(stderr, "usage: ticktrace-bench [--repeats N] [--json FILE]\n");
			return 2;
		}
	}
	if (repeats < 1 || repeats > 1000) {
		fprintf(stderr, "ticktrace-bench: --repeats takes 1 to 1000\n");
		return 2;
	}
	double *v[5];
	for (int k = 0; k < 5; k++)
		v[k] = calloc((size_t)repeats, sizeof(double));
	for (int r = 0; r < repeats; r++) {
		v[0][r] = tt_bench_rdtsc(2 * TT_BENCH_PAIRS);
		v[1][r] = tt_bench_floor();
		v[2][r] = tt_bench_on_thread(TT_BENCH_WARM);
		v[3][r] = tt_bench_on_thread(TT_BENCH_ENDBEGIN);
		v[4][r] = tt_bench_on_thread(TT_BENCH_PAUSED);
	}
	struct {
		const char *key;
		double value;
		const char *what;
	} rows[] = {
		{"rdtsc_ns", tt_bench_median(v[0], repeats), "a bare RDTSC, per read"},
		{"floor_ns", tt_bench_median(v[1], repeats), "inline RDTSC + one bounded 16-byte store, per event"},
		{"event_warm_ns", tt_bench_median(v[2], repeats), "begin/end pairs, per event (target <= 1.20 x rdtsc)"},
		{"endbegin_ns", tt_bench_median(v[3], repeats), "TT_ENDBEGIN, per event (an end and a begin)"},
		{"event_dropped_ns", tt_bench_dropped(self), "per event into a full buffer, mode stop (counted, not kept)"},
		{"event_off_ns", tt_bench_median(v[4], repeats), "recording off (tt_pause), per event"},
	};
	double rdtsc = rows[0].value;
	cJSON *root = cJSON_CreateObject();
	printf("%-20s %10s %8s  %s\n", "key", "value", "/rdtsc", "what");
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		printf("%-20s %10.3f ns %5.3f  %s\n", rows[i].key, rows[i].value, rows[i].value / rdtsc,
		       rows[i].what);
		cJSON_AddNumberToObject(root, rows[i].key, rows[i].value);
	}
	if (json_path) {
		char *text = cJSON_Print(root);
		FILE *f = fopen(json_path, "w");
		if (!f || fprintf(f, "%s\n", text) < 0 || fclose(f)) {
			fprintf(stderr, "ticktrace-bench: cannot write %s\n", json_path);
			return 1;
		}
		free(text);
	}
	cJSON_Delete(root);
	return 0;
}
