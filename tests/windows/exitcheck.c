/* What ExitProcess found still running (exiting.c): the threads it is given, looked at
 * as the process detaches, after ExitProcess ended every thread left. A thread that
 * returned ended with code 0; one ExitProcess ended has the process's exit code
 * (exiting.exe's 3). One line on stderr, as the DLL detaches:
 *
 *     exitcheck: N threads of ticktrace's, K ended by ExitProcess */
#include <stdio.h>
#include <windows.h>

#define TT_CHECKED 64

static HANDLE tt_checked[TT_CHECKED];
static size_t tt_nchecked;
static DWORD tt_exit_code;

/* The threads to look at (handles with THREAD_QUERY_LIMITED_INFORMATION), and the
 * code the process exits with. */
__declspec(dllexport) void tt_exitcheck_watch(const HANDLE *threads, size_t n, DWORD exit_code)
{
	for (size_t i = 0; i < n && tt_nchecked < TT_CHECKED; i++)
		tt_checked[tt_nchecked++] = threads[i];
	tt_exit_code = exit_code;
}

BOOL WINAPI DllMain(HINSTANCE self, DWORD why, LPVOID reserved)
{
	(void)self;
	if (why != DLL_PROCESS_DETACH || !reserved) /* (reserved: the process ends) */
		return TRUE;
	size_t ended = 0;
	for (size_t i = 0; i < tt_nchecked; i++) {
		DWORD code = 0;
		if (GetExitCodeThread(tt_checked[i], &code) && code == tt_exit_code)
			ended++;
	}
	char line[128];
	int n = snprintf(line, sizeof line, "exitcheck: %u threads of ticktrace's, %u ended by ExitProcess\n",
			 (unsigned)tt_nchecked, (unsigned)ended);
	DWORD written;
	WriteFile(GetStdHandle(STD_ERROR_HANDLE), line, (DWORD)n, &written, NULL);
	return TRUE;
}
