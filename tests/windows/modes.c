/* Modes ring and stream and the live file on Windows (modes.py): a thread named
 * "worker" records the counter "seq" from 0 to N - 1, pausing a millisecond every
 * PACE events (so that mode stream's writer keeps up), then the run ends as the
 * second argument says: exit (the dump at exit), dump (tt_dump, then TerminateProcess:
 * the file is tt_dump's alone), crash (an
 * access violation nobody handles), or kill (TerminateProcess of itself, after the
 * live file's thread had time to describe the run: no handler runs).
 *
 *     modes.exe N exit|dump|crash|kill [PACE] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "ticktrace.h"

static DWORD WINAPI tt_worker(void *arg)
{
	long n = *(const long *)arg, pace = ((const long *)arg)[1];
	tt_thread_name("worker");
	for (long i = 0; i < n; i++) {
		TT_COUNTER("seq", i);
		if (pace && i % pace == pace - 1)
			Sleep(1);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	long args[2] = {atol(argv[1]), argc > 3 ? atol(argv[3]) : 0};
	HANDLE worker = CreateThread(NULL, 0, tt_worker, args, 0, NULL);
	if (!worker)
		return 2;
	WaitForSingleObject(worker, INFINITE);
	CloseHandle(worker);
	const char *how = argv[2];
	fflush(stdout);
	if (strcmp(how, "dump") == 0) {
		int rc = tt_dump(NULL);
		if (rc < 0) {
			fprintf(stderr, "modes: tt_dump: %d\n", rc);
			return 1;
		}
		TerminateProcess(GetCurrentProcess(), 0);
	} else if (strcmp(how, "crash") == 0) {
		volatile uintptr_t nowhere = 8; /* (not NULL: a store gcc may not drop) */
		*(volatile int *)nowhere = 1; /* an access violation nobody handles */
	} else if (strcmp(how, "exitprocess") == 0) {
		ExitProcess(0); /* (as an MSVC program's C runtime ends it: no msvcrt exit) */
	} else if (strcmp(how, "kill") == 0) {
		Sleep(500); /* (tt-live describes the run every 100 ms) */
		TerminateProcess(GetCurrentProcess(), 9);
	}
	return 0;
}
