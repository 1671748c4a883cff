/* record_cli.sh's case `names`: static functions (no dynamic symbol, the program built
 * without -rdynamic, so that dladdr names none of them), each call of slow_step a
 * spike of about 30 ms, for `ticktrace record -f` with the live spike log and
 * snapshots to name as the converter does; and slow_unnamed, patched by its address
 * once the program is stripped. Built as C, and as C++ (the names demangled). */
#include <stdio.h>
#include <time.h>

static void slow_sleep(long ms)
{
	struct timespec nap = {0, ms * 1000000};
	nanosleep(&nap, NULL);
}

static __attribute__((noinline)) int slow_step(int i)
{
	slow_sleep(30);
	__asm__ volatile("" : "+r"(i));
	return i + 1;
}

static __attribute__((noinline)) int slow_unnamed(int i)
{
	slow_sleep(30);
	__asm__ volatile("" : "+r"(i));
	return i * 2;
}

int main(void)
{
	int sum = 0;
	for (int i = 0; i < 3; i++)
		sum += slow_step(i) + slow_unnamed(i);
	printf("%d\n", sum);
	return 0;
}
