/* A Windows program that records what a user records (scopes, an argument, instants,
 * counters, flows between threads, thread names by tt_thread_name and by
 * SetThreadDescription) and then starts threads one after another, each of which
 * exits before the next starts, so Windows hands the next one the TEB the last one
 * left: each must still record into a buffer of its own. Run by recorder.py under
 * Wine, whose check converts its file on Linux.
 *
 *   recorder.exe OUT.ttr|--at-exit|--crash [SEQUENTIAL_THREADS]
 *
 * OUT.ttr: written by tt_dump; --at-exit: by the exit, where TICKTRACE_OUT says;
 * --crash: by the crash handler, as the program dies of an access violation.
 * Prints how many of the sequential threads had a TEB an earlier one had had. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "ticktrace.h"

static HANDLE tt_handoff; /* the producer's item is ready */

static DWORD WINAPI tt_producer(void *arg)
{
	(void)arg;
	tt_thread_name("producer");
	for (int i = 0; i < 3; i++) {
		TT_SCOPE("produce");
		TT_BEGIN_ARG("item", i);
		TT_FLOW_OUT(100 + i);
		TT_END();
		TT_COUNTER("queued", i + 1);
	}
	SetEvent(tt_handoff);
	return 0;
}

static DWORD WINAPI tt_consumer(void *arg)
{
	(void)arg;
	/* (Windows 10 1607 and Wine have it; mingw-w64's headers of Debian 12 not yet) */
	typedef HRESULT(WINAPI * describe_fn)(HANDLE, PCWSTR);
	describe_fn describe = (describe_fn)(void (*)(void))GetProcAddress(
		GetModuleHandleW(L"kernel32.dll"), "SetThreadDescription");
	if (describe)
		describe(GetCurrentThread(), L"consumer");
	WaitForSingleObject(tt_handoff, INFINITE);
	for (int i = 0; i < 3; i++) {
		TT_SCOPE("consume");
		TT_FLOW_IN(100 + i);
		TT_INSTANT("took");
	}
	return 0;
}

#define TT_SEQUENTIAL_MAX 1000
static void *tt_tebs[TT_SEQUENTIAL_MAX];

/* One of the threads started one after another. */
static DWORD WINAPI tt_sequential(void *arg)
{
	void *teb; /* (NtCurrentTeb(), which GCC 12 warns about) */
	__asm__("mov %%gs:0x30, %0" : "=r"(teb));
	tt_tebs[(uintptr_t)arg - 1] = teb;
	TT_SCOPE("sequential");
	TT_COUNTER("sequence", (int64_t)(uintptr_t)arg);
	return 0;
}

static HANDLE tt_start(LPTHREAD_START_ROUTINE main, void *arg)
{
	HANDLE thread = CreateThread(NULL, 0, main, arg, 0, NULL);
	if (!thread) {
		fprintf(stderr, "recorder: CreateThread failed (%lu)\n", GetLastError());
		exit(1);
	}
	return thread;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: recorder OUT.ttr [SEQUENTIAL_THREADS]\n");
		return 2;
	}
	int sequential = argc > 2 ? atoi(argv[2]) : 0;
	if (sequential < 0 || sequential > TT_SEQUENTIAL_MAX) {
		fprintf(stderr, "recorder: at most %d sequential threads\n", TT_SEQUENTIAL_MAX);
		return 2;
	}
	tt_thread_name("main");
	TT_SCOPE("main");
	tt_handoff = CreateEventW(NULL, TRUE, FALSE, NULL);
	HANDLE producer = tt_start(tt_producer, NULL), consumer = tt_start(tt_consumer, NULL);
	WaitForSingleObject(producer, INFINITE);
	WaitForSingleObject(consumer, INFINITE);
	CloseHandle(producer);
	CloseHandle(consumer);
	for (int i = 0; i < sequential; i++) {
		HANDLE t = tt_start(tt_sequential, (void *)(uintptr_t)(i + 1));
		WaitForSingleObject(t, INFINITE);
		CloseHandle(t);
	}
	int reused = 0;
	for (int i = 0; i < sequential; i++)
		for (int j = 0; j < i; j++)
			if (tt_tebs[j] == tt_tebs[i]) {
				reused++;
				break;
			}
	printf("reused TEBs: %d\n", reused);
	if (strcmp(argv[1], "--at-exit") == 0)
		return 0;
	if (strcmp(argv[1], "--crash") == 0) {
		fflush(stdout);
		int *volatile nowhere = NULL;
		*nowhere = 1; /* an access violation nobody handles */
	}
	int rc = tt_dump(argv[1]);
	if (rc < 0) {
		fprintf(stderr, "recorder: tt_dump(%s): %d\n", argv[1], rc);
		return 1;
	}
	return 0;
}
