/* Many threads starting to record at once: batches of threads started together, each
 * naming itself and recording scopes, while the batch before exits. A thread's first
 * event registers it and a thread's exit unregisters it; Windows (and Wine) call the
 * exit callback holding their lock of fiber local storage, so registration taking that
 * lock under ticktrace's own (FlsSetValue) deadlocked the two. Run by threads.py under
 * Wine, with a timeout, several times.
 *
 *   threads.exe THREADS AT_ONCE SCOPES
 *
 * The file is written at exit (TICKTRACE_OUT); exit 0 once every thread is joined. */
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>

#include "ticktrace.h"

#define TT_AT_ONCE_MAX 64

static int tt_scopes;

static DWORD WINAPI tt_worker(void *arg)
{
	char name[32];
	snprintf(name, sizeof name, "t%d", (int)(intptr_t)arg);
	tt_thread_name(name);
	for (int i = 0; i < tt_scopes; i++) {
		TT_SCOPE("w");
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: threads THREADS AT_ONCE SCOPES\n");
		return 2;
	}
	int total = atoi(argv[1]), at_once = atoi(argv[2]);
	tt_scopes = atoi(argv[3]);
	if (total < 1 || at_once < 1 || at_once > TT_AT_ONCE_MAX || total % at_once) {
		fprintf(stderr, "threads: THREADS a multiple of AT_ONCE (1 to %d)\n", TT_AT_ONCE_MAX);
		return 2;
	}
	for (int i = 0; i < total; i += at_once) {
		HANDLE batch[TT_AT_ONCE_MAX];
		for (int j = 0; j < at_once; j++)
			if (!(batch[j] = CreateThread(NULL, 0, tt_worker, (void *)(intptr_t)(i + j), 0, NULL))) {
				fprintf(stderr, "threads: CreateThread failed (%lu)\n", GetLastError());
				return 1;
			}
		WaitForMultipleObjects(at_once, batch, TRUE, INFINITE);
		for (int j = 0; j < at_once; j++)
			CloseHandle(batch[j]);
	}
	return 0;
}
