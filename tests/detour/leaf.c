/* A 6-byte leaf (`lea; ret` at -O2), called in a loop from a function that, knowing
 * its callee needs no stack alignment (GCC's -fipa-stack-alignment), calls it with
 * rsp 8 bytes off; traced with `ticktrace record -f work_a` (test_detour.c), alone
 * and with work_b. */
#include <stdio.h>

__attribute__((noinline)) long work_a(long x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) long work_b(long n)
{
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += work_a(i);
	return sum;
}

int main(void)
{
	printf("%ld\n", work_b(1000));
	return 0;
}
