/* Test support: writes synthetic raw files (.ttr) section by section, as
 * include/ticktrace/format.h lays them out, without the runtime. The tests build
 * well-formed files with it, then damage the bytes; the benchmark builds large ones.
 *
 *   struct tt_tw w;  tt_tw_open_memory(&w);
 *   tt_tw_header(&w, NULL);  tt_tw_process(&w, 4242, "demo");
 *   tt_tw_sites(&w, sites, n);
 *   tt_tw_thread(&w, 0, 4243, "main", nrec, 0);  tt_tw_events(&w, 0, 0, rec, nrec);
 *   tt_tw_end(&w);  tt_tw_close(&w);   // w.data, w.size hold the file
 */
#ifndef TT_TW_H
#define TT_TW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <ticktrace/format.h>

#define TT_TW_MAX_SECTIONS 256

struct tt_tw_site {
	uint64_t address;
	const char *name;
	const char *file;
	const char *func;
	uint32_t line;
};

struct tt_tw {
	FILE *fp;
	char *data; /* tt_tw_open_memory: the bytes, after tt_tw_close */
	size_t size;
	/* Totals for the END section. */
	uint64_t threads, records, dropped, sites;
	uint64_t live_chunks_at; /* where the first tt_tw_live_chunk began, or 0 */
	/* Where each section header starts, in order, for tests that cut or damage. */
	uint64_t sections[TT_TW_MAX_SECTIONS];
	size_t nsections;
	long unloaded_at; /* where the open UNLOADED section's header is */
};

/* Records: tsc 1 tick = 1 ns with the default header. */
#define TT_TW_REC(kind, payload, tsc) ((struct tt_record){(tsc), TT_RECORD_WORD((kind), (payload))})

/* The default header: version 1, 1 GHz from anchors, start anchor TSC 1000 at
 * CLOCK_MONOTONIC 5 s, invariant TSC. */
void tt_tw_default_header(struct tt_file_header *h);

int tt_tw_open_memory(struct tt_tw *w);
int tt_tw_open_file(struct tt_tw *w, const char *path);
/* Writes the header (NULL: the default). */
void tt_tw_header(struct tt_tw *w, const struct tt_file_header *h);
void tt_tw_process(struct tt_tw *w, uint32_t pid, const char *name);
/* A MACHINE section of `size` bytes: `m`, cut to them or followed by zeros (a later
 * version's fields). */
void tt_tw_machine(struct tt_tw *w, const struct tt_machine_info *m, size_t size);
void tt_tw_sites(struct tt_tw *w, const struct tt_tw_site *sites, size_t n);
struct tt_tw_module {
	uint64_t start, end;
	const char *path;
	const char *build_id; /* its bytes, as a string */
};
/* A MODULES section. */
void tt_tw_modules(struct tt_tw *w, const struct tt_tw_module *modules, size_t n);
/* An UNLOADED section (until `until_tsc`) around the one section written between
 * begin and end. */
void tt_tw_unloaded_begin(struct tt_tw *w, uint64_t until_tsc);
void tt_tw_unloaded_end(struct tt_tw *w);
/* A FUNCS section: functions that FUNC_ENTER records name. */
void tt_tw_funcs(struct tt_tw *w, const uint64_t *addresses, size_t n);
/* An ARG_NAMES section: the argument names of the sites at `addresses`. */
void tt_tw_arg_names(struct tt_tw *w, const uint64_t *addresses, const char *const *names, size_t n);
void tt_tw_thread(struct tt_tw *w, uint32_t index, uint32_t tid, const char *name, uint64_t events,
		  uint64_t dropped_full);
void tt_tw_events(struct tt_tw *w, uint32_t index, uint64_t first_record,
		  const struct tt_record *records, size_t n);
/* A THREAD section with any counts and flags (a ring's wrapped thread, say). */
/* A TT_SEC_EVENTS_PACKED section of `records` records packed as `bytes` (not checked). */
/* A SCHED section: a thread's states (its THREAD section must carry TT_THREAD_SCHED). */
void tt_tw_sched(struct tt_tw *w, uint32_t index, uint64_t lost, int64_t since_ns,
		 const struct tt_sched_state *states, size_t n);
/* The same, saying the thread exited at exited_ns (tt_sched_info.exited_ns). */
void tt_tw_sched_exited(struct tt_tw *w, uint32_t index, uint64_t lost, int64_t since_ns,
			const struct tt_sched_state *states, size_t n, int64_t exited_ns);
/* A SCHEDSTAT section: a thread's counters' readings, with `flags` (enum
 * tt_schedstat_flags, not checked). */
void tt_tw_schedstat(struct tt_tw *w, uint32_t index, uint32_t flags,
		     const struct tt_schedstat_sample *readings, size_t n);
/* A FILTERED section: `count` as given (not checked against n). */
void tt_tw_filtered(struct tt_tw *w, uint32_t index, uint32_t count, uint64_t min_dur_ns,
		    const struct tt_filtered_fn *fns, size_t n);
/* A SNAPSHOT section (the header must carry TT_FILE_SNAPSHOT): `info` with its
 * name_len and cuts set from `name` and the n `cuts`. */
void tt_tw_snapshot(struct tt_tw *w, const struct tt_snapshot_info *info, const char *name,
		    const struct tt_snapshot_cut *cuts, size_t n);
/* The same, ending with `split` (tt_snapshot_split), `causes` (tt_snapshot_causes)
 * and `unsplit` (tt_snapshot_unsplit), then the `tail_size` bytes of `tail` (the later
 * versions' tt_snapshot_unknown and tt_snapshot_miss, or part of them); without unsplit
 * (NULL), as the third version; without causes too, as the second; tt_tw_snapshot's
 * ends at its cuts, as the first version's. */
void tt_tw_snapshot_split(struct tt_tw *w, const struct tt_snapshot_info *info, const char *name,
			  const struct tt_snapshot_cut *cuts, size_t n,
			  const struct tt_snapshot_split *split, const struct tt_snapshot_causes *causes,
			  const struct tt_snapshot_unsplit *unsplit, const void *tail, size_t tail_size);
void tt_tw_events_packed(struct tt_tw *w, uint32_t index, uint64_t first_record, uint64_t records,
			 const uint8_t *bytes, size_t size);
void tt_tw_thread_info(struct tt_tw *w, const struct tt_thread_info *ti, const char *name);
/* A THREAD_TOTALS section (streamed files): the thread's final counts, flags and
 * name. Its dropped counts add to the END's: its THREAD section must count none. */
void tt_tw_thread_totals(struct tt_tw *w, const struct tt_thread_info *ti, const char *name);
/* A live file's chunk (TT_FILE_LIVE): TT_LIVE_CHUNK_SIZE bytes holding the thread's
 * records. The first call sets the header's live_sections_end and live_chunks_at to
 * where it starts: the sections written so far are the file's descriptions. */
void tt_tw_live_chunk(struct tt_tw *w, uint32_t index, const struct tt_record *records, size_t n);
/* The END section, with the totals of what was written. */
void tt_tw_end(struct tt_tw *w);
/* 0, or -1 when anything failed to write. */
int tt_tw_close(struct tt_tw *w);
void tt_tw_free(struct tt_tw *w);

/* Writes `size` bytes to `path`; 0 or -1. */
int tt_tw_save(const char *path, const void *data, size_t size);

#endif
