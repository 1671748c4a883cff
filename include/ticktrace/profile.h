/* ticktrace self-profiling: a program samples an address range of its own code into
 * a histogram of power-of-two buckets, with no external tool and no privilege.
 *
 *   TT_PROFILED(hot) void decode(void) { ... }     // placed in section tt_prof_hot
 *
 *   struct tt_profile_config cfg = { .bucket_size = 4 };
 *   TT_PROFILE_SECTION(&cfg, hot);                  // or .start = fn, .size = bytes
 *   struct tt_profile *p;
 *   if (tt_profile_create(&p, &cfg) == 0) {
 *       tt_profile_start(p); decode(); tt_profile_stop(p);
 *       uint64_t counts[N]; struct tt_profile_stats st;
 *       tt_profile_read(p, counts, N, &st);         // counts[i]: offset i * bucket_size
 *       tt_profile_close(p);
 *   }
 *
 * Mechanism: perf_event_open on the process itself (sampling the user-mode
 * instruction pointer), read from the mmap ring buffer by a drain thread the profile
 * owns; no signal is involved. It works for an unprivileged user at
 * perf_event_paranoid 2. Where perf is denied (EACCES, EPERM, ENOSYS: a seccomp
 * filter, paranoid 3), or under a soft RLIMIT_NOFILE below 32, where the events'
 * descriptors would take numbers the program needs (EMFILE), time sources fall back to a per-thread CPU-time timer
 * (timer_create) whose SIGPROF handler samples the interrupted instruction pointer;
 * CPU timers fire on the scheduler tick, so the effective interval is at least one
 * tick and is reported in tt_profile_stats. The fallback installs a SIGPROF handler
 * (and refuses with -EBUSY if the program has its own); a thread that blocks SIGPROF
 * is not sampled.
 * Environment: TICKTRACE_PROFILE_NO_PERF=1 makes perf_event_open report EACCES, to
 * exercise the fallback where perf works.
 *
 * Windows: the source is time alone (a hardware source: -ENODEV, or time with
 * TT_PROFILE_ALLOW_TIME). With TT_PROFILE_ALL_THREADS the kernel's profile of the
 * process samples (NtCreateProfile, NtSetIntervalProfile, NtStartProfile: every
 * thread, buckets of 4 bytes or more, 32-bit counts; the interval, in units of
 * 100 ns, is the system's for every profile of time; samples outside the range are
 * not counted, so `outside` is 0 and effective_interval_ns is not known). Where
 * ntdll lacks it (Wine) or refuses it (a bucket under 4 bytes, a range it will not
 * take), and without TT_PROFILE_ALL_THREADS, a sampler thread of the profile's own
 * suspends each thread sampled in turn every interval of wall time (rounded up to a
 * millisecond: the system's timer), reads its instruction pointer (SuspendThread,
 * GetThreadContext) and resumes it, as long as the thread's CPU time owes it a sample
 * (one per interval of it): a thread that does not run is not sampled, so the samples
 * are of time on CPU, as on Linux; the CPU time moves in the system's ticks (10 to
 * 16 ms), and the samples a tick owes are taken in the milliseconds after it.
 * TICKTRACE_PROFILE_NO_PERF=1 makes it take the sampler thread where
 * the kernel's profile would serve. tt_profile_stats.mechanism says which sampled,
 * and so does tt_profile_write's file.
 *
 * Not async-signal-safe. Functions on one profile must not run concurrently; distinct
 * profiles are independent. With -DTT_DISABLE every function is an inline stub that
 * returns -ENOSYS (tt_profile_source_name: NULL), and the macros still work.
 */
#ifndef TICKTRACE_PROFILE_H
#define TICKTRACE_PROFILE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifndef _WIN32
#define TT__PROFILE_API __attribute__((visibility("default")))
#elif defined(TT_STATIC)
#define TT__PROFILE_API
#else
#define TT__PROFILE_API __declspec(dllimport) /* libticktrace.dll's, as ticktrace.h's */
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What drives the samples. The hardware sources need a PMU that perf exposes. */
enum tt_profile_source {
	TT_PROFILE_TIME = 0,       /* task clock; interval in ns of CPU time (default 1 ms) */
	TT_PROFILE_INSTRUCTIONS,   /* retired instructions; interval in events (default 1e6) */
	TT_PROFILE_CYCLES,         /* CPU cycles; interval in events (default 1e6) */
	TT_PROFILE_BRANCH_MISSES,  /* mispredicted branches; interval in events (default 1e4) */
	TT_PROFILE_CACHE_MISSES,   /* last-level cache misses; interval in events (default 1e4) */
};

/* How the samples are taken. */
enum tt_profile_mechanism {
	TT_PROFILE_PERF = 1,  /* perf_event_open ring buffer, drained by a thread */
	TT_PROFILE_TIMER = 2, /* per-thread CPU-time timers and SIGPROF (the fallback) */
	TT_PROFILE_NT_PROFILE = 3,     /* Windows: the kernel's profile (NtCreateProfile) */
	TT_PROFILE_SAMPLER_THREAD = 4, /* Windows: a thread that suspends the others in turn */
};

/* Sample every thread of the process: perf samples the threads that exist at
 * tt_profile_create and every thread they create later (child processes are not
 * sampled, from Linux 5.13 on); the timer fallback samples the threads that exist
 * at each tt_profile_start. Without it, only the thread that called
 * tt_profile_create is sampled. */
#define TT_PROFILE_ALL_THREADS 0x1u
/* A hardware source the machine cannot provide is sampled as TT_PROFILE_TIME at the
 * default interval instead of failing; tt_profile_stats says which source is used. */
#define TT_PROFILE_ALLOW_TIME 0x2u

struct tt_profile_config {
	const void *start;            /* first byte of the range */
	size_t size;                  /* bytes in the range */
	size_t bucket_size;           /* a power of two, from 1; 0 means 4 */
	enum tt_profile_source source;
	uint64_t interval;            /* ns (time) or events (hardware); 0: the default */
	unsigned flags;               /* TT_PROFILE_ALL_THREADS | TT_PROFILE_ALLOW_TIME */
};

struct tt_profile_stats {
	uint64_t samples;               /* samples in the range: the sum of the buckets */
	uint64_t outside;               /* samples whose instruction pointer was outside */
	uint64_t lost;                  /* samples the kernel dropped (ring buffer full) */
	uint64_t interval;              /* requested interval in effect (ns or events) */
	uint64_t cpu_ns;                /* time source: CPU time sampled while started */
	uint64_t effective_interval_ns; /* time source: cpu_ns per sample taken, 0 if none */
	size_t buckets;                 /* ceil(size / bucket_size) */
	enum tt_profile_source source;       /* as asked, or TIME after TT_PROFILE_ALLOW_TIME */
	enum tt_profile_mechanism mechanism;
};

struct tt_profile;

#ifndef TT_DISABLE

/* Create a stopped profile over [start, start + size). Returns 0 and sets *out, or
 * -EINVAL (size 0, e.g. an empty section; bucket size not a power of two; unknown
 * source or flag), -ENODEV (a hardware source on a machine without a PMU, and no
 * TT_PROFILE_ALLOW_TIME), -EACCES/-EPERM (perf denied for a hardware source),
 * -EMFILE (a hardware source under a soft RLIMIT_NOFILE below 32, or none left), -EBUSY
 * (the fallback needs SIGPROF and the program handles it), -ENOMEM, or another
 * negative errno from perf_event_open, mmap or pthread_create. */
TT__PROFILE_API int tt_profile_create(struct tt_profile **out, const struct tt_profile_config *cfg);

/* Start sampling. Returns 0, -EALREADY if started, or a negative errno from the
 * kernel (perf ioctl, timer_create). */
TT__PROFILE_API int tt_profile_start(struct tt_profile *p);

/* Stop sampling; every sample taken before it returns is counted. Returns 0, or
 * -EALREADY if not started. */
TT__PROFILE_API int tt_profile_stop(struct tt_profile *p);

/* Copy up to n bucket counts into counts (counts may be NULL when n is 0) and, if
 * stats is not NULL, fill it. Counts keep accumulating across start/stop windows.
 * Returns 0. Safe while started: samples taken so far are included. */
TT__PROFILE_API int tt_profile_read(struct tt_profile *p, uint64_t *counts, size_t n,
		    struct tt_profile_stats *stats);

/* Write the buckets that have samples to `out` as text that `ticktrace lines FILE`
 * turns into function, file:line and count per bucket: the executable segment that
 * holds the range (file, bounds, file offset), then an address and a count a line.
 * Returns 0, -ENOENT (the range is in no executable segment), or -EIO. */
TT__PROFILE_API int tt_profile_write(struct tt_profile *p, FILE *out);

/* Stop if started, and free everything. NULL is ignored. */
TT__PROFILE_API void tt_profile_close(struct tt_profile *p);

/* The lower-case name of a source ("time", "instructions", "cycles",
 * "branch-misses", "cache-misses"), or NULL for an unknown value. */
TT__PROFILE_API const char *tt_profile_source_name(enum tt_profile_source source);

#else /* TT_DISABLE: nothing is sampled and nothing needs the library */

#define TT__PROF_INLINE static inline __attribute__((always_inline, no_instrument_function))
TT__PROF_INLINE int tt_profile_create(struct tt_profile **out, const struct tt_profile_config *cfg)
{
	(void)out;
	(void)cfg;
	return -ENOSYS;
}
TT__PROF_INLINE int tt_profile_start(struct tt_profile *p) { (void)p; return -ENOSYS; }
TT__PROF_INLINE int tt_profile_stop(struct tt_profile *p) { (void)p; return -ENOSYS; }
TT__PROF_INLINE int tt_profile_read(struct tt_profile *p, uint64_t *counts, size_t n,
				    struct tt_profile_stats *stats)
{
	(void)p;
	(void)counts;
	(void)n;
	(void)stats;
	return -ENOSYS;
}
TT__PROF_INLINE int tt_profile_write(struct tt_profile *p, FILE *out)
{
	(void)p;
	(void)out;
	return -ENOSYS;
}
TT__PROF_INLINE void tt_profile_close(struct tt_profile *p) { (void)p; }
TT__PROF_INLINE const char *tt_profile_source_name(enum tt_profile_source source)
{
	(void)source;
#ifdef __cplusplus
	return nullptr; /* -Wzero-as-null-pointer-constant takes NULL too */
#else
	return NULL;
#endif
}

#endif /* TT_DISABLE */

/* Put the function that follows in section tt_prof_<sec> (sec: a C identifier), kept
 * out of line and kept by --gc-sections, so that TT_PROFILE_SECTION finds it. */
#if defined(__has_attribute)
#if __has_attribute(retain) && !defined(_WIN32) /* (PE: ignored, with a warning) */
#define TT__PROF_RETAIN , retain
#endif
#if __has_attribute(noclone)
#define TT__PROF_NOCLONE , noclone
#endif
#endif
#ifndef TT__PROF_RETAIN
#define TT__PROF_RETAIN
#endif
#ifndef TT__PROF_NOCLONE
#define TT__PROF_NOCLONE
#endif
#define TT_PROFILED(sec)                                                           \
	__attribute__((section("tt_prof_" #sec), noinline, used TT__PROF_NOCLONE TT__PROF_RETAIN))

/* Set cfg->start and cfg->size to the bounds of section tt_prof_<sec> in the module
 * (executable or shared object) that uses the macro, from the linker's
 * __start_/__stop_ symbols. Weak, so a section nothing was put in gives size 0. */
#define TT__PROF_CAT2(a, b) a##b
#define TT__PROF_CAT(a, b) TT__PROF_CAT2(a, b)
#define TT_PROFILE_SECTION(cfg, sec)                                               \
	do {                                                                           \
		extern const char TT__PROF_CAT(__start_tt_prof_, sec)[]                    \
			__attribute__((weak, visibility("hidden")));                           \
		extern const char TT__PROF_CAT(__stop_tt_prof_, sec)[]                     \
			__attribute__((weak, visibility("hidden")));                           \
		(cfg)->start = TT__PROF_CAT(__start_tt_prof_, sec);                        \
		(cfg)->size = (size_t)((uintptr_t)TT__PROF_CAT(__stop_tt_prof_, sec) -     \
				       (uintptr_t)TT__PROF_CAT(__start_tt_prof_, sec));    \
	} while (0)

#ifdef __cplusplus
}
#endif

#endif /* TICKTRACE_PROFILE_H */
