/* Spikes' causes from Windows' thread counters (src/portable/counters.c), run by
 * causes.py under Wine: a scope that computes for 150 ms of CPU time, then one that
 * sleeps 150 ms, each a spike over 50 ms whose split says how much of it was on CPU.
 *
 *   causes.exe OUT.ttr */
#include <stdio.h>
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
	if (argc != 2) {
		fprintf(stderr, "usage: causes.exe OUT.ttr\n");
		return 2;
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
	int rc = tt_dump(argv[1]);
	if (rc != 0)
		fprintf(stderr, "causes: tt_dump: %d\n", rc);
	return rc == 0 ? 0 : 1;
}
