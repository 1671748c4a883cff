/* The patched functions the detour library turned off as the program ran (the
 * zero-markup build's self-tuning, src/detour/turn_off.c), kept for the TURNED_OFF
 * section: their later calls are in no record and no count, and the file says so. */
#include <errno.h>

#include "writer/writer.h"

#define TT__TURNED_OFF_MAX 4096

static struct tt_turned_off_fn tt__turned[TT__TURNED_OFF_MAX];
static uint32_t tt__turned_taken;  /* places taken (some maybe still being written) */
static uint64_t tt__turned_after;  /* the erased calls that turn a function off */

/* Each function once (the detour library's lock makes each call); `address` written
 * last: the writer skips a place still being filled. */
void tt__turned_off(uint64_t address, uint64_t tsc, uint64_t after_calls)
{
	uint32_t at = __atomic_fetch_add(&tt__turned_taken, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&tt__turned_after, after_calls, __ATOMIC_RELAXED);
	if (at >= TT__TURNED_OFF_MAX)
		return; /* (counted: not_written) */
	tt__turned[at].tsc = tsc;
	__atomic_store_n(&tt__turned[at].address, address, __ATOMIC_RELEASE);
}

static uint32_t tt__turned_count(void)
{
	uint32_t taken = __atomic_load_n(&tt__turned_taken, __ATOMIC_ACQUIRE);
	return taken < TT__TURNED_OFF_MAX ? taken : TT__TURNED_OFF_MAX;
}

int tt__turned_off_names(struct tt__site_set *names, struct tt__site_set *fresh)
{
	for (uint32_t i = 0, n = tt__turned_count(); i < n; i++) {
		uint64_t address = __atomic_load_n(&tt__turned[i].address, __ATOMIC_ACQUIRE);
		if (address && tt__site_set_add_fresh(names, fresh, address | TT__FUNC_TAG) < 0)
			return -ENOMEM;
	}
	return 0;
}

void tt__out_turned_off(struct tt__out *out)
{
	uint32_t taken = __atomic_load_n(&tt__turned_taken, __ATOMIC_ACQUIRE), n = 0;
	uint32_t places = tt__turned_count();
	for (uint32_t i = 0; i < places; i++)
		n += __atomic_load_n(&tt__turned[i].address, __ATOMIC_ACQUIRE) != 0;
	if (!taken)
		return;
	struct tt_turned_off_info info = {.count = n, .not_written = taken - n,
					  .after_calls = __atomic_load_n(&tt__turned_after, __ATOMIC_RELAXED)};
	uint64_t size = sizeof info + (uint64_t)n * sizeof(struct tt_turned_off_fn);
	tt__out_section(out, TT_SEC_TURNED_OFF, size);
	tt__out(out, &info, sizeof info);
	for (uint32_t i = 0, written = 0; i < places && written < n; i++) {
		struct tt_turned_off_fn one = {.address = __atomic_load_n(&tt__turned[i].address, __ATOMIC_ACQUIRE),
					       .tsc = tt__turned[i].tsc};
		if (!one.address)
			continue;
		tt__out(out, &one, sizeof one);
		written++;
	}
	tt__out_pad(out, size);
}
