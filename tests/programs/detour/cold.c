/* A program whose function has a part GCC moves out as NAME.cold (its error paths,
 * entered by a jump inside its frame, with an FDE of its own): stripped, that part
 * must not be taken for a function to patch (record_stripped.sh). Prints the sum. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int tripled(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3;
}

__attribute__((noinline)) int checked_sum(const int *a, int n)
{
	int s = 0;
	for (int i = 0; i < n; i++) {
		if (a[i] < 0) {
			fprintf(stderr, "negative %d at %d\n", a[i], i);
			__builtin_unreachable();
		}
		if (a[i] > 1000)
			abort();
		s += tripled(a[i]);
	}
	return s;
}

int main(int argc, char **argv)
{
	(void)argv;
	int a[4] = {1, 2, argc, 4};
	printf("%d\n", checked_sum(a, 4));
	return 0;
}
