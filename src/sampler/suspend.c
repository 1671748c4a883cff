/* The sampler thread (Windows, where the kernel's profile is missing, as under Wine,
 * or refused, or for one thread): every interval of wall time it suspends each thread
 * sampled in turn, reads its instruction pointer and resumes it, but only while the
 * thread's CPU time (GetThreadTimes) is owed a sample: one per interval of it. A
 * thread that does not run is not sampled, so the samples are of time on CPU, as the
 * kernel's are. A thread's CPU time moves in steps of the system's tick (10 to 16 ms;
 * QueryThreadCycleTime, finer, fails under Wine): the samples a step owes are taken
 * at the ticks after it, up to TT__OWED_MAX_NS of them late. A thread found twice in a
 * row in the same system call (just after ntdll's `syscall`), its registers and its
 * CPU time as they were, waits in the kernel: what it still owes it ran before, and is
 * taken as it runs again, where it runs; it is suspended seldom meanwhile
 * (TT__STOPPED_TICKS). Under Wine a suspend is a signal the thread handles itself, which costs it
 * CPU time (0.1 to 0.3 ms each, measured): suspended each tick while it owed samples,
 * a thread asleep was charged for its own samples, which owed it more (160 ms of a
 * 500 ms sleep, in a CI run). While a thread is suspended the sampler takes no lock and
 * allocates nothing: the suspended thread may hold the heap's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <tlhelp32.h>

#include "platform/platform.h"
#include "sampler/sampler.h"

/* CPU time owed samples, at most: what a loaded machine's late ticks could not take
 * is given up (the effective interval says so), not sampled after the thread stopped. */
#define TT__OWED_MAX_NS (20 * 1000000ull)

/* A thread found waiting is looked at again as its CPU time moves, or after 2 ticks,
 * then 4, up to 128 while it is found waiting: a thread that waits at one call again
 * and again (polling, a server call of Wine's) runs between, less than a step of its
 * CPU time maybe, and is sampled there; one asleep is suspended 10 times a second. */
#define TT__STOPPED_TICKS 2
#define TT__STOPPED_TICKS_MAX 128

static uint64_t tt__thread_cpu_ns(HANDLE thread)
{
	int64_t ns = tt_os_thread_cpu_ns_of((uintptr_t)thread);
	return ns < 0 ? 0 : (uint64_t)ns;
}

static void tt__targets_close(struct tt__suspend *s)
{
	for (size_t i = 0; i < s->ntargets; i++)
		CloseHandle(s->targets[i].thread);
	free(s->targets);
	s->targets = NULL;
	s->ntargets = 0;
}

/* Opens thread `tid` to be sampled: 0, -ESRCH (gone, or not ours to suspend) or
 * -ENOMEM. */
static int tt__target_add(struct tt__suspend *s, DWORD tid, size_t *cap)
{
	if (s->ntargets == *cap) {
		size_t grown = *cap ? 2 * *cap : 8;
		struct tt__suspend_target *targets = realloc(s->targets, grown * sizeof(*targets));
		if (!targets)
			return -ENOMEM;
		s->targets = targets;
		*cap = grown;
	}
	HANDLE h = OpenThread(THREAD_SUSPEND_RESUME | THREAD_GET_CONTEXT | THREAD_QUERY_INFORMATION,
			      FALSE, tid);
	if (!h)
		return -ESRCH;
	uint64_t cpu = tt__thread_cpu_ns(h);
	s->targets[s->ntargets++] = (struct tt__suspend_target){
		.thread = h, .sampled_ns = cpu, .seen_ns = cpu, .cpu_start_ns = cpu};
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

/* Whether a thread's registers are those it was last suspended with (these kept for
 * the next): it ran no instruction since, or came back to where it was. */
static bool tt__regs_same(struct tt__suspend_target *t, const CONTEXT *c)
{
	const uint64_t regs[TT__SUSPEND_REGS] = {
		c->Rip, c->Rsp, c->Rbp, c->EFlags, c->Rax, c->Rbx, c->Rcx, c->Rdx, c->Rsi,
		c->Rdi, c->R8,  c->R9,  c->R10,    c->R11, c->R12, c->R13, c->R14, c->R15};
	bool same = memcmp(regs, t->regs, sizeof regs) == 0;
	memcpy(t->regs, regs, sizeof regs);
	return same;
}

/* Whether a thread suspended at `rip` is in a system call: just after a `syscall`
 * instruction (0F 05), where ntdll's stubs leave it, Windows' and Wine's alike. */
static bool tt__in_syscall(uintptr_t rip)
{
	unsigned char code[2];
	SIZE_T got = 0;
	return ReadProcessMemory(GetCurrentProcess(), (const void *)(rip - 2), code, sizeof code, &got) &&
	       got == sizeof code && code[0] == 0x0f && code[1] == 0x05;
}

static DWORD WINAPI tt__sampler_main(void *arg)
{
	struct tt_profile *p = arg;
	struct tt__suspend *s = &p->u.suspend;
	while (WaitForSingleObject(s->quit, s->wait_ms) == WAIT_TIMEOUT) {
		for (size_t i = 0; i < s->ntargets; i++) {
			struct tt__suspend_target *t = &s->targets[i];
			uint64_t cpu = tt__thread_cpu_ns(t->thread);
			if (cpu > t->seen_ns)
				t->seen_ns = cpu;
			if (cpu < t->sampled_ns + p->interval)
				continue; /* it did not run an interval since its last sample */
			if (t->stopped_ticks && cpu == t->regs_cpu_ns && ++t->waited_ticks < t->stopped_ticks)
				continue; /* it waits still, it seems */
			uint64_t owed = cpu - t->sampled_ns < TT__OWED_MAX_NS ? cpu - t->sampled_ns
									    : TT__OWED_MAX_NS;
			t->sampled_ns = cpu - owed + p->interval;
			if (SuspendThread(t->thread) == (DWORD)-1)
				continue; /* exited */
			CONTEXT ctx = {.ContextFlags = CONTEXT_CONTROL | CONTEXT_INTEGER};
			BOOL got = GetThreadContext(t->thread, &ctx); /* (waits until it is suspended) */
			ResumeThread(t->thread);
			if (!got)
				continue;
			bool moved = cpu != t->regs_cpu_ns;
			t->regs_cpu_ns = cpu;
			t->waited_ticks = 0;
			if (tt__regs_same(t, &ctx) && !moved && tt__in_syscall((uintptr_t)ctx.Rip)) {
				t->sampled_ns = cpu - owed; /* (still owed) */
				t->stopped_ticks = t->stopped_ticks ? 2 * t->stopped_ticks : TT__STOPPED_TICKS;
				if (t->stopped_ticks > TT__STOPPED_TICKS_MAX)
					t->stopped_ticks = TT__STOPPED_TICKS_MAX;
			} else {
				t->stopped_ticks = 0;
				tt__profile_account(p, (uintptr_t)ctx.Rip);
			}
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
		const struct tt__suspend_target *t = &s->targets[i];
		uint64_t now = tt__thread_cpu_ns(t->thread);
		ns += (now > t->seen_ns ? now : t->seen_ns) - t->cpu_start_ns;
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
