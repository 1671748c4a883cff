/* The live spike log's bound, TICKTRACE_SPIKES_LOG_MAX (16 MiB): a flight recorder left
 * running for hours must not fill the disk (a loaded ring run logged 16 MB in 8
 * minutes, 31,213 spikes of 50 ns scopes preempted past a 2 ms threshold). What a user
 * needs of it most is the worst spikes, and what was left out: each entry the log took
 * whole is indexed (where it is, its length, a spike's duration and threshold, a
 * note's events), and once the file passes the bound it is written again, a new file
 * put over it by name (a reader by name never finds a part of it, nor a part of an
 * entry: tail -F), holding the worst spikes that fit in half the bound, in their order,
 * then a line that says what was left out (how many spikes, found up to when, the
 * worst of them; the notes, and the events they said overwritten), which the spikes
 * after it follow. Ranked as the snapshots rank them (duration over threshold, a tie to
 * the earlier): each rewrite keeps the worst of what the last kept and of what came
 * since, none below the worst left out before, so the log holds the worst of the whole
 * run, each above the line worse than every one left out, and every spike since. A log it could not
 * write again (a full disk) takes no entry past the bound from then on, each counted.
 * Said at exit. Only a file ticktrace made is bound: stderr is the program's, and a
 * FIFO or a device fills no disk. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

#define TT__SPIKES_LOG_MAX (UINT64_C(16) << 20)
#define TT__SPIKES_LOG_MAX_LEAST 4096 /* a few entries and the line of what was left out */
#define TT__SPIKES_LOG_NOTE_MAX 512   /* the line of what was left out, at most */

void tt__spikes_bound_start(struct tt__spikes_bound *b, bool file)
{
	*b = (struct tt__spikes_bound){.max = TT__SPIKES_LOG_MAX};
	const char *text = getenv("TICKTRACE_SPIKES_LOG_MAX");
	uint64_t max;
	if (text && *text && tt_parse_size(text, &max) == 0 && (!max || max >= TT__SPIKES_LOG_MAX_LEAST))
		b->max = max;
	else if (text && *text)
		fprintf(tt__err, "ticktrace: TICKTRACE_SPIKES_LOG_MAX=%s is not a size of 4K or more (bytes, or "
			"with K, M or G; 0: no bound); using %" PRIu64 "M\n", text, b->max >> 20);
	b->on = file && b->max;
}

void tt__spikes_bound_free(struct tt__spikes_bound *b)
{
	free(b->entries);
	b->entries = NULL;
	b->n = b->cap = 0;
}

/* Entry `e` left out of the log: counted. */
static void tt__log_left_out(struct tt__spikes_bound *b, const struct tt__log_entry *e)
{
	if (!e->note) {
		b->spikes_out++;
		return;
	}
	b->notes_out++;
	*(e->skipped ? &b->skipped_out : &b->events_out) += (uint64_t)e->dur;
}

/* Whether entry a ranks above b: a spike above any note (never kept: they are counted),
 * then by duration over threshold, a tie to the earlier. */
static bool tt__log_above(const struct tt__log_entry *a, const struct tt__log_entry *b)
{
	if (a->note != b->note)
		return !a->note;
	__int128 x = (__int128)a->dur * b->threshold, y = (__int128)b->dur * a->threshold;
	return x != y ? x > y : a->at < b->at;
}

static int tt__log_by_rank(const void *a, const void *b)
{
	return tt__log_above(a, b) ? -1 : tt__log_above(b, a) ? 1 : 0;
}

/* `len` bytes of `buf` at byte `at` of `to`; 0 or -errno. */
static int tt__log_put(struct tt_os_file *to, const char *buf, size_t len, uint64_t at)
{
	for (size_t done = 0; done < len;) {
		int64_t w = tt_os_file_write_at(to, buf + done, len - done, at + done);
		if (w == -EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? (int)w : -EIO;
		done += (size_t)w;
	}
	return 0;
}

/* `len` bytes of `from` at `at` onto `to` at *to_at, which moves past them; 0 or
 * -errno. */
static int tt__log_copy(struct tt_os_file *from, struct tt_os_file *to, uint64_t at, uint64_t len,
			uint64_t *to_at)
{
	static char buf[1 << 16]; /* (one log, written by one thread at a time) */
	while (len) {
		int64_t n = tt_os_file_read_at(from, buf, len < sizeof buf ? len : sizeof buf, at);
		if (n <= 0)
			return n < 0 ? (int)n : -EIO;
		int err = tt__log_put(to, buf, (size_t)n, *to_at);
		if (err)
			return err;
		*to_at += (uint64_t)n;
		at += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

/* The line after the spikes the log kept as it was written again: what was left out,
 * as a note (no "name" nor "dur_ns": a reader of spikes passes over it; in text, no
 * "spike: " at its start). */
static size_t tt__log_note(const struct tt__spikes_bound *b, bool json, char *buf, size_t cap)
{
	int n;
	char worst[96] = "";
	if (b->worst.threshold)
		snprintf(worst, sizeof worst, " (the worst of them %.3f ms over a threshold of %.3f ms)",
			 (double)b->worst.dur / 1e6, (double)b->worst.threshold / 1e6);
	char skipped[64] = "";
	if (b->skipped_out)
		snprintf(skipped, sizeof skipped, ", and of %" PRIu64 " it passed over", b->skipped_out);
	if (json)
		n = snprintf(buf, cap, "{\"log_max_bytes\":%" PRIu64 ",\"spikes_left_out\":%" PRIu64
			     ",\"left_out_until_ns\":%" PRId64 ",\"worst_left_out_ns\":%" PRId64
			     ",\"worst_left_out_threshold_ns\":%" PRId64 ",\"notes_left_out\":%" PRIu64
			     ",\"overwritten_events_left_out\":%" PRIu64 ",\"skipped_events_left_out\":%" PRIu64
			     ",\"pid\":%d}\n", b->max, b->spikes_out, b->until_ns, b->worst.dur, b->worst.threshold,
			     b->notes_out, b->events_out, b->skipped_out, (int)tt_os_process_id());
	else
		n = snprintf(buf, cap, "log: within TICKTRACE_SPIKES_LOG_MAX (%" PRIu64 " bytes) it keeps the "
			     "worst spikes: %" PRIu64 " found up to %.3f s were left out%s, and %" PRIu64 " notes "
			     "(of %" PRIu64 " events overwritten before the detector read them%s)\n", b->max,
			     b->spikes_out, (double)b->until_ns / 1e9, worst, b->notes_out, b->events_out, skipped);
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* The log at `path` (its descriptor in `log`) written again: the worst spikes that fit
 * in half the bound, in their order, then a line that says what was left out; put over
 * it by name, and kept in `log`. 0 (the index then the new file's, *whole its end), or
 * -errno (nothing changed). */
static int tt__log_rewrite(struct tt__spikes_bound *b, struct tt__fd *log, const char *path, bool json,
			   int64_t *whole)
{
	if (!tt__fd_ours(log))
		return -EBADF;
	struct tt__log_entry *order = malloc(b->n * sizeof *order);
	if (!order)
		return -ENOMEM;
	memcpy(order, b->entries, b->n * sizeof *order);
	qsort(order, b->n, sizeof *order, tt__log_by_rank);
	uint64_t room = b->max / 2 - TT__SPIKES_LOG_NOTE_MAX, used = 0;
	size_t fit = 0;
	/* (none below the worst left out before: each kept from before a rewrite ranks above
	 * every one left out, an entry short enough for the room left too) */
	while (fit < b->n && !order[fit].note && used + order[fit].len <= room &&
	       (!b->worst.threshold || tt__log_above(&order[fit], &b->worst)))
		used += order[fit++].len;
	/* (kept: those that rank above the first left out) */
	struct tt__log_entry out = fit < b->n ? order[fit] : (struct tt__log_entry){.note = true};
	free(order);
	struct tt__spikes_bound was = *b;
	for (size_t i = 0; i < b->n; i++)
		if (!tt__log_above(&b->entries[i], &out))
			tt__log_left_out(b, &b->entries[i]);
	if (!out.note && (!b->worst.threshold || tt__log_above(&out, &b->worst)))
		b->worst = out;
	b->until_ns = tt_os_monotonic_ns() - tt__start_anchor.monotonic_ns;
	char note[TT__SPIKES_LOG_NOTE_MAX];
	size_t len = tt__log_note(b, json, note, sizeof note);
	/* (kept as the log is, checked before it is named: the program may close every
	 * descriptor meanwhile, and open its own at the number) */
	struct tt_os_new_file made;
	struct tt_os_file file;
	struct tt__fd fresh = TT__FD_NONE;
	int err = tt_os_file_new(path, 1, &file, &made);
	if (!err && (err = tt_os_file_hold(&file))) { /* (held while written, as it was made) */
		tt_os_file_close(&file);
		tt_os_file_discard(&made);
	}
	if (!err && (err = tt__fd_keep(&fresh, file)))
		tt_os_file_discard(&made);
	if (!err) {
		uint64_t end = 0;
		for (size_t i = 0; i < b->n && !err; i++)
			if (tt__log_above(&b->entries[i], &out))
				err = tt__log_copy(&log->file, &fresh.file, b->entries[i].at, b->entries[i].len, &end);
		if (!err)
			err = tt__log_put(&fresh.file, note, len, end);
		/* (the entries after it written on from its end) */
		if (!err)
			err = tt_os_file_seek(&fresh.file, end + len);
		if (!err)
			err = tt__fd_ours(&fresh) ? tt_os_file_name(&fresh.file, path, &made) : -EBADF;
		if (!err && made.tmp[0])
			err = tt_os_file_put(&made, path);
		if (err) {
			tt_os_file_discard(&made);
			tt__fd_close(&fresh);
		}
	}
	if (err) {
		*b = was;
		return err;
	}
	/* (the old file, gone from its name, let go) */
	tt__fd_close(log);
	*log = fresh;
	uint64_t at = 0;
	size_t kept = 0;
	for (size_t i = 0; i < b->n; i++) {
		if (!tt__log_above(&b->entries[i], &out))
			continue;
		b->entries[kept] = b->entries[i];
		b->entries[kept++].at = at;
		at += b->entries[i].len;
	}
	b->n = kept;
	*whole = (int64_t)(at + len);
	return 0;
}

/* Cuts off the log's last entry `e`, [from, *whole): not taken, counted. */
static void tt__log_cut(struct tt__spikes_bound *b, struct tt__fd *log, int64_t from, int64_t *whole,
			const struct tt__log_entry *e)
{
	tt__log_left_out(b, e);
	if (tt__fd_ours(log) && tt_os_file_resize(&log->file, (uint64_t)from) == 0)
		tt_os_file_seek(&log->file, (uint64_t)from);
	*whole = from;
}

void tt__spikes_bound_add(struct tt__spikes_bound *b, struct tt__fd *log, const char *path, bool json,
			  int64_t from, int64_t *whole, const struct tt_an_spike *s, uint64_t events, bool skipped)
{
	if (!b->on || from < 0 || *whole < from)
		return;
	struct tt__log_entry e = {.at = (uint64_t)from, .len = (uint32_t)(*whole - from), .note = !s,
				  .skipped = !s && skipped,
				  .dur = s ? s->dur : (int64_t)events,
				  .threshold = s && s->threshold > 0 ? s->threshold : 1};
	if (b->stuck) {
		if ((uint64_t)*whole > b->max)
			tt__log_cut(b, log, from, whole, &e);
		return;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 1024;
		struct tt__log_entry *entries = realloc(b->entries, cap * sizeof *entries);
		if (entries) {
			b->entries = entries;
			b->cap = cap;
		}
	}
	int err = b->n < b->cap ? 0 : -ENOMEM;
	if (!err)
		b->entries[b->n++] = e;
	if ((uint64_t)*whole <= b->max && !err)
		return;
	if (!err)
		err = tt__log_rewrite(b, log, path, json, whole);
	if (!err) {
		b->rewrites++;
		return;
	}
	fprintf(tt__err, "ticktrace: spike log %s cannot be kept within TICKTRACE_SPIKES_LOG_MAX (%" PRIu64
		" bytes) with its worst spikes (%s): past it, it takes no more entries, each counted\n",
		path, b->max, strerror(-err));
	b->stuck = err;
	if ((uint64_t)*whole > b->max) /* (this one passed it) */
		tt__log_cut(b, log, from, whole, &e);
}

void tt__spikes_bound_said(const struct tt__spikes_bound *b, const char *path)
{
	if (!b->spikes_out && !b->notes_out)
		return;
	char skipped[48] = "";
	if (b->skipped_out)
		snprintf(skipped, sizeof skipped, ", %" PRIu64 " passed over", b->skipped_out);
	fprintf(tt__err, "ticktrace: spike log %s: %" PRIu64 " spike%s and %" PRIu64 " note%s (of %" PRIu64
		" events overwritten%s) left out to keep it within TICKTRACE_SPIKES_LOG_MAX (%" PRIu64
		" bytes): it keeps the worst spikes%s\n", path, b->spikes_out, b->spikes_out == 1 ? "" : "s",
		b->notes_out, b->notes_out == 1 ? "" : "s", b->events_out, skipped, b->max,
		b->rewrites ? " (a line in it says what was left out)" : "");
}
