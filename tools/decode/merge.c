/* The thread merge: every thread's state machine (state.c) run window by window in
 * time order over all files, and tt_decode, which drives it into the sinks. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"

static void tt_dispatch_add(struct tt_dispatch *to, struct tt_sink *s, tt_event_fn fn)
{
	if (fn) {
		to->sink[to->n] = s;
		to->fn[to->n++] = fn;
	}
}

/* The heap orders threads by the time of their next record, then by id. */
static bool tt_heap_before(const struct tt_heap_entry *a, const struct tt_heap_entry *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->id < b->id);
}

static void tt_heap_down(struct tt_decoder *d, size_t i)
{
	struct tt_heap_entry *h = d->heap;
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < d->nheap && tt_heap_before(&h[l], &h[m]))
			m = l;
		if (l + 1 < d->nheap && tt_heap_before(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct tt_heap_entry x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

/* Decodes all threads window by window: every thread whose next record falls in the
 * window runs to the window's end, the earliest first; then the window's flows go
 * out in time order. */
static int tt_decode_merged(struct tt_decoder *d)
{
	while (d->nheap > 0) {
		/* The window's last nanosecond; at the end of time (a hostile clock saturates
		 * there) every thread runs to its end. */
		int64_t last;
		if (__builtin_add_overflow(d->heap[0].ts, TT_WINDOW_NS - 1, &last))
			last = INT64_MAX;
		while (d->nheap > 0 && d->heap[0].ts <= last) {
			struct tt_thread_state *st = &d->threads[d->heap[0].id];
			/* a mark in the window stops the thread after its events at the
			 * mark's time: then the mark, before any later event */
			int64_t mark = tt_decoder_next_mark(st);
			if (tt_decoder_run(d, st, mark < last ? mark : last) < 0)
				return -1;
			if (mark <= last && !st->done &&
			    tt_decoder_emit_marks(d, st, st->next_ts <= last ? st->next_ts - 1 : last) < 0)
				return -1;
			if (st->done) {
				if (tt_decoder_finish_thread(d, st->thread) < 0)
					return -1;
				d->heap[0] = d->heap[--d->nheap];
			} else {
				d->heap[0].ts = st->next_ts;
			}
			tt_heap_down(d, 0);
		}
		if (tt_decoder_flush_flows(d) < 0 || TT_EMIT(d, advance, last, &d->sum) < 0)
			return -1;
		if (d->sum.events - d->released_at >= TT_RELEASE_BEHIND_EVENTS)
			tt_decoder_release_behind(d);
	}
	return 0;
}

static int tt_decoder_init(struct tt_decoder *d)
{
	const struct tt_trace *t = d->trace;
	size_t n = t->nthreads ? t->nthreads : 1;
	d->threads = calloc(n, sizeof(*d->threads));
	d->heap = calloc(n, sizeof(*d->heap));
	d->frames_of = calloc(t->nsites ? t->nsites : 1, sizeof(*d->frames_of));
	d->released = calloc(t->nfiles ? t->nfiles : 1, sizeof(*d->released));
	if (!d->threads || !d->heap || !d->frames_of || !d->released)
		return tt_error("out of memory for %zu threads", t->nthreads);
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_file *f = &t->files[i];
		for (size_t k = 0; k < f->nthreads; k++) {
			const struct tt_thread *th = &f->threads[k];
			struct tt_thread_state *st = &d->threads[th->id];
			st->thread = th;
			st->instant.thread = th;
			st->valued.thread = th;
			st->scopes.max_depth = TT_MAX_DEPTH;
			tt_decoder_fast_clock(st, t->base_ns);
			if ((th->flags & TT_THREAD_WRAPPED) && tt_decoder_scan_unbegun(st) < 0)
				return -1;
			st->next_ts = th->has_first ? tt_rebase(tt_clock_ns(&f->clock, th->first_tsc), t->base_ns) :
				      INT64_MIN;
			d->heap[d->nheap++] = (struct tt_heap_entry){st->next_ts, th->id};
		}
		d->sum.threads += f->nthreads;
		d->sum.dropped += f->dropped + f->header.unregistered_dropped;
		d->records += f->records;
	}
	for (size_t i = d->nheap / 2; i-- > 0;)
		tt_heap_down(d, i);
	uint64_t mapped = 0;
	for (size_t i = 0; i < t->nfiles; i++)
		mapped += t->files[i].mapped ? t->files[i].size : 0;
	if (mapped >= TT_AHEAD_MIN_BYTES)
		d->ahead = tt_ahead_start(); /* (none: the decoding maps and releases alone) */
	return tt_decoder_add_marks(d);
}

int tt_decode(const struct tt_trace *t, struct tt_sink *const *sinks, size_t nsinks)
{
	struct tt_decoder d = {.trace = t, .sinks = sinks, .nsinks = nsinks};
	if (nsinks > TT_MAX_SINKS)
		return tt_error("more than %d sinks", TT_MAX_SINKS);
	for (size_t i = 0; i < nsinks; i++) {
		const struct tt_sink_ops *ops = sinks[i]->ops;
		tt_dispatch_add(&d.slice_begin, sinks[i], ops->slice_begin);
		tt_dispatch_add(&d.slice_end, sinks[i], ops->slice_end);
		tt_dispatch_add(&d.instant, sinks[i], ops->instant);
		tt_dispatch_add(&d.counter, sinks[i], ops->counter);
		tt_dispatch_add(&d.flow, sinks[i], ops->flow);
		tt_dispatch_add(&d.note, sinks[i], ops->note);
		tt_dispatch_add(&d.frame, sinks[i], ops->frame);
	}
	int rc = tt_decoder_init(&d);
	if (rc == 0)
		rc = TT_EMIT(&d, start, t);
	for (size_t i = 0; i < t->nfiles && rc == 0; i++) {
		const struct tt_file *f = &t->files[i];
		if (!(f->header.flags & TT_FILE_INVARIANT_TSC))
			tt_decoder_warn(&d, "%s: the TSC is not invariant on the recording machine: "
					"times may drift with CPU frequency changes", f->path);
		if (f->header.unregistered_dropped)
			tt_decoder_warn(&d, "%s: %" PRIu64 " events dropped before their thread had a "
					"buffer (no memory, 65,536 live threads, or recorded from "
					"inside ticktrace's start-up, or in a thread's last round of key "
					"destructors)", f->path,
					f->header.unregistered_dropped);
		const struct tt_module *was, *now;
		if (tt_file_modules_overlap(f, &was, &now))
			tt_decoder_warn(&d, "%s: %.*s and %.*s were loaded at overlapping addresses "
					"(%#" PRIx64 "..%#" PRIx64 "), one after the other was unloaded: "
					"call sites and functions there may be named after the wrong one",
					f->path, (int)was->path.len, was->path.ptr, (int)now->path.len,
					now->path.ptr, was->start > now->start ? was->start : now->start,
					was->end < now->end ? was->end : now->end);
		const struct tt_snapshot *snap = f->snapshot;
		if (snap && !snap->thread)
			tt_decoder_warn(&d, "%s: snapshot %" PRIu64 ": tt_trigger(\"%.*s\") was called at %"
					PRId64 " ns by a thread that never recorded: no thread of the trace "
					"to mark it on", f->path, snap->info.number, (int)snap->name.len,
					snap->name.ptr, tt_rebase(tt_clock_ns(&f->clock, snap->info.begin_tsc),
								   t->base_ns));
		char crash[TT_CRASH_TEXT];
		if ((f->header.flags & TT_FILE_CRASHED) && tt_file_stopped_by_signal(f))
			tt_decoder_warn(&d, "%s: the run was ended by %s, and ticktrace's handler wrote "
					"this file before the program died of it", f->path,
					tt_crash_text(f->header.crash_signal, crash, sizeof crash));
		else if (f->header.flags & TT_FILE_CRASHED)
			tt_decoder_warn(&d, "%s: the run crashed: the program died of %s, and its "
					"crash handler wrote this file", f->path,
					tt_crash_text(f->header.crash_signal, crash, sizeof crash));
		bool running = (f->cut_short || (f->header.flags & TT_FILE_LIVE)) &&
			       tt_file_writer_running(f);
		if ((f->header.flags & TT_FILE_LIVE) && running)
			tt_decoder_warn(&d, "%s: process %" PRIu32 " is still running: these are its "
					"live buffers as they were when read", f->path, f->process.pid);
		else if (f->header.flags & TT_FILE_LIVE_EXITED)
			tt_decoder_warn(&d, "%s: the run exited, but its trace could not be written at "
					"exit: these are its live buffers, with every event it recorded; "
					"names threads took and events they dropped in its last 0.2 s, and "
					"thread states (in its memory) are missing", f->path);
		else if (f->header.flags & TT_FILE_LIVE)
			tt_decoder_warn(&d, "%s: the run crashed or was killed before writing its "
					"trace: these are its live buffers, with every event it recorded; "
					"names threads took and events they dropped in its last 0.2 s, and "
					"thread states (in its memory until its end) are missing (call sites are named from the binaries)", f->path);
		else if (f->cut_short && running)
			tt_decoder_warn(&d, "%s: process %" PRIu32 " is still writing this file: "
					"this is what it had written when read, up to offset %" PRIu64
					" (tt_dump(path) makes a complete copy)", f->path,
					f->process.pid, f->cut_at);
		else if (f->cut_short)
			tt_decoder_warn(&d, "%s: the run crashed or was killed: the file ends without "
					"its END section, after offset %" PRIu64 "; what was recorded but "
					"not yet written then is lost (mode stream: chunks not yet drained, "
					"and at most the last 0.2 s of each thread)", f->path, f->cut_at);
		const char *erased = tt_file_erased_missing(f);
		if (erased)
			tt_decoder_warn(&d, "%s: %s", f->path, erased);
	}
	if (rc == 0)
		rc = tt_decode_merged(&d);
	if (rc == 0 && d.overwritten[0])
		tt_decoder_warn(&d, "mode ring kept the latest events: %" PRIu64 " older ones of %" PRIu64
				" threads were overwritten by newer ones", d.overwritten[0],
				d.overwriting_threads[0]);
	if (rc == 0 && d.overwritten[1])
		tt_decoder_warn(&d, "snapshot: the ring overwrote %" PRIu64 " events of %" PRIu64 " threads "
				"in the window before they were copied: their windows are cut (each marked "
				"\"window cut\" at its first event)", d.overwritten[1], d.overwriting_threads[1]);
	tt_ahead_stop(d.ahead); /* its releases done before the sinks finish */
	if (rc == 0)
		rc = TT_EMIT(&d, finish, &d.sum);
	if (d.threads)
		for (size_t i = 0; i < t->nthreads; i++) {
			free(d.threads[i].stack);
			tt_scopes_free(&d.threads[i].scopes);
			free(d.threads[i].unbegun.keys);
			free(d.threads[i].described);
			tt_decoder_free_marks(&d.threads[i]);
		}
	free(d.threads);
	free(d.frames);
	free(d.frames_of);
	free(d.heap);
	free(d.flows);
	free(d.links);
	free(d.released);
	return rc < 0 ? -1 : 0;
}
