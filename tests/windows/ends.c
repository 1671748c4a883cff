/* How a Windows run ends and names its file (ends.py), linked with the static library
 * (its own _exit, and the runtime's registry lock to hold, as its threads do):
 *
 *   held-crash  a thread holds the runtime's lock (as tt-live, tt-sched or a thread
 *               taking a chunk do, a moment) while main dies of an access violation
 *   spin-exit   four threads record without end; main returns after 100 ms
 *   uexit       100 scopes, then _exit(3): no atexit runs
 *   parent      100 scopes, this program run again as `child` (100 scopes of its
 *               own), 100 more; prints the child's pid
 *   names       a thread named by tt_thread_name, one by SetThreadDescription, each
 *               61 bytes of one letter and then three-byte characters past the 63
 *               bytes a name keeps
 *   plain       10 scopes
 *   abort       10 scopes, then abort() inside one (msvcrt raises SIGABRT, exit 3)
 *   held-exit   10 scopes, then _exit(3) while a thread holds the runtime's sched lock
 *               (as tt-sched does in its tick): ExitProcess ends the holder, the lock
 *               held for ever
 *   held-abort  the same after abort()'s dump: the program's own SIGABRT handler calls
 *               the one it replaced (ticktrace's, set at start-up), then has the lock
 *               taken
 *   chdir       10 scopes, into a new directory `sub` (SetCurrentDirectory), 10 more
 *   terminated  a thread that named itself "victim" (SetThreadDescription) ended by
 *               TerminateThread inside a scope, once it recorded (its handle closed:
 *               its id free for another), one "exiter" that returns
 *   wait        10 scopes, then a file `ready.PID` made, and 10 more once a file `go`
 *               is there (60 s at most: exit 4) */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "ticktrace.h"
#include "platform/platform.h"

/* (the runtime's: src/core/registry.c) */
void tt__registry_lock(struct tt_os_signals *old);
void tt__registry_unlock(const struct tt_os_signals *old);

/* (Debian 12's mingw-w64 headers do not declare it) */
HRESULT WINAPI SetThreadDescription(HANDLE thread, PCWSTR description);

static HANDLE tt_held;

static DWORD WINAPI tt_holder(void *unused)
{
	(void)unused;
	TT_SCOPE("holder");
	struct tt_os_signals old;
	tt__registry_lock(&old);
	SetEvent(tt_held);
	Sleep(300);
	tt__registry_unlock(&old);
	Sleep(INFINITE);
	return 0;
}

/* (the runtime's: src/core/sched.c) */
void tt__sched_lock(struct tt_os_signals *old);

/* Takes the sched lock and keeps it until ExitProcess ends the thread. */
static DWORD WINAPI tt_sched_holder(void *unused)
{
	(void)unused;
	struct tt_os_signals old;
	tt__sched_lock(&old);
	SetEvent(tt_held);
	Sleep(INFINITE);
	return 0;
}

static void tt_hold_sched(void)
{
	tt_held = CreateEventW(NULL, TRUE, FALSE, NULL);
	CreateThread(NULL, 0, tt_sched_holder, NULL, 0, NULL);
	WaitForSingleObject(tt_held, INFINITE);
}

static void (*tt_abort_before)(int);

static void tt_abort_handler(int sig)
{
	tt_abort_before(sig);
	tt_hold_sched(); /* (msvcrt's abort then calls _exit(3)) */
}

static DWORD WINAPI tt_spinner(void *unused)
{
	(void)unused;
	for (uint64_t i = 0;; i++) {
		TT_SCOPE("spin");
		TT_COUNTER("i", (int64_t)(i & 1023));
	}
	return 0;
}

static DWORD WINAPI tt_named(void *how)
{
	char name[80];
	memset(name, 'x', 61);
	strcpy(name + 61, "\xe6\x97\xa5\xe6\x9c\xac"); /* 日本: bytes 62 to 67 */
	if (how) {
		wchar_t wide[80];
		for (int i = 0; i < 61; i++)
			wide[i] = L'y';
		wcscpy(wide + 61, L"\x65e5\x65e5\x65e5");
		SetThreadDescription(GetCurrentThread(), wide);
	} else {
		tt_thread_name(name);
	}
	TT_SCOPE("named");
	return 0;
}

static void tt_scopes(const char *what, int n)
{
	for (int i = 0; i < n; i++) {
		TT_SCOPE_DYN(what);
	}
}

/* (a name given by SetThreadDescription alone, which the runtime reads) */
static DWORD WINAPI tt_victim(void *started)
{
	SetThreadDescription(GetCurrentThread(), started ? L"victim" : L"exiter");
	TT_SCOPE("victim-work");
	if (!started)
		return 0;
	tt_scopes("victim-spin", 10000); /* (chunks of its own taken) */
	/* Ended waiting, inside its scope: ended as it took a chunk it would keep the
	 * runtime's lock for ever, as any lock TerminateThread ends a holder of, and the
	 * exiter's first event wait for it (one run in ten under Wine: the exiter
	 * waited for the lock, held, for ever). */
	SetEvent(started);
	Sleep(INFINITE);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *how = argv[1];
	if (strcmp(how, "held-crash") == 0) {
		tt_scopes("before", 1000);
		tt_held = CreateEventW(NULL, TRUE, FALSE, NULL);
		CreateThread(NULL, 0, tt_holder, NULL, 0, NULL);
		WaitForSingleObject(tt_held, INFINITE);
		volatile uintptr_t nowhere = 8;
		*(volatile int *)nowhere = 1; /* an access violation nobody handles */
	} else if (strcmp(how, "spin-exit") == 0) {
		for (int i = 0; i < 4; i++)
			CreateThread(NULL, 0, tt_spinner, NULL, 0, NULL);
		Sleep(100);
	} else if (strcmp(how, "uexit") == 0) {
		tt_scopes("before-exit", 100);
		_exit(3);
	} else if (strcmp(how, "parent") == 0) {
		tt_scopes("parent-work", 100);
		wchar_t self[MAX_PATH], line[MAX_PATH + 16];
		GetModuleFileNameW(NULL, self, MAX_PATH);
		swprintf(line, sizeof line / sizeof *line, L"\"%ls\" child", self);
		STARTUPINFOW si = {.cb = sizeof si};
		PROCESS_INFORMATION pi;
		if (!CreateProcessW(self, line, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
			return 2;
		WaitForSingleObject(pi.hProcess, INFINITE);
		printf("child %lu\n", (unsigned long)pi.dwProcessId);
		tt_scopes("parent-work", 100);
	} else if (strcmp(how, "child") == 0) {
		tt_scopes("child-work", 100);
	} else if (strcmp(how, "names") == 0) {
		for (int i = 0; i < 2; i++) {
			HANDLE t = CreateThread(NULL, 0, tt_named, i ? (void *)1 : NULL, 0, NULL);
			WaitForSingleObject(t, INFINITE);
		}
	} else if (strcmp(how, "plain") == 0) {
		tt_scopes("plain", 10);
	} else if (strcmp(how, "chdir") == 0) {
		tt_scopes("before-chdir", 10);
		if (!CreateDirectoryW(L"sub", NULL) || !SetCurrentDirectoryW(L"sub"))
			return 2;
		tt_scopes("after-chdir", 10);
	} else if (strcmp(how, "terminated") == 0) {
		HANDLE started = CreateEventW(NULL, TRUE, FALSE, NULL);
		HANDLE victim = CreateThread(NULL, 0, tt_victim, started, 0, NULL);
		if (!victim || WaitForSingleObject(started, 60000) != WAIT_OBJECT_0)
			return 2;
		TerminateThread(victim, 9);
		WaitForSingleObject(victim, INFINITE);
		CloseHandle(victim);
		HANDLE exiter = CreateThread(NULL, 0, tt_victim, NULL, 0, NULL);
		WaitForSingleObject(exiter, INFINITE);
		CloseHandle(exiter);
	} else if (strcmp(how, "wait") == 0) {
		tt_scopes("before-go", 10);
		char ready[32];
		snprintf(ready, sizeof ready, "ready.%lu", (unsigned long)GetCurrentProcessId());
		HANDLE f = CreateFileA(ready, GENERIC_WRITE, 0, NULL, CREATE_NEW, 0, NULL);
		if (f == INVALID_HANDLE_VALUE)
			return 2;
		CloseHandle(f);
		int ms = 0;
		for (; ms < 60000 && GetFileAttributesA("go") == INVALID_FILE_ATTRIBUTES; ms += 10)
			Sleep(10);
		if (ms >= 60000)
			return 4;
		tt_scopes("after-go", 10);
	} else if (strcmp(how, "held-exit") == 0) {
		tt_scopes("before-exit", 10);
		tt_hold_sched();
		_exit(3);
	} else if (strcmp(how, "held-abort") == 0) {
		tt_scopes("before-abort", 10);
		tt_abort_before = signal(SIGABRT, tt_abort_handler);
		abort();
	} else if (strcmp(how, "abort") == 0) {
		tt_scopes("before-abort", 10);
		TT_SCOPE("aborting");
		abort();
	} else {
		return 2;
	}
	return 0;
}
