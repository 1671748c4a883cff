/* Calls a patched function (test_detour.c: -f work_callee) with every register it
 * does not use holding a known value, as a caller built with GCC's -fipa-ra may rely
 * on, and prints them after the call: the same as without ticktrace. 3,000 times, so
 * that the thread's first event (the slow path, in C), later ones, the ones after
 * which a chunk is full (the slow path again) and, with a small TICKTRACE_BUFFER,
 * dropped ones are all crossed; the first call's registers are printed, and how many
 * calls left them otherwise. With the argument `misaligned`, every call is made with
 * rsp 8 bytes off the ABI's alignment, as GCC's -fipa-stack-alignment calls a leaf. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) int work_callee(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 7 + 3;
}

uint64_t regs_after[11];
uint64_t xmm_after[16];

/* rcx rdx rsi r8-r11 rbx rbp and xmm0-15 set, work_callee(5) called with rsp that
 * many bytes (0 or 8) off the ABI's alignment, all stored */
__asm__(".text\n"
	".globl call_with_known_registers\n"
	"call_with_known_registers:\n"
	"\tpush %rbx\n\tpush %rbp\n\tpush %r15\n\tpush %r12\n"
	"\tmov $8, %r12\n\tsub %rdi, %r12\n\tsub %r12, %rsp\n"
	"\tmov $0x1111, %rcx\n\tmov $0x2222, %rdx\n\tmov $0x3333, %rsi\n\tmov $0x4444, %r8\n"
	"\tmov $0x5555, %r9\n\tmov $0x6666, %r10\n\tmov $0x7777, %r11\n\tmov $0x8888, %rbx\n"
	"\tmov $0x9999, %rbp\n"
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"\tmov $(0x100 + \\i), %eax\n\tmovq %rax, %xmm\\i\n"
	".endr\n"
	"\tmov $5, %edi\n"
	"\tcall work_callee\n"
	"\tadd %r12, %rsp\n"
	"\tlea regs_after(%rip), %r15\n"
	"\tmov %rax, 0(%r15)\n\tmov %rcx, 8(%r15)\n\tmov %rdx, 16(%r15)\n\tmov %rsi, 24(%r15)\n"
	"\tmov %r8, 32(%r15)\n\tmov %r9, 40(%r15)\n\tmov %r10, 48(%r15)\n\tmov %r11, 56(%r15)\n"
	"\tmov %rbx, 64(%r15)\n\tmov %rbp, 72(%r15)\n"
	"\tlea xmm_after(%rip), %r15\n"
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"\tmovq %xmm\\i, (8 * \\i)(%r15)\n"
	".endr\n"
	"\tpop %r12\n\tpop %r15\n\tpop %rbp\n\tpop %rbx\n\tret\n");
void call_with_known_registers(long misaligned_by);

/* The registers after the last call, as text. */
static void print_registers(char *out, size_t cap)
{
	size_t n = 0;
	for (int i = 0; i < 10; i++)
		n += (size_t)snprintf(out + n, cap - n, "%llx ", (unsigned long long)regs_after[i]);
	for (int i = 0; i < 16; i++)
		n += (size_t)snprintf(out + n, cap - n, "%llx ", (unsigned long long)xmm_after[i]);
}

int main(int argc, char **argv)
{
	char first[512], later[512];
	int differ = 0;
	long misaligned_by = argc > 1 && strcmp(argv[1], "misaligned") == 0 ? 8 : 0;
	call_with_known_registers(misaligned_by);
	print_registers(first, sizeof first);
	for (int round = 1; round < 3000; round++) {
		call_with_known_registers(misaligned_by);
		print_registers(later, sizeof later);
		differ += strcmp(first, later) != 0;
	}
	printf("%s\n%d calls left other registers\n", first, differ);
	return 0;
}
