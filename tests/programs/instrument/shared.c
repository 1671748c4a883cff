#include "shared.h"

__attribute__((noinline)) int shared_add(int a, int b)
{
	return a + b;
}
