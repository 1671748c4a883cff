/* Names made at run time (TT_SCOPE_DYN and the other _DYN macros), on the table both
 * runtimes share (common/names.c).
 *
 * A lookup takes no lock; a name not seen before is added under a mutex with signals
 * blocked (a handler may look names up too). */
#include "writer.h"

static struct tt_names tt__names = {.alloc = tt_os_alloc};
static struct tt__lock tt__names_lock = TT__LOCK_INIT(TT__LOCK_NAMES);

const struct tt_callsite *tt__name(const struct tt_callsite *from, const char *name, size_t len)
{
	/* Recording off (TICKTRACE=0, tt_disable): no event names it, nothing is kept. */
	if (tt__started_off() || !__atomic_load_n(&tt__recording, __ATOMIC_RELAXED))
		return from;
	struct tt_name_key key;
	const struct tt_callsite *found = tt_names_find(&tt__names, from, name, len, &key);
	if (found)
		return found;
	struct tt_os_signals old;
	tt_os_signals_block(&old);
	tt__lock(&tt__names_lock);
	const struct tt_callsite *site = tt_names_add(&tt__names, &key);
	tt__unlock(&tt__names_lock);
	tt_os_signals_restore(&old);
	return site;
}

bool tt__names_hold(uint64_t address)
{
	return tt_names_hold(&tt__names, address);
}

void tt__names_after_fork(void)
{
	tt__lock_reset(&tt__names_lock);
}
