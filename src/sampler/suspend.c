/* The sampler thread (Windows, where the kernel's profile is missing, as under Wine,
 * or refused, or for one thread): every interval of wall time it suspends each thread
 * sampled in turn, reads its instruction pointer and resumes it, but only while the
 * thread's CPU time (GetThreadTimes) is owed a sample: one per interval of it. A
 * thread that does not run is not sampled, so the samples are of time on CPU, as the
 * kernel's are. A thread's CPU time moves in steps of the system's tick (10 to 16 ms;
 * QueryThreadCycleTime, finer, fails under Wine): the samples a step owes are taken
 * at the ticks after it, up to TT__OWED_MAX_NS of them late. While a thread is
 * suspended the sampler takes no lock and allocates nothing: the suspended thread may
 * hold the heap's. */
#include <errno.h>
#include <stdlib.h>
#include <windows.h>
#include <tlhelp32.h>

#include "platform/platform.h"
#include "sampler/sampler.h"

/* CPU time owed samples, at most: what a loaded machine's late ticks could not take
 * is given up (the effective interval says so), not sampled after the thread stopped. */
#define TT__OWED_MAX_NS (20 * 1000000ull)

static uint64_t tt__thread_cpu_ns(HANDLE thread)
{
	int64_t ns = tt_os_thread_cpu_ns_of((uintptr_t)thread);
	return ns < 0 ? 0 : (uint64_t)ns;
}

static void tt__targets_close(struct tt__suspend *s)
{
	for (size_t i = 0; i < s->ntargets; i++)
		CloseHandle(s->targets[i]);
	free(s->targets);
	free(s->sampled_ns);
	free(s->seen_ns);
	free(s->cpu_start_ns);
	s->targets = NULL;
	s->sampled_ns = s->seen_ns = s->cpu_start_ns = NULL;
	s->ntargets = 0;
}

/* Opens thread `tid` to be sampled: 0, -ESRCH (gone, or not ours to suspend) or
 * -ENOMEM. */
static int tt__target_add(struct tt__suspend *s, DWORD tid, size_t *cap)
{
	if (s->ntargets == *cap) {
		size_t grown = *cap ? 2 * *cap : 8;
		void **targets = realloc(s->targets, grown * sizeof(*targets));
		if (targets)
			s->targets = targets;
		uint64_t *sampled = targets ? realloc(s->sampled_ns, grown * sizeof(*sampled)) : NULL;
		if (sampled)
			s->sampled_ns = sampled;
		uint64_t *seen = sampled ? realloc(s->seen_ns, grown * sizeof(*seen)) : NULL;
		if (seen)
			s->seen_ns = seen;
		uint64_t *cpu = seen ? realloc(s->cpu_start_ns, grown * sizeof(*cpu)) : NULL;
		if (!cpu)
			return -ENOMEM;
		s->cpu_start_ns = cpu;
		*cap = grown;
	}
	HANDLE h = OpenThread(THREAD_SUSPEND_RESUME | THREAD_GET_CONTEXT | THREAD_QUERY_INFORMATION,
			      FALSE, tid);
	if (!h)
		return -ESRCH;
	s->targets[s->ntargets] = h;
	s->cpu_start_ns[s->ntargets] = s->sampled_ns[s->ntargets] = s->seen_ns[s->ntargets] =
		tt__thread_cpu_ns(h);
	s->ntargets++;
	return 0;
}

/* The threads sampled from now on: the profile's own, or every thread of the process
 * as it is now (as the timers on Linux: those that exist at each tt_profile_start). */
static int tt__targets_open(struct tt_profile *p)
{
	struct tt__suspend *s = &p->u.suspend;
	size_t cap = 0;
	if (!(p->flags & TT_PROFILE_ALL_THREADS))
		return tt__target_add(s, (DWORD)p->owner_tid, &cap);
	HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
	if (snap == INVALID_HANDLE_VALUE)
		return -EIO;
	THREADENTRY32 te = {.dwSize = sizeof te};
	int rc = 0;
	for (BOOL more = Thread32First(snap, &te); more && rc != -ENOMEM; more = Thread32Next(snap, &te))
		if (te.th32OwnerProcessID == GetCurrentProcessId())
			rc = tt__target_add(s, te.th32ThreadID, &cap); /* (one gone since: not sampled) */
	CloseHandle(snap);
	if (rc == -ENOMEM)
		tt__targets_close(s);
	return rc == -ENOMEM ? rc : 0;
}

static DWORD WINAPI tt__sampler_main(void *arg)
{
	struct tt_profile *p = arg;
	struct tt__suspend *s = &p->u.suspend;
	while (WaitForSingleObject(s->quit, s->wait_ms) == WAIT_TIMEOUT) {
		for (size_t i = 0; i < s->ntargets; i++) {
			HANDLE h = s->targets[i];
			uint64_t cpu = tt__thread_cpu_ns(h);
			if (cpu > s->seen_ns[i])
				s->seen_ns[i] = cpu;
			if (cpu < s->sampled_ns[i] + p->interval)
				continue; /* it did not run an interval since its last sample */
			s->sampled_ns[i] = cpu - s->sampled_ns[i] > TT__OWED_MAX_NS
						   ? cpu - TT__OWED_MAX_NS + p->interval
						   : s->sampled_ns[i] + p->interval;
			if (SuspendThread(h) == (DWORD)-1)
				continue; /* exited */
			CONTEXT ctx = {.ContextFlags = CONTEXT_CONTROL};
			BOOL got = GetThreadContext(h, &ctx); /* (waits until it is suspended) */
			ResumeThread(h);
			if (got)
				tt__profile_account(p, (uintptr_t)ctx.Rip);
		}
	}
	return 0;
}

int tt__suspend_open(struct tt_profile *p)
{
	uint64_t ms = (p->interval + 999999) / 1000000;
	HANDLE quit = CreateEventW(NULL, TRUE, FALSE, NULL); /* (manual reset) */
	if (!quit)
		return -ENOMEM;
	p->u.suspend = (struct tt__suspend){.quit = quit,
					    .wait_ms = ms > 0 && ms < INFINITE ? (uint32_t)ms : 1};
	return 0;
}

static int tt__suspend_start(struct tt_profile *p)
{
	struct tt__suspend *s = &p->u.suspend;
	int rc = tt__targets_open(p);
	if (rc != 0)
		return rc;
	ResetEvent(s->quit);
	s->thread = CreateThread(NULL, 64 * 1024, tt__sampler_main, p,
				 STACK_SIZE_PARAM_IS_A_RESERVATION, NULL);
	if (!s->thread) {
		tt__targets_close(s);
		return -EAGAIN;
	}
	return 0;
}

/* The CPU time of the threads sampled, in the window started last: as it is now, or
 * as last seen (Wine gives none of a thread that exited). */
static uint64_t tt__window_cpu_ns(const struct tt__suspend *s)
{
	uint64_t ns = 0;
	for (size_t i = 0; i < s->ntargets; i++) {
		uint64_t now = tt__thread_cpu_ns(s->targets[i]);
		ns += (now > s->seen_ns[i] ? now : s->seen_ns[i]) - s->cpu_start_ns[i];
	}
	return ns;
}

static int tt__suspend_stop(struct tt_profile *p)
{
	struct tt__suspend *s = &p->u.suspend;
	SetEvent(s->quit);
	WaitForSingleObject(s->thread, INFINITE); /* its last tick counted */
	CloseHandle(s->thread);
	s->thread = NULL;
	p->cpu_ns += tt__window_cpu_ns(s);
	tt__targets_close(s);
	return 0;
}

static uint64_t tt__suspend_cpu_ns(struct tt_profile *p)
{
	return p->cpu_ns + (p->running ? tt__window_cpu_ns(&p->u.suspend) : 0);
}

static void tt__suspend_close(struct tt_profile *p)
{
	CloseHandle(p->u.suspend.quit);
}

const struct tt__mechanism tt__suspend_mechanism = {
	.id = TT_PROFILE_SAMPLER_THREAD,
	.start = tt__suspend_start,
	.stop = tt__suspend_stop,
	.collect = NULL,
	.cpu_ns = tt__suspend_cpu_ns,
	.close = tt__suspend_close,
};
