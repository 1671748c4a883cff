/* Private to src/sampler/ (and the bucket tests): the profile object shared by
 * the core (profile.c) and each system's mechanisms: Linux's perf events (perf.c) and
 * timer fallback (timer.c), chosen by linux.c; Windows' kernel profile
 * (NtCreateProfile) and sampler thread (suspend.c), chosen by windows.c. */
#ifndef TT_SAMPLER_H
#define TT_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ticktrace/profile.h"

#ifdef _WIN32
/* NtCreateProfile's: the kernel counts into `buffer` (32-bit buckets of the profile's
 * layout) while started; `counted` is what was folded into the profile's counts. */
struct tt__nt_profile {
	void *handle;         /* the profile object */
	uint32_t *buffer;
	uint64_t cpu_start_ns; /* the process's CPU time at tt_profile_start */
};

/* A thread the sampler thread samples (suspend.c). */
#define TT__SUSPEND_REGS 18
struct tt__suspend_target {
	void *thread;          /* its handle */
	uint64_t sampled_ns;   /* its CPU time sampled for so far */
	uint64_t seen_ns;      /* its CPU time as last read */
	uint64_t cpu_start_ns; /* its CPU time at tt_profile_start */
	uint64_t regs[TT__SUSPEND_REGS]; /* its registers as last suspended */
	uint64_t regs_cpu_ns;  /* its CPU time as read then */
	uint32_t stopped_ticks; /* found waiting in the kernel: ticks till it is looked at
	                         * again (its CPU time unmoved; 0: not waiting) */
	uint32_t waited_ticks;  /* of them, gone */
};

/* The sampler thread's (suspend.c): the threads it samples, each suspended in turn. */
struct tt__suspend {
	void *thread;           /* the sampler thread, while started */
	void *quit;             /* an event that stops it */
	struct tt__suspend_target *targets;
	size_t ntargets;
	uint32_t wait_ms;       /* between ticks */
};
#else
#include <pthread.h>
#include <time.h>

#include "base/base.h"

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
	bool quit;              /* the same, seen within a poll's timeout when the program took it */
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
#endif

/* A way to take samples: start, stop (every sample taken so far counted on return),
 * collect (count what is pending: perf's ring buffers, the kernel's profile buffer;
 * NULL where samples are counted as they are taken), cpu_ns (CPU time sampled so
 * far) and close. */
struct tt__mechanism {
	enum tt_profile_mechanism id;
	int (*start)(struct tt_profile *p);
	int (*stop)(struct tt_profile *p);
	void (*collect)(struct tt_profile *p);
	uint64_t (*cpu_ns)(struct tt_profile *p);
	void (*close)(struct tt_profile *p);
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
	const struct tt__mechanism *mechanism;
	uint64_t interval;
	unsigned flags;
	pid_t owner_tid;        /* the thread sampled without TT_PROFILE_ALL_THREADS */
	bool running;
	union {
#ifdef _WIN32
		struct tt__nt_profile nt;
		struct tt__suspend suspend;
#else
		struct tt__perf perf;
		struct tt__timer timer;
#endif
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

/* Counts the samples pending (the mechanism's collect). */
static inline void tt__profile_collect(struct tt_profile *p)
{
	if (p->mechanism->collect)
		p->mechanism->collect(p);
}

/* TICKTRACE_PROFILE_NO_PERF: the kernel's sampler (perf; Windows' profile) is not
 * asked, to exercise the fallback where it would serve. */
bool tt__profile_no_kernel_sampler(void);

/* The executable range that holds an address (a segment; a PE section), as each
 * system finds it for tt_profile_write. */
struct tt__code_range {
	uintptr_t address; /* in: an address of the range */
	uintptr_t start, end, file_offset;
	char path[4096];
	bool found;
};

/* tt_profile_write's text (write.c), once the system found the range that holds the
 * profile; `sampler`: a line that says how it sampled, or NULL. */
int tt__profile_emit(struct tt_profile *p, FILE *out, const struct tt__code_range *range,
		     const char *sampler);

/* The interval a source is sampled at when none is asked for. */
uint64_t tt__profile_default_interval(enum tt_profile_source source);

/* The system's choice (linux.c, windows.c): opens the mechanism that serves p's
 * source, interval and flags (a hardware source p was allowed to give up becomes time
 * there), sets p->mechanism and p->owner_tid: 0, or -errno with nothing left
 * allocated. */
int tt__mechanism_open(struct tt_profile *p);

#ifdef _WIN32
int tt__nt_profile_open(struct tt_profile *p);
extern const struct tt__mechanism tt__nt_profile_mechanism;
int tt__suspend_open(struct tt_profile *p);
extern const struct tt__mechanism tt__suspend_mechanism;
#else
/* Each mechanism's open: 0 or -errno, nothing left allocated on failure. */
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
extern const struct tt__mechanism tt__perf_mechanism, tt__timer_mechanism;
#endif

#endif
