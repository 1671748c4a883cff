/* Mode stream's two-record events under load (modes.py stream_pairs): N times a scope
 * and a counter (a COUNTER record and its VALUE), as fast as the thread can, so that
 * tt-stream writes chunks while they fill and gives them back to be filled again.
 * (The outside tester's big.c.)
 *
 *     pairs.exe N */
#include <stdio.h>
#include <stdlib.h>

#include "ticktrace.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3000000;
	for (long i = 0; i < n; i++) {
		TT_SCOPE("s");
		TT_COUNTER("c", i & 1023);
	}
	puts("pairs");
	return 0;
}
