/* Programs whose threads end without exit() (ending.py): overflow: main recurses,
 * each call in a scope, until its stack overflows; exitthread: main records a scope,
 * starts a worker that records 20 scopes of 10 ms, and leaves by ExitThread (Windows
 * ends the process as its last thread ends); filter: main sets a filter of its own
 * (SetUnhandledExceptionFilter, a crash reporter's: it says so on stderr and has the
 * process ended), then makes an access violation inside a scope; raise: an exception
 * nothing handles (RaiseException) inside a scope.
 *
 *     ending.exe overflow|exitthread|filter|raise */
#include <stdio.h>
#include <string.h>
#include <windows.h>

#include "ticktrace.h"

static volatile int tt_deeper = 1; /* (always: gcc sees no end otherwise) */

__attribute__((noinline)) static int tt_recurse(int depth)
{
	if (!tt_deeper)
		return 0;
	TT_SCOPE("recurse");
	volatile char frame[256];
	frame[0] = (char)depth;
	return tt_recurse(depth + 1) + frame[0];
}

static DWORD WINAPI tt_worker(void *arg)
{
	(void)arg;
	tt_thread_name("last-worker");
	for (int i = 0; i < 20; i++) {
		TT_SCOPE("work");
		Sleep(10);
	}
	return 0;
}

static LONG WINAPI tt_own_filter(EXCEPTION_POINTERS *e)
{
	(void)e;
	fprintf(stderr, "own filter ran\n");
	fflush(stderr);
	return EXCEPTION_EXECUTE_HANDLER;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (strcmp(argv[1], "overflow") == 0)
		return tt_recurse(0);
	if (strcmp(argv[1], "filter") == 0) {
		SetUnhandledExceptionFilter(tt_own_filter);
		TT_SCOPE("crashing");
		*(volatile int *)16 = 1;
		return 0;
	}
	if (strcmp(argv[1], "raise") == 0) {
		TT_SCOPE("raising");
		RaiseException(0xE0000001, 0, 0, NULL);
		return 0;
	}
	{
		TT_SCOPE("main-part");
		Sleep(5);
	}
	if (!CreateThread(NULL, 0, tt_worker, NULL, 0, NULL))
		return 2;
	ExitThread(0);
}
