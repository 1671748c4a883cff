/* A library the host (unloaded.c) loads, calls and unloads: built with
 * -finstrument-functions, its functions named from its file after it is gone. */
__attribute__((noinline)) static int tt_plug_inner(int x)
{
	return x * 7;
}

__declspec(dllexport) int tt_plug_work(int n)
{
	int sum = 0;
	for (int i = 0; i < n; i++)
		sum += tt_plug_inner(i);
	return sum;
}
