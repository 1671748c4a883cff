/* Calls a patched function (test_detour.c: -f work_callee) three times, four times
 * after tt_disable, and twice after tt_enable: five calls are recorded. The trampolines
 * rely on tt_disable marking the thread's limit off (trampoline.asm). */
#include <stdio.h>

#include <ticktrace.h>

__attribute__((noinline)) int work_callee(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 7 + 3;
}

int main(void)
{
	int x = 0;
	for (int i = 0; i < 3; i++)
		x = work_callee(x);
	tt_disable();
	for (int i = 0; i < 4; i++)
		x = work_callee(x);
	tt_enable();
	for (int i = 0; i < 2; i++)
		x = work_callee(x);
	printf("%d\n", x);
	return 0;
}
