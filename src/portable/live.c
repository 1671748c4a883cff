/* The live file (modes stop and ring, TICKTRACE_LIVE=1), as on Linux (modes/live.c):
 * the threads' chunks are a shared mapping of TICKTRACE_OUT with ".live" appended
 * (tt_os_file_map: a file mapping on Windows), so that what a program recorded
 * outlives it when TerminateProcess ends it with no handler run: the system keeps
 * what was written to the mapping. The layout is format.h's TT_FILE_LIVE:
 *
 *   header | PROCESS | MACHINE | MODULES | THREAD... | SITES... (up to TT__LIVE_CHUNKS_AT)
 *   | the chunks, each with its thread's index, mapped TT__LIVE_GROW at a time
 *
 * The header and the descriptions are a mapping too; tt-live, every
 * TT__LIVE_PERIOD_NS, appends the modules unloaded and loaded since (a DLL
 * LoadLibrary brought mid-run, its UNLOADED MODULES once FreeLibrary took it: dump.c's
 * tt__modules_look), THREAD sections for new threads and SITES for the call
 * sites their records use first, then moves live_sections_end past them and
 * refreshes the end anchor. A run that ends (or dies of a crash whose handler writes
 * the trace) writes its raw file as ever and removes the live file. What a killed
 * run loses: the names of threads, sites and modules first used in the last period (the
 * converter names them by number and address), and the events the threads dropped
 * since (tt-live writes their counts over those their THREAD sections said). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "portable/portable.h"

#define TT__LIVE_PERIOD_NS 100000000

static struct {
	char path[TT__PATH_MAX + 6];
	struct tt_file_header *header; /* the mapping's start: the descriptions follow */
	struct tt__out out;           /* the descriptions, up to TT__LIVE_CHUNKS_AT */
	struct tt__mem_sink head;     /* (out's sink: the mapping) */
	struct tt__site_set sites, fresh; /* (fresh: not described yet) */
	struct tt__modules_seen modules;
	int full, finished;
} tt__live;

/* Lock held: the descriptions written so far counted as the file's. */
static void tt__live_commit(void)
{
	tt__out_flush(&tt__live.out);
	if (tt__live.out.err) {
		if (!tt__live.full)
			fprintf(stderr, "ticktrace: %s: no more room for thread and site names\n", tt__live.path);
		tt__live.full = 1;
		return;
	}
	__atomic_store_n(&tt__live.header->live_sections_end, tt__live.out.offset, __ATOMIC_RELEASE);
}

/* Lock held: the sites slot s's records use that are not described yet, from where
 * the last look stopped (its first chunk when a ring recycled that one). */
static void tt__live_scan(struct tt__slot *s)
{
	const struct tt__chunk *c = s->first;
	while (c && c != s->seen_chunk)
		c = c->next;
	uint32_t from = c ? s->seen : sizeof *c;
	if (!c)
		c = s->first;
	for (; c; c = c->next, from = sizeof *c) {
		const struct tt_record *r = (const struct tt_record *)((const char *)c + from);
		const struct tt_record *last = tt__chunk_end(s, c);
		last = last > r ? tt_written_end(r, last) : r;
		if (r < last && !tt__sites_add(&tt__live.sites, &tt__live.fresh, r, last, 0, tt__unloaded_generation))
			tt__live.out.err = -ENOMEM;
		s->seen_chunk = c;
		s->seen = (uint32_t)((const char *)last - (const char *)c);
	}
}

/* Lock held: the dropped counts of each thread whose THREAD section the file holds,
 * as they are now, written over those it said (so that a run TerminateProcess ends
 * says what it lost up to the last look), and the events of threads that had no
 * slot. */
static void tt__live_drops(void)
{
	uint64_t described = tt__live.header->live_sections_end;
	for (struct tt__slot *s = tt__run.first; s; s = s->next) {
		if (!s->live_info_at || s->live_info_at + sizeof(struct tt_thread_info) > described)
			continue;
		struct tt_thread_info *info = (struct tt_thread_info *)((char *)tt__live.header + s->live_info_at);
		for (int i = 0; i < TT_DROP_CAUSES; i++)
			__atomic_store_n(&info->dropped[i], __atomic_load_n(&s->dropped[i], __ATOMIC_RELAXED),
					 __ATOMIC_RELAXED);
	}
	tt__live.header->unregistered_dropped = tt__run.unregistered_dropped;
}

/* Lock held: the descriptions brought up to date (the modules unloaded since, and
 * `modules`, those loaded now when they changed: tt__modules_look's), the drops, and
 * the end anchor. */
static void tt__live_tick(struct tt_os_module_list *modules)
{
	if (tt__live.full) {
		free(modules->data);
	} else {
		int err = tt__out_modules_since(&tt__live.out, &tt__live.sites, modules);
		if (err && !tt__live.out.err) /* (no memory: no more descriptions) */
			tt__live.out.err = err;
		for (struct tt__slot *s = tt__run.first; s; s = s->next) {
			if (!s->described) {
				s->live_info_at = tt__live.out.offset + sizeof(struct tt_section_header);
				tt__out_thread_info(&tt__live.out, TT_SEC_THREAD, s, 0, 0);
			}
			s->described = 1;
			tt__live_scan(s);
		}
		if (tt__live.fresh.count) {
			tt__out_sites(&tt__live.out, &tt__live.fresh);
			tt__site_set_clear(&tt__live.fresh);
		}
		tt__live_commit();
	}
	tt__live_drops();
	struct tt_file_header now;
	tt__file_header(&now);
	tt__live.header->end = now.end;
	tt__live.header->tsc_hz = now.tsc_hz;
}

static void *tt__live_main(void *unused)
{
	(void)unused;
	while (!tt__nap(TT__LIVE_PERIOD_NS)) {
		/* (before the lock: listing them waits for the loader, whose threads may
		 * record) */
		struct tt_os_module_list modules = {0};
		tt__modules_look(&tt__live.modules, &modules);
		tt_os_lock(&tt__run_lock);
		if (!tt__live.finished)
			tt__live_tick(&modules);
		else
			free(modules.data);
		tt_os_unlock(&tt__run_lock);
	}
	return NULL; /* (the exit ends it) */
}

void tt__live_start(const char *path)
{
	if (!tt__run.live)
		return;
	snprintf(tt__live.path, sizeof tt__live.path, "%s", path);
	char said[2 * sizeof tt__live.path + 160];
	int err = tt_os_live_place(tt__live.path, sizeof tt__live.path, &tt__run.live_file, said, sizeof said);
	fputs(said, stderr);
	char *head = err ? NULL : tt_os_file_map(&tt__run.live_file, 0, TT__LIVE_CHUNKS_AT);
	if (!err && !head) {
		err = -ENOSPC;
		tt_os_remove(tt__live.path);
	}
	if (err) { /* (as on Linux: the buffers in memory, the loss said) */
		fprintf(stderr, "ticktrace: %s: no live file (%s): the buffers are in memory, and a "
				"process ended by TerminateProcess loses them\n", tt__live.path, strerror(-err));
		tt__run.live = 0;
		return;
	}
	tt__live.header = (struct tt_file_header *)head;
	tt__mem_sink(&tt__live.head, head, TT__LIVE_CHUNKS_AT);
	tt__out_to(&tt__live.out, &tt__live.head.sink);
	struct tt_file_header h;
	tt__file_header(&h);
	h.flags |= TT_FILE_LIVE;
	h.live_chunks_at = TT__LIVE_CHUNKS_AT;
	tt__out(&tt__live.out, &h, sizeof h);
	tt__out_process(&tt__live.out);
	struct tt_os_module_list modules = {0};
	tt__modules_look(&tt__live.modules, &modules);
	err = tt__out_modules_since(&tt__live.out, &tt__live.sites, &modules);
	if (err && !tt__live.out.err) /* (no memory: no more descriptions) */
		tt__live.out.err = err;
	tt__live_commit();
	if (tt__thread_start(tt__live_main) != 0)
		fprintf(stderr, "ticktrace: %s: no thread to describe the live file: threads and "
				"sites are named by number and address after a kill\n", tt__live.path);
}

void tt__live_finish(void)
{
	tt_os_lock(&tt__run_lock);
	tt__live.finished = 1;
	tt_os_unlock(&tt__run_lock);
	/* The mappings stay: threads may record until the process ends. */
	tt_os_remove(tt__live.path);
}
