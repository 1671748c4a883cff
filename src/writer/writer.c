/* The raw file a dump writes (tt_dump, a signal, the exit): every thread's chunks
 * as they are, taken once, and the call sites and functions their records name, each
 * described once. Records go from the chunks to the file without a copy. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <x86intrin.h>

#include "writer/writer.h"

void tt__file_header(struct tt_file_header *header, uint32_t flags)
{
	tt__clock_fill_header(header);
	header->unregistered_dropped = __atomic_load_n(&tt__unregistered_drops, __ATOMIC_RELAXED);
	header->flags |= flags | (tt__config.min_dur_ticks ? TT_FILE_MIN_DUR : 0) |
			 tt__threads_given_back() | (tt__arena_gave_room() ? TT_FILE_GAVE_ROOM : 0);
	header->crash_signal = (uint32_t)__atomic_load_n(&tt__crash_signal, __ATOMIC_ACQUIRE);
	if (header->crash_signal)
		header->flags |= TT_FILE_CRASHED;
}

void tt__out_file_header(struct tt__out *out, uint32_t flags)
{
	struct tt_file_header header;
	tt__file_header(&header, flags);
	tt__out(out, &header, sizeof header);
}

/* A snapshot's SNAPSHOT section: its window, and each thread's records that the ring
 * overwrote before the snapshot was taken, from the window's start on. */
static int tt__out_snapshot(struct tt__out *out, const struct tt__window *w,
			    const struct tt__thread_snapshot *snaps, size_t threads)
{
	struct tt_snapshot_cut *cuts = calloc(threads ? threads : 1, sizeof *cuts);
	if (!cuts)
		return -ENOMEM;
	struct tt_snapshot_info info = w->info;
	info.cuts = 0;
	for (size_t i = 0; i < threads; i++) {
		struct tt_snapshot_cut *cut = &cuts[info.cuts];
		*cut = (struct tt_snapshot_cut){
			.thread_index = snaps[i].slot->index,
			.events = snaps[i].dropped[TT_DROP_OVERWRITTEN],
			.lost_from_tsc = snaps[i].lost_from_tsc, .lost_to_tsc = snaps[i].lost_to_tsc,
		};
		info.cuts += cut->events != 0;
	}
	info.name_len = (uint32_t)strlen(w->name);
	uint64_t name_padded = (info.name_len + 7u) & ~7u;
	uint64_t size = sizeof info + name_padded + info.cuts * sizeof *cuts + sizeof w->split +
			sizeof w->causes + sizeof w->unsplit + sizeof w->unknown + sizeof w->miss;
	static const char zeros[8];
	tt__out_section(out, TT_SEC_SNAPSHOT, size);
	tt__out(out, &info, sizeof info);
	tt__out(out, w->name, info.name_len);
	tt__out(out, zeros, name_padded - info.name_len);
	tt__out(out, cuts, info.cuts * sizeof *cuts);
	tt__out(out, &w->split, sizeof w->split);
	tt__out(out, &w->causes, sizeof w->causes);
	tt__out(out, &w->unsplit, sizeof w->unsplit);
	tt__out(out, &w->unknown, sizeof w->unknown);
	tt__out(out, &w->miss, sizeof w->miss);
	tt__out_pad(out, size);
	free(cuts);
	return 0;
}

/* The chunks kept where they are while they are read (keep 1), then let go (0): for a
 * window, as a reader (the rings go on recycling; what they recycle meanwhile stays
 * whole); for the whole file, held (a ring grows meanwhile). */
static void tt__keep_chunks(const struct tt__window *window, int keep)
{
	if (window)
		tt__reading(keep);
	else
		tt__hold_chunks(keep);
}

/* A thread whose ring overwrote its window, all or part of it, before the window was
 * copied (mode ring with a buffer too small for it): said once a run, with the buffer
 * its ring needs to keep the window until the copy, at the rate the ring held: the
 * records of the time from the window's start to the copy (later than the window's
 * end: it is copied once it ended and tt-spikes came to it), in whole chunks. (Said
 * for a whole window alone before, so a run whose windows were all cut in part, the
 * worst spikes' of a busy thread, said nothing: outside recheck r46, F2.) */
static void tt__say_ring_too_small(const struct tt__thread_snapshot *snap, const struct tt__window *w)
{
	static bool said;
	uint64_t span = snap->held_to_tsc - snap->held_from_tsc, now = __rdtsc();
	if (__atomic_exchange_n(&said, true, __ATOMIC_RELAXED) || !span || now <= w->info.from_tsc)
		return;
	struct tt_anchor at;
	tt_os_anchor(&at);
	uint64_t hz = tt_os_anchor_hz(&tt__start_anchor, &at);
	uint64_t rate = (uint64_t)((unsigned __int128)snap->held_records * hz / span);
	uint64_t since_ms = (uint64_t)((unsigned __int128)(now - w->info.from_tsc) * 1000 / hz);
	uint64_t needed = (uint64_t)((unsigned __int128)snap->held_records * (now - w->info.from_tsc) / span);
	needed = (needed / TT__CHUNK_RECORDS + 2) * TT__CHUNK_RECORDS; /* (the ring recycles chunks) */
	const struct tt__slot *slot = snap->slot;
	fprintf(tt__err, "ticktrace: thread %" PRIu32 " (%.*s) writes %" PRIu64 " records/s: a snapshot "
		"window of %" PRId64 " ms began %" PRIu64 " ms before it was copied, and its ring keeps "
		"that long only with TICKTRACE_BUFFER=%" PRIu64 " (16-byte records per thread: the "
		"rate times %" PRIu64 " ms, in whole chunks; it is %" PRIu64 "); else the window is "
		"overwritten before it is copied: its snapshots lose its events (%s, %" PRIu64 " events; "
		"each snapshot says its window cut)",
		slot->tid, (int)strnlen(slot->name, sizeof slot->name), slot->name, rate,
		(w->to_ns - w->from_ns + 500000) / 1000000, since_ms, needed, since_ms,
		tt__config.buffer_events, snap->records ? "this one part of them" : "this one all of them",
		snap->dropped[TT_DROP_OVERWRITTEN]);
	/* Where most of that time went by after the window ended, a delay cut it: a larger
	 * buffer holds it only as long as that delay is no longer, and a delay that grows
	 * with the buffer never (its advice the next run's cut: outside test r49, F5;
	 * sqlite3's copy waited 23 s on tt-live, behind on the records of a buffer as large
	 * as advised, said as the buffer's: session 26). Which delay: the detector's, that
	 * found the spike late, or the copy's, that came late after it was found. */
	uint64_t ended = w->info.to_tsc, found = w->found_tsc > ended ? w->found_tsc : ended;
	uint64_t late_ms = now > ended ? (uint64_t)((unsigned __int128)(now - ended) * 1000 / hz) : 0;
	uint64_t found_ms = (uint64_t)((unsigned __int128)(found - ended) * 1000 / hz);
	if (2 * late_ms > since_ms && 2 * found_ms > late_ms)
		fprintf(tt__err, "; the spike detector found its spike %" PRIu64 " ms after the window ended "
			"(held to its share of the program's CPU time, or behind on a loaded machine): that "
			"delay, not the buffer, cut it", found_ms);
	else if (2 * late_ms > since_ms)
		fprintf(tt__err, "; it was copied %" PRIu64 " ms after the window ended (%" PRIu64 " ms after "
			"its spike was found: other work of ticktrace's before it, a dump, earlier snapshots, "
			"on a loaded machine): that delay, not the buffer, cut it", late_ms, late_ms - found_ms);
	fputc('\n', tt__err);
}

/* A window's threads, read (tt__reading): fitted to the room, copied, their cuts
 * counted; a thread gone before the window, which recorded nothing in it, left out
 * (one whose records the ring overwrote stays, its cut said, and so does the thread
 * of the spike or trigger, which the SNAPSHOT section names). */
static int tt__copy_window(struct tt__window *window, struct tt__thread_snapshot *snaps,
			   size_t *threads, struct tt__copy_room *room)
{
	int err = tt__window_fit(window, snaps, *threads, room);
	size_t kept = 0;
	for (size_t i = 0; i < *threads; i++) {
		struct tt__thread_snapshot *snap = &snaps[i];
		if (!err)
			err = tt__copy_thread(snap, room);
		if (!err && snap->begins_inside)
			tt__window_cut(snap, window->info.from_tsc, window->info.to_tsc);
		if (!snap->records && !snap->dropped[TT_DROP_OVERWRITTEN] &&
		    snap->slot->index != window->info.thread_index &&
		    (__atomic_load_n(&snap->slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_EXITED))
			free(snap->extents);
		else
			snaps[kept++] = *snap;
	}
	*threads = kept;
	return err;
}

int tt__filtered_names(struct tt__site_set *names, struct tt__site_set *fresh,
		       const struct tt__slot *slot)
{
	for (size_t i = 0; slot->filters && i < TT__FILTER_SLOTS; i++) {
		const struct tt__filtered_fn *fn = &slot->filters->fn[i];
		if ((tt__filtered_calls(fn, false) || tt__filtered_calls(fn, true)) &&
		    tt__site_set_add_fresh(names, fresh, tt__run_count_entry(TT_RECORD_PAYLOAD(fn->word),
									     names->retired_seen)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* A FILTERED section, when the thread's hooks erased calls, or with `dropped` a
 * DROPPED_CALLS section, when it dropped calls. */
void tt__out_filtered(struct tt__out *out, const struct tt__slot *slot, bool dropped)
{
	tt__out_filtered_table(out, slot->index, slot->filters, tt__config.min_dur_ns, dropped);
}

/* The whole file, or a snapshot's window of it. */
static int tt__write_to(struct tt__out *out, struct tt__window *window)
{
	struct tt__thread_snapshot *snaps = NULL;
	struct tt__site_set names = {0};
	struct tt__ranges loaded = {0};
	size_t threads = 0, cap = 0;
	int err = 0;
	names.retired_seen = tt__retired_count();
	/* Threads whose switches tt-sched has not asked for yet are asked for now, before
	 * their THREAD sections say whether they have states (a short run's, or where the
	 * kernel refuses: then its line is said). The whole file's: every switch so far
	 * where a read finds it (Windows' session's buffers handed over, ~30 ms). */
	if (!window)
		tt__switches_flush();
	tt__sched_drain(NULL);
	/* A window's records are copied, into memory faulted in before, and the chunks
	 * let go once they are; the whole file is written from the chunks, kept until
	 * it is. */
	struct tt__copy_room room = {0};
	if (window)
		tt__copy_room_make(&room, window->info.from_tsc);
	bool held = true;
	tt__keep_chunks(window, 1);
	for (struct tt__slot *slot = tt__registry_head(); slot;
	     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
		if (threads == cap) {
			cap = cap ? 2 * cap : 64;
			struct tt__thread_snapshot *grown = realloc(snaps, cap * sizeof *grown);
			if (!grown) {
				err = -ENOMEM;
				goto out;
			}
			snaps = grown;
		}
		struct tt__thread_snapshot *snap = &snaps[threads++];
		err = tt__snapshot_thread(snap, slot);
		if (err)
			goto out;
		if (window)
			tt__narrow_thread(snap, window->info.from_tsc, window->info.to_tsc);
	}
	if (window) {
		err = tt__copy_window(window, snaps, &threads, &room);
		tt__keep_chunks(window, 0);
		held = false;
		if (err)
			goto out;
		size_t records = 0;
		for (size_t i = 0; i < threads; i++)
			records += snaps[i].records;
		for (size_t i = 0; i < threads; i++)
			if (snaps[i].dropped[TT_DROP_OVERWRITTEN]) {
				tt__say_ring_too_small(&snaps[i], window);
				if (!records && window->none_if_lost) {
					err = -ENODATA;
					goto out;
				}
				break;
			}
	}
	for (size_t i = 0; i < threads && !err; i++)
		err = tt__collect_names(&names, &snaps[i]);
	for (size_t i = 0; i < threads && !err && !window; i++)
		err = tt__filtered_names(&names, NULL, snaps[i].slot);
	if (!err && !window)
		err = tt__turned_off_names(&names, NULL);
	if (err)
		goto out;

	tt__out_file_header(out, tt__mode->file_flags | (window ? TT_FILE_SNAPSHOT : 0));
	tt__out_process(out);
	if (window && (err = tt__out_snapshot(out, window, snaps, threads)))
		goto out;
	err = tt__out_modules(out);
	if (err)
		goto out;
	/* Descriptors are read where their library is still loaded, or from the copies
	 * that dlclose left. */
	tt_os_modules(tt__add_loaded, &loaded);
	err = loaded.err;
	if (err)
		goto out;
	tt__out_names(out, &names, &loaded);
	struct tt_end_info end = {.threads = threads, .sites = names.count - names.funcs};
	for (size_t i = 0; i < threads; i++) {
		tt__out_thread(out, &snaps[i], &end.dropped);
		if (window)
			tt__out_sched_window(out, snaps[i].slot, window->from_ns, window->to_ns);
		else {
			tt__out_filtered(out, snaps[i].slot, false);
			tt__out_filtered(out, snaps[i].slot, true);
		}
		end.records += snaps[i].records;
	}
	if (!window)
		tt__out_turned_off(out);
	tt__out_end(out, &end);
	tt__out_flush(out);
	err = out->err;
	if (window)
		window->bytes = out->offset; /* (counted past a failed write too) */
out:
	if (held)
		tt__keep_chunks(window, 0);
	for (size_t i = 0; i < threads; i++)
		free(snaps[i].extents);
	tt__copy_room_free(&room);
	free(snaps);
	free(names.slots);
	free(loaded.range);
	return err;
}

static int tt__write_file_of(struct tt__out *out, void *window)
{
	return tt__write_to(out, window);
}

int tt__write_file(const char *path)
{
	return tt__write_file_with(path, tt__write_file_of, NULL);
}

int tt__write_run_file(char *path, size_t size)
{
	return tt__write_run_file_with(path, size, tt__write_file_of, NULL);
}

static int tt__write_window_of(struct tt__out *out, void *window)
{
	struct tt__window *w = window;
	int err = tt__write_to(out, w);
	if (!err && w->whole)
		w->whole(w);
	return err;
}

int tt__write_window(const char *path, struct tt__window *window)
{
	return tt__write_new_file_with(path, tt__write_window_of, window);
}
