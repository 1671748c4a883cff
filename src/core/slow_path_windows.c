/* Windows' hot path's ways into the slow path (slow_path.c is both systems'):
 * asm/record_win64.asm's, whose four arguments leave out where the reservation fell
 * (no room for a fifth is the caller's to write), and MSVC's /Gh /GH hooks',
 * asm/penter_win64.asm's: a thread's first call, and calls nested deeper than its
 * stack of the functions _penter entered holds (struct tt__hot's penter fields). */
#include <stdbool.h>
#include <string.h>

#include "core/core_internal.h"

/* The emitters' (asm/record_win64.asm), which register the thread. */
void __cyg_profile_func_enter(void *fn, void *call_site);
void __cyg_profile_func_exit(void *fn, void *call_site);

void tt__record_slow_win64(uint64_t word, uint64_t value, uint64_t tsc, struct tt__hot *entry)
{
	size_t size = TT_RECORD_HAS_VALUE(TT_RECORD_KIND(word)) ? 2 * sizeof(struct tt_record)
								: sizeof(struct tt_record);
	/* The reservation moved the cursor past it by the event's size, and nothing moved
	 * it since: the thread alone does, and Windows interrupts it with no handler that
	 * records (a signal's, on Linux, would: its hot path says where). */
	tt__record_slow(word, value, tsc, entry, entry ? entry->cursor - size : NULL);
}

/* The calling thread's slot, registry lock held (NULL: none, not held). */
static struct tt__slot *tt__penter_slot(struct tt_os_signals *old)
{
	tt__registry_lock(old);
	struct tt__slot *slot = tt__find_slot(tt_os_thread_key());
	if (!slot)
		tt__registry_unlock(old);
	return slot;
}

/* Registry lock held: the thread's stack of the functions _penter entered, full, twice
 * the room (the first, TT__PENTER_DEPTH, in its slot; those after, pages of its own);
 * false without memory. */
static bool tt__penter_grow(struct tt__slot *slot)
{
	struct tt__hot *hot = slot->hot;
	size_t depth = (size_t)(hot->penter_end - hot->penter_base);
	uintptr_t *grown = tt_os_alloc(2 * depth * sizeof *grown);
	if (!grown)
		return false;
	memcpy(grown, hot->penter_base, depth * sizeof *grown);
	if (hot->penter_base != slot->penter)
		tt_os_free(hot->penter_base, depth * sizeof *grown);
	hot->penter_base = grown;
	hot->penter_top = grown + depth;
	hot->penter_end = grown + 2 * depth;
	return true;
}

void tt__penter_slow(uint64_t fn)
{
	/* Off (TICKTRACE=0): no thread has a slot, nor gets one, and each hooked call
	 * took the registry lock here twice, some 90 ns, four times what recording it
	 * costs (outside test ot31w D1). */
	if (tt__started_off())
		return;
	struct tt_os_signals old;
	struct tt__slot *slot = tt__penter_slot(&old);
	if (slot) {
		struct tt__hot *hot = slot->hot;
		int dropped = hot->penter_top >= hot->penter_end &&
			      (hot->penter_top > hot->penter_end || !tt__penter_grow(slot));
		/* deeper than its stack, which no memory grew: the exit could not be
		 * named, so neither is recorded: counted */
		if (dropped) {
			__atomic_add_fetch(&slot->dropped[TT_DROP_NO_MEMORY], 1, __ATOMIC_RELAXED);
			hot->penter_top++;
		}
		tt__registry_unlock(&old);
		if (dropped)
			return;
	}
	__cyg_profile_func_enter((void *)(uintptr_t)fn, NULL); /* (registers the thread) */
	if ((slot = tt__penter_slot(&old))) {
		*slot->hot->penter_top++ = (uintptr_t)fn;
		tt__registry_unlock(&old);
	}
}

void tt__pexit_slow(void)
{
	if (tt__started_off()) /* (as tt__penter_slow) */
		return;
	struct tt_os_signals old;
	struct tt__slot *slot = tt__penter_slot(&old);
	uintptr_t fn = 0;
	if (slot && slot->hot->penter_top > slot->hot->penter_base) {
		struct tt__hot *hot = slot->hot;
		hot->penter_top--;
		if (hot->penter_top < hot->penter_end)
			fn = *hot->penter_top;
		else
			__atomic_add_fetch(&slot->dropped[TT_DROP_NO_MEMORY], 1, __ATOMIC_RELAXED);
	}
	if (slot)
		tt__registry_unlock(&old);
	if (fn)
		__cyg_profile_func_exit((void *)fn, NULL);
}
