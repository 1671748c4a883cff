/* The runtime's own threads (tt-prefault, tt-live, tt-stream, tt-sched): started
 * joinable, their waits, and their end at exit, told and waited for. Calls nothing of
 * portable/'s but tt__run. */
#include <errno.h>
#include <stdio.h>

#include "portable/portable.h"

int tt__thread_start(void *(*main)(void *arg))
{
	if (tt__run.owned == TT__THREADS)
		return -EAGAIN;
	int err = tt_os_thread_start(&tt__run.own[tt__run.owned], main, NULL, 0);
	if (!err)
		tt__run.owned++;
	return err;
}

int tt__nap(int64_t ns)
{
	int64_t until = tt_os_monotonic_ns() + ns;
	for (int64_t now; !__atomic_load_n(&tt__run.ending, __ATOMIC_ACQUIRE) && (now = tt_os_monotonic_ns()) < until;)
		tt_os_wait(&tt__run.ending, 0, until - now);
	return __atomic_load_n(&tt__run.ending, __ATOMIC_ACQUIRE);
}

/* How long the exit waits for the runtime's threads, all told (each returns within
 * milliseconds of being told). */
#define TT__THREADS_END_NS (INT64_C(2) * 1000000000)

/* Once the run's file is written: the runtime's threads told to return, and waited for,
 * so that ExitProcess ends none of them (under Wine, a thread ExitProcess ended in a
 * system call took the process down now and then: SIGSEGV in Wine's own code past
 * the program's exit). Where the process is ending already (a DLL's detach, _exit),
 * they were ended: nothing to wait for. */
void tt__threads_end(void)
{
	if (__atomic_exchange_n(&tt__run.ending, 1, __ATOMIC_ACQ_REL))
		return;
	tt_os_wake_all(&tt__run.ending);
	__atomic_add_fetch(&tt__run.prefault_wanted, 1, __ATOMIC_RELEASE);
	tt_os_wake_all(&tt__run.prefault_wanted);
	__atomic_add_fetch(&tt__run.stream_wanted, 1, __ATOMIC_RELEASE);
	tt_os_wake_all(&tt__run.stream_wanted);
	int64_t until = tt_os_monotonic_ns() + TT__THREADS_END_NS;
	uint32_t left = 0;
	for (uint32_t i = 0; i < tt__run.owned; i++)
		left += tt_os_thread_join_within(&tt__run.own[i], until - tt_os_monotonic_ns()) != 0;
	if (left)
		fprintf(stderr, "ticktrace: %u of its %u threads did not end within %d s of the exit: "
			"ExitProcess ends them\n", (unsigned)left, (unsigned)tt__run.owned,
			(int)(TT__THREADS_END_NS / 1000000000));
}
