/* A 6-byte leaf (`lea; ret` at -O2), called in a loop from a function that, knowing
 * its callee needs no stack alignment (GCC's -fipa-stack-alignment), calls it with
 * rsp 8 bytes off; traced with `ticktrace record -f work_a` (test_detour.c), alone
 * and with the others. work_whole is five bytes, all moved into its stub, ret included. */
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

__asm__(".text\n"
	".globl work_whole\n.type work_whole, @function\n"
	"work_whole:\n\tlea 1(%rdi,%rdi), %eax\n\tret\n"
	".size work_whole, .-work_whole\n");
int work_whole(int n);

int main(void)
{
	printf("%ld %d\n", work_b(1000), work_whole(20));
	return 0;
}
