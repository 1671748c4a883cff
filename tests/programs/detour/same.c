/* One feature of C programs a tracer must leave as it is, chosen by argv[1], for
 * record_same.sh to run plainly and under `ticktrace record -f '*'` and compare:
 *   leaf         a 6-byte leaf (lea; ret at -O2) called in a loop by another function
 *   threads      four threads calling the same functions
 *   altstack     a signal handler on a sigaltstack calling a function while the
 *                interrupted thread is inside others
 *   longjmp      longjmp out of nested calls, three times
 *   pthread_exit a thread leaving from nested calls, its cleanup handler run
 *   swapcontext  a coroutine on its own stack, switched to and from three times
 * The last two run in the main thread, then in a thread whose stack lies below the
 * other stack (mapped first), as well as above it. Output is deterministic; the exit
 * status is 0. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#define NOINLINE __attribute__((noinline))

NOINLINE long leaf(long x)
{
	return x * 3 + 1;
}

NOINLINE long mix(long x)
{
	long sum = 0;
	for (long i = 0; i < 100; i++)
		sum += leaf(x + i);
	return sum;
}

static void *worker(void *arg)
{
	long sum = 0;
	for (long i = 0; i < 200; i++)
		sum += mix((long)arg + i);
	return (void *)sum;
}

static int run_threads(void)
{
	pthread_t threads[4];
	for (long i = 0; i < 4; i++)
		if (pthread_create(&threads[i], NULL, worker, (void *)i) != 0)
			return 1;
	for (int i = 0; i < 4; i++) {
		void *sum;
		pthread_join(threads[i], &sum);
		printf("thread %d: %ld\n", i, (long)sum);
	}
	return 0;
}

static long in_handler;

static void on_signal(int sig)
{
	in_handler = mix(sig);
}

NOINLINE long interrupted(long x)
{
	raise(SIGUSR1);
	return mix(x) + in_handler;
}

/* An alternate stack, mapped before any thread's stack (so above those). */
#define OTHER_STACK (1 << 16)
static char *other_stack(void)
{
	static char *stack;
	if (!stack) {
		stack = mmap(NULL, OTHER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (stack == MAP_FAILED)
			abort();
	}
	return stack;
}

/* Runs `run` in the main thread, then in a thread started after the other stack. */
static void *run_in_thread(void *run)
{
	return (void *)(long)((int (*)(void))run)();
}

static int twice(int (*run)(void))
{
	other_stack();
	pthread_t thread;
	void *status;
	if (run() != 0 || pthread_create(&thread, NULL, run_in_thread, (void *)run) != 0)
		return 1;
	pthread_join(thread, &status);
	return (int)(long)status;
}

static int altstack_here(void)
{
	stack_t ss = {.ss_sp = other_stack(), .ss_size = OTHER_STACK};
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_ONSTACK};
	if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
		return 1;
	for (long i = 0; i < 3; i++)
		printf("altstack %ld: %ld\n", i, interrupted(i));
	ss.ss_flags = SS_DISABLE;
	return sigaltstack(&ss, NULL);
}

static int run_altstack(void)
{
	return twice(altstack_here);
}

static jmp_buf jump;

NOINLINE void dive(int depth)
{
	if (depth < 0) /* (a way back: none is taken) */
		return;
	if (depth == 0)
		longjmp(jump, 7);
	dive(depth - 1);
	printf("never\n");
}

static int run_longjmp(void)
{
	volatile long total = 0;
	for (volatile int i = 0; i < 3; i++) {
		int got = setjmp(jump);
		if (got == 0)
			dive(5);
		total += got + mix(i);
	}
	printf("longjmp: %ld\n", total);
	return 0;
}

static void cleanup(void *arg)
{
	printf("cleanup %ld\n", (long)arg);
}

NOINLINE void leave_from(long depth)
{
	if (depth < 0)
		return;
	if (depth > 2)
		pthread_exit((void *)mix(depth));
	leave_from(depth + 1);
	printf("never\n");
}

static void *leaver(void *arg)
{
	pthread_cleanup_push(cleanup, arg);
	leave_from(0);
	pthread_cleanup_pop(0);
	return NULL;
}

static int run_pthread_exit(void)
{
	pthread_t thread;
	void *ret;
	if (pthread_create(&thread, NULL, leaver, (void *)42) != 0)
		return 1;
	pthread_join(thread, &ret);
	printf("pthread_exit: %ld\n", (long)ret);
	return 0;
}

static ucontext_t main_context, co_context;
static long co_value;

NOINLINE void co_body(void)
{
	for (long i = 0; i < 3; i++) {
		co_value = mix(i);
		swapcontext(&co_context, &main_context);
	}
}

static int swapcontext_here(void)
{
	if (getcontext(&co_context) != 0)
		return 1;
	co_context.uc_stack.ss_sp = other_stack();
	co_context.uc_stack.ss_size = OTHER_STACK;
	co_context.uc_link = &main_context;
	makecontext(&co_context, co_body, 0);
	for (int i = 0; i < 3; i++) {
		if (swapcontext(&main_context, &co_context) != 0)
			return 1;
		printf("coroutine %d: %ld\n", i, co_value);
	}
	return 0;
}

static int run_swapcontext(void)
{
	return twice(swapcontext_here);
}

static int run_leaf(void)
{
	printf("leaf: %ld\n", mix(5));
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(void);
	} features[] = {{"leaf", run_leaf},         {"threads", run_threads},
			{"altstack", run_altstack}, {"longjmp", run_longjmp},
			{"pthread_exit", run_pthread_exit}, {"swapcontext", run_swapcontext}};
	for (size_t i = 0; argc == 2 && i < sizeof features / sizeof features[0]; i++)
		if (strcmp(argv[1], features[i].name) == 0)
			return features[i].run();
	fprintf(stderr, "usage: same leaf|threads|altstack|longjmp|pthread_exit|swapcontext\n");
	return 2;
}
