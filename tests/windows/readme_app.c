/* The README's app.c (readme_wine.sh): one scope recorded, and a look at how Wine was
 * started: where its address space is randomised (no ADDR_NO_RANDOMIZE in the
 * personality of the Linux process app.exe runs in, asked of the kernel itself: a file
 * of /proc would be opened by Wine's server, of its own process), Debian's wine64,
 * which has no preloader, had the C library's heap over its shared user data about
 * one start in 600 (the program exited 1 before it began, nothing said): exit 3, said. */
#include <stdio.h>

#include "ticktrace.h"

#define TT_ADDR_NO_RANDOMIZE 0x0040000UL
#define TT_SYS_PERSONALITY 135 /* Linux x86-64 */

int main(void)
{
	TT_SCOPE("app");
	unsigned long personality;
	__asm__ volatile("syscall"
			 : "=a"(personality)
			 : "a"((unsigned long)TT_SYS_PERSONALITY), "D"(0xffffffffUL)
			 : "rcx", "r11", "memory");
	if (personality >= (unsigned long)-4095) {
		fprintf(stderr, "app: the kernel gave no personality (%ld): not run by Wine on Linux\n",
			(long)personality);
		return 2;
	}
	if (!(personality & TT_ADDR_NO_RANDOMIZE)) {
		fprintf(stderr, "app: Wine runs with its address space randomised (personality %#lx): its "
				"heap may lie over Wine's shared user data\n", personality);
		return 3;
	}
	return 0;
}
