/* The public control functions: a scope's description (TT_DESCRIBE, out of line),
 * naming a thread, stopping and resuming one thread's recording (tt_pause,
 * tt_resume). (tt_enable, tt_disable and tt_dump: start.c.) */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <x86intrin.h>

#include "lifecycle/lifecycle.h"

/* The header's notes build their words from these numbers. */
_Static_assert(TT_REC_THRESHOLD == 16 && TT_REC_CHILDREN_THRESHOLD == 17 &&
		       TT_REC_IGNORE == 18 && TT_REC_IGNORE_CHILDREN == 19 &&
		       TT_REC_PARENTS_THRESHOLD == 25,
	       "ticktrace.h TT_THRESHOLD_NS and the other notes");

void tt__describe(const char *fmt, ...)
{
	uint64_t tsc = __rdtsc(); /* when it was described, like any event */
	struct tt_record records[TT_DESCRIBE_RECORDS];
	va_list ap;
	va_start(ap, fmt);
	size_t n = tt_describe_records(records, tsc, fmt, ap);
	va_end(ap);
	if (n)
		tt__record_many(records, n);
}

/* The calling thread's slot, registered now if need be; NULL when ticktrace is off or
 * the thread cannot have one. */
static struct tt__slot *tt__own_slot(void)
{
	tt__init();
	if (tt__config.off)
		return NULL;
	uintptr_t tp = tt_os_thread_key();
	struct tt__slot *slot = tt__find_slot(tp);
	return slot ? slot : tt__register_thread(tp);
}

void tt_thread_name(const char *name)
{
	struct tt__slot *slot = tt__own_slot();
	if (!slot)
		return;
	struct tt_os_signals old;
	tt__registry_lock(&old);
	snprintf(slot->name, sizeof slot->name, "%.*s", (int)tt_utf8_cut(name, sizeof slot->name - 1), name);
	slot->named = 1;
	if (tt__mode->identify)
		tt__mode->identify(slot);
	tt__registry_unlock(&old);
}

void tt_pause(void)
{
	struct tt__slot *slot = tt__own_slot();
	if (slot)
		tt__set_paused(slot, 1);
}

void tt_resume(void)
{
	struct tt__slot *slot = tt__own_slot();
	if (slot)
		tt__set_paused(slot, 0);
}

int tt_trigger(const char *why)
{
	TT__SITE(tt__trigger_site, "tt_trigger");
	uint64_t tsc = __rdtsc();
	tt__init();
	if (tt__config.off)
		return -ECANCELED;
	/* Marked in the trace too; and so the calling thread has its slot. */
	tt__instant(&tt__trigger_site);
	struct tt__slot *slot = tt__find_slot(tt_os_thread_key());
	return tt__snapshot_trigger(why, tsc, slot ? slot->index : TT_SNAPSHOT_NO_THREAD);
}
