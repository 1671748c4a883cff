/* The fallback where perf is denied: one CPU-time timer per sampled thread
 * (timer_create on the thread's CPU clock, SIGEV_THREAD_ID), whose SIGPROF
 * interrupts that very thread; the handler counts the interrupted instruction
 * pointer. CPU timers expire on the scheduler tick, so the effective interval is
 * rounded up to ticks; tt_profile_read measures and reports it.
 *
 * The handler finds its profile through a table of slots, never through a pointer
 * carried by the signal, so a signal that arrives late (after stop, or after close)
 * cannot touch freed memory or count into the wrong window: the signal carries the
 * slot and a window generation, and only the current window of a live slot counts.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <ucontext.h>
#include <unistd.h>

#include "sampler/sampler.h"

enum { SLOTS = 64, SLOT_BITS = 6 };
#define WINDOW_MASK (~0u >> (SLOT_BITS + 1)) /* window << SLOT_BITS fits a positive int */

static struct tt_profile *slot_profile[SLOTS];
static unsigned slot_window[SLOTS];  /* generation of the slot's current window */
static unsigned slot_inflight[SLOTS]; /* handlers between lookup and count */
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_sigprof(int sig, siginfo_t *si, void *ucontext)
{
	(void)sig;
	if (si->si_code != SI_TIMER)
		return;
	int saved_errno = errno;
	unsigned v = (unsigned)si->si_value.sival_int;
	unsigned slot = v & (SLOTS - 1);
	__atomic_add_fetch(&slot_inflight[slot], 1, __ATOMIC_SEQ_CST);
	struct tt_profile *p = __atomic_load_n(&slot_profile[slot], __ATOMIC_SEQ_CST);
	if (p && __atomic_load_n(&slot_window[slot], __ATOMIC_SEQ_CST) == v >> SLOT_BITS) {
		const ucontext_t *uc = ucontext;
		tt__profile_account(p, (uintptr_t)uc->uc_mcontext.gregs[REG_RIP]);
	}
	__atomic_sub_fetch(&slot_inflight[slot], 1, __ATOMIC_SEQ_CST);
	errno = saved_errno;
}

/* Install the handler unless it is there; refuse if the program handles SIGPROF
 * itself (checked every time: the program may have taken it over since). */
static int install_handler(void)
{
	struct sigaction old, sa = {.sa_sigaction = on_sigprof, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, NULL, &old) != 0)
		return -errno;
	if (old.sa_flags & SA_SIGINFO)
		return old.sa_sigaction == on_sigprof ? 0 : -EBUSY;
	if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)
		return -EBUSY;
	return sigaction(SIGPROF, &sa, NULL) == 0 ? 0 : -errno;
}

int tt__timer_open(struct tt_profile *p)
{
	pthread_mutex_lock(&slot_lock);
	int rc = install_handler();
	int slot = -1;
	for (int i = 0; rc == 0 && i < SLOTS && slot < 0; i++)
		if (!slot_profile[i])
			slot = i;
	if (rc == 0 && slot < 0)
		rc = -EMFILE;
	if (rc == 0) {
		__atomic_store_n(&slot_profile[slot], p, __ATOMIC_SEQ_CST);
		p->u.timer = (struct tt__timer){.slot = slot};
	}
	pthread_mutex_unlock(&slot_lock);
	return rc;
}

/* The CPU clock of any thread of this process, as glibc's pthread_getcpuclockid
 * builds it: (~tid << 3) | CPUCLOCK_PERTHREAD_MASK | CPUCLOCK_SCHED. */
static clockid_t thread_cpu_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 6u);
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;
	if (clock_gettime(clock, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int add_thread(struct tt_profile *p, pid_t tid, unsigned window, size_t *cap)
{
	struct tt__timer *tm = &p->u.timer;
	if (tm->nthreads == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		struct tt__timer_thread *grown = realloc(tm->threads, *cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		tm->threads = grown;
	}
	struct tt__timer_thread *t = &tm->threads[tm->nthreads];
	t->tid = tid;
	t->clock = thread_cpu_clock(tid);
	struct sigevent sev = {
		.sigev_notify = SIGEV_THREAD_ID,
		.sigev_signo = SIGPROF,
		.sigev_value.sival_int = (int)(window << SLOT_BITS | (unsigned)tm->slot),
	};
	sev._sigev_un._tid = tid;
	if (timer_create(t->clock, &sev, &t->timer) != 0)
		return errno == EINVAL ? 0 : -errno; /* EINVAL: the thread has exited */
	t->cpu_start_ns = clock_ns(t->clock);
	tm->nthreads++;
	return 0;
}

static int add_threads(struct tt_profile *p, unsigned window)
{
	size_t cap = 0;
	if (!(p->flags & TT_PROFILE_ALL_THREADS))
		return add_thread(p, p->owner_tid, window, &cap);
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -errno;
	int rc = 0;
	for (struct dirent *e; rc == 0 && (e = readdir(d));) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid > 0)
			rc = add_thread(p, tid, window, &cap);
	}
	closedir(d);
	return rc;
}

/* CPU time of the sampled threads in the open window (0 when stopped: no timers). A
 * thread that has exited no longer has a clock; its share is lost. */
static uint64_t open_window_ns(const struct tt__timer *tm)
{
	uint64_t total = 0;
	for (size_t i = 0; i < tm->nthreads; i++) {
		uint64_t now = clock_ns(tm->threads[i].clock);
		if (now > tm->threads[i].cpu_start_ns)
			total += now - tm->threads[i].cpu_start_ns;
	}
	return total;
}

static void delete_timers(struct tt__timer *tm)
{
	for (size_t i = 0; i < tm->nthreads; i++)
		timer_delete(tm->threads[i].timer);
	free(tm->threads);
	tm->threads = NULL;
	tm->nthreads = 0;
}

int tt__timer_start(struct tt_profile *p)
{
	struct tt__timer *tm = &p->u.timer;
	/* Only this profile writes its slot's window, and stop moved it past every
	 * signal of the previous window. */
	unsigned window = (__atomic_load_n(&slot_window[tm->slot], __ATOMIC_SEQ_CST) + 1) & WINDOW_MASK;
	__atomic_store_n(&slot_window[tm->slot], window, __ATOMIC_SEQ_CST);
	int rc = add_threads(p, window);
	if (rc == 0 && tm->nthreads == 0)
		rc = -ESRCH;
	struct itimerspec its = {
		.it_interval = {.tv_sec = (time_t)(p->interval / 1000000000u),
				.tv_nsec = (long)(p->interval % 1000000000u)},
	};
	its.it_value = its.it_interval;
	for (size_t i = 0; rc == 0 && i < tm->nthreads; i++)
		if (timer_settime(tm->threads[i].timer, 0, &its, NULL) != 0)
			rc = -errno;
	if (rc != 0)
		delete_timers(tm);
	return rc;
}

int tt__timer_stop(struct tt_profile *p)
{
	struct tt__timer *tm = &p->u.timer;
	/* Close the window first: from here on a signal, even one already queued,
	 * counts nothing; then wait out the handlers that are counting right now. */
	__atomic_add_fetch(&slot_window[tm->slot], 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&slot_inflight[tm->slot], __ATOMIC_SEQ_CST) != 0)
		sched_yield();
	p->cpu_ns += open_window_ns(tm);
	delete_timers(tm);
	return 0;
}

uint64_t tt__timer_cpu_ns(struct tt_profile *p)
{
	return p->cpu_ns + open_window_ns(&p->u.timer);
}

void tt__timer_close(struct tt_profile *p)
{
	pthread_mutex_lock(&slot_lock);
	__atomic_store_n(&slot_profile[p->u.timer.slot], NULL, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&slot_inflight[p->u.timer.slot], __ATOMIC_SEQ_CST) != 0)
		sched_yield();
	pthread_mutex_unlock(&slot_lock);
}

const struct tt__mechanism tt__timer_mechanism = {
	.id = TT_PROFILE_TIMER,
	.start = tt__timer_start,
	.stop = tt__timer_stop,
	.collect = NULL,
	.cpu_ns = tt__timer_cpu_ns,
	.close = tt__timer_close,
};
