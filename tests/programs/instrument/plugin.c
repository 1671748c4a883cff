/* Loaded by calls.c with dlopen, and unloaded with dlclose before the trace is written:
 * its call site and its functions must still be named. */
#include <ticktrace.h>

int plugin_entry(int x);

__attribute__((noinline)) static int plugin_square(int x)
{
	return x * x;
}

int plugin_entry(int x)
{
	TT_SCOPE("plugin_scope");
	return plugin_square(x) + 1;
}
