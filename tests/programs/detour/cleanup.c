/* pthread_exit and pthread_cancel through patched functions (test_detour.c), in C:
 * the cleanup handlers pushed below them run, as without ticktrace. Built plainly and
 * with -fexceptions (where pthread_cleanup_push is a cleanup attribute that only the
 * unwinder runs). And backtrace(3) from a patched function sees every frame below. */
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#define W __attribute__((noinline))
static int cleaned;
static int never_written[2];
static void cleanup(void *what)
{
	cleaned++;
	printf("cleanup: %s\n", (const char *)what);
}
/* how 0: pthread_exit; 1: cancelled in read(2), a cancellation point */
W void work_leave(int how)
{
	if (how == 0)
		pthread_exit(NULL);
	char c;
	if (read(never_written[0], &c, 1) >= 0)
		puts("read returned");
}
W void work_push(int how)
{
	pthread_cleanup_push(cleanup, how ? "cancel" : "exit");
	work_leave(how);
	pthread_cleanup_pop(0);
	__asm__ volatile("");
}
W int work_backtrace(int depth)
{
	void *frames[64];
	int n = depth ? work_backtrace(depth - 1) : backtrace(frames, 64);
	__asm__ volatile("" : "+r"(n));
	return n;
}
static void *thread_main(void *how)
{
	work_push((int)(long)how);
	return NULL;
}
int main(void)
{
	if (pipe(never_written) != 0)
		return 1;
	for (long how = 0; how < 2; how++) {
		pthread_t t;
		void *result;
		pthread_create(&t, NULL, thread_main, (void *)how);
		if (how == 1)
			pthread_cancel(t); /* deferred: it acts in read */
		pthread_join(t, &result);
		printf("%s: %s, %d cleanups run\n", how ? "cancel" : "exit",
		       result == PTHREAD_CANCELED ? "cancelled" : "exited", cleaned);
	}
	printf("backtrace: %d frames\n", work_backtrace(3));
	return 0;
}
