/* A program built with mingw's -finstrument-functions: main calls middle, which calls
 * leaf, three times, and nothing else (mingw's printf is an inline function of its
 * header: it would be instrumented too). Run by instrumented.py under Wine. */

__attribute__((noinline)) static int leaf(int x)
{
	return x * 3;
}

__attribute__((noinline)) static int middle(int x)
{
	return leaf(x) + 1;
}

int main(void)
{
	int sum = 0;
	for (int i = 0; i < 3; i++)
		sum += middle(i);
	return sum == 12 ? 0 : 1;
}
