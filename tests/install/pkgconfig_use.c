/* Built out of tree against the installed library (tests/install/pkgconfig_build.sh). */
#include <ticktrace.h>

static int decode(int x)
{
	TT_SCOPE("decode");
	return x * 2;
}

int main(void)
{
	return decode(1) == 2 ? 0 : 1;
}
