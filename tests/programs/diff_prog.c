/* The program `ticktrace diff` is tested on, built twice: three scopes of about 20 us,
 * "steady", "noisy" (each call 20 us +-30 %, at random, in both builds) and "slowed",
 * which the build with -DTT_DIFF_SLOWER=2 makes twice as long. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ticktrace.h"

#ifndef TT_DIFF_SLOWER
#define TT_DIFF_SLOWER 1
#endif

#define CALL_NS 20000
#define CALLS 1500

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Busy for `ns`: by the clock, so that a scope lasts as long on a loaded machine,
 * but for the calls preempted. */
static void busy(int64_t ns)
{
	int64_t end = now_ns() + ns;
	while (now_ns() < end)
		;
}

int main(void)
{
	unsigned seed = (unsigned)getpid() ^ (unsigned)now_ns();
	for (int i = 0; i < CALLS; i++) {
		{
			TT_SCOPE("steady");
			busy(CALL_NS);
		}
		{
			TT_SCOPE("noisy");
			busy(CALL_NS * 7 / 10 + (int64_t)(rand_r(&seed) % (CALL_NS * 6 / 10 + 1)));
		}
		{
			TT_SCOPE("slowed");
			busy(CALL_NS * TT_DIFF_SLOWER);
		}
	}
	return 0;
}
