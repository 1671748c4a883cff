/* pthread_create, interposed: each thread the program starts asks the kernel for its
 * own context switches as it begins (core/sched.c), before its first event, so that
 * its states cover that event's scope; the hot path never does. And where the kernel
 * refuses the program's thread for the limit on processes, ticktrace's give way. */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

#include "lifecycle/lifecycle.h"

TT_API int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*main)(void *),
			  void *arg);

#ifdef TT_ASAN
#include <sanitizer/asan_interface.h>
/* Under AddressSanitizer its pthread_create interceptor calls this one with its own
 * start routine, which readies the new thread's stack for it; ours runs first and
 * would meet a reused stack's stale shadow: what it uses of the stack is readied here
 * (the asking takes well under this). */
#define TT__EARLY_STACK (16 * 1024)
#define TT__READY_STACK() \
	__asan_unpoison_memory_region((char *)__builtin_frame_address(0) - TT__EARLY_STACK, TT__EARLY_STACK)
#define TT__EARLY __attribute__((no_sanitize_address))
#else
#define TT__READY_STACK() ((void)0)
#define TT__EARLY
#endif

struct tt__thread_start {
	void *(*main)(void *);
	void *arg;
	int64_t asked_ns; /* the monotonic clock before the thread was made (core/sched.c) */
};

TT__EARLY static void *tt__thread_main(void *start_arg)
{
	TT__READY_STACK();
	struct tt__thread_start start = *(struct tt__thread_start *)start_arg;
	free(start_arg);
	/* (closed at its exit if it never records: the thread's key) */
	tt__sched_thread_starts(0, start.asked_ns);
	return start.main(start.arg);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*main)(void *), void *arg)
{
	typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	static create_fn next;
	create_fn create = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
	if (!create) {
		create = (create_fn)(uintptr_t)dlsym(RTLD_NEXT, "pthread_create");
		if (!create)
			return ENOSYS;
		__atomic_store_n(&next, create, __ATOMIC_RELEASE);
	}
	/* ticktrace's own threads record nothing: nothing to ask for */
	if (tt__own_thread_main(main))
		return create(thread, attr, main, arg);
	struct tt__thread_start *start = tt__config.off || tt__config.sched_off ? NULL
								  : malloc(sizeof *start);
	if (start)
		*start = (struct tt__thread_start){main, arg, tt_os_monotonic_ns()};
	int err;
	/* At the limit on the user's processes, ticktrace's threads are never the reason
	 * the program's cannot start: they end, the least needed first, while it fails
	 * (said at exit: report/report.c). */
	do
		err = start ? create(thread, attr, tt__thread_main, start) : create(thread, attr, main, arg);
	while (err == EAGAIN && tt__thread_give_back());
	if (err)
		free(start);
	return err;
}
