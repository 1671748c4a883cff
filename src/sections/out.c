/* A file's bytes, buffered into few writes (records go from the chunks to the sink
 * without a copy), the headers and padding of its sections, and the sections that
 * need no more than they are handed: MODULES, END. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sections/sections.h"

/* Writes this large go to the sink directly. */
#define TT__OUT_DIRECT 4096

void tt__out_to(struct tt__out *out, struct tt_os_sink *sink)
{
	out->sink = sink;
	out->err = 0;
	out->offset = 0;
	out->len = 0;
}

/* What is buffered, then `size` bytes at `data`, in one put. */
static void tt__out_flush_with(struct tt__out *out, const void *data, size_t size)
{
	if (!out->err && (out->len || size)) {
		int err = out->sink->put(out->sink, out->buf, out->len, data, size,
					 out->offset - size - out->len);
		if (err && !out->err)
			out->err = err;
	}
	out->len = 0;
}

void tt__out_flush(struct tt__out *out)
{
	tt__out_flush_with(out, NULL, 0);
}

void tt__out(struct tt__out *out, const void *data, size_t size)
{
	if (!size)
		return; /* (data may then be NULL: a section with no states yet) */
	out->offset += size;
	/* Records go from the chunks to the sink without a copy into the buffer. */
	if (size >= TT__OUT_DIRECT) {
		tt__out_flush_with(out, data, size);
		return;
	}
	if (size > sizeof out->buf - out->len) {
		out->offset -= size; /* (the buffer's bytes end before these) */
		tt__out_flush(out);
		out->offset += size;
	}
	memcpy(out->buf + out->len, data, size);
	out->len += size;
}

void tt__out_section(struct tt__out *out, uint32_t type, uint64_t size)
{
	struct tt_section_header header = {.type = type, .size = size};
	tt__out(out, &header, sizeof header);
}

void tt__out_pad(struct tt__out *out, uint64_t size)
{
	static const char zeros[16];
	tt__out(out, zeros, TT_SECTION_PADDED(size) - size);
}

void tt__out_section_until(struct tt__out *out, uint32_t type, uint64_t size, uint64_t until)
{
	if (until) {
		struct tt_unloaded_info info = {.until_tsc = until};
		tt__out_section(out, TT_SEC_UNLOADED, sizeof info + sizeof(struct tt_section_header) +
							      TT_SECTION_PADDED(size));
		tt__out(out, &info, sizeof info);
	}
	tt__out_section(out, type, size);
}

void tt__out_events(struct tt__out *out, uint32_t thread_index, uint64_t first,
		    const struct tt_record *begin, const struct tt_record *end)
{
	uint64_t count = (uint64_t)(end - begin);
	struct tt_events_info events = {.thread_index = thread_index, .first_record = first};
	tt__out_section(out, TT_SEC_EVENTS, sizeof events + count * sizeof(struct tt_record));
	tt__out(out, &events, sizeof events);
	tt__out(out, begin, count * sizeof(struct tt_record));
}

void tt__out_filtered_table(struct tt__out *out, uint32_t thread_index, const struct tt__filters *filters,
			    uint64_t min_dur_ns, bool dropped)
{
	struct tt_filtered_info info = {.thread_index = thread_index, .min_dur_ns = dropped ? 0 : min_dur_ns};
	for (size_t i = 0; filters && i < TT__FILTER_SLOTS; i++)
		info.count += tt__filtered_calls(&filters->fn[i], dropped) != 0;
	if (!info.count)
		return;
	uint64_t size = sizeof info + info.count * sizeof(struct tt_filtered_fn);
	tt__out_section(out, dropped ? TT_SEC_DROPPED_CALLS : TT_SEC_FILTERED, size);
	tt__out(out, &info, sizeof info);
	for (size_t i = 0, n = 0; i < TT__FILTER_SLOTS && n < info.count; i++) {
		const struct tt__filtered_fn *fn = &filters->fn[i];
		struct tt_filtered_fn one = {.address = TT_RECORD_PAYLOAD(fn->word),
					     .calls = tt__filtered_calls(fn, dropped),
					     .ticks = dropped ? 0 : __atomic_load_n(&fn->ticks, __ATOMIC_RELAXED)};
		if (!one.calls)
			continue;
		tt__out(out, &one, sizeof one);
		n++;
	}
	tt__out_pad(out, size);
}

void tt__out_thread_section(struct tt__out *out, uint32_t type, struct tt_thread_info *info,
			    const char *kept, int final)
{
	char name[64]; /* (as a slot keeps it) */
	if (final || !tt_os_thread_name_of(info->tid, name, sizeof name))
		snprintf(name, sizeof name, "%s", kept);
	if (!name[0])
		tt_os_process_name(name, sizeof name);
	info->name_len = (uint32_t)strlen(name);
	uint64_t size = sizeof *info + info->name_len;
	tt__out_section(out, type, size);
	tt__out(out, info, sizeof *info);
	tt__out(out, name, info->name_len);
	tt__out_pad(out, size);
}

void tt__out_sched_states(struct tt__out *out, const struct tt_sched_info *info,
			  const struct tt_sched_state *carry, const struct tt_sched_state *states, size_t n)
{
	/* (16 and 32 bytes: no padding) */
	tt__out_section(out, TT_SEC_SCHED, sizeof *info + (n + !!carry) * sizeof *states);
	tt__out(out, info, sizeof *info);
	if (carry) {
		struct tt_sched_state at_start = *carry;
		at_start.ns = info->since_ns;
		tt__out(out, &at_start, sizeof at_start);
	}
	if (n)
		tt__out(out, states, n * sizeof *states);
}

void tt__out_counters(struct tt__out *out, const struct tt_schedstat_info *info,
		      const struct tt_schedstat_budget *budget, const struct tt_schedstat_sample *readings,
		      size_t n)
{
	/* (no padding: every part a multiple of 8 bytes) */
	bool budgeted = info->flags & TT_SCHEDSTAT_BUDGET;
	size_t head = sizeof *info + (budgeted ? sizeof *budget : 0);
	tt__out_section(out, TT_SEC_SCHEDSTAT, head + n * sizeof *readings);
	tt__out(out, info, sizeof *info);
	if (budgeted)
		tt__out(out, budget, sizeof *budget);
	tt__out(out, readings, n * sizeof *readings);
}

void tt__out_end(struct tt__out *out, const struct tt_end_info *end)
{
	tt__out_section(out, TT_SEC_END, sizeof *end);
	tt__out(out, end, sizeof *end);
	tt__out_pad(out, sizeof *end);
}

void tt__out_module_list(struct tt__out *out, const struct tt_os_module_list *m, uint64_t until)
{
	uint64_t size = sizeof m->count + m->len;
	tt__out_section_until(out, TT_SEC_MODULES, size, until);
	tt__out(out, &m->count, sizeof m->count);
	if (m->len) /* (none: no buffer at all) */
		tt__out(out, m->data, m->len);
	tt__out_pad(out, size);
}

int tt__out_loaded_modules(struct tt__out *out)
{
	struct tt_os_module_list m = {0};
	tt_os_modules(tt_os_module_list_add, &m);
	if (!m.err)
		tt__out_module_list(out, &m, 0);
	free(m.data);
	return m.err;
}

static int tt__mem_put(struct tt_os_sink *sink, const void *a, size_t a_size, const void *b, size_t b_size,
		       uint64_t at)
{
	struct tt__mem_sink *m = (struct tt__mem_sink *)sink;
	if (at > m->cap || a_size + b_size > m->cap - at)
		return -ENOSPC;
	if (a_size)
		memcpy(m->mem + at, a, a_size);
	if (b_size)
		memcpy(m->mem + at + a_size, b, b_size);
	return 0;
}

void tt__mem_sink(struct tt__mem_sink *sink, void *mem, uint64_t cap)
{
	*sink = (struct tt__mem_sink){.sink = {tt__mem_put}, .mem = mem, .cap = cap};
}
