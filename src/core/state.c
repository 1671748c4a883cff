/* The run's settings and state that the core reads: set by the lifecycle above
 * (lifecycle/config.c reads the settings from the environment, start.c the rest);
 * and the core's lock. */
#include "core/core_internal.h"

struct tt__config tt__config;
int tt__recording;
int tt__forked;
unsigned tt__exec_image;
int tt__crash_signal;

/* The core's lock: every slot's chunks, limit and flags, the arena's free chunks and
 * cleaning queue, the ring's history and the chunks kept for readers (core.h says
 * which functions need it held). */
static struct tt__lock tt__core = TT__LOCK_INIT(TT__LOCK_CORE);

void tt__core_lock(int lock)
{
	if (lock)
		tt__lock(&tt__core);
	else
		tt__unlock(&tt__core);
}

void tt__core_reset_after_fork(void)
{
	tt__lock_reset(&tt__core);
}
