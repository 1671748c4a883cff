/* Mode stream: a drain thread writes every thread's full chunks into the raw file
 * while the program runs, and recycles them, so that memory stays bounded however
 * long the run. The file is created at start under its final name with the
 * TT_FILE_STREAMED flag, by the drain in a table of descriptors of its own (the
 * program's dup2 or close of any number never reaches it, even between the drain's
 * check and its write); sections are appended as records are drained:
 *
 *   header | PROCESS | MODULES | THREAD (tt-drain) | { UNLOADED (MODULES) | MODULES
 *          | SITES | THREAD | EVENTS }... | THREAD_TOTALS... | MODULES | END
 *
 * (MODULES again as libraries are loaded, UNLOADED as they go: named after a kill.)
 *
 * With TICKTRACE_SPIKES, the records also go through the spike detector (spikes.c)
 * as they are written.
 *
 * A SITES section describes the sites that the EVENTS after it use for the first
 * time; a thread's THREAD section comes before its first EVENTS, and its
 * THREAD_TOTALS (events, drops, final name) once it exited and all its records were
 * written, or at the end. Every TT__STREAM_PERIOD_NS the drain also writes what
 * threads recorded so far into their current chunks, and refreshes the header's end
 * anchor, so that a run killed by SIGKILL leaves a file the converter reads up to
 * its last complete section.
 *
 * The drain thread never records: it is not a recording thread, and appears in the
 * trace as a thread of its own flagged TT_THREAD_RUNTIME. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modes/modes.h"

/* Partial chunks are written, and the end anchor refreshed, this often. */
#define TT__STREAM_PERIOD_NS 200000000
/* A full chunk waits this long for an event whose thread does not write it. */
#define TT__STREAM_STALL_NS 2000000000

/* The drain sleeps this long when it found nothing to write; a thread whose chunks
 * fill up wakes it sooner. */
#define TT__STREAM_SLEEP_NS 10000000

/* Threads that exited and whose slots (2.8 KB each) and last events (compacted) wait
 * for the drain: past this many, an exiting thread waits too, so that a drain held up
 * does not leave memory growing with every thread the program starts and ends; for
 * TT__STREAM_STALL_NS at most while the drain retires none (a reader that takes
 * nothing: the program never waits long on it). */
#define TT__STREAM_EXITED_MAX 1024

/* Kept reserved on disk past what is written, so that the file's end (every
 * thread's totals, the modules, END) fits when the disk fills: this much, and this
 * much more per thread (its THREAD section and its totals). */
#define TT__STREAM_TAIL_BYTES (UINT64_C(256) << 10)
#define TT__STREAM_TAIL_PER_THREAD 256
/* Room asked for beside a section's records: the SITES before them, and headers. */
#define TT__STREAM_SECTION_SLACK (UINT64_C(64) << 10)
/* Reserved ahead of need, in steps this large. */
#define TT__STREAM_RESERVE_STEP (UINT64_C(4) << 20)

#define TT__STREAM_PACK_RECORDS (TT__CHUNK_SIZE / sizeof(struct tt_record))

struct tt__stream {
	struct tt__out *out;
	char path[4096];
	struct tt_os_thread thread;
	int running;
	struct tt__site_set sites, fresh;
	uint64_t modules_changes; /* tt_os_modules_changes() when MODULES was last written */
	struct tt_end_info end;
	struct tt__slot self; /* the drain thread, as the file shows it */
	uint32_t wake_seq;    /* (tt_os_wait's word) bumped to wake the drain */
	int sleeping;
	int finishing;        /* at exit: write everything, then END, and stop */
	/* A dump: requests and completions of a pass that writes everything, and
	 * the copy it asks for (one dump at a time: dump_lock) */
	struct tt__lock lock, dump_lock;
	uint32_t done_seq; /* (tt_os_wait's word) bumped, under lock, as a dump is done
			    * or the stream finishes */
	uint64_t flush_requested, flush_done;
	const char *dump_path;
	int dump_err;
	int64_t last_period_ns;
	/* The disk is full (-errno): from then on records are counted as dropped, not
	 * written. no_reserve: the file system cannot reserve space (fallocate). */
	int disk_full;
	int no_reserve;
	uint64_t reserved_to; /* the file's blocks are reserved up to this offset */
	int in_place; /* a device or FIFO: written in order, never rewritten */
	/* The file is made by the drain, in a table of descriptors of its own where it can
	 * (own_table): no dup2 or close of the program's ever reaches its number, even
	 * between a check and the write it allows. made_seq (tt_os_wait's word) is bumped
	 * once it is made or could not be (made_err); closed: the drain's close at the end. */
	int own_table;
	uint32_t made_seq;
	int made_err;
	int closed;
	int ended; /* the file ended: END written, closed */
	int said_taken; /* that the program took the file's descriptor */
	uint64_t lost_events; /* events of records never written (tt__stream_lose) */
	int64_t exited;       /* threads exited whose slots are not retired yet */
	uint32_t retired_seq; /* (tt_os_wait's word) bumped as the drain retires slots */
	int exits_unheld;     /* an exit waited in vain: none wait until one is retired */
	/* Records go to the file packed, a quarter of their bytes or less, so that the
	 * drain keeps up with threads that record faster than the disk takes 16 bytes an
	 * event; a chunk's worth at a time. */
	uint8_t packed[TT__STREAM_PACK_RECORDS * TT_PACKED_MAX_RECORD];
};

static struct tt__stream tt__stream;

/* Lock held: wakes every thread waiting for a dump (tt__stream_flush). */
static void tt__stream_done(struct tt__stream *st)
{
	__atomic_add_fetch(&st->done_seq, 1, __ATOMIC_RELEASE);
	tt_os_wake_all(&st->done_seq);
}

static void tt__stream_kick(struct tt__stream *st)
{
	__atomic_add_fetch(&st->wake_seq, 1, __ATOMIC_SEQ_CST);
	tt_os_wake(&st->wake_seq);
}

static void tt__stream_wake(void)
{
	if (__atomic_load_n(&tt__stream.sleeping, __ATOMIC_SEQ_CST))
		tt__stream_kick(&tt__stream);
}

void tt__stream_chunk_full(struct tt__slot *slot)
{
	/* Waking the drain costs the thread a system call: once a quarter of its budget
	 * waits is soon enough, and the drain also wakes by itself. */
	if (4 * (slot->chunks - 1) >= tt__config.chunk_budget)
		tt__stream_wake();
}

void tt__stream_thread_exited(struct tt__slot *slot)
{
	(void)slot; /* the drain writes its last records out and recycles the slot */
	struct tt__stream *st = &tt__stream;
	int64_t waiting = __atomic_add_fetch(&st->exited, 1, __ATOMIC_SEQ_CST);
	tt__stream_wake();
	if (waiting <= TT__STREAM_EXITED_MAX || !st->running)
		return;
	int64_t until = tt_os_monotonic_ns() + TT__STREAM_STALL_NS;
	for (uint32_t seen = __atomic_load_n(&st->retired_seq, __ATOMIC_ACQUIRE);;) {
		uint32_t seq = __atomic_load_n(&st->retired_seq, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&st->exited, __ATOMIC_SEQ_CST) <= TT__STREAM_EXITED_MAX ||
		    __atomic_load_n(&st->exits_unheld, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&st->finishing, __ATOMIC_ACQUIRE))
			return;
		int64_t now = tt_os_monotonic_ns();
		if (seq != seen) /* (the drain goes on: so does the wait) */
			until = now + TT__STREAM_STALL_NS;
		seen = seq;
		if (now >= until) {
			__atomic_store_n(&st->exits_unheld, 1, __ATOMIC_RELEASE);
			return;
		}
		tt__stream_kick(st);
		tt_os_wait(&st->retired_seq, seq, until - now);
	}
}

/* Drain thread: `n` exited threads' slots retired; the exits that wait go on. */
static void tt__stream_retired(struct tt__stream *st, int64_t n)
{
	__atomic_sub_fetch(&st->exited, n, __ATOMIC_SEQ_CST);
	__atomic_store_n(&st->exits_unheld, 0, __ATOMIC_RELEASE);
	__atomic_add_fetch(&st->retired_seq, 1, __ATOMIC_RELEASE);
	tt_os_wake_all(&st->retired_seq);
}

/* The file header again, with a fresh end anchor: a file cut short by a crash
 * converts with the clock measured until the last refresh. */
static void tt__stream_refresh_header(struct tt__stream *st)
{
	struct tt_file_header header;
	if (st->in_place)
		return;
	tt__file_header(&header, TT_FILE_STREAMED);
	tt__background_io(1);
	/* (checked last before the call: fds.c) */
	int64_t written = tt__out_own(st->out) ?
				  -1 :
				  tt_os_file_write_at(&tt__fd_out(st->out)->file.file, &header, sizeof header, 0);
	tt__background_io(0);
	if (written != (int64_t)sizeof header && !st->out->err)
		st->out->err = -EIO;
}

/* Whether `bytes` more can be written with the file's end still fitting after them:
 * reserved on disk (fallocate, keeping the file's size) before they are written. Once
 * not, the disk is full for the rest of the run, and it is said once. */
/* Reserves the file's blocks up to offset `to`; 0 or -1 with errno. */
static int tt__stream_reserve(struct tt__stream *st, uint64_t to)
{
	int rc;
	tt__background_io(1);
	do /* (checked last before each call: fds.c) */
		rc = tt__out_own(st->out) ? -EBADF :
		     tt_os_file_reserve_past(&tt__fd_out(st->out)->file.file, st->out->offset, to);
	while (rc == -EINTR);
	tt__background_io(0);
	if (rc == 0)
		st->reserved_to = to;
	errno = -rc;
	return rc ? -1 : 0;
}

static int tt__stream_room(struct tt__stream *st, uint64_t bytes)
{
	if (st->disk_full || st->out->err)
		return 0;
	if (st->no_reserve)
		return 1;
	uint64_t tail = TT__STREAM_TAIL_BYTES + TT__STREAM_TAIL_PER_THREAD * st->end.threads;
	uint64_t need = st->out->offset + bytes + TT__STREAM_SECTION_SLACK + tail;
	if (need <= st->reserved_to)
		return 1;
	/* A step ahead, so that many small sections (threads that come and go) make few
	 * system calls; near a full disk, just what is needed. */
	if (tt__stream_reserve(st, need + TT__STREAM_RESERVE_STEP) == 0 ||
	    ((errno == ENOSPC || errno == EDQUOT) && tt__stream_reserve(st, need) == 0))
		return 1;
	if (errno == EBADF) /* the program took the descriptor (said once the pass ends) */
		return 0;
	if (errno != ENOSPC && errno != EDQUOT) { /* a file system, or a device, that cannot */
		st->no_reserve = 1;
		return 1;
	}
	st->disk_full = -errno;
	fprintf(tt__err, "ticktrace: %s: %s: events from now on are counted as dropped (in the "
		"file: cause 'disk behind'), the file ends with every thread's counts\n", st->path,
		strerror(errno));
	return 0;
}

/* Records of a slot that will never be written: their events count as dropped (a
 * run of drops already counted, TT_REC_DROPPED, is not an event). */
static void tt__stream_lose(struct tt__stream *st, struct tt__slot *slot,
			    const struct tt_record *from, const struct tt_record *to)
{
	uint64_t events = 0;
	for (const struct tt_record *r = from; r < to; r++)
		events += TT_RECORD_IS_EVENT(TT_RECORD_KIND(r->word));
	__atomic_add_fetch(&slot->dropped[TT_DROP_BEHIND], events, __ATOMIC_RELAXED);
	__atomic_add_fetch(&slot->lost_by_output, events, __ATOMIC_RELAXED);
	st->lost_events += events;
}

/* A slot's THREAD section, the first time. */
static void tt__stream_thread_section(struct tt__stream *st, struct tt__slot *slot)
{
	if (slot->streamed)
		return;
	uint64_t ignored = 0;
	tt__out_thread_info(st->out, TT_SEC_THREAD, slot, 0, &ignored);
	st->end.threads++;
	slot->streamed = 1;
}

/* The sites and functions records or tables named first since the last look: SITES
 * (and FUNCS) before the sections that need them. */
static void tt__stream_fresh_sites(struct tt__stream *st)
{
	if (!st->fresh.count)
		return;
	tt__out_sites(st->out, &st->fresh);
	st->end.sites += st->fresh.count - st->fresh.funcs;
	tt__site_set_clear(&st->fresh);
}

/* The records of a slot from `from` on that its thread has written, up to `end`:
 * the sites they use first, its THREAD section the first time, then the EVENTS.
 * Returns where it stopped: at a record not yet written (one being written now, or
 * one whose event a signal handler interrupted between reserving and writing it). */
static const struct tt_record *tt__stream_records(struct tt__stream *st, struct tt__slot *slot,
						  const struct tt_record *from,
						  const struct tt_record *end, int stop_unwritten)
{
	const struct tt_record *written = tt__sites_add(&st->sites, &st->fresh, from, end, stop_unwritten,
							 tt__generation);
	if (!written) {
		st->out->err = -ENOMEM;
		return from;
	}
	/* (The records of one chunk, or fewer.) */
	if (written - from > (ptrdiff_t)TT__STREAM_PACK_RECORDS)
		written = from + TT__STREAM_PACK_RECORDS;
	size_t packed = tt__pack_records(st->packed, from, written);
	uint64_t bytes = sizeof(struct tt_events_info) + sizeof(struct tt_packed_info) + packed;
	if (written > from && !tt__stream_room(st, bytes)) {
		/* (No later record is written either: its sites need no description.) */
		tt__stream_lose(st, slot, from, written);
		tt__site_set_clear(&st->fresh);
		from = written;
	}
	tt__stream_fresh_sites(st);
	tt__stream_thread_section(st, slot);
	if (written > from) {
		tt__out_events_packed(st->out, slot, slot->written, (uint64_t)(written - from),
				      st->packed, packed);
		slot->written += (uint64_t)(written - from);
		st->end.records += (uint64_t)(written - from);
		tt__spikes_feed(slot, from, written);
	}
	return written;
}

/* Writes a slot's full chunks and recycles them; with `partial`, also what its
 * current chunk holds so far (of a thread that goes on, not the calls it entered
 * last, which it may still erase: tt__settled_end). Returns how many chunks it
 * recycled. */
static int tt__stream_drain_chunks(struct tt__stream *st, struct tt__slot *slot, int partial,
				   int exited)
{
	for (int recycled = 0;; recycled++) {
		struct tt__chunk *chunk = __atomic_load_n(&slot->first, __ATOMIC_ACQUIRE);
		struct tt__chunk *next = __atomic_load_n(&chunk->next, __ATOMIC_ACQUIRE);
		if (!next && !partial)
			return recycled;
		const struct tt_record *begin = (const struct tt_record *)(chunk + 1), *end;
		if (next) /* its size says where its reserved records end */
			end = (const struct tt_record *)((const char *)chunk + chunk->size);
		else
			tt__chunk_extent(slot, chunk, &begin, &end);
		if (!next && !exited)
			end = tt__settled_end(slot, chunk, begin, end);
		const struct tt_record *from = slot->drained ? slot->drained : begin;
		slot->drained = tt__stream_records(st, slot, from, end, 1);
		/* A full chunk is recycled once all its events are written. One whose event
		 * stays unwritten (a signal handler that interrupted it jumped away with
		 * siglongjmp) is written as it is after TT__STREAM_STALL_NS (or at the end),
		 * the hole a PAD record, and left out of use, so that the thread's next chunks
		 * go on. */
		int abandon = 0;
		if (next && slot->drained != end) {
			int64_t now = tt_os_monotonic_ns();
			if (!slot->stalled_ns)
				slot->stalled_ns = now;
			abandon = now - slot->stalled_ns > TT__STREAM_STALL_NS ||
				  __atomic_load_n(&st->finishing, __ATOMIC_ACQUIRE);
			if (abandon)
				slot->drained = tt__stream_records(st, slot, slot->drained, end, 0);
		}
		if (!next || slot->drained != end)
			return recycled;
		slot->stalled_ns = 0;
		tt__chunk_drained(slot, !abandon);
		slot->drained = NULL;
	}
}

/* How a file ends once its threads' totals are out: the drain thread's totals, the
 * modules loaded now, END with `end`. Returns 0 or the -errno of reading the modules;
 * write errors stay in out->err. */
static int tt__stream_out_end(struct tt__stream *st, struct tt__out *out, struct tt_end_info *end)
{
	tt__out_thread_info(out, TT_SEC_THREAD_TOTALS, &st->self, 0, &end->dropped);
	int err = tt__out_modules(out);
	tt__out_end(out, end);
	tt__out_flush(out);
	return err;
}

/* A dump with a path: the file so far, then what its end would say now (every thread's
 * open gap of drops and totals, the modules, END), so that the copy reads as a
 * complete run. Runs in the drain thread, after a pass that wrote everything. */
static int tt__stream_snapshot(struct tt__out *out, void *arg)
{
	struct tt__stream *st = arg;
	tt__out_file_header(out, TT_FILE_STREAMED);
	uint64_t size = st->out->offset;
	out->offset = size;
	for (uint64_t at = sizeof(struct tt_file_header); at < size && !out->err;) {
		tt__out_flush(out);
		size_t want = size - at < sizeof out->buf ? (size_t)(size - at) : sizeof out->buf;
		if (tt__out_own(st->out))
			return st->out->err;
		int64_t n = tt_os_file_read_at(&tt__fd_out(st->out)->file.file, out->buf, want, at);
		if (n <= 0)
			return n < 0 ? (int)n : -EIO;
		out->len = (size_t)n;
		at += (uint64_t)n;
	}
	struct tt_end_info end = st->end;
	/* (A thread not in the file yet has recorded nothing that was kept.) */
	for (struct tt__slot *slot = tt__registry_head(); slot;
	     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
		if (!slot->streamed)
			continue;
		struct tt_record gap[2];
		size_t gap_records = tt__gap_records(slot, gap);
		if (gap_records)
			tt__out_events(out, slot->index, slot->written, gap, gap + gap_records);
		end.records += gap_records;
		tt__out_thread_info(out, TT_SEC_THREAD_TOTALS, slot, slot->written + gap_records,
				    &end.dropped);
	}
	int err = tt__stream_out_end(st, out, &end);
	return err ? err : out->err;
}

/* A thread that exited and whose records are all written: its totals go out now. */
static void tt__stream_retire_slot(struct tt__stream *st, struct tt__slot *slot)
{
	struct tt_record gap[2];
	size_t gap_records = tt__gap_records(slot, gap);
	if (gap_records || !slot->streamed)
		tt__stream_records(st, slot, gap, gap + gap_records, 1);
	tt__out_sched(st->out, slot, 1, tt__spikes_states, tt__spikes_counters, NULL);
	/* the calls its exit hooks erased (TICKTRACE_MIN_DUR) and those it dropped, by
	 * function: named first, as no record of theirs may have been */
	if (tt__filtered_names(&st->sites, &st->fresh, slot) < 0)
		st->out->err = -ENOMEM;
	tt__stream_fresh_sites(st);
	tt__out_filtered(st->out, slot, false);
	tt__out_filtered(st->out, slot, true);
	tt__out_thread_info(st->out, TT_SEC_THREAD_TOTALS, slot, slot->written, &st->end.dropped);
	tt__spikes_retire(slot);
}

/* The program closed the file's descriptor (closefrom, close_range, a loop of
 * close) or put a file of its own at its number, and the file is not found again
 * by its name: said once; from then on its events are counted as dropped. */
static void tt__stream_say_taken(struct tt__stream *st)
{
	if (st->out->err != -EBADF || st->said_taken)
		return;
	st->said_taken = 1;
	fprintf(tt__err, "ticktrace: %s: the program closed the trace's descriptor and the file "
		"could not be kept again (not there by its name, or its new number taken too): the "
		"trace ends here, events from now on are counted "
		"as dropped\n", st->path);
}

/* One pass over the threads; returns how many chunks it recycled. */
static int tt__stream_pass(struct tt__stream *st, int partial)
{
	int recycled = 0, retired = 0;
	struct tt__slot *prev = NULL, *next;
	/* libraries unloaded or loaded since the last pass, before any record made after it */
	int err = tt__out_modules_since(st->out, &st->sites, &st->modules_changes);
	if (err && !st->out->err)
		st->out->err = err;
	tt__sched_drain(NULL); /* (as a dump: threads not asked for yet are asked now) */
	for (struct tt__slot *slot = tt__registry_head(); slot; slot = next) {
		next = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE);
		/* Not while its thread, exiting, compacts its last chunk: next pass. */
		int idle = TT__DRAIN_IDLE;
		if (!__atomic_compare_exchange_n(&slot->drain_state, &idle, TT__DRAIN_READING, 0,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			prev = slot;
			continue;
		}
		int exited = __atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_EXITED;
		/* Its states up to now first: the spike detector needs them before the
		 * records they cover. */
		if (slot->sched.on || __atomic_load_n(&tt__counters_on, __ATOMIC_RELAXED)) {
			tt__stream_thread_section(st, slot);
			tt__out_sched(st->out, slot, 1, tt__spikes_states, tt__spikes_counters, NULL);
		}
		recycled += tt__stream_drain_chunks(st, slot, partial || exited, exited);
		const struct tt_record *begin, *end;
		tt__chunk_extent(slot, slot->first, &begin, &end);
		/* (its exit's time not set yet: the spike detector closes its open scopes there) */
		if (!exited || slot->first->next || slot->drained != end || tt__thread_exit_ns(slot) < 0) {
			__atomic_store_n(&slot->drain_state, TT__DRAIN_IDLE, __ATOMIC_RELEASE);
			prev = slot;
			continue;
		}
		/* All written: its totals go out, and its chunk and slot serve new threads. */
		tt__stream_retire_slot(st, slot);
		tt__chunk_drained(slot, 1);
		tt__drops_retire(slot); /* (said at exit, gone from the registry) */
		tt__registry_recycle(prev, slot);
		recycled++;
		retired++;
	}
	if (retired)
		tt__stream_retired(st, retired);
	tt__out_flush(st->out);
	tt__stream_say_taken(st);
	return recycled;
}

/* At exit: every thread's records and totals, then END. */
static void tt__stream_end(struct tt__stream *st)
{
	tt__switches_flush(); /* (every switch so far where the pass's drain finds it) */
	tt__stream_pass(st, 1);
	for (struct tt__slot *slot = tt__registry_head(); slot;
	     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
		/* Its last chunk the drain's for good: a thread still exiting compacts it no
		 * more (a malloc'd copy made after its slot is retired is never written nor
		 * freed; LeakSanitizer saw one). A compaction under way ends first. */
		int idle;
		do
			idle = TT__DRAIN_IDLE;
		while (!__atomic_compare_exchange_n(&slot->drain_state, &idle, TT__DRAIN_READING, 0,
						    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED) &&
		       !tt_os_others_ended()); /* (a compaction ended where it was: taken over) */
		__atomic_store_n(&slot->drain_state, TT__DRAIN_READING, __ATOMIC_RELAXED);
		tt__stream_retire_slot(st, slot);
	}
	if (tt__turned_off_names(&st->sites, &st->fresh) < 0)
		st->out->err = -ENOMEM;
	tt__stream_fresh_sites(st);
	tt__out_turned_off(st->out);
	int err = tt__stream_out_end(st, st->out, &st->end);
	if (err && !st->out->err)
		st->out->err = err;
	tt__stream_refresh_header(st);
	/* The blocks reserved past the end go back to the disk. */
	if (!st->in_place && st->reserved_to > st->out->offset && !st->out->err &&
	    !tt__out_own(st->out))
		st->out->err = tt_os_file_resize(&tt__fd_out(st->out)->file.file, st->out->offset);
	/* (in the drain's table, which holds it) */
	st->closed = tt__fd_close(&tt__fd_out(st->out)->file);
	st->ended = 1;
	tt__spikes_finish();
}

static int tt__stream_make_file(struct tt__stream *st);

static void *tt__stream_main(void *arg)
{
	struct tt__stream *st = arg;
	tt__thread_running("tt-drain");
	st->self.tid = tt_os_thread_id();
	/* As its passes: a fork waits meanwhile, never finding it inside malloc or
	 * dl_iterate_phdr's lock, which the child would inherit held (a forked child's
	 * drain makes its file while the child goes on, and forks: tmux's server and its
	 * panes hung there, their drains waiting for that lock forever) */
	int err = 0;
	if (TT_OS_START_WAITS) { /* (else the opener made it) */
		tt__background_work(1);
		err = tt__stream_make_file(st);
		tt__background_work(0);
	}
	__atomic_store_n(&st->made_err, err, __ATOMIC_RELAXED);
	__atomic_add_fetch(&st->made_seq, 1, __ATOMIC_RELEASE);
	tt_os_wake_all(&st->made_seq);
	if (err && !tt__forked)
		return NULL; /* (the opener says it, and the run records nothing) */
	if (err) {
		/* A forked child's opener does not wait (a fork's child handler): said here,
		 * and its events counted as lost, as a file's that cannot be written. */
		fprintf(tt__err, "ticktrace: the child process %d cannot stream its trace to %s (%s)\n",
			(int)tt_os_process_id(), st->path, strerror(-err));
		st->out->err = err;
	}
	uint64_t ignored = 0;
	tt__out_thread_info(st->out, TT_SEC_THREAD, &st->self, 0, &ignored);
	st->end.threads++;
	for (;;) {
		uint32_t seq = __atomic_load_n(&st->wake_seq, __ATOMIC_SEQ_CST);
		tt__lock(&st->lock);
		uint64_t flush = st->flush_requested;
		const char *dump_path = st->dump_path;
		int finishing = st->finishing;
		tt__unlock(&st->lock);
		tt__background_work(1);
		struct tt_os_writing writing;
		tt_os_writing_begin(&writing);
		if (finishing) {
			tt__stream_end(st);
			tt_os_writing_end(&writing);
			tt__background_work(0);
			return NULL;
		}
		int64_t now = tt_os_monotonic_ns();
		int periodic = now - st->last_period_ns >= TT__STREAM_PERIOD_NS;
		int recycled = tt__stream_pass(st, periodic || flush != st->flush_done);
		if (periodic) {
			st->last_period_ns = now;
			tt__stream_refresh_header(st);
		}
		int dump_err = 0;
		if (flush != st->flush_done && dump_path)
			dump_err = tt__write_file_with(dump_path, tt__stream_snapshot, st);
		tt_os_writing_end(&writing);
		tt__background_work(0);
		if (flush != st->flush_done) {
			tt__lock(&st->lock);
			st->flush_done = flush;
			st->dump_err = dump_err;
			tt__stream_done(st);
			tt__unlock(&st->lock);
			continue;
		}
		if (recycled)
			continue; /* more may have filled meanwhile */
		__atomic_store_n(&st->sleeping, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&st->wake_seq, __ATOMIC_SEQ_CST) == seq) {
			tt_os_wait(&st->wake_seq, seq, TT__STREAM_SLEEP_NS);
		}
		__atomic_store_n(&st->sleeping, 0, __ATOMIC_SEQ_CST);
	}
}

/* What is known at start: the header, PROCESS, MODULES. */
static int tt__stream_begin_file(struct tt__out *out, void *arg)
{
	struct tt__stream *st = arg;
	struct tt_os_writing writing;
	tt_os_writing_begin(&writing);
	tt__out_file_header(out, TT_FILE_STREAMED);
	tt__out_process(out);
	st->modules_changes = tt_os_modules_changes();
	int err = tt__out_modules(out);
	tt__out_flush(out);
	tt_os_writing_end(&writing);
	return err ? err : out->err;
}

/* The drain, first: its table of descriptors (the spike log it writes kept in it),
 * then the file, created with what is known at start written. */
static int tt__stream_make_file(struct tt__stream *st)
{
	struct tt__fd *log = tt__spikes_log();
	st->own_table = tt__fd_private_table(&log, log ? 1 : 0) == 0;
	/* A new file (read too, for the copies a dump with a path makes) put in place
	 * once its beginning is written; a device or FIFO written in place, as it comes
	 * (no header refresh). */
	int err = tt__create_run_file(st->path, sizeof st->path, &st->in_place, st->out,
				      tt__stream_begin_file, st);
	/* (where the name given cannot take it, the default name, as the exit's trace) */
	if (err && tt__out_fall_back(err, "the stream", st->path, sizeof st->path) == 0) {
		tt__fd_out_init(tt__fd_out(st->out));
		err = tt__create_run_file(st->path, sizeof st->path, &st->in_place, st->out,
					  tt__stream_begin_file, st);
	}
	if (err)
		return err;
	/* (Found again by its name if the program closes it, where the drain shares its
	 * table: not a device's.) */
	tt__fd_out(st->out)->path = st->in_place ? NULL : st->path;
	if (!st->in_place)
		tt__list_written(st->path);
	st->last_period_ns = tt_os_monotonic_ns();
	return 0;
}

/* The drain thread, which makes the file: waited for, but in a forked child (its
 * child handler), whose drain says itself what it could not make. */
static int tt__stream_open(struct tt__stream *st)
{
	int err = tt__default_path(st->path, sizeof st->path);
	if (err)
		return err;
	struct tt__fd_out *file = malloc(sizeof *file);
	if (!file)
		return -ENOMEM;
	tt__fd_out_init(file);
	st->out = &file->out;
	snprintf(st->self.name, sizeof st->self.name, "tt-drain");
	st->self.named = 1;
	st->self.index = UINT32_MAX; /* never a recording thread's */
	st->self.flags = TT__SLOT_RUNTIME;
	st->lock = (struct tt__lock)TT__LOCK_INIT(TT__LOCK_STREAM);
	st->dump_lock = (struct tt__lock)TT__LOCK_INIT(TT__LOCK_STREAM_DUMP);
	bool wait = TT_OS_START_WAITS && !tt__forked;
	if (!TT_OS_START_WAITS)
		err = tt__stream_make_file(st);
	if (!err)
		err = tt__start_thread(&st->thread, tt__stream_main, st, !tt__forked);
	while (!err && wait && !__atomic_load_n(&st->made_seq, __ATOMIC_ACQUIRE))
		tt_os_wait(&st->made_seq, 0, TT_OS_FOREVER);
	if (!err && wait && (err = __atomic_load_n(&st->made_err, __ATOMIC_RELAXED)))
		tt_os_thread_join(&st->thread);
	if (err) {
		free(st->out);
		st->out = NULL;
		return err;
	}
	st->running = 1;
	return 0;
}

int tt__stream_start(void)
{
	int err = tt__stream_open(&tt__stream);
	if (err)
		fprintf(tt__err, "ticktrace: cannot stream the trace to %s (%s); recording is off\n",
			tt__stream.path[0] ? tt__stream.path : TT_ENV_OUT, strerror(-err));
	return err;
}

int tt__stream_flush(const char *path)
{
	struct tt__stream *st = &tt__stream;
	if (!st->running)
		return -ECANCELED;
	tt__lock(&st->dump_lock);
	tt__lock(&st->lock);
	st->dump_path = path;
	st->dump_err = 0;
	uint64_t mine = ++st->flush_requested;
	tt__stream_kick(st);
	while (st->flush_done < mine && !st->finishing) {
		uint32_t seq = __atomic_load_n(&st->done_seq, __ATOMIC_ACQUIRE);
		tt__unlock(&st->lock);
		tt_os_wait(&st->done_seq, seq, TT_OS_FOREVER);
		tt__lock(&st->lock);
	}
	int err = st->out->err ? st->out->err : st->dump_err;
	/* Finishing (the program exits meanwhile), the drain may not have made the copy. */
	if (path && st->flush_done < mine)
		err = -ECANCELED;
	st->dump_path = NULL;
	tt__unlock(&st->lock);
	tt__unlock(&st->dump_lock);
	return err;
}

int tt__stream_finish(void)
{
	struct tt__stream *st = &tt__stream;
	if (!st->running)
		return -ECANCELED;
	tt__lock(&st->lock);
	st->finishing = 1;
	tt__stream_done(st);
	tt__unlock(&st->lock);
	tt__stream_retired(st, 0); /* (exits that wait go on) */
	tt__stream_kick(st);
	tt_os_thread_join(&st->thread);
	/* Ended with the process where it was (ExitProcess: an MSVC program's exit; outside
	 * test ow32: the file had no END, the main thread's events lost, nothing said), the
	 * drain's end is this thread's. */
	if (!st->ended && __atomic_load_n(&st->made_seq, __ATOMIC_ACQUIRE) && !st->made_err && tt_os_others_ended()) {
		struct tt_os_writing writing;
		tt_os_writing_begin(&writing);
		tt__stream_end(st);
		tt_os_writing_end(&writing);
	}
	st->running = 0;
	/* Taken by the program: said, and the file cut, once; what that lost, at the end
	 * (the file cannot say it: the counts of threads gone since are nowhere else). */
	if (st->said_taken)
		fprintf(tt__err, "ticktrace: %s: %" PRIu64 " events not in the trace, which ended when "
			"the program took its descriptor\n", st->path, st->lost_events);
	else if (st->lost_events)
		fprintf(tt__err, "ticktrace: %s: %" PRIu64 " events not in the trace, whose writes "
			"failed (%s)\n", st->path, st->lost_events,
			strerror(-(st->disk_full ? st->disk_full : st->out->err)));
	int err = st->said_taken ? 0 : st->out->err;
	int closed = st->closed;
	if (!err && !closed && tt__nothing_to_write())
		tt_os_remove(st->path); /* (named as it began: the default name's, in place never) */
	return err ? err : st->said_taken ? 0 : closed;
}

/* In the child after fork: the parent's drain thread is gone, and the child's
 * events go to a file of its own. */
void tt__stream_after_fork(void)
{
	struct tt__stream *st = &tt__stream;
	if (!st->running)
		return;
	/* The parent's buffered bytes and descriptor are the parent's: in its drain's
	 * table, not in this copy of the program's. */
	if (st->own_table)
		tt__fd_forget(&tt__fd_out(st->out)->file);
	else
		tt__fd_close(&tt__fd_out(st->out)->file);
	free(st->out);
	tt__site_set_clear(&st->sites);
	tt__site_set_clear(&st->fresh);
	*st = (struct tt__stream){0};
	tt__spikes_after_fork();
	if (tt__stream_open(st) < 0)
		fprintf(tt__err, "ticktrace: the child process %d cannot stream its trace\n",
			(int)tt_os_process_id());
}
