/* A library the host (unloaded.c) loads, calls and unloads: built with
 * -finstrument-functions, its functions named from its file after it is gone; its
 * scope's call site, whose descriptor goes with it, named from the copy the runtime
 * kept (the writer read it from the unloaded image and crashed). */
#include "ticktrace.h"

__attribute__((noinline)) static int tt_plug_inner(int x)
{
	return x * 7;
}

__declspec(dllexport) int tt_plug_work(int n)
{
	TT_SCOPE("tt_plug_scope");
	int sum = 0;
	for (int i = 0; i < n; i++)
		sum += tt_plug_inner(i);
	return sum;
}
