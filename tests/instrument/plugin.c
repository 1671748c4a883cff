/* Loaded by calls.c with dlopen. */
int plugin_entry(int x);

__attribute__((noinline)) static int plugin_square(int x)
{
	return x * x;
}

int plugin_entry(int x)
{
	return plugin_square(x) + 1;
}
