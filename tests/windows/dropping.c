/* Threads that record while their buffers are full (dropping.py): four threads nest
 * two scopes and a counter as fast as they can, never joined, while main either
 * sleeps MS milliseconds and returns once each thread spun twice what a buffer of
 * dropping.py's holds (the dump at exit, the threads still counting their drops: at
 * load 12 three of four had not filled theirs 300 ms in, Wine starting them 200 ms
 * late), or calls tt_dump("dump-NN.ttr") every MS milliseconds, DUMPS times,
 * (with "move", the file TICKTRACE_OUT names moved to NAME.moved after half of them),
 * or ends the process by TerminateProcess after MS milliseconds (kill: the threads
 * record one event, then wait 300 ms before they spin, so that tt-live or tt-stream
 * has described them in the file before they drop anything; ended once each thread
 * spun SPUN times, far more than its buffer holds, and the file grew after they began
 * to drop).
 *
 *     dropping.exe exit MS
 *     dropping.exe dump MS DUMPS [move]
 *     dropping.exe kill MS */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "ticktrace.h"

static HANDLE tt_go; /* set: the threads spin */
static HANDLE tt_registered; /* released by each thread once it recorded */
/* Each thread's turns so far, and how many kill waits for: 100,000 events a thread,
 * 1.6 MB into a buffer of 8 KiB (a stream's drain kept up with threads that had
 * barely run, at load: no drops to locate); exit: 600,000 records a thread, twice
 * TICKTRACE_BUFFER=300000. */
static volatile LONG64 tt_spun[4];
#define SPUN 20000
#define SPUN_EXIT 100000

/* The size of the run's file (TICKTRACE_OUT) now: 0 where there is none yet. */
static uint64_t tt_file_size(void)
{
	char path[MAX_PATH];
	WIN32_FILE_ATTRIBUTE_DATA data;
	DWORD len = GetEnvironmentVariableA("TICKTRACE_OUT", path, sizeof path);
	if (!len || len >= sizeof path || !GetFileAttributesExA(path, GetFileExInfoStandard, &data))
		return 0;
	return (uint64_t)data.nFileSizeHigh << 32 | data.nFileSizeLow;
}

static DWORD WINAPI tt_spinner(void *arg)
{
	volatile LONG64 *spun = arg;
	TT_INSTANT("registered");
	ReleaseSemaphore(tt_registered, 1, NULL);
	WaitForSingleObject(tt_go, INFINITE);
	for (unsigned long i = 0;; i++) {
		TT_SCOPE("outer");
		{
			TT_SCOPE("inner");
			TT_COUNTER("i", i & 1023);
		}
		*spun = (LONG64)i + 1;
	}
	return 0;
}

/* Whether every thread spun SPUN times, waited for up to 60 s. */
static int tt_all_spun(LONG64 turns)
{
	for (int waited = 0; waited < 60000; waited += 10) {
		int all = 1;
		for (int k = 0; k < 4; k++)
			all &= tt_spun[k] >= turns;
		if (all)
			return 1;
		Sleep(10);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int ms = atoi(argv[2]), dumps = argc > 3 ? atoi(argv[3]) : 0;
	int kill = strcmp(argv[1], "kill") == 0;
	if (!(tt_go = CreateEventW(NULL, TRUE, !kill, NULL)) ||
	    !(tt_registered = CreateSemaphoreW(NULL, 0, 4, NULL)))
		return 2;
	for (int k = 0; k < 4; k++)
		if (!CreateThread(NULL, 0, tt_spinner, (void *)&tt_spun[k], 0, NULL))
			return 2;
	if (kill) {
		Sleep(300); /* (tt-live describes the run every 100 ms) */
		uint64_t before = tt_file_size();
		SetEvent(tt_go);
		Sleep(ms);
		if (!tt_all_spun(SPUN)) {
			fprintf(stderr, "dropping: the threads did not spin %d times in 60 s\n", SPUN);
			return 3;
		}
		/* (once the file grew past what it held as the threads began to drop: tt-stream
		 * drained none in 600 ms at load 24, and a file of no drops locates none) */
		int live = GetEnvironmentVariableA("TICKTRACE_LIVE", NULL, 0) != 0; /* (no file grows) */
		for (int waited = 0; !live && tt_file_size() <= before && waited < 60000; waited += 10)
			Sleep(10);
		TerminateProcess(GetCurrentProcess(), 9);
	}
	if (strcmp(argv[1], "exit") == 0) {
		Sleep(ms);
		if (!tt_all_spun(SPUN_EXIT)) {
			fprintf(stderr, "dropping: the threads did not spin %d times in 60 s\n", SPUN_EXIT);
			return 3;
		}
		return 0;
	}
	/* (each copy with the four threads in it: at load ~15 the first, 20 ms in, had none) */
	for (int k = 0; k < 4; k++)
		if (WaitForSingleObject(tt_registered, 60000) != WAIT_OBJECT_0)
			return 3;
	int move = argc > 4 && strcmp(argv[4], "move") == 0;
	for (int d = 0; d < dumps; d++) {
		Sleep(ms);
		char out[MAX_PATH], moved[MAX_PATH + 8];
		DWORD len = GetEnvironmentVariableA("TICKTRACE_OUT", out, sizeof out);
		if (move && d == dumps / 2 &&
		    (!len || len >= sizeof out || snprintf(moved, sizeof moved, "%s.moved", out) < 0 ||
		     !MoveFileExA(out, moved, 0))) {
			fprintf(stderr, "dropping: %s not moved: error %lu\n", out, GetLastError());
			return 1;
		}
		char path[32];
		snprintf(path, sizeof path, "dump-%02d.ttr", d);
		int rc = tt_dump(path);
		if (rc) {
			fprintf(stderr, "dropping: tt_dump(%s): %d\n", path, rc);
			return 1;
		}
	}
	return 0;
}
