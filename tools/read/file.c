/* Opening a raw file: mapped, read (sections.c), recovered where the run did not
 * finish it (recover.c); and closing it. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read_internal.h"

/* A live file's thread has no states nor counters' readings (they are in the run's
 * memory), though its THREAD section may say it has them: it says why instead (its own
 * refusal kept where nothing stood in for its switches: a SCHEDSTAT section of none
 * says its counters did, and were read as the run went on). */
static void tt_file_live_states_lost(struct tt_thread *t)
{
	uint32_t why = TT_THREAD_NO_STATES(t->flags);
	bool counters = t->has_counters && !t->ncounters;
	if (counters)
		t->has_counters = false; /* (not "never read": read, and kept in memory) */
	if (!counters && (t->has_states || (why != TT_NO_STATES_UNSAID && why != TT_NO_STATES_TOO_SHORT &&
					    !(t->flags & TT_THREAD_SCHED))))
		return;
	t->flags &= ~(uint32_t)(TT_THREAD_SCHED | TT_THREAD_NO_STATES_MASK | TT_THREAD_NO_STATES_ERRNO_MASK);
	t->flags |= TT_THREAD_NO_STATES_FLAGS(TT_NO_STATES_LIVE, 0);
}

/* ticktrace's own threads that hold nothing (mode stream's tt-drain, described so that
 * its file names it) are not shown as the program's: `info` listed it, `convert` counted
 * it and gave it an empty track (outside tester r50 #5). */
static int tt_file_hide_idle_runtime(struct tt_file *f)
{
	size_t kept = 0;
	for (size_t i = 0; i < f->nthreads; i++) {
		const struct tt_thread *t = &f->threads[i];
		if ((t->flags & TT_THREAD_RUNTIME) && !t->events && !t->dropped_total && !t->nsections &&
		    !t->has_states && !t->counters && !t->filtered && !t->dropped_calls && !t->unpacked)
			continue;
		f->threads[kept++] = *t;
	}
	if (kept == f->nthreads)
		return 0;
	f->nthreads = kept;
	tt_map_free(&f->thread_map);
	for (size_t i = 0; i < kept; i++)
		if (tt_map_put(&f->thread_map, f->threads[i].index, (uint32_t)i) < 0)
			return tt_error("%s: out of memory", f->path);
	return 0;
}

/* Reads the file in memory; a mapped one is released as it is read. */
static int tt_file_parse(struct tt_file *f, const char *path, const uint8_t *data, size_t size,
			 bool mapped)
{
	*f = (struct tt_file){.path = path, .data = data, .size = size, .mapped = mapped};
	const char *about_was = tt_diag_about(path);
	int rc = tt_file_read_header(f) < 0 || tt_file_read_sections(f) < 0 ? -1 : 0;
	if (rc == 0 && (f->header.flags & TT_FILE_LIVE) &&
	    (tt_file_read_live_chunks(f) < 0 || tt_file_name_unknown_sites(f) < 0))
		rc = -1;
	for (size_t i = 0; rc == 0 && i < f->nthreads; i++) {
		if (f->header.flags & TT_FILE_LIVE)
			tt_file_live_states_lost(&f->threads[i]);
		if (f->cut_short && (f->header.flags & TT_FILE_STREAMED))
			tt_file_count_gaps(f, &f->threads[i]);
		tt_file_trim_cut_event(f, &f->threads[i]);
	}
	if (rc == 0 && (tt_file_hide_idle_runtime(f) < 0 || tt_file_add_decoder_sites(f) < 0))
		rc = -1;
	tt_diag_about(about_was);
	return rc;
}

int tt_file_load(struct tt_file *f, const char *path, const uint8_t *data, size_t size)
{
	return tt_file_parse(f, path, data, size, false);
}

int tt_file_open(struct tt_file *f, const char *path)
{
	*f = (struct tt_file){.path = path};
	const char *why;
	int fd = tt_open_regular(path, &why);
	struct stat st;
	if (fd < 0)
		return tt_error("%s: %s", path, why);
	if (fstat(fd, &st) < 0) {
		int err = errno;
		close(fd);
		return tt_error("%s: %s", path, strerror(err));
	}
	const uint8_t *data = NULL;
	if (st.st_size > 0) {
		data = tt_os_map(fd, (size_t)st.st_size);
		if (!data) {
			int err = errno;
			close(fd);
			return tt_error("%s: cannot map: %s", path, strerror(err));
		}
	}
	close(fd);
	return data ? tt_file_parse(f, path, data, (size_t)st.st_size, true) :
		      tt_file_parse(f, path, (const uint8_t *)"", 0, false);
}

void tt_file_close(struct tt_file *f)
{
	if (f->mapped)
		tt_os_unmap(f->data, f->size);
	free(f->turned_off);
	for (size_t i = 0; i < f->nthreads; i++) {
		free(f->threads[i].sections);
		free(f->threads[i].states);
		free(f->threads[i].counters);
		free(f->threads[i].filtered);
		free(f->threads[i].dropped_calls);
		if (f->threads[i].unpacked)
			free(f->threads[i].unpacked->records);
		free(f->threads[i].unpacked);
	}
	while (f->made_names) {
		struct tt_made_name *next = f->made_names->next;
		free(f->made_names);
		f->made_names = next;
	}
	while (f->live_copies) {
		struct tt_live_copy *next = f->live_copies->next;
		free(f->live_copies);
		f->live_copies = next;
	}
	tt_snapshot_free(f->snapshot);
	free(f->sites);
	free(f->func_hex);
	free(f->threads);
	free(f->modules);
	tt_map_free(&f->site_map);
	tt_map_free(&f->thread_map);
	*f = (struct tt_file){0};
}
