/* A program that exits while its threads record (exiting.py): WORKERS threads nest
 * scopes as fast as they can, never joined; once each recorded, main lists the
 * process's other threads, ticktrace's (every one neither main nor a worker), hands
 * them to exitcheck.dll, waits MS milliseconds and calls exit(3). The runtime's threads
 * are to have ended before ExitProcess (under Wine, one it ended in a system call took
 * the process down now and then: SIGSEGV in Wine's own code, past the exit).
 *
 *     exiting.exe WORKERS MS */
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>
#include <tlhelp32.h>

#include "ticktrace.h"

#define TT_EXIT_CODE 3
#define TT_WORKERS_MAX 16

void tt_exitcheck_watch(const HANDLE *threads, size_t n, DWORD exit_code);

static HANDLE tt_registered; /* released by each worker once it recorded */

static DWORD WINAPI tt_worker(void *arg)
{
	(void)arg;
	TT_INSTANT("registered");
	ReleaseSemaphore(tt_registered, 1, NULL);
	LARGE_INTEGER hz, now, until;
	QueryPerformanceFrequency(&hz);
	for (unsigned long i = 0;; i++) {
		TT_SCOPE("work");
		{
			TT_SCOPE("inner");
			TT_COUNTER("i", i & 1023);
		}
		/* (20 us apart: recording all along, and files a test converts quickly) */
		QueryPerformanceCounter(&until);
		until.QuadPart += hz.QuadPart / 50000;
		do
			QueryPerformanceCounter(&now);
		while (now.QuadPart < until.QuadPart);
	}
	return 0;
}

static int tt_is(DWORD tid, const DWORD *ids, int n)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == tid)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	int workers = argc > 1 ? atoi(argv[1]) : 0, ms = argc > 2 ? atoi(argv[2]) : 0;
	if (workers < 1 || workers > TT_WORKERS_MAX || !(tt_registered = CreateSemaphoreW(NULL, 0, workers, NULL)))
		return 2;
	DWORD ids[TT_WORKERS_MAX + 1] = {GetCurrentThreadId()};
	for (int k = 0; k < workers; k++)
		if (!CreateThread(NULL, 0, tt_worker, NULL, 0, &ids[k + 1]))
			return 2;
	for (int k = 0; k < workers; k++)
		WaitForSingleObject(tt_registered, INFINITE);
	HANDLE theirs[64];
	size_t n = 0;
	HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
	if (snap == INVALID_HANDLE_VALUE)
		return 2;
	THREADENTRY32 t = {.dwSize = sizeof t};
	for (BOOL more = Thread32First(snap, &t); more && n < 64; more = Thread32Next(snap, &t))
		if (t.th32OwnerProcessID == GetCurrentProcessId() && !tt_is(t.th32ThreadID, ids, workers + 1) &&
		    (theirs[n] = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, t.th32ThreadID)))
			n++;
	CloseHandle(snap);
	tt_exitcheck_watch(theirs, n, TT_EXIT_CODE);
	Sleep((DWORD)ms);
	exit(TT_EXIT_CODE);
}
