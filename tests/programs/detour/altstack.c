/* Signal handlers on an alternate stack that call a patched function while the
 * interrupted thread is inside patched functions (test_detour.c: -f 'work_*'): in the
 * first thread with the alternate stack above its stack, then below it, and in
 * another thread with it above; each time a handler also leaves by siglongjmp once,
 * which abandons frames of the thread's stack. The output is the same as without
 * ticktrace. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define STACK_SIZE (256 * 1024)

static volatile long handled;
static __thread sigjmp_buf *escape;

__attribute__((noinline)) long work_in_handler(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 2 + 1;
}

static void on_signal(int sig)
{
	(void)sig;
	handled += work_in_handler(1);
	if (escape)
		siglongjmp(*escape, 1);
}

__attribute__((noinline)) long work_inner(long round)
{
	raise(SIGUSR1); /* handled on the alternate stack, in this thread */
	__asm__ volatile("" : "+r"(round));
	return round + 1;
}

__attribute__((noinline)) long work_outer(long round)
{
	long r = work_inner(round);
	__asm__ volatile("" : "+r"(r));
	return r * 2;
}

__attribute__((noinline)) long work_escape(void)
{
	sigjmp_buf here;
	if (sigsetjmp(here, 1) == 0) {
		escape = &here;
		work_inner(0); /* the handler jumps out */
		return -1;
	}
	escape = NULL;
	return 7;
}

/* STACK_SIZE bytes mapped in the first gap above `from` (by /proc/self/maps), a page
 * clear of the mappings on each side. */
static char *map_above(uintptr_t from)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	if (!maps)
		return NULL;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), free_from = 0, low, high;
	char line[512];
	void *at = NULL;
	while (!at && fgets(line, sizeof line, maps) && sscanf(line, "%lx-%lx", &low, &high) == 2) {
		if (free_from > from && low - free_from >= STACK_SIZE + 2 * page)
			at = (void *)(free_from + page);
		free_from = high;
	}
	fclose(maps);
	if (!at)
		return NULL;
	void *p = mmap(at, STACK_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	return p == at ? p : NULL;
}

/* The rounds, with the signal stack at `alt_stack`. */
static long rounds(char *alt_stack)
{
	stack_t alt = {.ss_sp = alt_stack, .ss_size = STACK_SIZE};
	if (!alt_stack || sigaltstack(&alt, NULL) != 0)
		exit(1);
	long sum = 0;
	for (long round = 0; round < 100; round++)
		sum += work_outer(round);
	sum += work_escape();
	for (long round = 0; round < 10; round++)
		sum += work_outer(round);
	alt.ss_flags = SS_DISABLE;
	sigaltstack(&alt, NULL);
	return sum;
}

static void *thread_main(void *arg)
{
	char here;
	(void)arg;
	return (void *)rounds(map_above((uintptr_t)&here));
}

int main(void)
{
	struct sigaction action = {.sa_handler = on_signal, .sa_flags = SA_ONSTACK};
	sigaction(SIGUSR1, &action, NULL);
	char here; /* on the main thread's stack, which is above every mapping but the vDSO's */
	char *below = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long above_sum = rounds(map_above((uintptr_t)&here));
	long below_sum = rounds(below == MAP_FAILED ? NULL : below);
	pthread_t thread;
	void *thread_sum;
	if (pthread_create(&thread, NULL, thread_main, NULL) != 0 ||
	    pthread_join(thread, &thread_sum) != 0)
		return 1;
	printf("alternate stack above: %ld, below: %ld, above in a thread: %ld, handled %ld\n",
	       above_sum, below_sum, (long)thread_sum, (long)handled);
	return 0;
}
