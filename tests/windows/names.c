/* Names made at run time on Windows (names.py): the _DYN macros, whose names the
 * runtime copies into descriptors of its own (src/common/names.c, Linux's table). A
 * thread named "worker" opens the scope "job-K" (TT_SCOPE_DYN, K = i % JOBS) and
 * records the instant "step-K" and the counter "load-K" = i inside it, N times; one
 * name longer than the file keeps (cut), and a NULL one. Then the run ends as the
 * second argument says: exit, or kill (TerminateProcess after the live file's
 * thread had time to describe the run).
 *
 *     names.exe N exit|kill */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "ticktrace.h"

#define JOBS 7

static char tt_long_name[70000];

static DWORD WINAPI tt_worker(void *arg)
{
	long n = *(const long *)arg;
	tt_thread_name("worker");
	for (long i = 0; i < n; i++) {
		char job[32], step[32], load[32];
		snprintf(job, sizeof job, "job-%ld", i % JOBS);
		snprintf(step, sizeof step, "step-%ld", i % JOBS);
		snprintf(load, sizeof load, "load-%ld", i % JOBS);
		TT_SCOPE_DYN(job);
		TT_INSTANT_DYN(step);
		TT_COUNTER_DYN(load, i);
		if (i % 500 == 499)
			Sleep(1); /* (mode stream's writer keeps up) */
	}
	memset(tt_long_name, 'x', sizeof tt_long_name - 1);
	TT_INSTANT_DYN(tt_long_name);
	TT_INSTANT_DYN((const char *)NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	long n = atol(argv[1]);
	HANDLE worker = CreateThread(NULL, 0, tt_worker, &n, 0, NULL);
	if (!worker)
		return 2;
	WaitForSingleObject(worker, INFINITE);
	CloseHandle(worker);
	if (strcmp(argv[2], "kill") == 0) {
		Sleep(500); /* (tt-live describes the run every 100 ms) */
		TerminateProcess(GetCurrentProcess(), 9);
	}
	return 0;
}
