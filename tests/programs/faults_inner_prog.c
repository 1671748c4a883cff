/* faults_inner.py's program: a scope "outer" of 60 short scopes "touch", each faulting
 * 2 MiB of fresh memory in (512 minor faults, huge pages refused), 3 ms apart: too
 * short for tt-sched to watch (TT__COUNTERS_AFTER_NS, 2 ms), read only as "outer" is.
 * Prints "touch BEGIN END MINFLT" (CLOCK_MONOTONIC ns; the kernel's minor faults of
 * the thread across it) for each on stdout. */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include <ticktrace.h>

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
	const size_t size = (size_t)2 << 20;
	TT_BEGIN("outer");
	for (int i = 0; i < 60; i++) {
		volatile unsigned char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 1;
		madvise((void *)p, size, MADV_NOHUGEPAGE);
		struct rusage a, b;
		getrusage(RUSAGE_THREAD, &a);
		long long begin = now_ns();
		TT_BEGIN("touch");
		for (size_t at = 0; at < size; at += 4096)
			p[at] = 1;
		TT_END();
		long long end = now_ns();
		getrusage(RUSAGE_THREAD, &b);
		printf("touch %lld %lld %ld\n", begin, end, b.ru_minflt - a.ru_minflt);
		munmap((void *)p, size);
		nanosleep(&(struct timespec){0, 3000000}, NULL);
	}
	TT_END();
	return 0;
}
