/* A program that loads plug.dll (beside it), calls tt_plug_work(10) and unloads it
 * (FreeLibrary), ROUNDS times (the last kept loaded with `keep`), then returns (exit)
 * or ends by TerminateProcess (kill) once the run's file holds what it did: mode
 * stream's after tt_dump(NULL) wrote it, a live file's after tt-live looked twice
 * since (the first look may have begun before the calls). unloaded.py.
 *
 *   unloaded.exe ROUNDS [exit|kill [keep]] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "ticktrace.h"
#include "ticktrace/format.h"

typedef int (*tt_plug_fn)(int);

/* The live file's end anchor, which tt-live writes as each look ends (zeros: not read).
 * (These two not recorded: the rows are the library's and main's.) */
__attribute__((no_instrument_function)) static struct tt_anchor tt_live_end(const char *live)
{
	struct tt_file_header h = {0};
	FILE *f = fopen(live, "rb");
	if (f) {
		if (fread(&h, sizeof h, 1, f) != 1)
			memset(&h, 0, sizeof h);
		fclose(f);
	}
	return h.end;
}

/* Waits (20 s at most) until tt-live looked twice more. */
__attribute__((no_instrument_function)) static int tt_live_looked(void)
{
	const char *out = getenv("TICKTRACE_OUT");
	char live[MAX_PATH + 8] = "";
	if (out && strlen(out) < MAX_PATH)
		strcat(strcpy(live, out), ".live");
	struct tt_anchor last = tt_live_end(live);
	int looks = 0;
	for (int waited = 0; waited < 2000 && looks < 2; waited++) {
		Sleep(10);
		struct tt_anchor now = tt_live_end(live);
		if (memcmp(&now, &last, sizeof now) != 0) {
			looks++;
			last = now;
		}
	}
	if (looks < 2)
		fprintf(stderr, "unloaded: %s: tt-live did not look twice in 20 s\n", live);
	return looks == 2;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1;
	int kill = argc > 2 && strcmp(argv[2], "kill") == 0, keep = argc > 3 && strcmp(argv[3], "keep") == 0;
	const char *mode = getenv("TICKTRACE_MODE");
	int stream = mode && strcmp(mode, "stream") == 0;
	/* plug.dll beside this program, or at TT_PLUG_DLL (a path deeper than MAX_PATH) */
	static wchar_t path[32768];
	DWORD n = GetEnvironmentVariableW(L"TT_PLUG_DLL", path, 32768);
	if (!n || n >= 32768) {
		n = GetModuleFileNameW(NULL, path, MAX_PATH);
		while (n && path[n - 1] != L'\\')
			n--;
		wcscpy(path + n, L"plug.dll");
	}
	for (int r = 0; r < rounds; r++) {
		HMODULE plug = LoadLibraryW(path);
		tt_plug_fn work = plug ? (tt_plug_fn)(void (*)(void))GetProcAddress(plug, "tt_plug_work") : NULL;
		if (!work) {
			fprintf(stderr, "unloaded: no plug.dll with tt_plug_work: %lu\n", GetLastError());
			return 1;
		}
		if (work(10) != 315) {
			fprintf(stderr, "unloaded: tt_plug_work(10) is not 315\n");
			return 1;
		}
		/* Mode stream: the file written while this load is in (MODULES with it), so that
		 * the next load, most likely where this one was, must be told again (the loaded
		 * modules' handles were the same then, and it was not: 1 run in 6). */
		if (stream && tt_dump(NULL) != 0)
			return 1;
		if (keep && r == rounds - 1)
			break;
		if (!FreeLibrary(plug) || GetModuleHandleW(L"plug.dll")) {
			fprintf(stderr, "unloaded: plug.dll still loaded\n");
			return 1;
		}
	}
	if (kill) {
		const char *live = getenv("TICKTRACE_LIVE");
		if (live && strcmp(live, "1") == 0 ? !tt_live_looked() : tt_dump(NULL) != 0)
			return 1;
		fflush(stderr);
		TerminateProcess(GetCurrentProcess(), 9);
	}
	return 0;
}
