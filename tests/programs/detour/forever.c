/* A program that runs until a signal ends it (record_cli.sh signals): work_leaf a
 * thousand times a second, "running" on stdout after the first. */
#include <stdio.h>
#include <time.h>

__attribute__((noinline)) int work_leaf(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

int main(void)
{
	const struct timespec ms = {0, 1000000};
	for (int i = 0;; i++) {
		work_leaf(i);
		if (i == 0) {
			puts("running");
			fflush(stdout);
		}
		nanosleep(&ms, NULL);
	}
}
