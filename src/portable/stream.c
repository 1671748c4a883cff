/* Mode stream, as on Linux (modes/stream.c): the thread tt-stream writes every
 * thread's full chunks into the raw file while the program runs, and gives them back
 * for threads to take again, so that memory stays bounded however long the run. The
 * file is created at start under its final name with the TT_FILE_STREAMED flag;
 * sections are appended as chunks are written:
 *
 *   header | PROCESS | MACHINE | MODULES | { UNLOADED (MODULES) | MODULES | THREAD
 *          | SITES (ARG_NAMES, FUNCS) | EVENTS }...
 *          | THREAD_TOTALS (and SCHED, SCHEDSTAT)... | END
 *
 * A SITES section (and FUNCS) describes the sites (functions) the EVENTS after it use
 * first; the modules unloaded and loaded since the last pass come
 * before its records (dump.c's tt__modules_look), so that a DLL LoadLibrary brought
 * mid-run is named, and one FreeLibrary took too (its UNLOADED MODULES); a thread's
 * THREAD section comes before its first EVENTS, its THREAD_TOTALS (events, drops,
 * final name) at the end, where the header is written again with the end anchor. A
 * thread whose chunks all wait for tt-stream drops events (TT_DROP_BEHIND) until it
 * wrote one, the run of them then told in the thread's records (TT_REC_DROPPED, as
 * on Linux: record.c), so that a file without its end says where and how many. Each
 * pass (a chunk filled, or TT__STREAM_PERIOD_NS passed) writes what the threads
 * recorded so far into their current chunks too, so that a run ended by
 * TerminateProcess leaves a file the converter reads up to its last section. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "portable/portable.h"

/* tt-stream looks for full chunks this often when no thread woke it. */
#define TT__STREAM_PERIOD_NS 100000000

static struct {
	char path[TT__PATH_MAX + 6];
	struct tt__out out;
	struct tt_os_file_sink file;
	struct tt_os_lock busy; /* one writer at a time: tt-stream, a flush, the end */
	struct tt__site_set sites, fresh; /* (fresh: not described yet) */
	struct tt__modules_seen modules;
	int finished;
	int ending; /* the end waits for busy: tt-stream takes it no more */
	int in_place; /* a device (NUL): no start to go back to */
	int64_t refreshed_ns; /* the header last written again */
} tt__stream;

/* Slot s's THREAD section, before its first records. */
static void tt__stream_describe(struct tt__slot *s)
{
	if (!s->described)
		tt__out_thread_info(&tt__stream.out, TT_SEC_THREAD, s, 0, 0);
	s->described = 1;
}

/* Slot s's records [r, end) of chunk c, after the SITES they use first (and the
 * slot's THREAD section, before its first); where they end noted as seen. */
static void tt__stream_records(struct tt__slot *s, const struct tt__chunk *c, const struct tt_record *end)
{
	struct tt__out *out = &tt__stream.out;
	tt__stream_describe(s);
	const struct tt_record *r = (const struct tt_record *)((const char *)c + (c == s->seen_chunk ? s->seen
												  : sizeof *c));
	if (end <= r)
		return;
	if (!tt__sites_add(&tt__stream.sites, &tt__stream.fresh, r, end, 0, tt__unloaded_generation) && !out->err)
		out->err = -ENOMEM;
	if (tt__stream.fresh.count) {
		tt__out_sites(out, &tt__stream.fresh);
		tt__site_set_clear(&tt__stream.fresh);
	}
	tt__out_events(out, s->index, s->written, r, end);
	s->written += (uint64_t)(end - r);
	s->seen_chunk = c;
	s->seen = (uint32_t)((const char *)end - (const char *)c);
}

/* Slot s's chunks [head, stop), whole. */
static void tt__stream_out(struct tt__slot *s, struct tt__chunk *head, const struct tt__chunk *stop)
{
	for (const struct tt__chunk *c = head; c != stop; c = c->next) {
		tt__stream_records(s, c, (const struct tt_record *)((const char *)c + c->size));
		s->seen_chunk = NULL; /* (given back, it may be this slot's again) */
	}
}

/* busy held: the modules unloaded and loaded since the last look, before the records
 * made after it (the run's start: every module loaded then). */
static int tt__stream_modules(void)
{
	struct tt_os_module_list m = {0};
	tt__modules_look(&tt__stream.modules, &m);
	int err = tt__out_modules_since(&tt__stream.out, &tt__stream.sites, &m);
	if (err && !tt__stream.out.err)
		tt__stream.out.err = err;
	return err;
}

/* The header, with the end anchor taken now. */
static void tt__stream_header(struct tt_file_header *h, int crash_signal)
{
	tt__file_header(h);
	h->flags |= TT_FILE_STREAMED | (crash_signal ? TT_FILE_CRASHED : 0);
	h->crash_signal = (uint32_t)crash_signal;
}

/* busy held, the file so far flushed: the header written again at its start, as
 * Linux's drain does every period, so that a run TerminateProcess ended converts with
 * its clock measured until then (the sink writes on after the file so far). */
static void tt__stream_refresh(int crash_signal)
{
	struct tt_file_header h;
	tt__stream.refreshed_ns = tt_os_monotonic_ns();
	if (tt__stream.in_place || tt__stream.out.err)
		return;
	tt__stream_header(&h, crash_signal);
	int64_t n = tt_os_file_write_at(&tt__stream.file.file, &h, sizeof h, 0);
	if (n != (int64_t)sizeof h)
		tt__stream.out.err = n < 0 ? (int)n : -EIO;
}

/* busy held: every thread's full chunks written and given back. */
static void tt__stream_pass(void)
{
	tt__stream_modules();
	for (struct tt__slot *s = __atomic_load_n(&tt__run.first, __ATOMIC_ACQUIRE); s;
	     s = __atomic_load_n(&s->next, __ATOMIC_ACQUIRE)) {
		tt_os_lock(&tt__run_lock);
		struct tt__chunk *head = s->first, *last = NULL, *stop = s->current;
		uint64_t n = 0;
		for (struct tt__chunk *c = head; c && c != stop; c = c->next, n++)
			last = c;
		if (n)
			s->first = stop;
		/* (the current chunk: up to where its thread reserved; what it writes now
		 * is left to the next pass) */
		const struct tt_record *now = stop ? tt__chunk_end(s, stop) : NULL;
		tt_os_unlock(&tt__run_lock);
		tt__stream_out(s, n ? head : NULL, n ? stop : NULL);
		if (stop) {
			const struct tt_record *begin = (const struct tt_record *)(stop + 1);
			const struct tt_record *end = tt_written_end(begin, now);
			tt__stream_records(s, stop, s->hot->filters ? tt__before_enters(begin, end) : end);
		}
		if (!n)
			continue;
		/* Zeroed before they are given back: a thread's reader (this pass, a dump)
		 * takes a chunk's records up to the last one written, which tt_written_end
		 * finds by the zeros after it; a chunk's old records there were taken as
		 * written (a COUNTER followed by an old END, an old VALUE after a SCOPE). */
		for (struct tt__chunk *c = head; c != stop; c = c->next)
			memset(c + 1, 0, TT__CHUNK_SIZE - sizeof *c);
		tt_os_lock(&tt__run_lock);
		last->next = tt__run.free_chunks;
		tt__run.free_chunks = head;
		s->chunks -= n;
		tt_os_unlock(&tt__run_lock);
	}
	tt__out_flush(&tt__stream.out);
	if (tt_os_monotonic_ns() - tt__stream.refreshed_ns >= TT__STREAM_PERIOD_NS)
		tt__stream_refresh(0);
}

static void *tt__stream_main(void *unused)
{
	(void)unused;
	for (;;) {
		uint32_t wanted = __atomic_load_n(&tt__run.stream_wanted, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&tt__stream.ending, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&tt__run.ending, __ATOMIC_ACQUIRE))
			return NULL;
		tt_os_lock(&tt__stream.busy);
		int finished = tt__stream.finished;
		if (!finished)
			tt__stream_pass();
		tt_os_unlock(&tt__stream.busy);
		if (finished)
			return NULL;
		tt_os_wait(&tt__run.stream_wanted, wanted, TT__STREAM_PERIOD_NS);
	}
}


int tt__stream_start(const char *path)
{
	snprintf(tt__stream.path, sizeof tt__stream.path, "%s", path);
	/* Made apart and held while it is written (another process of the same name puts
	 * its file beside it), its beginning written before it has the name, as Linux's
	 * (writer/output.c's tt__create_run_file); a device in place. */
	struct tt_os_new_file made = {0};
	struct tt_os_file opened;
	int in_place = tt__stream.in_place = tt_os_is_device(tt__stream.path);
	int err = in_place ? tt_os_file_open(tt__stream.path, &opened) :
			     tt_os_file_new(tt__stream.path, 0, &opened, &made);
	if (err)
		return err;
	if (!in_place)
		err = tt_os_file_hold(&opened);
	tt_os_file_sink(&tt__stream.file, opened);
	tt__out_to(&tt__stream.out, &tt__stream.file.sink);
	struct tt_file_header h;
	tt__stream_header(&h, 0);
	tt__out(&tt__stream.out, &h, sizeof h);
	tt__stream.refreshed_ns = tt_os_monotonic_ns();
	tt__out_process(&tt__stream.out);
	if (!err)
		err = tt__stream_modules();
	tt__out_flush(&tt__stream.out);
	if (!err && tt__stream.out.err)
		err = tt__stream.out.err;
	if (!err && !in_place)
		err = tt__place_run(&made, tt__stream.path, sizeof tt__stream.path);
	if (!err)
		err = tt__thread_start(tt__stream_main);
	if (err) {
		tt_os_file_close(&tt__stream.file.file);
		if (!in_place && !made.tmp[0]) /* (placed) */
			tt_os_remove(tt__stream.path);
		tt_os_file_discard(&made);
	}
	return err;
}

/* tt__run_lock held: after the file so far, on `out` (the file itself, or a copy), each
 * thread's records of its run of drops still open, its THREAD_TOTALS (and its
 * switches, its counters) and END, so that it reads as a complete run; with `final`,
 * the file's own end (its erased calls too, the threads' gaps then closed). */
static void tt__stream_end(struct tt__out *out, int final)
{
	struct tt_end_info end_info = {0};
	for (struct tt__slot *s = tt__run.first; s; s = s->next) {
		if (final)
			tt__stream_describe(s);
		else if (!s->described) /* (nothing of it in the file) */
			continue;
		struct tt_record gap[2];
		size_t n = tt_gap_records(&s->gap, gap);
		if (n)
			tt__out_events(out, s->index, s->written, gap, gap + n);
		uint64_t records = s->written + n;
		if (final) {
			s->written = records;
			s->gap.count = 0;
		}
		struct tt__states states;
		tt__thread_states(s, &states);
		uint64_t dropped = tt__out_thread_info(out, TT_SEC_THREAD_TOTALS, s, records, states.states != NULL);
		tt__out_thread_states(out, s, &states);
		if (final) /* (a copy's, as Linux's: the functions they name are not described) */
			tt__out_filtered(out, s);
		tt__end_add(&end_info, records, dropped);
	}
	end_info.sites = tt__stream.sites.count - tt__stream.sites.funcs;
	tt__out_end(out, &end_info);
}

/* busy held: the copy tt_dump(path) asks for, onto `out`: a header with the end anchor
 * taken now, the file's sections so far (read back from it), and its end as it would
 * be now. */
static int tt__stream_copy(struct tt__out *out, void *unused)
{
	(void)unused;
	static char buf[1 << 16]; /* (busy held) */
	struct tt_file_header h;
	tt__stream_header(&h, 0);
	tt__out(out, &h, sizeof h);
	/* (through the stream's own handle, as Linux's reads its descriptor: the file's
	 * name may be another's by now, or none) */
	uint64_t at = sizeof h, size = tt__stream.out.offset;
	while (at < size && !out->err) {
		size_t want = size - at < sizeof buf ? (size_t)(size - at) : sizeof buf;
		int64_t got = tt_os_file_read_at(&tt__stream.file.file, buf, want, at);
		if (got <= 0)
			return got < 0 ? (int)got : -EIO; /* (the file cut short under us) */
		tt__out(out, buf, (size_t)got);
		at += (uint64_t)got;
	}
	tt_os_lock(&tt__run_lock);
	tt__stream_end(out, 0);
	tt_os_unlock(&tt__run_lock);
	return 0;
}

int tt__stream_flush(const char *path)
{
	static struct tt__out copy; /* (busy held) */
	tt_os_lock(&tt__stream.busy);
	int err = -ECANCELED; /* (the stream ended, as on Linux: the file is whole, and closed) */
	if (!tt__stream.finished) {
		tt__stream_pass();
		err = tt__stream.out.err;
		if (!err && path)
			err = tt__write_file_with(path, &copy, tt__stream_copy, NULL);
	}
	tt_os_unlock(&tt__stream.busy);
	return err;
}

/* busy for the end, waited for a bounded time: ExitProcess ends every other thread
 * before a DLL's atexit runs, and a tt-stream ended while it wrote never lets it go
 * (nor the FILE's own lock: the file then stays as it was, up to its last whole
 * section, which the converter reads). tt-stream, told, takes busy no more: threads
 * that keep recording wake it pass after pass, and a wait that lost every race for
 * busy to it gave the end up. */
static int tt__stream_take(void)
{
	__atomic_store_n(&tt__stream.ending, 1, __ATOMIC_RELEASE);
	if (tt__take_within(&tt__stream.busy))
		return 1;
	fprintf(stderr, "ticktrace: %s: tt-stream was ended as it wrote (the process exiting): the "
			"file ends at its last whole section, without its end\n", tt__stream.path);
	return 0;
}

int tt__stream_finish(int crash_signal)
{
	/* (a crash in tt-stream, or in the slow path: the file as it stands) */
	if (!crash_signal) {
		if (!tt__stream_take())
			return -EDEADLK;
		/* (not under tt__run_lock: listing the modules waits for the loader, whose
		 * threads may record; nor after a crash, which may be the loader's) */
		if (!tt__stream.finished)
			tt__stream_modules();
		tt_os_lock(&tt__run_lock);
	} else if (!tt__stream_take()) {
		return -EDEADLK;
	} else if (!tt__take_within(&tt__run_lock)) {
		tt_os_unlock(&tt__stream.busy);
		return -EDEADLK;
	}
	int err = 0;
	if (!tt__stream.finished) {
		tt__stream.finished = 1;
		struct tt__out *out = &tt__stream.out;
		/* Every chunk left, the current ones as far as their threads got (they are
		 * not given back: threads may record until the process ends). */
		for (struct tt__slot *s = tt__run.first; s; s = s->next) {
			if (!s->exited)
				tt__chunk_close(s);
			tt__stream_out(s, s->first, NULL);
		}
		for (struct tt__slot *s = tt__run.first; s; s = s->next)
			if (tt__filtered_sites(&tt__stream.sites, &tt__stream.fresh, s) < 0 && !out->err)
				out->err = -ENOMEM;
		if (tt__stream.fresh.count) { /* (the functions only erased calls name) */
			tt__out_sites(out, &tt__stream.fresh);
			tt__site_set_clear(&tt__stream.fresh);
		}
		tt__stream_end(out, 1);
		tt__out_flush(out);
		tt__stream_refresh(crash_signal);
		err = out->err;
		int closed = tt_os_file_close(&tt__stream.file.file);
		if (!err)
			err = closed;
	}
	tt_os_unlock(&tt__run_lock);
	tt_os_unlock(&tt__stream.busy);
	return err;
}
