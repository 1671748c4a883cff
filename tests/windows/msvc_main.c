/* The entry of msvc_link.sh's program, compiled for MSVC's ABI and linked by an MSVC-style
 * linker with no C runtime (none is on this machine): three calls of hooked.asm's
 * tt_hooked and tt_hooked_half, whose _penter and _pexit come from libticktrace.dll
 * through ticktrace.lib. Exits 0, or 1 where a hook changed an argument or a result. */
#include <stdint.h>

int tt_hooked(int64_t a, double b, int64_t c, double d);
double tt_hooked_half(double x);
__declspec(dllimport) void __stdcall ExitProcess(unsigned code);

/* (MSVC's code that uses floating point refers to it; its C runtime defines it) */
int _fltused;

void tt_msvc_start(void)
{
	int kept = 1;
	for (int i = 0; i < 3; i++) {
		kept &= tt_hooked(0x1111, 2.5, 0x3333, 4.5) == 1;
		kept &= tt_hooked_half(3.0 + i) == (3.0 + i) / 2;
	}
	ExitProcess(kept ? 0 : 1);
}
