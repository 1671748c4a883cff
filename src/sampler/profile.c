/* Self-profiling: the object and its arguments. Which mechanism samples is the
 * system's choice (linux.c, windows.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/sampler.h"

static const char *const source_names[] = {
	[TT_PROFILE_TIME] = "time",
	[TT_PROFILE_INSTRUCTIONS] = "instructions",
	[TT_PROFILE_CYCLES] = "cycles",
	[TT_PROFILE_BRANCH_MISSES] = "branch-misses",
	[TT_PROFILE_CACHE_MISSES] = "cache-misses",
};

#define N_SOURCES (sizeof(source_names) / sizeof(source_names[0]))
#define KNOWN_FLAGS (TT_PROFILE_ALL_THREADS | TT_PROFILE_ALLOW_TIME)

const char *tt_profile_source_name(enum tt_profile_source source)
{
	return (unsigned)source < N_SOURCES ? source_names[source] : NULL;
}

/* Time: 1 ms of CPU time. Hardware: about 1 ms of a core's work at a few GHz for
 * instructions and cycles; misses are rarer, so sample them more densely. */
uint64_t tt__profile_default_interval(enum tt_profile_source source)
{
	switch (source) {
	case TT_PROFILE_BRANCH_MISSES:
	case TT_PROFILE_CACHE_MISSES:
		return 10000;
	default:
		return 1000000;
	}
}

bool tt__profile_no_kernel_sampler(void)
{
	const char *v = getenv("TICKTRACE_PROFILE_NO_PERF");
	return v && *v && strcmp(v, "0") != 0;
}

int tt_profile_create(struct tt_profile **out, const struct tt_profile_config *cfg)
{
	if (!out || !cfg || cfg->size == 0 || (uintptr_t)cfg->start > UINTPTR_MAX - (cfg->size - 1) ||
	    (unsigned)cfg->source >= N_SOURCES || (cfg->flags & ~KNOWN_FLAGS))
		return -EINVAL;
	size_t bucket = cfg->bucket_size ? cfg->bucket_size : 4;
	if (bucket & (bucket - 1))
		return -EINVAL;

	struct tt_profile *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->start = (uintptr_t)cfg->start;
	p->size = cfg->size;
	p->shift = (unsigned)__builtin_ctzll(bucket);
	p->nbuckets = ((cfg->size - 1) >> p->shift) + 1; /* ceil without overflow */
	p->counts = calloc(p->nbuckets, sizeof(*p->counts));
	p->source = cfg->source;
	p->interval = cfg->interval ? cfg->interval : tt__profile_default_interval(cfg->source);
	p->flags = cfg->flags;
	int rc = p->counts ? tt__mechanism_open(p) : -ENOMEM;
	if (rc != 0) {
		free(p->counts);
		free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int tt_profile_start(struct tt_profile *p)
{
	if (p->running)
		return -EALREADY;
	int rc = p->mechanism->start(p);
	if (rc == 0)
		p->running = true;
	return rc;
}

int tt_profile_stop(struct tt_profile *p)
{
	if (!p->running)
		return -EALREADY;
	int rc = p->mechanism->stop(p);
	p->running = false;
	return rc;
}

int tt_profile_read(struct tt_profile *p, uint64_t *counts, size_t n,
		    struct tt_profile_stats *stats)
{
	tt__profile_collect(p);
	uint64_t samples = 0;
	for (size_t i = 0; i < p->nbuckets; i++) {
		uint64_t c = __atomic_load_n(&p->counts[i], __ATOMIC_RELAXED);
		samples += c;
		if (i < n)
			counts[i] = c;
	}
	if (!stats)
		return 0;
	*stats = (struct tt_profile_stats){
		.samples = samples,
		.outside = __atomic_load_n(&p->outside, __ATOMIC_RELAXED),
		.lost = __atomic_load_n(&p->lost, __ATOMIC_RELAXED),
		.interval = p->interval,
		.buckets = p->nbuckets,
		.source = p->source,
		.mechanism = p->mechanism->id,
	};
	if (p->source == TT_PROFILE_TIME) {
		stats->cpu_ns = p->mechanism->cpu_ns(p);
		uint64_t taken = stats->samples + stats->outside + stats->lost;
		stats->effective_interval_ns = taken ? stats->cpu_ns / taken : 0;
	}
	return 0;
}

void tt_profile_close(struct tt_profile *p)
{
	if (!p)
		return;
	if (p->running)
		tt_profile_stop(p);
	p->mechanism->close(p);
	free(p->counts);
	free(p);
}
