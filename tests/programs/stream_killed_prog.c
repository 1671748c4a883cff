/* runtime/stream_killed.sh's program, run in mode stream and killed by SIGKILL:
 *   stream_killed_prog named    killed as its trace file gets its name (link and
 *                               linkat interposed: the moment after the runtime's
 *                               call, which may come before main: with
 *                               TT_TEST_KILL_WHEN_NAMED=1), as a run killed at its start
 *   stream_killed_prog erased   1000 short calls of 0x20010 (erased with
 *                               TICKTRACE_MIN_DUR), a counter, 0.3 s (a drain's
 *                               periodic write), then killed: the thread never exits */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <ticktrace.h>

void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

static int tt_named(long ret)
{
	const char *kill = getenv("TT_TEST_KILL_WHEN_NAMED");
	if (ret == 0 && kill && strcmp(kill, "1") == 0)
		raise(SIGKILL);
	return (int)ret;
}

int link(const char *from, const char *to)
{
	return tt_named(syscall(SYS_link, from, to));
}

int linkat(int from_dir, const char *from, int to_dir, const char *to, int flags)
{
	return tt_named(syscall(SYS_linkat, from_dir, from, to_dir, to, flags));
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "named") == 0) {
		TT_COUNTER("started", 1);
		return 3; /* (not reached: the file was named by now) */
	}
	if (argc != 2 || strcmp(argv[1], "erased") != 0)
		return 2;
	for (int i = 0; i < 1000; i++) {
		__cyg_profile_func_enter((void *)0x20010, 0);
		__cyg_profile_func_exit((void *)0x20010, 0);
	}
	TT_COUNTER("erased", 1000);
	nanosleep(&(struct timespec){.tv_nsec = 300000000}, NULL);
	raise(SIGKILL);
	return 3;
}
