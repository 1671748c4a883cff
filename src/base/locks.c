/* The runtime's locks (base.h gives their order), and, built with -Dlock_check, the
 * check of that order: each thread keeps the ranks of the locks it holds. */
#include <stdio.h>
#include <stdlib.h>

#include "base/base.h"

#ifdef TT_LOCK_CHECK
static const char *const tt__lock_names[] = {
	[TT__LOCK_STREAM_DUMP] = "stream's dump",
	[TT__LOCK_STREAM] = "stream's requests",
	[TT__LOCK_SPIKES_POLL] = "spikes' poll",
	[TT__LOCK_WORK] = "background work's",
	[TT__LOCK_BACKGROUND] = "background",
	[TT__LOCK_CLEAN] = "clean",
	[TT__LOCK_RETIRED] = "retired libraries'",
	[TT__LOCK_SCHED] = "sched",
	[TT__LOCK_REGISTRY] = "registry",
	[TT__LOCK_CORE] = "core",
	[TT__LOCK_NAMES] = "names'",
};
_Static_assert(sizeof tt__lock_names / sizeof tt__lock_names[0] == TT__LOCK_RANKS, "a name per lock");
_Static_assert(TT__LOCK_RANKS <= 32, "the ranks held fit a word");

static __thread uint32_t tt__locks_held __attribute__((tls_model("initial-exec")));

static void tt__lock_check(const struct tt__lock *lock)
{
	uint32_t after = tt__locks_held >> lock->rank; /* held, of its rank or later */
	if (!after)
		return;
	unsigned held = lock->rank + (unsigned)__builtin_ctz(after);
	fprintf(stderr, "ticktrace: lock order broken: the %s lock taken while the %s lock is "
		"held (src/base/base.h gives the order)\n", tt__lock_names[lock->rank], tt__lock_names[held]);
	abort();
}
#endif

void tt__lock(struct tt__lock *lock)
{
#ifdef TT_LOCK_CHECK
	tt__lock_check(lock);
#endif
	tt_os_lock(&lock->os);
#ifdef TT_LOCK_CHECK
	tt__locks_held |= UINT32_C(1) << lock->rank;
#endif
}

void tt__unlock(struct tt__lock *lock)
{
#ifdef TT_LOCK_CHECK
	tt__locks_held &= ~(UINT32_C(1) << lock->rank);
#endif
	tt_os_unlock(&lock->os);
}

void tt__lock_reset(struct tt__lock *lock)
{
#ifdef TT_LOCK_CHECK
	tt__locks_held &= ~(UINT32_C(1) << lock->rank); /* (fork's, in the parent) */
#endif
	lock->os = (struct tt_os_lock){0};
}
