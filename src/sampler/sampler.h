/* Private to src/sampler/ (and the bucket tests): the profile object shared by
 * the core, the perf mechanism and the timer fallback. */
#ifndef TT_SAMPLER_H
#define TT_SAMPLER_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "base/base.h"
#include "ticktrace/profile.h"

struct tt__perf_ring {
	size_t event;       /* the event (in fds) whose mmap this is; others SET_OUTPUT into it */
	void *base;         /* metadata page followed by data_size bytes */
	size_t data_size;   /* a power of two */
	bool hung_up;       /* the event's task exited: no longer polled, still drained */
};

struct tt__perf {
	/* Every event opened (nfds), including the rings', kept high and checked before
	 * each use (tt__fd_ours, and its perf id: a program's own eventfd or epoll has the
	 * same anonymous inode), as ticktrace keeps its descriptors. */
	struct tt__fd *fds;
	uint64_t *ids;
	size_t nfds;
	struct tt__perf_ring *rings;
	size_t nrings;
	struct tt__fd wake;     /* eventfd telling the drain thread to quit */
	bool quit;              /* the same, seen within DRAIN_POLL_MS when the program took it */
	pthread_t drain_thread;
	bool drain_started;
	pthread_mutex_t drain_lock; /* one consumer of the rings at a time */
};

struct tt__timer_thread {
	pid_t tid;
	timer_t timer;
	clockid_t clock;
	uint64_t cpu_start_ns;  /* the thread's CPU clock at tt_profile_start */
};

struct tt__timer {
	int slot;               /* index in the handler's table of live profiles */
	struct tt__timer_thread *threads;
	size_t nthreads;
};

struct tt_profile {
	uintptr_t start;
	size_t size;
	unsigned shift;         /* log2(bucket size) */
	size_t nbuckets;
	uint64_t *counts;       /* updated with relaxed atomics: drain thread or handlers */
	uint64_t outside;
	uint64_t lost;
	uint64_t cpu_ns;        /* completed windows (timer); perf reads its counters */
	enum tt_profile_source source;
	enum tt_profile_mechanism mechanism;
	uint64_t interval;
	unsigned flags;
	pid_t owner_tid;        /* the thread sampled without TT_PROFILE_ALL_THREADS */
	bool running;
	union {
		struct tt__perf perf;
		struct tt__timer timer;
	} u;
};

/* Count one sample at instruction pointer ip. Async-signal-safe. */
static inline void tt__profile_account(struct tt_profile *p, uintptr_t ip)
{
	uintptr_t off = ip - p->start; /* wraps for ip < start, so one compare suffices */
	if (off < p->size)
		__atomic_fetch_add(&p->counts[off >> p->shift], 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&p->outside, 1, __ATOMIC_RELAXED);
}

/* Each mechanism: open (0 or -errno, nothing left allocated on failure), start, stop
 * (every sample taken so far counted on return), collect (count what is pending:
 * the perf ring buffers; nothing for timers), cpu_ns (CPU time sampled so far) and
 * close. */
int tt__perf_open(struct tt_profile *p);
int tt__perf_start(struct tt_profile *p);
int tt__perf_stop(struct tt_profile *p);
void tt__perf_collect(struct tt_profile *p);
uint64_t tt__perf_cpu_ns(struct tt_profile *p);
void tt__perf_close(struct tt_profile *p);

int tt__timer_open(struct tt_profile *p);
int tt__timer_start(struct tt_profile *p);
int tt__timer_stop(struct tt_profile *p);
uint64_t tt__timer_cpu_ns(struct tt_profile *p);
void tt__timer_close(struct tt_profile *p);

#endif
