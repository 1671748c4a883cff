/* Calls the -finstrument-functions hooks itself, for made-up function addresses, so
 * that each case of TICKTRACE_MIN_DUR's erasing is planted exactly (tests/runtime/
 * min_dur.py says what each must leave):
 *   0x20010  1000 short calls
 *   0x20020  short, around a short call of 0x20030
 *   0x20040  short, with a signal handler's instant inside
 *   0x20050  3 x 4095 short calls, each after an instant, so that some begin in the
 *            last record of a chunk and some in its first (4095 records a chunk)
 *   SHARED   100 short calls each, in that order: nine functions whose FUNC_EXIT
 *            words hash to one home (core.h tt__filter_home), eight probed from
 *            there (none of the other functions' homes among them): the ninth finds
 *            them all taken
 *   0x20060  one call of 200 us
 * With the argument "nested" instead: 0x20000, a call of 20 us around 1000 short
 * calls of 0x20010 (the profile's self times must add up to its total). */
#include <signal.h>
#include <time.h>

#include <ticktrace.h>

void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

static void call(unsigned long fn)
{
	__cyg_profile_func_enter((void *)fn, 0);
	__cyg_profile_func_exit((void *)fn, 0);
}

static void on_signal(int sig)
{
	(void)sig;
	TT_INSTANT("handler");
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void spin_us(long long us)
{
	for (long long start = now_ns(); now_ns() - start < us * 1000;)
		;
}

int main(int argc, char **argv)
{
	if (argc > 1 && argv[1][0] == 'n') { /* "nested" */
		__cyg_profile_func_enter((void *)0x20000, 0);
		for (int i = 0; i < 1000; i++)
			call(0x20010);
		spin_us(20);
		__cyg_profile_func_exit((void *)0x20000, 0);
		return 0;
	}
	signal(SIGUSR1, on_signal);
	TT_INSTANT("start"); /* the thread's first event registers it: not inside a call */
	for (int i = 0; i < 1000; i++)
		call(0x20010);
	__cyg_profile_func_enter((void *)0x20020, 0);
	call(0x20030);
	__cyg_profile_func_exit((void *)0x20020, 0);
	__cyg_profile_func_enter((void *)0x20040, 0);
	raise(SIGUSR1);
	__cyg_profile_func_exit((void *)0x20040, 0);
	for (int i = 0; i < 3 * 4095; i++) {
		TT_INSTANT("step");
		call(0x20050);
	}
	static const unsigned long shared[] = {0x40000, 0x41430, 0x4a0f0, 0x4b520, 0x4c950,
					       0x55610, 0x56a40, 0x57e70, 0x60b30};
	for (unsigned k = 0; k < sizeof shared / sizeof *shared; k++)
		for (int i = 0; i < 100; i++)
			call(shared[k]);
	__cyg_profile_func_enter((void *)0x20060, 0);
	spin_us(200);
	__cyg_profile_func_exit((void *)0x20060, 0);
	return 0;
}
