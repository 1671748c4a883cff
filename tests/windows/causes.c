/* Spikes' causes from Windows' thread counters (src/core/counters.c), run by
 * causes.py under Wine: a scope that computes for 150 ms of CPU time, then one that
 * sleeps 150 ms, each a spike over 50 ms whose split says how much of it was on CPU.
 *
 *   causes.exe [--etw] OUT.ttr
 *
 * --etw: the run its switches split (src/base/switches_windows.c), which needs real Windows and
 * an administrator: exit 77 under Wine (whose ETW has no kernel events) or not
 * elevated. */
#include <stdio.h>
#include <string.h>
#include <windows.h>

#include "ticktrace.h"

static volatile unsigned long sink;

static uint64_t thread_cpu_ns(void)
{
	FILETIME created, exited, kernel, user;
	GetThreadTimes(GetCurrentThread(), &created, &exited, &kernel, &user);
	return ((uint64_t)kernel.dwHighDateTime << 32 | kernel.dwLowDateTime) * 100 +
	       ((uint64_t)user.dwHighDateTime << 32 | user.dwLowDateTime) * 100;
}

int main(int argc, char **argv)
{
	int etw = argc == 3 && strcmp(argv[1], "--etw") == 0;
	if (argc != 2 + etw) {
		fprintf(stderr, "usage: causes.exe [--etw] OUT.ttr\n");
		return 2;
	}
	if (etw && GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "wine_get_version")) {
		fprintf(stderr, "causes: Wine's ETW has no kernel events: switches need real Windows; "
				"not run\n");
		return 77;
	}
	HANDLE token;
	TOKEN_ELEVATION elevation = {0};
	DWORD size;
	if (etw && OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) {
		GetTokenInformation(token, TokenElevation, &elevation, sizeof elevation, &size);
		CloseHandle(token);
	}
	if (etw && !elevation.TokenIsElevated) {
		fprintf(stderr, "causes: not elevated: switches need an administrator; not run\n");
		return 77;
	}
	Sleep(50); /* (readings before the first spike) */
	{
		TT_SCOPE("compute");
		for (uint64_t until = thread_cpu_ns() + 150000000; thread_cpu_ns() < until;)
			for (unsigned long i = 0; i < 1000000; i++)
				sink += i * i;
	}
	{
		TT_SCOPE("sleep");
		Sleep(150);
	}
	Sleep(50); /* (readings after the last) */
	int rc = tt_dump(argv[1 + etw]);
	if (rc != 0)
		fprintf(stderr, "causes: tt_dump: %d\n", rc);
	return rc == 0 ? 0 : 1;
}
