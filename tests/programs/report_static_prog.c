/* Built with -finstrument-functions and without -rdynamic (tests/runtime/report_static.sh):
 * its static function is in no dynamic symbol table, so TICKTRACE_REPORT names it
 * module+0xOFFSET. */
#include <stdio.h>

static volatile unsigned sink;

__attribute__((noinline)) static void report_static_step(unsigned i)
{
	sink += i * 3;
}

int main(void)
{
	for (unsigned i = 0; i < 100; i++)
		report_static_step(i);
	return 0;
}
