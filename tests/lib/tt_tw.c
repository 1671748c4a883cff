#include "tt_tw.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void tt_tw_default_header(struct tt_file_header *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, TT_FILE_MAGIC, TT_FILE_MAGIC_LEN);
	h->version = TT_FILE_VERSION;
	h->header_size = sizeof(*h);
	h->flags = TT_FILE_INVARIANT_TSC | TT_FILE_TSC_RELIABLE;
	h->tsc_source = TT_TSC_ANCHORS;
	h->tsc_hz = 1000000000;
	h->start = (struct tt_anchor){.tsc = 1000, .monotonic_ns = 5000000000};
	h->end = (struct tt_anchor){.tsc = 1000000, .monotonic_ns = 5000999000};
	h->pid = 4242;
}

int tt_tw_open_memory(struct tt_tw *w)
{
	memset(w, 0, sizeof(*w));
	w->fp = open_memstream(&w->data, &w->size);
	return w->fp ? 0 : -1;
}

int tt_tw_open_file(struct tt_tw *w, const char *path)
{
	memset(w, 0, sizeof(*w));
	w->fp = fopen(path, "wb");
	return w->fp ? 0 : -1;
}

void tt_tw_header(struct tt_tw *w, const struct tt_file_header *h)
{
	struct tt_file_header def;
	if (!h) {
		tt_tw_default_header(&def);
		h = &def;
	}
	fwrite(h, sizeof(*h), 1, w->fp);
}

/* A section header; the caller writes `size` payload bytes, then tt_tw_pad. */
static void tt_tw_section(struct tt_tw *w, uint32_t type, uint64_t size)
{
	struct tt_section_header sh = {.type = type, .size = size};
	if (w->nsections < TT_TW_MAX_SECTIONS)
		w->sections[w->nsections++] = (uint64_t)ftell(w->fp);
	fwrite(&sh, sizeof(sh), 1, w->fp);
}

static void tt_tw_pad(struct tt_tw *w, uint64_t size)
{
	static const char zeros[16];
	fwrite(zeros, TT_SECTION_PADDED(size) - size, 1, w->fp);
}

void tt_tw_process(struct tt_tw *w, uint32_t pid, const char *name)
{
	static const char cmdline[] = "demo\0--fast";
	struct tt_process_info pi = {.pid = pid, .ppid = 1, .name_len = (uint32_t)strlen(name),
				     .cmdline_len = sizeof(cmdline)};
	uint64_t size = sizeof(pi) + pi.name_len + pi.cmdline_len;
	tt_tw_section(w, TT_SEC_PROCESS, size);
	fwrite(&pi, sizeof(pi), 1, w->fp);
	fwrite(name, pi.name_len, 1, w->fp);
	fwrite(cmdline, pi.cmdline_len, 1, w->fp);
	tt_tw_pad(w, size);
}

void tt_tw_machine(struct tt_tw *w, const struct tt_machine_info *m, size_t size)
{
	static const char zeros[64];
	size_t given = size < sizeof(*m) ? size : sizeof(*m);
	tt_tw_section(w, TT_SEC_MACHINE, size);
	fwrite(m, given, 1, w->fp);
	fwrite(zeros, size - given, 1, w->fp);
	tt_tw_pad(w, size);
}

void tt_tw_sites(struct tt_tw *w, const struct tt_tw_site *sites, size_t n)
{
	uint64_t size = sizeof(uint64_t);
	for (size_t i = 0; i < n; i++)
		size += sizeof(struct tt_site_info) + strlen(sites[i].name) + strlen(sites[i].file) +
			strlen(sites[i].func);
	tt_tw_section(w, TT_SEC_SITES, size);
	uint64_t count = n;
	fwrite(&count, sizeof(count), 1, w->fp);
	for (size_t i = 0; i < n; i++) {
		const struct tt_tw_site *s = &sites[i];
		struct tt_site_info si = {
			.address = s->address, .line = s->line, .name_len = (uint32_t)strlen(s->name),
			.file_len = (uint32_t)strlen(s->file), .func_len = (uint32_t)strlen(s->func),
		};
		fwrite(&si, sizeof(si), 1, w->fp);
		fputs(s->name, w->fp);
		fputs(s->file, w->fp);
		fputs(s->func, w->fp);
	}
	tt_tw_pad(w, size);
	w->sites += n;
}

void tt_tw_funcs(struct tt_tw *w, const uint64_t *addresses, size_t n)
{
	uint64_t size = sizeof(uint64_t) * (n + 1), count = n;
	tt_tw_section(w, TT_SEC_FUNCS, size);
	fwrite(&count, sizeof(count), 1, w->fp);
	fwrite(addresses, sizeof(*addresses), n, w->fp);
	tt_tw_pad(w, size);
}

void tt_tw_modules(struct tt_tw *w, const struct tt_tw_module *modules, size_t n)
{
	uint64_t size = sizeof(uint64_t), count = n;
	for (size_t i = 0; i < n; i++)
		size += sizeof(struct tt_module_info) + strlen(modules[i].path) + strlen(modules[i].build_id);
	tt_tw_section(w, TT_SEC_MODULES, size);
	fwrite(&count, sizeof(count), 1, w->fp);
	for (size_t i = 0; i < n; i++) {
		struct tt_module_info mi = {.start = modules[i].start, .end = modules[i].end,
					    .path_len = (uint32_t)strlen(modules[i].path),
					    .build_id_len = (uint32_t)strlen(modules[i].build_id)};
		fwrite(&mi, sizeof(mi), 1, w->fp);
		fwrite(modules[i].path, 1, mi.path_len, w->fp);
		fwrite(modules[i].build_id, 1, mi.build_id_len, w->fp);
	}
	tt_tw_pad(w, size);
}

void tt_tw_unloaded_begin(struct tt_tw *w, uint64_t until_tsc)
{
	w->unloaded_at = ftell(w->fp);
	struct tt_unloaded_info ui = {.until_tsc = until_tsc};
	tt_tw_section(w, TT_SEC_UNLOADED, 0); /* its size is known at the end */
	fwrite(&ui, sizeof(ui), 1, w->fp);
}

void tt_tw_unloaded_end(struct tt_tw *w)
{
	long end = ftell(w->fp);
	struct tt_section_header sh = {.type = TT_SEC_UNLOADED,
				       .size = (uint64_t)(end - w->unloaded_at) - sizeof(sh)};
	fseek(w->fp, w->unloaded_at, SEEK_SET);
	fwrite(&sh, sizeof(sh), 1, w->fp);
	fseek(w->fp, end, SEEK_SET);
}

void tt_tw_arg_names(struct tt_tw *w, const uint64_t *addresses, const char *const *names, size_t n)
{
	uint64_t size = sizeof(uint64_t), count = n;
	for (size_t i = 0; i < n; i++)
		size += sizeof(struct tt_arg_name_info) + strlen(names[i]);
	tt_tw_section(w, TT_SEC_ARG_NAMES, size);
	fwrite(&count, sizeof(count), 1, w->fp);
	for (size_t i = 0; i < n; i++) {
		struct tt_arg_name_info info = {.address = addresses[i],
						.name_len = (uint32_t)strlen(names[i])};
		fwrite(&info, sizeof(info), 1, w->fp);
		fputs(names[i], w->fp);
	}
	tt_tw_pad(w, size);
}

/* A THREAD or THREAD_TOTALS section; its dropped counts add to the END's. */
static void tt_tw_thread_section(struct tt_tw *w, uint32_t type, const struct tt_thread_info *ti,
				 const char *name)
{
	struct tt_thread_info info = *ti;
	info.name_len = (uint32_t)strlen(name);
	uint64_t size = sizeof(info) + info.name_len;
	tt_tw_section(w, type, size);
	fwrite(&info, sizeof(info), 1, w->fp);
	fputs(name, w->fp);
	tt_tw_pad(w, size);
	for (int i = 0; i < TT_DROP_CAUSES; i++)
		w->dropped += info.dropped[i];
}

void tt_tw_thread(struct tt_tw *w, uint32_t index, uint32_t tid, const char *name, uint64_t events,
		  uint64_t dropped_full)
{
	struct tt_thread_info ti = {.index = index, .tid = tid, .events = events};
	ti.dropped[TT_DROP_FULL] = dropped_full;
	tt_tw_thread_section(w, TT_SEC_THREAD, &ti, name);
	w->threads++;
}

void tt_tw_thread_info(struct tt_tw *w, const struct tt_thread_info *ti, const char *name)
{
	tt_tw_thread_section(w, TT_SEC_THREAD, ti, name);
	w->threads++;
}

void tt_tw_thread_totals(struct tt_tw *w, const struct tt_thread_info *ti, const char *name)
{
	tt_tw_thread_section(w, TT_SEC_THREAD_TOTALS, ti, name);
}

void tt_tw_events(struct tt_tw *w, uint32_t index, uint64_t first_record,
		  const struct tt_record *records, size_t n)
{
	struct tt_events_info ei = {.thread_index = index, .first_record = first_record};
	tt_tw_section(w, TT_SEC_EVENTS, sizeof(ei) + n * sizeof(*records));
	fwrite(&ei, sizeof(ei), 1, w->fp);
	if (n) /* (records may be NULL: a thread with none) */
		fwrite(records, sizeof(*records), n, w->fp);
	w->records += n;
}

void tt_tw_sched(struct tt_tw *w, uint32_t index, uint64_t lost, int64_t since_ns,
		 const struct tt_sched_state *states, size_t n)
{
	tt_tw_sched_exited(w, index, lost, since_ns, states, n, 0);
}

void tt_tw_sched_exited(struct tt_tw *w, uint32_t index, uint64_t lost, int64_t since_ns,
			const struct tt_sched_state *states, size_t n, int64_t exited_ns)
{
	struct tt_sched_info si = {.thread_index = index, .lost = lost, .since_ns = since_ns,
				   .exited_ns = exited_ns};
	tt_tw_section(w, TT_SEC_SCHED, sizeof(si) + n * sizeof(*states));
	fwrite(&si, sizeof(si), 1, w->fp);
	if (n) /* (states may be NULL) */
		fwrite(states, sizeof(*states), n, w->fp);
}

void tt_tw_schedstat(struct tt_tw *w, uint32_t index, uint32_t flags,
		     const struct tt_schedstat_sample *readings, size_t n)
{
	struct tt_schedstat_info si = {.thread_index = index, .flags = flags};
	tt_tw_section(w, TT_SEC_SCHEDSTAT, sizeof(si) + n * sizeof(*readings));
	fwrite(&si, sizeof(si), 1, w->fp);
	fwrite(readings, sizeof(*readings), n, w->fp);
}

void tt_tw_filtered(struct tt_tw *w, uint32_t index, uint32_t count, uint64_t min_dur_ns,
		    const struct tt_filtered_fn *fns, size_t n)
{
	struct tt_filtered_info fi = {.thread_index = index, .count = count, .min_dur_ns = min_dur_ns};
	uint64_t size = sizeof(fi) + n * sizeof(*fns);
	tt_tw_section(w, TT_SEC_FILTERED, size);
	fwrite(&fi, sizeof(fi), 1, w->fp);
	fwrite(fns, sizeof(*fns), n, w->fp);
	tt_tw_pad(w, size);
}

void tt_tw_snapshot(struct tt_tw *w, const struct tt_snapshot_info *info, const char *name,
		    const struct tt_snapshot_cut *cuts, size_t n)
{
	tt_tw_snapshot_split(w, info, name, cuts, n, NULL, NULL, NULL, NULL, 0);
}

void tt_tw_snapshot_split(struct tt_tw *w, const struct tt_snapshot_info *info, const char *name,
			  const struct tt_snapshot_cut *cuts, size_t n,
			  const struct tt_snapshot_split *split, const struct tt_snapshot_causes *causes,
			  const struct tt_snapshot_unsplit *unsplit, const void *tail, size_t tail_size)
{
	static const char zeros[8];
	struct tt_snapshot_info si = *info;
	si.name_len = (uint32_t)strlen(name);
	si.cuts = (uint32_t)n;
	size_t padded = (si.name_len + 7u) & ~7u;
	uint64_t size = sizeof(si) + padded + n * sizeof(*cuts) + (split ? sizeof(*split) : 0) +
			(split && causes ? sizeof(*causes) : 0) +
			(split && causes && unsplit ? sizeof(*unsplit) + tail_size : 0);
	tt_tw_section(w, TT_SEC_SNAPSHOT, size);
	fwrite(&si, sizeof(si), 1, w->fp);
	fwrite(name, 1, si.name_len, w->fp);
	fwrite(zeros, 1, padded - si.name_len, w->fp);
	if (n) /* (cuts may be NULL: none) */
		fwrite(cuts, sizeof(*cuts), n, w->fp);
	if (split)
		fwrite(split, sizeof(*split), 1, w->fp);
	if (split && causes)
		fwrite(causes, sizeof(*causes), 1, w->fp);
	if (split && causes && unsplit) {
		fwrite(unsplit, sizeof(*unsplit), 1, w->fp);
		if (tail_size) /* (tail may be NULL: none) */
			fwrite(tail, 1, tail_size, w->fp);
	}
	tt_tw_pad(w, size);
}

void tt_tw_events_packed(struct tt_tw *w, uint32_t index, uint64_t first_record, uint64_t records,
			 const uint8_t *bytes, size_t size)
{
	struct tt_events_info ei = {.thread_index = index, .first_record = first_record};
	struct tt_packed_info pi = {.records = records};
	uint64_t total = sizeof(ei) + sizeof(pi) + size;
	tt_tw_section(w, TT_SEC_EVENTS_PACKED, total);
	fwrite(&ei, sizeof(ei), 1, w->fp);
	fwrite(&pi, sizeof(pi), 1, w->fp);
	fwrite(bytes, 1, size, w->fp);
	tt_tw_pad(w, total);
	w->records += records;
}

void tt_tw_live_chunk(struct tt_tw *w, uint32_t index, const struct tt_record *records, size_t n)
{
	if (!w->live_chunks_at) {
		w->live_chunks_at = (uint64_t)ftell(w->fp);
		const uint64_t at[2] = {w->live_chunks_at, w->live_chunks_at}; /* sections end, chunks */
		fseek(w->fp, offsetof(struct tt_file_header, live_sections_end), SEEK_SET);
		fwrite(at, sizeof(at), 1, w->fp);
		fseek(w->fp, (long)w->live_chunks_at, SEEK_SET);
	}
	struct tt_live_chunk c = {.size = (uint32_t)(sizeof(c) + n * sizeof(*records)),
				  .thread_index = index};
	static const char zeros[TT_LIVE_CHUNK_SIZE];
	fwrite(&c, sizeof(c), 1, w->fp);
	fwrite(records, sizeof(*records), n, w->fp);
	fwrite(zeros, TT_LIVE_CHUNK_SIZE - c.size, 1, w->fp);
}

void tt_tw_end(struct tt_tw *w)
{
	struct tt_end_info e = {.threads = w->threads, .records = w->records,
				.dropped = w->dropped, .sites = w->sites};
	tt_tw_section(w, TT_SEC_END, sizeof(e));
	fwrite(&e, sizeof(e), 1, w->fp);
}

int tt_tw_close(struct tt_tw *w)
{
	int rc = ferror(w->fp) ? -1 : 0;
	if (fclose(w->fp) != 0)
		rc = -1;
	w->fp = NULL;
	return rc;
}

void tt_tw_free(struct tt_tw *w)
{
	if (w->fp)
		fclose(w->fp);
	free(w->data);
	memset(w, 0, sizeof(*w));
}

int tt_tw_save(const char *path, const void *data, size_t size)
{
	FILE *fp = fopen(path, "wb");
	if (!fp)
		return -1;
	size_t n = size ? fwrite(data, size, 1, fp) : 1;
	return (fclose(fp) == 0 && n == 1) ? 0 : -1;
}
