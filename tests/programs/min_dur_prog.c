/* Calls the -finstrument-functions hooks itself, for made-up function addresses, so
 * that each case of TICKTRACE_MIN_DUR's erasing is planted exactly (tests/runtime/
 * min_dur.py says what each must leave):
 *   0x20010  1000 short calls
 *   0x20020  short, around a short call of 0x20030
 *   0x20040  short, with a signal handler's instant inside
 *   0x20050  3 x 4095 short calls, each after an instant, so that some begin in the
 *            last record of a chunk and some in its first (4095 records a chunk)
 *   0x42000, 0x46000, 0x4a000, 0x4e000, 0x52000  100 short calls each, in that order:
 *            one first entry (bits 4..13), four probed: the fifth finds them all taken
 *   0x20060  one call of 200 us */
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

int main(void)
{
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
	for (unsigned long fn = 0x42000; fn <= 0x52000; fn += 0x4000)
		for (int i = 0; i < 100; i++)
			call(fn);
	__cyg_profile_func_enter((void *)0x20060, 0);
	for (long long start = now_ns(); now_ns() - start < 200000;)
		;
	__cyg_profile_func_exit((void *)0x20060, 0);
	return 0;
}
