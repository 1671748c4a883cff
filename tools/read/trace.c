/* The trace object: several raw files on one timeline, their sites and threads
 * numbered over all of them, and their functions named by a symbolizer. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"

/* Gives a newly read file's sites and threads their trace-wide ids (sinks keep plain
 * arrays by id) and moves the trace start to its earliest anchor or event. */
static void tt_trace_add(struct tt_trace *t, struct tt_file *f)
{
	for (size_t j = 0; j < f->nsites; j++)
		f->sites[j].id = (uint32_t)t->nsites++;
	int64_t first = f->header.start.monotonic_ns;
	for (size_t j = 0; j < f->nthreads; j++) {
		struct tt_thread *th = &f->threads[j];
		th->id = (uint32_t)t->nthreads++;
		if (th->has_first) {
			int64_t ns = tt_clock_ns(&f->clock, th->first_tsc);
			if (ns < first)
				first = ns;
		}
	}
	if (t->nfiles == 1 || first < t->base_ns)
		t->base_ns = first;
}

int tt_trace_open(struct tt_trace *t, char *const *paths, size_t n)
{
	*t = (struct tt_trace){.files = calloc(n ? n : 1, sizeof(struct tt_file))};
	if (!t->files)
		return tt_error("out of memory");
	for (size_t i = 0; i < n; i++) {
		t->nfiles = i + 1;
		if (tt_file_open(&t->files[i], paths[i]) < 0)
			return -1;
		/* The same file twice, or a copy of it, or a run's tt_dump(path) copy with
		 * its final file: each event would count twice. */
		const struct tt_file_header *h = &t->files[i].header;
		for (size_t k = 0; k < i; k++) {
			const struct tt_file_header *other = &t->files[k].header;
			if (other->pid == h->pid && other->start.tsc == h->start.tsc &&
			    other->start.monotonic_ns == h->start.monotonic_ns)
				return tt_error("%s: offset %zu: the same run as %s (process %" PRIu32
						", same start): merged, its events would count twice%s",
						paths[i], offsetof(struct tt_file_header, start), paths[k],
						h->pid, (h->flags & other->flags & TT_FILE_SNAPSHOT) ?
						" (two snapshots of one run, whose windows may overlap: "
						"one at a time)" : "");
		}
		tt_trace_add(t, &t->files[i]);
	}
	return 0;
}

int tt_trace_load(struct tt_trace *t, const char *name, const uint8_t *data, size_t size)
{
	*t = (struct tt_trace){.files = calloc(1, sizeof(struct tt_file)), .nfiles = 1};
	if (!t->files)
		return tt_error("out of memory");
	if (tt_file_load(&t->files[0], name, data, size) < 0)
		return -1;
	tt_trace_add(t, &t->files[0]);
	return 0;
}

void tt_trace_close(struct tt_trace *t)
{
	for (size_t i = 0; i < t->nfiles; i++)
		tt_file_close(&t->files[i]);
	free(t->files);
	*t = (struct tt_trace){0};
}

static struct tt_str tt_str_of(const char *s)
{
	return (struct tt_str){s ? s : "", s ? (uint32_t)strnlen(s, TT_MAX_STRING) : 0};
}

int tt_trace_symbolize(struct tt_trace *t, tt_symbolize_fn fn, void *ctx)
{
	t->symbolize = fn;
	t->symbolize_ctx = ctx;
	for (size_t i = 0; i < t->nfiles; i++) {
		struct tt_file *f = &t->files[i];
		for (size_t k = 0; k < f->nsites; k++) {
			struct tt_site *s = &f->sites[k];
			struct tt_symbol sym;
			if (!s->is_func)
				continue;
			/* with the module that held it during its span */
			if (fn(ctx, f, s->address, s->until - 1, &sym) < 0)
				return tt_error("out of memory for symbols");
			s->name = s->func = tt_str_of(sym.name);
			s->file = tt_str_of(sym.file);
			s->line = sym.line;
		}
	}
	return 0;
}

size_t tt_trace_func_name(const struct tt_trace *t, const struct tt_file *file,
			  uint64_t address, char *buf, size_t cap)
{
	struct tt_symbol sym;
	int n = t->symbolize && t->symbolize(t->symbolize_ctx, file, address, UINT64_MAX - 1, &sym) == 0 ?
			snprintf(buf, cap, "%s", sym.name) :
			snprintf(buf, cap, "0x%" PRIx64, address);
	return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}
