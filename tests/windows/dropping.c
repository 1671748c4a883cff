/* Threads that record while their buffers are full (dropping.py): four threads nest
 * two scopes and a counter as fast as they can, never joined, while main either
 * sleeps MS milliseconds and returns (the dump at exit, the threads still counting
 * their drops) or calls tt_dump("dump-NN.ttr") every MS milliseconds, DUMPS times.
 *
 *     dropping.exe exit MS
 *     dropping.exe dump MS DUMPS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "ticktrace.h"

static DWORD WINAPI tt_spinner(void *arg)
{
	(void)arg;
	for (unsigned long i = 0;; i++) {
		TT_SCOPE("outer");
		{
			TT_SCOPE("inner");
			TT_COUNTER("i", i & 1023);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int ms = atoi(argv[2]), dumps = argc > 3 ? atoi(argv[3]) : 0;
	for (int k = 0; k < 4; k++)
		if (!CreateThread(NULL, 0, tt_spinner, NULL, 0, NULL))
			return 2;
	if (strcmp(argv[1], "exit") == 0) {
		Sleep(ms);
		return 0;
	}
	for (int d = 0; d < dumps; d++) {
		Sleep(ms);
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
