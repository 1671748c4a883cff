/* Signal handlers on an alternate stack that call a patched function while the
 * interrupted thread is inside patched functions (test_detour.c: -f 'work_*'): in a
 * thread whose alternate stack lies above its own stack, and in one where it lies
 * below; and the handler leaving by siglongjmp once, which abandons its frames. The
 * output is the same as without ticktrace. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

struct stacks {
	char *own, *alt;
};

static void *thread_main(void *arg)
{
	struct stacks *s = arg;
	stack_t alt = {.ss_sp = s->alt, .ss_size = STACK_SIZE};
	if (sigaltstack(&alt, NULL) != 0)
		return (void *)-1L;
	long sum = 0;
	for (long round = 0; round < 100; round++)
		sum += work_outer(round);
	sum += work_escape();
	for (long round = 0; round < 10; round++)
		sum += work_outer(round);
	return (void *)sum;
}

/* Runs thread_main on `own` with its signal stack `alt`. */
static long run(char *own, char *alt)
{
	struct stacks s = {own, alt};
	pthread_attr_t attr;
	pthread_t t;
	void *sum;
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, own, STACK_SIZE);
	if (pthread_create(&t, &attr, thread_main, &s) != 0 || pthread_join(t, &sum) != 0)
		exit(1);
	pthread_attr_destroy(&attr);
	return (long)sum;
}

int main(void)
{
	/* two stacks, a page that cannot be touched between them */
	long page = sysconf(_SC_PAGESIZE);
	char *area = mmap(NULL, 2 * STACK_SIZE + page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (area == MAP_FAILED || mprotect(area + STACK_SIZE, page, PROT_NONE) != 0)
		return 1;
	char *low = area, *high = area + STACK_SIZE + page;
	struct sigaction action = {.sa_handler = on_signal, .sa_flags = SA_ONSTACK};
	sigaction(SIGUSR1, &action, NULL);
	long above = run(low, high), below = run(high, low);
	printf("alternate stack above: %ld, below: %ld, handled %ld\n", above, below, (long)handled);
	return 0;
}
