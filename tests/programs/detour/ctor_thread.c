/* A library whose constructor starts a thread that calls work_spin in a loop, so that
 * it runs while libticktrace-detour's constructor, which runs after it, would patch
 * work_spin (test_detour.c: -f 'work_*'). Built twice: with -DCTOR_LIB as the
 * library, and without as the program, which stops the thread and prints whether it
 * ran. */
#include <pthread.h>
#include <stdio.h>

long ctor_thread_stop(void);

#ifdef CTOR_LIB
static pthread_t spinner;
static int stop, started;

/* Several short instructions: a thread stopped between them when the patch lands
 * would resume inside the jump. */
__attribute__((noinline)) long work_spin(long x)
{
	__asm__ volatile("" : "+r"(x));
	return (x ^ 5) + 3;
}

/* More functions to patch after work_spin (they follow it in memory, so are patched
 * after it): they keep the patching going while the thread runs work_spin. */
#define WORK_MORE(n)                                                                               \
	__attribute__((noinline)) long work_more##n(long x)                                        \
	{                                                                                          \
		__asm__ volatile("" : "+r"(x));                                                    \
		return x * n;                                                                      \
	}
#define WORK_MORE10(n)                                                                             \
	WORK_MORE(n##0) WORK_MORE(n##1) WORK_MORE(n##2) WORK_MORE(n##3) WORK_MORE(n##4)            \
	WORK_MORE(n##5) WORK_MORE(n##6) WORK_MORE(n##7) WORK_MORE(n##8) WORK_MORE(n##9)
#define WORK_MORE100(n)                                                                            \
	WORK_MORE10(n##0) WORK_MORE10(n##1) WORK_MORE10(n##2) WORK_MORE10(n##3) WORK_MORE10(n##4)  \
	WORK_MORE10(n##5) WORK_MORE10(n##6) WORK_MORE10(n##7) WORK_MORE10(n##8) WORK_MORE10(n##9)
WORK_MORE100(1) WORK_MORE100(2) WORK_MORE100(3) WORK_MORE100(4) WORK_MORE100(5)
WORK_MORE100(6) WORK_MORE100(7) WORK_MORE100(8) WORK_MORE100(9)

static void *spin(void *arg)
{
	long sum = (long)arg;
	__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		sum += work_spin(sum & 0xff);
	return (void *)sum;
}

__attribute__((constructor)) static void start_spinner(void)
{
	if (pthread_create(&spinner, NULL, spin, NULL) != 0)
		return;
	while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
		;
}

long ctor_thread_stop(void)
{
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	void *sum;
	return pthread_join(spinner, &sum) == 0;
}
#else
int main(void)
{
	printf("spinner %s\n", ctor_thread_stop() ? "ran" : "did not run");
	return 0;
}
#endif
