/* The raw file (include/ticktrace/format.h), whole: header, PROCESS, MODULES, the call
 * sites and functions the records name, each thread's THREAD and EVENTS, END. Written
 * beside `path` under a temporary name and renamed, so that no half-written file is
 * ever left under the name. Threads may go on recording meanwhile: what each had
 * reserved when the dump began is written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <intrin.h>

#include "base/base.h" /* (tt__switches_flush) */
#include "portable/portable.h"

/* A chunk's records: [begin, end). */
static const struct tt_record *tt__records(const struct tt__chunk *chunk, const struct tt_record **end)
{
	*end = (const struct tt_record *)((const char *)chunk + chunk->size);
	return (const struct tt_record *)(chunk + 1);
}

/* PROCESS (its parent and command line as the run started) and MACHINE (no time
 * namespace, no machine or boot id). */
void tt__out_process(struct tt__out *file)
{
	char name[256];
	struct tt_process_info info = tt__run.process;
	info.pid = tt_os_process_id();
	info.name_len = (uint32_t)tt_os_process_name(name, sizeof name);
	tt__out_process_section(file, &info, name, tt__run.cmdline);
	tt__out_machine(file, &tt__run.machine);
}

/* A copy of a call-site descriptor of a module unloaded, its strings copies. */
struct tt__kept_site {
	uint64_t address;
	struct tt_callsite site;
};

/* The modules unloaded while the program ran (tt_os_on_unload's), in the order they
 * went: each its description until then, for the UNLOADED sections that name what
 * was recorded of it, the span of its image, which tells its records apart
 * (generation k + 1 in the dump's site set: sections/sites.c), and copies of the
 * descriptors its records named (its memory goes with it). Added under the loader's
 * lock, which orders them, never tt__run_lock (a dump holds it and waits for the loader's
 * as it lists the modules); published by the count. */
#define TT__UNLOADED_MAX 256
static struct tt__unloaded {
	uint64_t until, low, high;
	struct tt_os_module_list ranges;
	struct tt__kept_site *sites;
	size_t nsites, sites_cap;
} tt__unloaded[TT__UNLOADED_MAX];
static size_t tt__nunloaded, tt__unloaded_lost;

/* A site whose descriptor went with its module and was not kept: named so, never read. */
static const struct tt_callsite tt__site_lost = {"(unloaded library)", "", "", 0, 0, NULL};

/* The copy module u kept of the descriptor at `address`, or NULL. */
static const struct tt_callsite *tt__kept(const struct tt__unloaded *u, uint64_t address)
{
	for (size_t i = 0; i < u->nsites; i++)
		if (u->sites[i].address == address)
			return &u->sites[i].site;
	return NULL;
}

static char *tt__copy(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strnlen(s, UINT32_MAX / 4);
	char *copy = malloc(n + 1);
	if (copy) {
		memcpy(copy, s, n);
		copy[n] = 0;
	}
	return copy;
}

/* Copies the descriptors in module u's image that the threads' records name (not
 * those of one of the first n unloaded before it from the same addresses), as Linux's
 * writer/retired.c does at dlclose. Without tt__run_lock (see above): the slots and their
 * chunks read as they are, each thread's walk bounded (mode ring moves its oldest
 * chunk to its end, tt-stream gives written ones back): a site missed is named
 * "(unloaded library)", never read. */
static void tt__keep_sites(struct tt__unloaded *u, size_t n)
{
	uint64_t last = 0;
	for (struct tt__slot *s = __atomic_load_n(&tt__run.first, __ATOMIC_ACQUIRE); s; s = s->next) {
		uint64_t chunks = s->chunks + 2;
		for (const struct tt__chunk *c = s->first; c && chunks--; c = c->next) {
			const struct tt_record *end, *r = tt__records(c, &end);
			for (; r < end; r++) {
				uint64_t word = __atomic_load_n(&r->word, __ATOMIC_RELAXED);
				uint64_t address = TT_RECORD_PAYLOAD(word);
				if (!TT_RECORD_HAS_SITE(TT_RECORD_KIND(word)) || address < u->low ||
				    address >= u->high || address == last || tt__kept(u, address) ||
				    tt__unloaded_generation(address, r->tsc, n))
					continue;
				last = address;
				if (u->nsites == u->sites_cap) {
					size_t cap = u->sites_cap ? 2 * u->sites_cap : 16;
					struct tt__kept_site *grown = realloc(u->sites, cap * sizeof *grown);
					if (!grown)
						return;
					u->sites = grown;
					u->sites_cap = cap;
				}
				const struct tt_callsite *site = (const struct tt_callsite *)(uintptr_t)address;
				u->sites[u->nsites++] = (struct tt__kept_site){
					.address = address,
					.site = {tt__copy(site->name), tt__copy(site->file), tt__copy(site->func),
						 site->line, site->flags, tt__copy(tt__arg_name(site))},
				};
			}
		}
	}
}

void tt__module_unloaded(struct tt_os_module_list *ranges, uint64_t low, uint64_t high, uint64_t tsc)
{
	size_t n = __atomic_load_n(&tt__nunloaded, __ATOMIC_RELAXED);
	if (n == TT__UNLOADED_MAX) {
		__atomic_add_fetch(&tt__unloaded_lost, 1, __ATOMIC_RELAXED);
		free(ranges->data);
		return;
	}
	struct tt__unloaded *u = &tt__unloaded[n];
	*u = (struct tt__unloaded){.until = tsc, .low = low, .high = high, .ranges = *ranges};
	tt__keep_sites(u, n);
	__atomic_store_n(&tt__nunloaded, n + 1, __ATOMIC_RELEASE);
}

/* The generation of a record at `address` made at `tsc` (tt__generation_fn): k when
 * the k-th module unloaded held it then, 0 when none did. */
size_t tt__unloaded_generation(uint64_t address, uint64_t tsc, size_t limit)
{
	for (size_t k = 0; k < limit; k++)
		if (tsc < tt__unloaded[k].until && address >= tt__unloaded[k].low && address < tt__unloaded[k].high)
			return k + 1;
	return 0;
}

/* A site of module u, unloaded since: the copy it kept. */
static const struct tt_callsite *tt__site_gone(uint64_t address, void *u)
{
	const struct tt_callsite *kept = tt__kept(u, address);
	return kept ? kept : &tt__site_lost;
}

/* A site's descriptor: where its address points, or, where a module unloaded after the
 * set told its records apart (*seen of them) held it, that module's copy (its memory
 * may be gone), as Linux's writer/retired.c has it. */
static const struct tt_callsite *tt__site_here(uint64_t address, void *seen)
{
	size_t n = __atomic_load_n(&tt__nunloaded, __ATOMIC_ACQUIRE);
	for (size_t k = *(const size_t *)seen; k < n; k++)
		if (address >= tt__unloaded[k].low && address < tt__unloaded[k].high)
			return tt__site_gone(address, &tt__unloaded[k]);
	return (const struct tt_callsite *)(uintptr_t)address;
}

/* SITES, ARG_NAMES and FUNCS of the sites and functions of the set, those of modules
 * unloaded since (the set's generations) within UNLOADED sections. */
void tt__out_sites(struct tt__out *out, const struct tt__site_set *set)
{
	size_t seen = set->retired_seen;
	tt__out_site_sections(out, set, 0, 0, tt__site_here, &seen);
	for (size_t k = 0; k < set->retired_seen; k++)
		tt__out_site_sections(out, set, k + 1, tt__unloaded[k].until, tt__site_gone, &tt__unloaded[k]);
}

/* The modules unloaded [from, to) as UNLOADED MODULES, which go before those loaded
 * now: each ends the span of what was described of its addresses before it
 * (format.h), and one loaded there since comes after. And those not kept, said (once). */
static void tt__out_unloaded_modules(struct tt__out *out, size_t from, size_t to)
{
	static size_t said;
	for (size_t k = from; k < to; k++)
		tt__out_module_list(out, &tt__unloaded[k].ranges, tt__unloaded[k].until);
	size_t lost = __atomic_load_n(&tt__unloaded_lost, __ATOMIC_RELAXED);
	if (lost && lost != said && (said = lost))
		fprintf(stderr, "ticktrace: %zu modules unloaded after the first %d were not kept: "
			"their functions are named by address\n", lost, TT__UNLOADED_MAX);
}

void tt__modules_look(struct tt__modules_seen *seen, struct tt_os_module_list *m)
{
	uint64_t changes = tt_os_modules_changes();
	size_t unloaded = __atomic_load_n(&tt__nunloaded, __ATOMIC_ACQUIRE);
	if (seen->looked && changes == seen->changes && unloaded == seen->unloaded)
		return;
	*seen = (struct tt__modules_seen){.changes = changes, .unloaded = unloaded, .looked = 1};
	tt_os_modules(tt_os_module_list_add, m);
	if (m->err) /* (no memory: looked at again next time) */
		seen->looked = 0;
}

int tt__out_modules_since(struct tt__out *out, struct tt__site_set *set, struct tt_os_module_list *m)
{
	size_t unloaded = __atomic_load_n(&tt__nunloaded, __ATOMIC_ACQUIRE);
	int err = m->err;
	if (unloaded != set->retired_seen) {
		struct tt__site_set told = {.retired_seen = unloaded};
		tt__out_unloaded_modules(out, set->retired_seen, unloaded);
		/* What was described of their addresses was theirs: their records named by
		 * it, and one loaded there since described anew (as Linux's retired.c). */
		for (size_t i = 0; i < set->cap && !err; i++) {
			uint64_t entry = set->slots[i];
			for (size_t k = set->retired_seen; entry && k < unloaded && !TT__GEN(entry); k++)
				if ((entry & TT__ADDRESS_MASK) >= tt__unloaded[k].low &&
				    (entry & TT__ADDRESS_MASK) < tt__unloaded[k].high)
					entry |= (uint64_t)(k + 1) << TT__GEN_SHIFT;
			err = entry && tt__site_set_add(&told, entry) < 0 ? -ENOMEM : err;
		}
		if (err) {
			free(told.slots);
			free(m->data);
			return err;
		}
		free(set->slots);
		*set = told;
	}
	if (m->count && !m->err)
		tt__out_module_list(out, m, 0);
	free(m->data);
	*m = (struct tt_os_module_list){0};
	return err;
}

/* Lock held: the sites and functions every thread's records name. */
static int tt__collect(struct tt__site_set *names)
{
	for (struct tt__slot *s = tt__run.first; s; s = s->next)
		for (const struct tt__chunk *c = s->first; c; c = c->next) {
			const struct tt_record *end, *r = tt__records(c, &end);
			if (!tt__sites_add(names, NULL, r, end, 0, tt__unloaded_generation))
				return -ENOMEM;
		}
	for (struct tt__slot *s = tt__run.first; s; s = s->next)
		if (tt__filtered_sites(names, NULL, s) < 0)
			return -ENOMEM;
	return 0;
}

int tt__filtered_sites(struct tt__site_set *set, struct tt__site_set *fresh, const struct tt__slot *s)
{
	const struct tt__filters *filters = s->hot->filters;
	for (size_t i = 0; filters && i < TT__FILTER_SLOTS; i++) {
		/* (the function as a FUNC_ENTER names it: sites.c takes functions from those) */
		uint64_t word = __atomic_load_n(&filters->fn[i].word, __ATOMIC_RELAXED);
		const struct tt_record enter = {0, TT_RECORD_WORD(TT_REC_FUNC_ENTER, TT_RECORD_PAYLOAD(word))};
		if (tt__filtered_calls(&filters->fn[i], false) &&
		    !tt__sites_add(set, fresh, &enter, &enter + 1, 0, tt__unloaded_generation))
			return -ENOMEM;
	}
	return 0;
}

void tt__out_filtered(struct tt__out *out, const struct tt__slot *s)
{
	tt__out_filtered_table(out, s->index, s->hot->filters, tt__run.min_dur_ns, false);
}

uint64_t tt__out_thread_info(struct tt__out *file, uint32_t type, const struct tt__slot *s, uint64_t events,
			     int sched)
{
	struct tt_thread_info info = {.index = s->index, .tid = s->tid, .events = events,
				      .flags = (s->exited ? TT_THREAD_EXITED : 0) |
					       (s->wrapped ? TT_THREAD_WRAPPED : 0) |
					       (sched ? TT_THREAD_SCHED
						: TT_THREAD_NO_STATES_FLAGS(tt__counters_off() ? TT_NO_STATES_OFF
											 : TT_NO_STATES_WINDOWS, 0))};
	/* Each count read once: a thread dropping into a full buffer counts on without the
	 * lock, and END must total what the sections say. */
	uint64_t dropped = 0;
	for (int i = 0; i < TT_DROP_CAUSES; i++) {
		info.dropped[i] = __atomic_load_n(&s->dropped[i], __ATOMIC_RELAXED);
		dropped += info.dropped[i];
	}
	/* A thread still known, named as it is now through its handle (never another's
	 * given its id since), or as it was when it registered where that tells nothing
	 * (TerminateThread ended it: its exit never kept its name). */
	char name[sizeof s->name];
	int known = !s->named && !s->exited && tt__thread_name_now(s, name, sizeof name);
	const char *kept = known && name[0] ? name : s->name;
	tt__out_thread_section(file, type, &info, kept, known || s->named || s->exited);
	return dropped;
}

void tt__thread_states(const struct tt__slot *s, struct tt__states *st)
{
	st->lost = 0;
	st->states = tt__states_copy(s, &st->n, &st->info, &st->lost);
}

void tt__out_thread_states(struct tt__out *file, const struct tt__slot *s, struct tt__states *st)
{
	size_t nstates = st->n;
	uint64_t states_lost = st->lost;
	struct tt_sched_info sched = st->info;
	struct tt_sched_state *states = st->states;
	if (states) {
		tt__out_sched_states(file, &sched, NULL, states, nstates);
		if (states_lost) { /* (lost after its last state: a section of none says so) */
			sched.lost = states_lost;
			sched.since_ns = states[nstates - 1].ns;
			tt__out_sched_states(file, &sched, NULL, NULL, 0);
		}
		free(states);
	}
	size_t readings;
	struct tt_schedstat_info counters;
	struct tt_schedstat_sample *at = tt__counters_copy(s, &readings, &counters);
	if (at) {
		tt__out_counters(file, &counters, NULL, at, readings);
		free(at);
	}
}

static void tt__out_thread(struct tt__out *file, struct tt__slot *s, struct tt_end_info *end_info)
{
	/* Its run of drops (a full buffer: its thread records no more) after its records,
	 * as Linux's: the gap seen before the counts are read (its thread counts each
	 * drop first), its count theirs, so that the file's totals agree while it drops
	 * on (the rest of the gap, read as it grows, is where and about when). */
	struct tt_gap gap;
	gap.count = __atomic_load_n(&s->gap.count, __ATOMIC_ACQUIRE);
	gap.first_tsc = s->gap.first_tsc;
	gap.last_tsc = s->gap.last_tsc;
	gap.depth = s->gap.depth;
	gap.min_depth = s->gap.min_depth;
	struct tt_record gap_records[2];
	uint64_t records = gap.count ? 2 : 0;
	for (const struct tt__chunk *c = s->first; c; c = c->next)
		records += (c->size - sizeof *c) / sizeof(struct tt_record);
	struct tt__states states;
	tt__thread_states(s, &states);
	uint64_t dropped = tt__out_thread_info(file, TT_SEC_THREAD, s, records, states.states != NULL);
	uint64_t first = 0;
	for (const struct tt__chunk *c = s->first; c; c = c->next) {
		const struct tt_record *end, *r = tt__records(c, &end);
		if (r < end)
			tt__out_events(file, s->index, first, r, end);
		first += (uint64_t)(end - r);
	}
	if (gap.count) { /* (a ring's overwritten events are not the gap's: under the lock) */
		gap.count = dropped - s->dropped[TT_DROP_OVERWRITTEN];
		size_t n = tt_gap_records(&gap, gap_records);
		tt__out_events(file, s->index, first, gap_records, gap_records + n);
		first += n;
	}
	tt__out_thread_states(file, s, &states);
	tt__out_filtered(file, s);
	tt__end_add(end_info, first, dropped);
}

void tt__end_add(struct tt_end_info *end_info, uint64_t records, uint64_t dropped)
{
	end_info->threads++;
	end_info->records += records;
	end_info->dropped += dropped;
}

void tt__file_header(struct tt_file_header *h)
{
	tt__file_header_init(h, &tt__run.start);
	h->flags |= (tt__run.mode == TT__MODE_RING ? TT_FILE_RING : 0) |
		    (tt__run.min_dur_ticks ? TT_FILE_MIN_DUR : 0);
	h->unregistered_dropped = tt__run.unregistered_dropped;
}

/* A moment's hold by another thread (tt-live, tt-sched, a thread taking a chunk, a
 * pass of tt-stream) waited for, TT__TAKE_WAIT_MS at most: a crash or an exit must not
 * give its trace up for it, nor wait for ever on a holder that never lets go (the
 * crashed thread itself, in the slow path; a thread ExitProcess ended). */
#define TT__TAKE_WAIT_MS 2000
int tt__take_within(struct tt_os_lock *lock)
{
	uint32_t never = 0;
	for (int ms = 0; ms < TT__TAKE_WAIT_MS; ms++) {
		for (int spins = 0; spins < 100; spins++) /* (holds are short: a sleep loses the race) */
			if (tt_os_trylock(lock))
				return 1;
			else
				_mm_pause();
		tt_os_wait(&never, 0, 1000000);
	}
	return 0;
}

/* The run's own file: since the run began (its start anchor), and the file this
 * process last put at its name (a dump's, which its exit replaces). */
static struct tt_os_run_file tt__placed;

int tt__place_run(struct tt_os_new_file *made, char *path, size_t size)
{
	static char said[2 * TT__PATH_MAX + 256]; /* (tt__run_lock held; a crash's stack is short) */
	/* (A name with the pid in it, or apart with it: a process before this one had
	 * its pid, which the system gave again; Wine's first process's is the same in
	 * each run.) */
	int pid_named = tt__out_pid_named();
	tt__placed.before = tt__run.out_before;
	tt__placed.since_ns = tt__run.out_since_ns;
	tt__placed.keep = tt__out_keep();
	int rc = tt_os_file_place(made, path, size, &tt__placed, pid_named, said, sizeof said);
	if (!rc && said[0])
		fputs(said, stderr);
	else if (!rc && tt__placed.keep)
		tt__out_say_numbered(path);
	return rc;
}

/* tt__write_file_with, and with `run_size` the run's own file (tt__place_run, `path`
 * a buffer of that size, rewritten where the file went beside). */
static int tt__write_placed(char *path, size_t run_size, struct tt__out *out,
			    int (*write)(struct tt__out *out, void *arg), void *arg)
{
	struct tt_os_new_file made = {0};
	struct tt_os_file opened;
	int in_place = tt_os_is_device(path); /* (NUL: nothing to rename) */
	int rc = in_place ? tt_os_file_open(path, &opened) : tt_os_file_new(path, 0, &opened, &made);
	if (rc)
		return rc;
	struct tt_os_file_sink file;
	tt_os_file_sink(&file, opened);
	tt__out_to(out, &file.sink);
	rc = write(out, arg);
	tt__out_flush(out);
	if (!rc)
		rc = out->err;
	int closed = tt_os_file_close(&file.file);
	if (!rc)
		rc = closed;
	if (!rc)
		rc = run_size && made.tmp[0] ? tt__place_run(&made, path, run_size) : tt_os_file_put(&made, path);
	if (rc)
		tt_os_file_discard(&made);
	return rc;
}

int tt__write_file_with(const char *path, struct tt__out *out, int (*write)(struct tt__out *out, void *arg),
			void *arg)
{
	return tt__write_placed((char *)path, 0, out, write, arg);
}

/* tt__run_lock held: the whole run onto `out`, as a process dies of *crash_signal (0: not). */
static int tt__write_run(struct tt__out *out, void *crash)
{
	int crash_signal = *(const int *)crash;
	struct tt__site_set names = {.retired_seen = __atomic_load_n(&tt__nunloaded, __ATOMIC_ACQUIRE)};
	struct tt_end_info end_info = {0};
	for (struct tt__slot *s = tt__run.first; s; s = s->next)
		if (!s->exited)
			tt__chunk_close(s);
	if (!crash_signal)
		tt__switches_flush();
	int rc = tt__collect(&names);
	if (rc == 0) {
		struct tt_file_header header;
		tt__file_header(&header);
		if (crash_signal) {
			header.flags |= TT_FILE_CRASHED;
			header.crash_signal = (uint32_t)crash_signal;
		}
		tt__out(out, &header, sizeof header);
		tt__out_process(out);
		tt__out_unloaded_modules(out, 0, names.retired_seen);
		rc = tt__out_loaded_modules(out); /* (no memory: no section, the file said failed) */
		tt__out_sites(out, &names);
		for (struct tt__slot *s = tt__run.first; s; s = s->next)
			tt__out_thread(out, s, &end_info);
		end_info.sites = names.count - names.funcs;
		tt__out_end(out, &end_info);
	}
	tt__site_set_clear(&names);
	return rc;
}

int tt__write_file(char *path, size_t run_size, int crash_signal)
{
	/* (a crash in the slow path holds the lock: its records are not to be had) */
	if (!crash_signal)
		tt_os_lock(&tt__run_lock);
	else if (!tt__take_within(&tt__run_lock))
		return -EDEADLK;
	static struct tt__out out; /* (tt__run_lock held; too large for a crashed thread's stack) */
	int rc = tt__write_placed(path, run_size, &out, tt__write_run, &crash_signal);
	tt_os_unlock(&tt__run_lock);
	return rc;
}
