/* ticktrace-bench.exe: the Linux benchmark's keys on Windows x64 where they apply
 * (bench/bench.c measures alike; bench/README.md says each): a bare RDTSC, the floor (an
 * inline RDTSC and one bounded 16-byte store), begin/end pairs on a warm thread and on
 * a new one, a thread's first event and what ticktrace adds to its start, TT_ENDBEGIN,
 * two threads at once, -finstrument-functions' calls, events into a full buffer (a
 * child with a small TICKTRACE_BUFFER) and with recording off, bytes per event, the
 * self-profiler's cost, and calls TICKTRACE_MIN_DUR erases. Medians of interleaved
 * repeats, so that a noisy moment touches every figure of this process, and then the
 * children's. Not here: what Windows' runtime has not (TICKTRACE_MEMORY, the detour,
 * thread states, snapshots) and the tools' figures (Linux's).
 *
 *   ticktrace-bench.exe [--repeats N] [--json FILE] */
#include <process.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include <cJSON.h>

#include "../child.h"
#include "../cyg_overhead.h"
#include "../file_bytes.h"
#include "../median.h"
#include "../sample_overhead.h"
#include "../timing.h"
#include "ticktrace.h"

#define TT_BENCH_PAIRS_CHILD "--pairs-child"
#define TT_BENCH_THREAD_START_CHILD "--thread-start-child"
#define TT_BENCH_BUFFER "16777216" /* events per thread: room for every measured one */
#define TT_BENCH_THREAD_STARTS 301

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

struct tt_bench_job {
	enum tt_bench_kind kind;
	volatile LONG *start; /* NULL, or a count of jobs yet to start, shared with another */
	double result;
};

static DWORD WINAPI tt_bench_thread(void *arg)
{
	struct tt_bench_job *job = arg;
	if (job->start) { /* (both threads go at once) */
		InterlockedDecrement(job->start);
		while (*job->start > 0)
			YieldProcessor();
	}
	job->result = tt_bench_kind_run(job->kind);
	return 0;
}

static HANDLE tt_bench_start(LPTHREAD_START_ROUTINE fn, void *arg)
{
	HANDLE t = CreateThread(NULL, 0, fn, arg, 0, NULL);
	if (!t) {
		fprintf(stderr, "ticktrace-bench: CreateThread failed (%lu)\n", GetLastError());
		exit(1);
	}
	return t;
}

/* Each figure of a repeat begins with the recorder at rest (and RDTSC's and the floor's
 * after the same pause, which a loaded machine's scheduler favours alike): on Windows'
 * 4 KiB pages a fresh page is dear under a hypervisor's shadow page tables (13 to 22 us
 * of CPU a fault on this KVM/PVM VM, where Linux's huge pages cost 0.3 us a 4 KiB), so
 * tt-prefault fills its window at 190 to 310 MB/s, a fifth of what a thread recording
 * flat out takes (1.2 GB/s), and back to back each figure's thread faulted in itself
 * what the figures before it had taken from the window (the warm thread 450 to 1,600 of
 * its 4,300 pages, 1.7 to 1.9 x RDTSC in its CPU time; after a pause 0 to 4, 1.0 to
 * 1.1 x). Linux's tt-prefault keeps up without one. */
#define TT_BENCH_SETTLE_MS 200

static double tt_bench_on_thread(enum tt_bench_kind kind)
{
	Sleep(TT_BENCH_SETTLE_MS);
	struct tt_bench_job job = {kind, NULL, 0};
	HANDLE t = tt_bench_start(tt_bench_thread, &job);
	WaitForSingleObject(t, INFINITE);
	CloseHandle(t);
	return job.result;
}

/* Two threads recording at once: per event per thread, the mean of the two. */
static double tt_bench_two_threads(void)
{
	Sleep(TT_BENCH_SETTLE_MS);
	volatile LONG start = 2;
	struct tt_bench_job jobs[2] = {{TT_BENCH_WARM, &start, 0}, {TT_BENCH_WARM, &start, 0}};
	HANDLE threads[2] = {tt_bench_start(tt_bench_thread, &jobs[0]), tt_bench_start(tt_bench_thread, &jobs[1])};
	WaitForMultipleObjects(2, threads, TRUE, INFINITE);
	CloseHandle(threads[0]);
	CloseHandle(threads[1]);
	return (jobs[0].result + jobs[1].result) / 2;
}

/* In a child whose buffer holds 65,536 events (or with TICKTRACE=0): pairs past it,
 * each dropped (counted). */
static int tt_bench_pairs_child(void)
{
	static double round_ns[101];
	tt_bench_pairs(2 * 65536);
	for (int r = 0; r < 101; r++)
		round_ns[r] = tt_bench_pairs(TT_BENCH_PAIRS / 50);
	printf("%.4f\n", tt_bench_median(round_ns, 101));
	return 0;
}

/* thread_start_us: CreateThread until the new thread's first event returns, a few
 * hundred times in a child (with ticktrace on, or TICKTRACE=0): its median. */
static DWORD WINAPI tt_bench_first_event(void *arg)
{
	TT_INSTANT("first");
	*(int64_t *)arg = tt_bench_now_ns();
	return 0;
}

static int tt_bench_thread_start_child(void)
{
	static double us[TT_BENCH_THREAD_STARTS];
	for (int i = 0; i < TT_BENCH_THREAD_STARTS; i++) {
		int64_t t0 = tt_bench_now_ns(), first;
		HANDLE t = tt_bench_start(tt_bench_first_event, &first);
		WaitForSingleObject(t, INFINITE);
		CloseHandle(t);
		us[i] = (double)(first - t0) / 1000.0;
	}
	printf("%.3f\n", tt_bench_median(us, TT_BENCH_THREAD_STARTS));
	return 0;
}

/* The children's medians: ticktrace on against TICKTRACE=0, which goes first in turns
 * (so that drift favours neither); on - off. */
static double tt_bench_thread_start(int repeats, double *on_us, double *off_us)
{
	double *on = calloc((size_t)repeats, sizeof(double)), *off = calloc((size_t)repeats, sizeof(double));
	for (int r = 0; r < repeats; r++)
		for (int turn = 0; turn < 2; turn++) {
			int is_off = (r + turn) % 2;
			if (tt_bench_child(is_off ? "TICKTRACE=0" : "", TT_BENCH_THREAD_START_CHILD, 1,
					   is_off ? &off[r] : &on[r]))
				exit(1);
		}
	*on_us = tt_bench_median(on, repeats);
	*off_us = tt_bench_median(off, repeats);
	free(on);
	free(off);
	return *on_us - *off_us;
}

static double tt_bench_pairs_in_child(const char *env)
{
	double ns;
	if (tt_bench_child(env, TT_BENCH_PAIRS_CHILD, 1, &ns))
		exit(1);
	return ns;
}

/* Bytes per event in the file: two dumps, before and after a warm job. */
static void tt_bench_bytes_per_event(double *records, double *file)
{
	char before[MAX_PATH], after[MAX_PATH];
	snprintf(before, sizeof before, "%s\\ticktrace-bench-%lu-0.ttr", tt_bench_dir(), GetCurrentProcessId());
	snprintf(after, sizeof after, "%s\\ticktrace-bench-%lu-1.ttr", tt_bench_dir(), GetCurrentProcessId());
	uint64_t rec0, rec1, file0, file1;
	int err = tt_dump(before);
	tt_bench_on_thread(TT_BENCH_WARM);
	if (err || tt_dump(after) || tt_bench_file_bytes(before, &rec0, &file0) ||
	    tt_bench_file_bytes(after, &rec1, &file1)) {
		fprintf(stderr, "ticktrace-bench: could not dump to %s\n", before);
		exit(1);
	}
	remove(before);
	remove(after);
	/* A warm job records its warm-up too. */
	double events = 2.0 * TT_BENCH_PAIRS * 1.1;
	*records = (double)(rec1 - rec0) / events;
	*file = (double)(file1 - file0) / events;
}

int main(int argc, char **argv)
{
	/* The buffer size is read when the library starts, before main: set it and start
	 * again, so that every measured event fits and none is dropped. */
	if (!getenv("TICKTRACE_BUFFER")) {
		char self[MAX_PATH];
		GetModuleFileNameA(NULL, self, sizeof self);
		_putenv("TICKTRACE_BUFFER=" TT_BENCH_BUFFER);
		if (!getenv("TICKTRACE_OUT"))
			_putenv("TICKTRACE_OUT=NUL");
		intptr_t rc = _spawnv(_P_WAIT, self, (const char *const *)argv);
		if (rc < 0)
			perror("ticktrace-bench: _spawnv");
		return rc < 0 ? 1 : (int)rc;
	}
	if (argc == 2 && strcmp(argv[1], TT_BENCH_PAIRS_CHILD) == 0)
		return tt_bench_pairs_child();
	if (argc == 2 && strcmp(argv[1], TT_BENCH_CYG_CHILD) == 0)
		return tt_bench_cyg_child();
	if (argc == 2 && strcmp(argv[1], TT_BENCH_THREAD_START_CHILD) == 0)
		return tt_bench_thread_start_child();
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
	/* (first: the file is small, before the repeats' events) */
	double bytes_records, bytes_file;
	tt_bench_bytes_per_event(&bytes_records, &bytes_file);
	enum { RDTSC, FLOOR, WARM, COLD, FIRST, ENDBEGIN, TWO, PAUSED, DYN, CYG, CYG_RDTSC, KINDS };
	double *v[KINDS];
	for (int k = 0; k < KINDS; k++)
		v[k] = calloc((size_t)repeats, sizeof(double));
	for (int r = 0; r < repeats; r++) {
		if (tt_bench_children_started()) {
			fprintf(stderr, "ticktrace-bench: a figure of this process measured after a child "
					"process, whose fork under Wine charges this process's pages\n");
			return 1;
		}
		Sleep(TT_BENCH_SETTLE_MS);
		v[RDTSC][r] = tt_bench_rdtsc(2 * TT_BENCH_PAIRS);
		Sleep(TT_BENCH_SETTLE_MS);
		v[FLOOR][r] = tt_bench_floor();
		v[WARM][r] = tt_bench_on_thread(TT_BENCH_WARM);
		v[COLD][r] = tt_bench_on_thread(TT_BENCH_COLD);
		v[FIRST][r] = tt_bench_on_thread(TT_BENCH_FIRST);
		v[ENDBEGIN][r] = tt_bench_on_thread(TT_BENCH_ENDBEGIN);
		v[TWO][r] = tt_bench_two_threads();
		v[PAUSED][r] = tt_bench_on_thread(TT_BENCH_PAUSED);
		v[DYN][r] = tt_bench_on_thread(TT_BENCH_DYNAMIC_NAME);
	}
	/* The children come after: Wine starts a process by fork(), which makes this
	 * process's next write to each of its pages a fault (2,700 cycles a page here),
	 * the floor's buffer and the pages tt-prefault had faulted in alike: interleaved,
	 * each repeat's floor and events paid about 10 cycles an event (0.45 x RDTSC) for
	 * the child before them. Windows starts a process without copying its parent. The
	 * children's figures need no interleaving: each is its own ratio, timed in the
	 * child. */
	for (int r = 0; r < repeats; r++) {
		v[CYG][r] = tt_bench_cyg_overhead("", &v[CYG_RDTSC][r]);
		if (v[CYG][r] < 0)
			return 1; /* (said by tt_bench_child) */
	}
	double dropped_ns = tt_bench_pairs_in_child("TICKTRACE_BUFFER=65536");
	double off_process_ns = tt_bench_pairs_in_child("TICKTRACE=0 TICKTRACE_BUFFER=65536");
	double unused;
	double cyg_off_ns = tt_bench_cyg_overhead("TICKTRACE=0", &unused);
	/* every call of the benchmark's callee is shorter than that: erased at its exit */
	double filtered_ns = tt_bench_cyg_overhead("TICKTRACE_MIN_DUR=1us", &unused);
	double start_on_us, start_off_us;
	double thread_start_us = tt_bench_thread_start(repeats, &start_on_us, &start_off_us);
	struct tt_bench_overhead overhead;
	int err = tt_bench_sample_overhead(&overhead);
	if (cyg_off_ns < 0 || filtered_ns < 0 || err) {
		fprintf(stderr, "ticktrace-bench: %s\n", err ? "the self-profiler failed" : "a child failed");
		return 1;
	}
	double paused_ns = tt_bench_median(v[PAUSED], repeats);
	double cyg_ns = tt_bench_median(v[CYG], repeats);
	char off_what[160], cyg_what[160], start_what[160], sample_what[160];
	snprintf(off_what, sizeof off_what,
		 "recording off, per event: the slower of tt_pause (%.3f ns) and TICKTRACE=0 (%.3f ns)",
		 paused_ns, off_process_ns);
	snprintf(cyg_what, sizeof cyg_what,
		 "what -finstrument-functions adds to a call (two events), 10,000,000 calls; "
		 "%.2f x a bare RDTSC timed alike", cyg_ns / tt_bench_median(v[CYG_RDTSC], repeats));
	snprintf(start_what, sizeof start_what,
		 "what ticktrace adds to CreateThread and the thread's first event: %.1f us, against %.1f us off",
		 start_on_us, start_off_us);
	snprintf(sample_what, sizeof sample_what, "slowdown of a loop self-profiled at 1 ms (%s, %llu samples)",
		 overhead.mechanism == TT_PROFILE_NT_PROFILE ? "the kernel's profile" : "the sampler thread",
		 (unsigned long long)overhead.samples);
	struct {
		const char *key, *unit;
		double value;
		const char *what;
	} rows[] = {
		{"rdtsc_ns", "ns", tt_bench_median(v[RDTSC], repeats), "a bare RDTSC, per read"},
		{"floor_ns", "ns", tt_bench_median(v[FLOOR], repeats), "inline RDTSC + one bounded 16-byte store, per event"},
		{"event_warm_ns", "ns", tt_bench_median(v[WARM], repeats), "begin/end pairs, per event (target <= 1.20 x rdtsc)"},
		{"event_cold_ns", "ns", tt_bench_median(v[COLD], repeats), "first 4,194,304 events of a new thread, per event"},
		{"first_event_us", "us", tt_bench_median(v[FIRST], repeats), "first event of a new thread (target <= 20 us)"},
		{"thread_start_us", "us", thread_start_us, start_what},
		{"endbegin_ns", "ns", tt_bench_median(v[ENDBEGIN], repeats), "TT_ENDBEGIN, per event (an end and a begin)"},
		{"event_2threads_ns", "ns", tt_bench_median(v[TWO], repeats), "per event per thread, two threads at once"},
		{"event_dynamic_name_ns", "ns", tt_bench_median(v[DYN], repeats),
		 "TT_INSTANT_DYN with 16 names in turn: the name's lookup and the event"},
		{"cyg_call_overhead_ns", "ns", cyg_ns, cyg_what},
		{"event_dropped_ns", "ns", dropped_ns, "per event into a full buffer, mode stop (counted, not kept)"},
		{"event_off_ns", "ns", paused_ns > off_process_ns ? paused_ns : off_process_ns, off_what},
		{"cyg_off_ns", "ns", cyg_off_ns, "what an instrumented call adds with TICKTRACE=0"},
		{"min_dur_filtered_call_ns", "ns", filtered_ns,
		 "what an instrumented call adds when TICKTRACE_MIN_DUR erases it at its exit (both hooks, "
		 "the rewind, its count; target <= 3 x rdtsc)"},
		{"bytes_per_event", "B", bytes_records, "record bytes per event in the file"},
		{"file_bytes_per_event", "B", bytes_file, "file growth per event, headers included"},
		{"sample_overhead_pct", "%", overhead.pct, sample_what},
	};
	double rdtsc = rows[0].value;
	cJSON *root = cJSON_CreateObject();
	printf("%-22s %12s %8s  %s\n", "key", "value", "/rdtsc", "what");
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		printf("%-22s %9.3f %-2s", rows[i].key, rows[i].value, rows[i].unit);
		if (strcmp(rows[i].unit, "ns") == 0)
			printf(" %8.3f", rows[i].value / rdtsc);
		else
			printf(" %8s", "");
		printf("  %s\n", rows[i].what);
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
