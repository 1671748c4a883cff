// A C++ program built with mingw's -finstrument-functions: its functions' names carry
// their parameters ("ns::twice(int)"), which `ticktrace info` prints as they are, no
// "()" added. Run by tool.py.
namespace ns {
__attribute__((noinline)) int twice(int x)
{
	return 2 * x;
}
} // namespace ns

int main()
{
	int sum = 0;
	for (int i = 0; i < 3; i++)
		sum += ns::twice(i);
	return sum == 6 ? 0 : 1;
}
