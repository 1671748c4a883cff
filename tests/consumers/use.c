/* Built out of tree against ticktrace by tests/install/install_prefix.sh (CMake, pkg-config)
 * and tests/install/subproject.sh (meson): one marked-up scope, a function that
 * -finstrument-functions records, and with USE_HEAP one malloc and free. */
#include <stdlib.h>

#include <ticktrace.h>

__attribute__((noinline)) static int decode(int x)
{
	TT_SCOPE("decode");
#ifdef USE_HEAP
	int *volatile block = malloc(sizeof(int));
	*block = x;
	x = *block;
	free(block);
#endif
	return x * 2;
}

int main(void)
{
	return decode(1) == 2 ? 0 : 1;
}
