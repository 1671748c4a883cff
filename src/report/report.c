/* TICKTRACE_REPORT=stderr|PATH: the program writes its own flat profile at exit, with
 * no converter: every thread's records go through the analysis the tools use
 * (analysis.h), and the table is the one `ticktrace report` prints (PATH ending in
 * .csv: its CSV). %p in PATH is the process id. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

size_t tt__report_name(void *ctx, const struct tt_an_thread *th, uint64_t key, char *buf,
		       size_t cap)
{
	(void)ctx, (void)th;
	struct tt_os_address module;
	char loaded_as[1024], exe[4096];
	int n;
	char name[TT__NAME_MAX];
	size_t patched;
	uint64_t address = key & TT__ADDRESS_MASK;
	/* of a library unloaded since (tt__record_key), or where none is loaded now */
	size_t named = tt__unloaded_name(address, TT__GEN(key), key & TT_KEY_FUNC, buf, cap);
	if (named)
		return named;
	if (!(key & TT_KEY_FUNC))
		n = snprintf(buf, cap, "%s",
			     tt_site_name((const struct tt_callsite *)(uintptr_t)address, name, sizeof name));
	else if (!tt_os_address_module((void *)(uintptr_t)(address & ~TT_FUNC_LIBRARY_CALL), &module, loaded_as,
				      sizeof loaded_as))
		n = snprintf(buf, cap, "0x%" PRIx64, address);
	else if ((patched = tt__patched_name(address, &module, buf, cap)))
		return patched;
	else if (module.symbol && !(address & TT_FUNC_LIBRARY_CALL))
		n = snprintf(buf, cap, "%s", module.symbol);
	else /* not in the dynamic symbols (static): as convert names it, for addr2line -e */
		n = snprintf(buf, cap, "%s+0x%" PRIx64, tt_os_module_file(module.loaded_as, exe, sizeof(exe)),
			     address - module.base);
	return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}

static void tt__report_section(void *th, struct tt__slot *slot, uint64_t lost, int64_t since_ns,
			       const struct tt_sched_state *states, size_t n)
{
	(void)slot;
	/* (out of memory: an->oom says so) */
	tt_an_thread_sched_section(th, lost, since_ns, states, n, tt__start_anchor.monotonic_ns);
}

static void tt__report_counters(void *th, struct tt__slot *slot, uint64_t lost,
				const struct tt_schedstat_sample *readings, size_t n)
{
	(void)lost; /* (a missing reading only makes a split coarser, which it says) */
	tt_an_thread_counters(th, readings, n, tt__counters_flags(slot, readings, n),
			      tt__start_anchor.monotonic_ns);
}

/* A thread's states, and its counters' readings (where perf was refused: the "~"
 * columns, as `ticktrace report` has them from the file), before the records they
 * cover, on the analysis's clock (ns since the start anchor, as its clock gives). */
static int tt__report_states(struct tt_an_thread *th, struct tt__slot *slot)
{
	struct tt_os_signals old;
	tt__sched_lock(&old);
	if (slot->sched.on) {
		tt__sched_drain_slot(slot);
		tt__sched_sections(slot, tt__report_section, th);
	}
	uint64_t from = 0;
	tt__counters_sections(slot, &from, tt__report_counters, th);
	tt__sched_unlock(&old);
	return th->an->oom ? -1 : 0;
}

/* One thread's states and records, chunk by chunk, into its analysis. */
static int tt__report_thread(struct tt_an_thread *th, struct tt__slot *slot,
			     const struct tt_clock *clock)
{
	if (tt__report_states(th, slot) < 0)
		return -1;
	th->no_states = tt__sched_no_states(slot);
	struct tt_an_feed feed = {.th = th, .clock = clock, .key = tt__record_key};
	for (const struct tt__chunk *chunk = slot->first, *next; chunk; chunk = next) {
		const struct tt_record *begin, *end;
		next = tt__chunk_extent(slot, chunk, &begin, &end);
		if (tt_an_feed_records(&feed, begin, (size_t)(end - begin)) < 0) {
			tt_an_feed_free(&feed);
			return -1;
		}
	}
	/* the calls TICKTRACE_MIN_DUR erased, counted in their functions' rows */
	for (size_t i = 0; slot->filters && i < TT__FILTER_SLOTS; i++) {
		const struct tt__filtered_fn *fn = &slot->filters->fn[i];
		uint64_t calls = __atomic_load_n(&fn->calls, __ATOMIC_RELAXED);
		int64_t ns = tt_clock_span(clock, __atomic_load_n(&fn->ticks, __ATOMIC_RELAXED));
		if (calls && tt_an_add_filtered(th, TT_RECORD_PAYLOAD(fn->word) | TT_KEY_FUNC, calls, ns) < 0) {
			tt_an_feed_free(&feed);
			return -1;
		}
	}
	int rc = tt_an_feed_finish(&feed, INT64_MIN, INT64_MIN);
	tt_an_feed_free(&feed);
	return rc;
}

bool tt__format_is(const char *dest, const char *suffix)
{
	size_t n = strlen(dest), k = strlen(suffix);
	return n >= k && strcmp(dest + n - k, suffix) == 0;
}

static void tt__report_print(FILE *out, const struct tt_an_table *t, bool csv, uint64_t dropped)
{
	if (csv) {
		tt_an_table_csv(out, t);
		return;
	}
	fprintf(out, "ticktrace: pid %d, ", (int)tt_os_process_id());
	tt_an_table_print(out, t);
	if (dropped)
		fprintf(out, "(%" PRIu64 " events were dropped while recording: not counted)\n", dropped);
}

struct tt__report_text {
	const struct tt_an_table *table;
	bool csv;
	uint64_t dropped;
};

/* The table printed in memory, then written as any file of ticktrace's is. */
static int tt__report_out(struct tt__out *out, void *arg)
{
	const struct tt__report_text *r = arg;
	char *text;
	size_t len;
	struct tt_os_memstream mem;
	if (!tt_os_memstream_open(&mem))
		return -ENOMEM;
	tt__report_print(mem.stream, r->table, r->csv, r->dropped);
	int err = tt_os_memstream_close(&mem, &text, &len);
	if (!err) {
		tt__out(out, text, len);
		tt__out_flush(out);
		err = out->err;
	}
	free(text);
	return err;
}

/* Writes the table to `dest`: stderr; a device or FIFO in place (/dev/stdout); or a
 * file written beside PATH and renamed. */
static int tt__report_write(const char *dest, const struct tt_an_table *t, uint64_t dropped)
{
	if (strcmp(dest, "stderr") == 0) {
		tt__report_print(tt__err, t, false, dropped);
		return 0;
	}
	char path[4096];
	if (tt__expand_path(dest, path, sizeof path) < 0)
		return -ENAMETOOLONG;
	struct tt__report_text text = {t, tt__format_is(dest, ".csv"), dropped};
	return tt__write_file_with(path, tt__report_out, &text);
}

void tt__report_at_exit(void)
{
	const char *dest = getenv("TICKTRACE_REPORT");
	/* (A draining mode's records left memory as they were written.) */
	if (!dest || !*dest || tt__config.off || tt__mode->drains)
		return;
	struct tt_file_header header = {0};
	tt__clock_fill_header(&header);
	/* (ns since the start anchor, at the rate measured up to now) */
	struct tt_clock clock;
	bool timed = tt_clock_set(&clock, header.start.tsc, 0, header.tsc_hz) == 0;
	struct tt_an an = {.profile = true, .name = tt__report_name};
	size_t n = 0, cap = 64;
	struct tt_an_thread *threads = calloc(cap, sizeof(*threads)), **list = NULL;
	uint64_t dropped = __atomic_load_n(&tt__unregistered_drops, __ATOMIC_RELAXED);
	int err = threads && timed ? 0 : -ENOMEM;
	tt__hold_chunks(1);
	for (struct tt__slot *slot = tt__registry_head(); slot && !err;
	     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
		if (n == cap) {
			struct tt_an_thread *grown = realloc(threads, 2 * cap * sizeof(*grown));
			if (!grown) {
				err = -ENOMEM;
				break;
			}
			threads = grown;
			cap *= 2;
		}
		struct tt_an_thread *th = &threads[n++];
		tt_an_thread_init(th, &an, slot);
		th->pid = tt_os_process_id();
		th->tid = slot->tid;
		th->name = slot->name;
		th->name_len = (uint32_t)strnlen(slot->name, sizeof slot->name);
		uint64_t counts[TT_DROP_CAUSES];
		struct tt_gap gap;
		tt__drops_now(slot, counts, &gap);
		for (int i = 0; i < TT_DROP_CAUSES; i++)
			dropped += counts[i];
		if (tt__report_thread(th, slot, &clock) < 0)
			err = -ENOMEM;
	}
	tt__hold_chunks(0);
	struct tt_an_table table = {0};
	if (!err) {
		/* the array moved as it grew: the list points into its final place */
		list = calloc(n ? n : 1, sizeof(*list));
		err = list ? 0 : -ENOMEM;
	}
	for (size_t i = 0; i < n && !err; i++)
		list[i] = &threads[i];
	if (!err && tt_an_table_build(&table, list, n, false, TT_AN_SORT_SELF) < 0)
		err = -ENOMEM;
	if (!err)
		err = tt__report_write(dest, &table, dropped);
	if (err)
		fprintf(tt__err, "ticktrace: could not write the report (TICKTRACE_REPORT=%s): %s\n", dest,
			strerror(-err));
	tt_an_table_free(&table);
	for (size_t i = 0; i < n; i++)
		tt_an_thread_free(&threads[i]);
	free(threads);
	free(list);
}
