/* A program to trace with `ticktrace record -f 'work_*' -f 'odd_*'` (test_detour.c):
 * built plainly at -O2, with -fpatchable-function-entry, and with
 * -finstrument-functions, its call trees must be the same. The work_* functions are
 * patchable; the odd_* ones cannot be patched safely and are not recorded in any
 * build (no_instrument_function). It prints results that depend on every kind of
 * argument register, so that a trampoline that loses one changes the output. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define WORK __attribute__((noinline))
/* (no NOP area either, in the -fpatchable-function-entry build) */
#define ODD __attribute__((noinline, no_instrument_function, patchable_function_entry(0, 0)))

volatile int work_global = 3;

/* No NOP area even in the -fpatchable-function-entry build, so that build has both
 * kinds of patch in one module; first in the file, so patched first. */
__attribute__((noinline, patchable_function_entry(0, 0))) int work_no_nops(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 5 + 3;
}

/* Reads a global first: a RIP-relative operand to rewrite. */
WORK int work_read_global(int x)
{
	return work_global * x + 1;
}

WORK double work_float(double a, double b, float c, double d, double e, double f, double g,
		       double h)
{
	return a * b + c - d / e + f * g - h;
}

WORK long work_many(long a, long b, long c, long d, long e, long f, long g, long h)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

WORK int work_leaf(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 7 + (x >> 2);
}

/* Ends in a call that -O2 makes a tail call (a jump). */
WORK int work_tail(int x)
{
	if (x < 0)
		return -1;
	return work_leaf(x + 1);
}

/* Recursive; the asm keeps -O2 from making it a loop with an accumulator, which it
 * does not do in the -finstrument-functions build. */
WORK int work_recurse(int n)
{
	if (n <= 0)
		return work_leaf(n);
	int inner = work_recurse(n - 1);
	__asm__ volatile("" : "+r"(inner));
	return inner + n;
}

/* Too short: three bytes. */
ODD int odd_tiny(void)
{
	return 0;
}

/* A loop back into its first bytes, and a jrcxz among them: both cannot move. */
__asm__(".text\n"
	".globl odd_spin\n.type odd_spin, @function\n"
	"odd_spin:\n\tmov %edi, %eax\n1:\tsub $1, %eax\n\tjg 1b\n\tret\n"
	".size odd_spin, .-odd_spin\n"
	".globl odd_jrcxz\n.type odd_jrcxz, @function\n"
	"odd_jrcxz:\n\tmov %rdi, %rcx\n\tjrcxz 2f\n\tmov $1, %eax\n\tret\n2:\txor %eax, %eax\n\tret\n"
	".size odd_jrcxz, .-odd_jrcxz\n");
int odd_spin(int n);
int odd_jrcxz(long n);

/* An alternate entry 3 bytes in, as hand-written code has: patching odd_alt would put
 * its jump over odd_alt_inner's entry, and patching odd_alt_inner would overwrite
 * code odd_alt runs through; both return 2 * n + 1. */
__asm__(".text\n"
	".globl odd_alt\n.type odd_alt, @function\n"
	"odd_alt:\n\tmov %edi, %edi\n\tnop\n"
	".globl odd_alt_inner\n.type odd_alt_inner, @function\n"
	"odd_alt_inner:\n\tlea 1(%rdi,%rdi), %eax\n\tret\n"
	".size odd_alt_inner, .-odd_alt_inner\n"
	".size odd_alt, .-odd_alt\n");
int odd_alt(int n);
int odd_alt_inner(int n);

/* A cold part, as GCC splits one off, that jumps back into its function's first bytes;
 * returns n + (n - 1) + ... + 1. */
__asm__(".text\n"
	".globl odd_hot\n.type odd_hot, @function\n"
	"odd_hot:\n\txor %eax, %eax\n1:\tadd %edi, %eax\n\tsub $1, %edi\n\tjg odd_hot.cold\n\tret\n"
	".size odd_hot, .-odd_hot\n"
	".type odd_hot.cold, @function\n"
	"odd_hot.cold:\n\tjmp 1b\n"
	".size odd_hot.cold, .-odd_hot.cold\n");
int odd_hot(int n);

static void *work_thread(void *arg)
{
	long n = (long)arg, sum = 0;
	for (long i = 0; i < n; i++)
		sum += work_recurse(2);
	return (void *)sum;
}

__attribute__((no_instrument_function)) int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, work_thread, (void *)3L) != 0)
		return 1;
	void *sum;
	pthread_join(t, &sum);
	long total = (long)sum;
	total += work_read_global(5) + work_no_nops(2);
	total += work_many(1, 2, 3, 4, 5, 6, 7, 8);
	total += work_tail(4);
	total += work_recurse(3);
	total += odd_tiny() + odd_spin(3) + odd_jrcxz(0) + odd_alt(3) + odd_alt_inner(4) +
		 odd_hot(4);
	double f = work_float(1.5, 2.0, 0.25f, 9.0, 3.0, 0.5, 4.0, 0.125);
	printf("total %ld float %.4f\n", total, f);
	return 0;
}
