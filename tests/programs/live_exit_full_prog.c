/* A run whose trace cannot be written at exit (live_exit_full.sh): it records, sleeps
 * in a scope, then lowers RLIMIT_FSIZE to 4 KiB, as a full disk would refuse the
 * file, and exits normally. */
#include <sys/resource.h>
#include <time.h>

#include <ticktrace.h>

int main(void)
{
	for (int i = 0; i < 2000; i++) {
		TT_BEGIN("work");
		TT_END();
	}
	TT_BEGIN("slow");
	nanosleep(&(struct timespec){0, 3000000}, NULL);
	TT_END();
	struct rlimit limit = {4096, 4096};
	return setrlimit(RLIMIT_FSIZE, &limit) != 0;
}
