/* MSVC's /Gh /GH hooks, _penter and _pexit, called as MSVC's code calls them
 * (hooked.asm): they keep the arguments and the return value, and record each call of
 * tt_hooked (around one of tt_hooked_leaf) and tt_hooked_half, three times each.
 * Exit 0, or 1 with what a hook broke. Run by instrumented.py under Wine.
 *
 *   hooked.exe [deep N]: instead, N calls of tt_hooked_deep nested in one another
 *   (penter_deep.py). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tt_hooked(int64_t a, double b, int64_t c, double d);
double tt_hooked_half(double x);
int64_t tt_hooked_deep(int64_t n);

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "deep") == 0) {
		int64_t n = atoll(argv[2]);
		return tt_hooked_deep(n - 1) == n - 1 ? 0 : 1;
	}
	for (int i = 0; i < 3; i++) {
		int kept = tt_hooked(0x1111, 2.5, 0x3333, 4.5);
		double half = tt_hooked_half(3.0 + i);
		if (kept != 1 || half != (3.0 + i) / 2) {
			fprintf(stderr, "hooked: _penter or _pexit changed a register: arguments %s, "
					"return value %g\n", kept == 1 ? "kept" : "changed", half);
			return 1;
		}
	}
	return 0;
}
