/* A recursion as deep as its argument (record_cli.sh deep), then a shallow one: the
 * depths, and exit status 0. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long work_recurse(long n)
{
	if (n == 0)
		return 0;
	long r = work_recurse(n - 1);
	__asm__ volatile("" : "+r"(r)); /* (not a tail call) */
	return r + 1;
}

int main(int argc, char **argv)
{
	long depth = argc > 1 ? atol(argv[1]) : 10;
	printf("%ld %ld\n", work_recurse(depth), work_recurse(10));
	return 0;
}
