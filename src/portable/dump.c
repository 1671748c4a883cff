/* The raw file (include/ticktrace/format.h), whole: header, PROCESS, MODULES, the call
 * sites and functions the records name, each thread's THREAD and EVENTS, END. Written
 * beside `path` under a temporary name and renamed, so that no half-written file is
 * ever left under the name. Threads may go on recording meanwhile: what each had
 * reserved when the dump began is written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "portable/portable.h"
#include "pretty_name.h"

int tt__set_add(struct tt__set *set, uint64_t address)
{
	if (2 * (set->count + 1) > set->cap) {
		struct tt__set grown = {calloc(set->cap ? 2 * set->cap : 256, sizeof(uint64_t)),
					set->cap ? 2 * set->cap : 256, 0};
		if (!grown.at)
			return -ENOMEM;
		for (size_t i = 0; i < set->cap; i++)
			if (set->at[i])
				tt__set_add(&grown, set->at[i]);
		free(set->at);
		*set = grown;
	}
	size_t i = (size_t)((address * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (set->cap - 1);
	while (set->at[i] && set->at[i] != address)
		i = (i + 1) & (set->cap - 1);
	if (set->at[i])
		return 0;
	set->at[i] = address;
	set->count++;
	return 1;
}

/* A chunk's records: [begin, end). */
static const struct tt_record *tt__records(const struct tt__chunk *chunk, const struct tt_record **end)
{
	*end = (const struct tt_record *)((const char *)chunk + chunk->size);
	return (const struct tt_record *)(chunk + 1);
}

static uint32_t tt__len(const char *s)
{
	return s ? (uint32_t)strlen(s) : 0;
}

/* PROCESS and MACHINE. */
void tt__out_process(struct tt__out *file)
{
	char name[256];
	struct tt_process_info info = {.pid = tt_os_process_id()};
	info.name_len = (uint32_t)tt_os_process_name(name, sizeof name);
	tt__out_section(file, TT_SEC_PROCESS, sizeof info + info.name_len);
	tt__out(file, &info, sizeof info);
	tt__out(file, name, info.name_len);
	tt__out_pad(file, sizeof info + info.name_len);
	/* MACHINE: the host, and the wall clock (GetSystemTimePreciseAsFileTime) at the
	 * start anchor and now, which place the run beside other machines' runs. */
	struct tt_machine_info machine = {.flags = TT_MACHINE_START_CLOCK | TT_MACHINE_WRITTEN_CLOCK};
	char host[256];
	size_t host_len = tt_os_host_name(host, sizeof host);
	machine.host_name_len = (uint32_t)(host_len < TT_HOST_NAME_MAX ? host_len : TT_HOST_NAME_MAX);
	memcpy(machine.host_name, host, machine.host_name_len);
	struct tt_anchor now;
	tt_os_anchor(&now);
	tt_os_clock_reading(&tt__run.start, &machine.start);
	tt_os_clock_reading(&now, &machine.written);
	tt__out_section(file, TT_SEC_MACHINE, sizeof machine);
	tt__out(file, &machine, sizeof machine);
	tt__out_pad(file, sizeof machine);
}

void tt__out_sites(struct tt__out *file, const struct tt__set *sites)
{
	char shown[1024];
	uint64_t bytes = sizeof(uint64_t), args = 0, arg_bytes = sizeof(uint64_t);
	for (size_t i = 0; i < sites->cap; i++) {
		const struct tt_callsite *s = (const void *)(uintptr_t)sites->at[i];
		if (!s)
			continue;
		bytes += sizeof(struct tt_site_info) + tt__len(tt_site_name(s, shown, sizeof shown)) +
			 tt__len(s->file) + tt__len(s->func);
		if (s->flags & (TT__SITE_ARG_NAME | TT__SITE_SIGNED_ARG)) {
			args++;
			arg_bytes += sizeof(struct tt_arg_name_info) +
				     (s->flags & TT__SITE_ARG_NAME ? tt__len(s->arg_name) : 0);
		}
	}
	tt__out_section(file, TT_SEC_SITES, bytes);
	uint64_t count = sites->count;
	tt__out(file, &count, sizeof count);
	for (size_t i = 0; i < sites->cap; i++) {
		const struct tt_callsite *s = (const void *)(uintptr_t)sites->at[i];
		if (!s)
			continue;
		const char *name = tt_site_name(s, shown, sizeof shown);
		struct tt_site_info info = {sites->at[i], s->line, tt__len(name), tt__len(s->file),
					    tt__len(s->func)};
		tt__out(file, &info, sizeof info);
		tt__out(file, name, info.name_len);
		tt__out(file, s->file, info.file_len);
		tt__out(file, s->func, info.func_len);
	}
	tt__out_pad(file, bytes);
	if (!args)
		return;
	tt__out_section(file, TT_SEC_ARG_NAMES, arg_bytes);
	tt__out(file, &args, sizeof args);
	for (size_t i = 0; i < sites->cap; i++) {
		const struct tt_callsite *s = (const void *)(uintptr_t)sites->at[i];
		if (!s || !(s->flags & (TT__SITE_ARG_NAME | TT__SITE_SIGNED_ARG)))
			continue;
		const char *name = s->flags & TT__SITE_ARG_NAME ? s->arg_name : NULL;
		struct tt_arg_name_info info = {sites->at[i], tt__len(name),
						s->flags & TT__SITE_SIGNED_ARG ? TT_ARG_SIGNED : 0};
		tt__out(file, &info, sizeof info);
		tt__out(file, name, info.name_len);
	}
	tt__out_pad(file, arg_bytes);
}

void tt__out_funcs(struct tt__out *file, const struct tt__set *funcs)
{
	if (!funcs->count)
		return;
	uint64_t bytes = sizeof(uint64_t) * (1 + funcs->count), count = funcs->count;
	tt__out_section(file, TT_SEC_FUNCS, bytes);
	tt__out(file, &count, sizeof count);
	for (size_t i = 0; i < funcs->cap; i++)
		if (funcs->at[i])
			tt__out(file, &funcs->at[i], sizeof funcs->at[i]);
	tt__out_pad(file, bytes);
}

int tt__records_named(const struct tt_record *r, const struct tt_record *end, struct tt__set *sites,
		      struct tt__set *funcs, struct tt__set *fresh)
{
	for (; r < end; r++) {
		uint64_t word = __atomic_load_n(&r->word, __ATOMIC_ACQUIRE);
		unsigned kind = TT_RECORD_KIND(word);
		uint64_t payload = TT_RECORD_PAYLOAD(word);
		int rc = 0;
		if (TT_RECORD_HAS_SITE(kind) && payload && (rc = tt__set_add(sites, payload)) == 1 && fresh)
			rc = tt__set_add(fresh, payload);
		else if (kind == TT_REC_FUNC_ENTER && payload)
			rc = tt__set_add(funcs, payload);
		if (TT_RECORD_HAS_VALUE(kind))
			r++; /* (its VALUE record) */
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Lock held: every thread's records named in the sets. */
static int tt__collect(struct tt__set *sites, struct tt__set *funcs)
{
	for (struct tt__slot *s = tt__run.first; s; s = s->next)
		for (const struct tt__chunk *c = s->first; c; c = c->next) {
			const struct tt_record *end, *r = tt__records(c, &end);
			int rc = tt__records_named(r, end, sites, funcs, NULL);
			if (rc < 0)
				return rc;
		}
	return 0;
}

static uint64_t tt__dropped(const struct tt__slot *s)
{
	uint64_t n = 0;
	for (int i = 0; i < TT_DROP_CAUSES; i++)
		n += s->dropped[i];
	return n;
}

void tt__out_thread_info(struct tt__out *file, uint32_t type, const struct tt__slot *s, uint64_t events,
			 int sched)
{
	struct tt_thread_info info = {.index = s->index, .tid = s->tid, .events = events,
				      .flags = (s->exited ? TT_THREAD_EXITED : 0) |
					       (s->wrapped ? TT_THREAD_WRAPPED : 0) |
					       (sched ? TT_THREAD_SCHED
						: TT_THREAD_NO_STATES_FLAGS(tt__counters_off() ? TT_NO_STATES_OFF
											 : TT_NO_STATES_WINDOWS, 0))};
	memcpy(info.dropped, s->dropped, sizeof info.dropped);
	char name[sizeof s->name];
	if (s->named || s->exited)
		snprintf(name, sizeof name, "%s", s->name);
	else
		tt_os_thread_name_of(s->tid, name, sizeof name);
	if (!name[0]) /* (unnamed: the program's name, as a Linux thread's comm is) */
		tt_os_process_name(name, sizeof name);
	info.name_len = tt__len(name);
	tt__out_section(file, type, sizeof info + info.name_len);
	tt__out(file, &info, sizeof info);
	tt__out(file, name, info.name_len);
	tt__out_pad(file, sizeof info + info.name_len);
}

void tt__out_events(struct tt__out *file, const struct tt__slot *s, uint64_t first_record,
		    const struct tt_record *r, const struct tt_record *end)
{
	uint64_t bytes = (uint64_t)(end - r) * sizeof *r;
	if (!bytes)
		return;
	struct tt_events_info events = {.thread_index = s->index, .first_record = first_record};
	tt__out_section(file, TT_SEC_EVENTS, sizeof events + bytes);
	tt__out(file, &events, sizeof events);
	tt__out(file, r, bytes);
}

void tt__thread_states(const struct tt__slot *s, struct tt__states *st)
{
	st->lost = 0;
	st->states = tt__etw_states(s, &st->n, &st->info, &st->lost);
}

void tt__out_thread_states(struct tt__out *file, const struct tt__slot *s, struct tt__states *st)
{
	size_t nstates = st->n;
	uint64_t states_lost = st->lost;
	struct tt_sched_info sched = st->info;
	struct tt_sched_state *states = st->states;
	if (states) { /* (16 and 32 bytes: no padding) */
		tt__out_section(file, TT_SEC_SCHED, sizeof sched + nstates * sizeof *states);
		tt__out(file, &sched, sizeof sched);
		tt__out(file, states, nstates * sizeof *states);
		if (states_lost) { /* (lost after its last state: a section of none says so) */
			sched.lost = states_lost;
			sched.since_ns = states[nstates - 1].ns;
			tt__out_section(file, TT_SEC_SCHED, sizeof sched);
			tt__out(file, &sched, sizeof sched);
		}
		free(states);
	}
	size_t readings;
	struct tt_schedstat_info counters;
	struct tt_schedstat_sample *at = tt__counters_copy(s, &readings, &counters);
	if (at) { /* (16 and 48 bytes a reading: no padding) */
		tt__out_section(file, TT_SEC_SCHEDSTAT, sizeof counters + readings * sizeof *at);
		tt__out(file, &counters, sizeof counters);
		tt__out(file, at, readings * sizeof *at);
		free(at);
	}
}

static void tt__out_thread(struct tt__out *file, struct tt__slot *s, struct tt_end_info *end_info)
{
	uint64_t records = 0;
	for (const struct tt__chunk *c = s->first; c; c = c->next)
		records += (c->size - sizeof *c) / sizeof(struct tt_record);
	struct tt__states states;
	tt__thread_states(s, &states);
	tt__out_thread_info(file, TT_SEC_THREAD, s, records, states.states != NULL);
	uint64_t first = 0;
	for (const struct tt__chunk *c = s->first; c; c = c->next) {
		const struct tt_record *end, *r = tt__records(c, &end);
		tt__out_events(file, s, first, r, end);
		first += (uint64_t)(end - r);
	}
	tt__out_thread_states(file, s, &states);
	tt__end_add(end_info, s, first);
}

void tt__end_add(struct tt_end_info *end_info, const struct tt__slot *s, uint64_t records)
{
	end_info->threads++;
	end_info->records += records;
	end_info->dropped += tt__dropped(s);
}

void tt__file_header(struct tt_file_header *h)
{
	memset(h, 0, sizeof *h);
	memcpy(h->magic, TT_FILE_MAGIC, TT_FILE_MAGIC_LEN);
	h->version = TT_FILE_VERSION;
	h->header_size = sizeof *h;
	h->flags = (tt_os_invariant_tsc() ? TT_FILE_INVARIANT_TSC : 0) |
		   (tt__run.mode == TT__MODE_RING ? TT_FILE_RING : 0);
	h->tsc_source = TT_TSC_ANCHORS;
	h->start = tt__run.start;
	tt_os_anchor(&h->end);
	h->tsc_hz = tt_os_anchor_hz(&h->start, &h->end);
	h->pid = tt_os_process_id();
	h->unregistered_dropped = tt__run.unregistered_dropped;
}

int tt__write_file(const char *path, int crash_signal)
{
	char temp[1100];
	int in_place = tt_os_is_device(path); /* (NUL: nothing to rename) */
	if (snprintf(temp, sizeof temp, "%s.%u.tmp", path, (unsigned)tt_os_process_id()) >= (int)sizeof temp)
		return -ENAMETOOLONG;
	if (in_place)
		snprintf(temp, sizeof temp, "%s", path);
	/* (a crash in the slow path holds the lock: its records are not to be had) */
	if (!crash_signal)
		tt_os_lock(&tt__lock);
	else if (!tt_os_trylock(&tt__lock))
		return -EDEADLK;
	static struct tt__out out; /* (tt__lock held; too large for a crashed thread's stack) */
	struct tt_os_file_sink file;
	struct tt_os_file opened;
	int rc = tt_os_file_open(temp, &opened);
	if (rc) {
		tt_os_unlock(&tt__lock);
		return rc;
	}
	tt_os_file_sink(&file, opened);
	tt__out_to(&out, &file.sink);
	struct tt__set sites = {0}, funcs = {0};
	struct tt_end_info end_info = {0};
	for (struct tt__slot *s = tt__run.first; s; s = s->next)
		if (!s->exited)
			tt__chunk_close(s);
	if (!crash_signal)
		tt__etw_flush();
	rc = tt__collect(&sites, &funcs);
	if (rc == 0) {
		struct tt_file_header header;
		tt__file_header(&header);
		if (crash_signal) {
			header.flags |= TT_FILE_CRASHED;
			header.crash_signal = (uint32_t)crash_signal;
		}
		tt__out(&out, &header, sizeof header);
		tt__out_process(&out);
		rc = tt__out_loaded_modules(&out); /* (no memory: no section, the file said failed) */
		tt__out_sites(&out, &sites);
		tt__out_funcs(&out, &funcs);
		for (struct tt__slot *s = tt__run.first; s; s = s->next)
			tt__out_thread(&out, s, &end_info);
		end_info.sites = sites.count;
		tt__out_end(&out, &end_info);
		tt__out_flush(&out);
		if (!rc)
			rc = out.err;
	}
	tt_os_unlock(&tt__lock);
	free(sites.at);
	free(funcs.at);
	int closed = tt_os_file_close(&file.file);
	if (!rc)
		rc = closed;
	if (!rc && !in_place)
		rc = tt_os_rename(temp, path);
	if (rc && !in_place)
		tt_os_remove(temp);
	return rc;
}
