/* A program that loads plug.dll (beside it), calls tt_plug_work(10) and unloads it
 * (FreeLibrary), ROUNDS times, then returns: the trace is written after the library
 * is gone (unloaded.py).
 *
 *   unloaded.exe ROUNDS */
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>

typedef int (*tt_plug_fn)(int);

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1;
	wchar_t path[MAX_PATH];
	DWORD n = GetModuleFileNameW(NULL, path, MAX_PATH);
	while (n && path[n - 1] != L'\\')
		n--;
	wcscpy(path + n, L"plug.dll");
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
		if (!FreeLibrary(plug) || GetModuleHandleW(L"plug.dll")) {
			fprintf(stderr, "unloaded: plug.dll still loaded\n");
			return 1;
		}
	}
	return 0;
}
