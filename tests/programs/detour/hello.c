/* A program to run under `ticktrace record` built statically (record_cli.sh): one
 * line, exit status 5. */
#include <stdio.h>

__attribute__((noinline)) int work_leaf(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("hello: %d\n", work_leaf(argc));
	return 5;
}
