/* Marks: instants the decoder adds on a thread where its file says something that no
 * record says. A snapshot (TT_SEC_SNAPSHOT) marks its spike at the spike's end, or
 * its trigger where tt_trigger was called, with the threshold and how the time split
 * as arguments; and each thread whose window the ring cut at its first record, with
 * what was lost. Each goes to the sinks in its thread's time order, after the
 * thread's events at its time. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"

/* A new mark on the thread, at `tsc` of its file; NULL when out of memory. */
static struct tt_mark *tt_mark_new(struct tt_decoder *d, const struct tt_thread *t, uint64_t tsc,
				   uint64_t offset)
{
	struct tt_thread_state *st = &d->threads[t->id];
	struct tt_mark *marks = realloc(st->marks, (st->nmarks + 1) * sizeof(*marks));
	if (!marks)
		return NULL;
	st->marks = marks;
	struct tt_mark *m = &marks[st->nmarks++];
	*m = (struct tt_mark){
		.ts = tt_rebase(tt_clock_ns(&t->file->clock, tsc), d->trace->base_ns),
		.offset = offset,
	};
	/* in time order: a thread has a mark or two */
	for (; m > marks && m[-1].ts > m->ts; m--) {
		struct tt_mark x = m[-1];
		m[-1] = m[0];
		m[0] = x;
	}
	return m;
}

static void tt_mark_number(struct tt_mark *m, const char *key, int64_t number)
{
	m->args[m->nargs++] = (struct tt_mark_arg){.key = key, .number = number};
}

size_t tt_mark_causes_args(struct tt_mark_arg *args, const struct tt_an_causes *c)
{
	size_t n = 0;
	if (c->from != TT_AN_CAUSES_NONE) {
		args[n++] = (struct tt_mark_arg){.key = "causes_from", .text = tt_an_causes_from_name(c->from)};
		args[n++] = (struct tt_mark_arg){.key = "causes_error_ns", .number = c->error_ns};
		if (c->tick_ns) { /* (what error_ns holds of the CPU time's steps) */
			args[n++] = (struct tt_mark_arg){.key = "tick_ns", .number = c->tick_ns};
			args[n++] = (struct tt_mark_arg){.key = "tick_behind_ns", .number = c->tick_behind_ns};
		}
	}
	if (c->wakeups_known)
		args[n++] = (struct tt_mark_arg){.key = "wakeup_waits_ns", .number = c->wakeups_ns};
	else if (c->wakeups_unbounded)
		args[n++] = (struct tt_mark_arg){.key = "blocked_may_hold_wakeup_waits", .number = 1};
	if (c->moved_known)
		args[n++] = (struct tt_mark_arg){.key = "kernel_moved_ns", .number = c->moved_ns};
	if (c->moved_most_ns)
		args[n++] = (struct tt_mark_arg){.key = "kernel_moved_at_most_ns", .number = c->moved_most_ns};
	if (c->cpu_ahead_most_ns)
		args[n++] = (struct tt_mark_arg){.key = "kernel_cpu_ahead_at_most_ns", .number = c->cpu_ahead_most_ns};
	if (c->stolen_known) {
		args[n++] = (struct tt_mark_arg){.key = "stolen_ns", .number = c->stolen_ns};
		args[n++] = (struct tt_mark_arg){.key = "stolen_error_ns", .number = c->stolen_error_ns};
	} else if (tt_an_stolen_unknown_text(c)) { /* (and how much of on CPU may be) */
		args[n++] = (struct tt_mark_arg){.key = "stolen_unknown", .text = tt_an_stolen_unknown_text(c)};
		args[n++] = (struct tt_mark_arg){.key = "stolen_error_ns", .number = c->stolen_error_ns};
	}
	if (c->lost_ns) {
		args[n++] = (struct tt_mark_arg){.key = "without_switches_ns", .number = c->lost_ns};
		args[n++] = (struct tt_mark_arg){.key = "switches_lost", .number = (int64_t)c->lost};
	}
	if (c->faults) {
		args[n++] = (struct tt_mark_arg){.key = "minor_faults", .number = (int64_t)c->minor_faults};
		args[n++] = (struct tt_mark_arg){.key = "major_faults", .number = (int64_t)c->major_faults};
		if (c->faults_at_least)
			args[n++] = (struct tt_mark_arg){.key = "faults_at_least", .number = 1};
		else if (c->faults_at_most)
			args[n++] = (struct tt_mark_arg){.key = "faults_at_most", .number = 1};
		if (c->faults_read_ns) /* (not known in a snapshot) */
			args[n++] = (struct tt_mark_arg){.key = "faults_read_ns", .number = c->faults_read_ns};
	}
	return n;
}

/* Whether the scope a record opens may be the spike's: the spike's name, or a
 * function's (named by its address in the runtime, by its symbol here). */
static bool tt_mark_names(const struct tt_file *f, const struct tt_snapshot *s, const struct tt_record *r)
{
	const struct tt_site *site = tt_file_site(f, TT_RECORD_PAYLOAD(r->word), r->tsc);
	return TT_RECORD_KIND(r->word) == TT_REC_FUNC_ENTER || !site || site->is_func ||
	       (site->name.len == s->name.len && memcmp(site->name.ptr, s->name.ptr, s->name.len) == 0);
}

/* Where the spike's scope ends: the snapshot says its begin and end as the runtime's
 * detector had them, which turned the records' TSCs into ns and back at the rate it
 * measured then (a few hundred ns off); the mark goes at the record that closes the
 * scope the spike is (begun within TT_MARK_SLACK_NS of its begin, with its name,
 * closed within it of its end: short scopes of its name may begin as near), right
 * after that record. Its TSC (clamped as the
 * decoder clamps), or end_tsc when no record does (its beginning not in the window).
 * One pass over the spike thread's records. */
static uint64_t tt_mark_scope_end(const struct tt_decoder *d, const struct tt_snapshot *s)
{
	const struct tt_thread *t = s->thread;
	const struct tt_file *f = t->file;
	int64_t base = d->trace->base_ns;
	int64_t begin = tt_rebase(tt_clock_ns(&f->clock, s->info.begin_tsc), base);
	int64_t end = tt_rebase(tt_clock_ns(&f->clock, s->info.end_tsc), base);
	uint64_t depth = 0, last = 0;
	int64_t opened_at = -1; /* the depth the candidate scope was opened at, or -1 */
	for (size_t sec = 0; sec < t->nsections; sec++) {
		const struct tt_record *r = tt_section_records(t, sec);
		for (size_t i = 0; r && i < t->sections[sec].count; i++) {
			unsigned kind = TT_RECORD_KIND(r[i].word);
			if (!TT_RECORD_HAS_TIME(kind))
				continue;
			uint64_t tsc = r[i].tsc > last ? r[i].tsc : last;
			last = tsc;
			bool closes = kind == TT_REC_END || kind == TT_REC_ENDBEGIN || kind == TT_REC_FUNC_EXIT;
			bool opens = kind == TT_REC_BEGIN || kind == TT_REC_BEGIN_ARG || kind == TT_REC_ENDBEGIN ||
				     kind == TT_REC_FUNC_ENTER;
			if (closes && depth > 0 && --depth == (uint64_t)opened_at) {
				if (tt_mark_near(tt_rebase(tt_clock_ns(&f->clock, tsc), base), end))
					return tsc;
				opened_at = -1; /* another of its name began as near: not it */
			}
			if (opens && opened_at < 0 && tt_mark_near(tt_rebase(tt_clock_ns(&f->clock, tsc), base), begin) &&
			    tt_mark_names(f, s, &r[i]))
				opened_at = (int64_t)depth;
			depth += opens;
		}
	}
	return s->info.end_tsc;
}

/* Names longer than this are cut in a mark's name (sinks show 512 bytes of one). */
#define TT_MARK_NAME_MAX 400

/* The snapshot's spike, at its end, or its trigger. */
static int tt_mark_snapshot(struct tt_decoder *d, const struct tt_file *f)
{
	const struct tt_snapshot *s = f->snapshot;
	const struct tt_snapshot_info *si = &s->info;
	if (!s->thread) /* (a trigger of a thread that never recorded: said in a warning) */
		return 0;
	uint64_t at = si->kind == TT_SNAPSHOT_SPIKE ? tt_mark_scope_end(d, s) : si->end_tsc;
	struct tt_mark *m = tt_mark_new(d, s->thread, at, s->at);
	if (!m)
		return -1;
	int len = s->name.len > TT_MARK_NAME_MAX ? TT_MARK_NAME_MAX : (int)s->name.len;
	const char *cut = s->name.len > TT_MARK_NAME_MAX ? "..." : "";
	tt_mark_number(m, "snapshot", (int64_t)si->number);
	if (si->kind == TT_SNAPSHOT_TRIGGER)
		return tt_asprintf(&m->name, "trigger: %.*s%s", len, s->name.ptr, cut);
	int64_t dur = s->split.dur_ns;
	char took[32];
	tt_mark_number(m, "dur_ns", dur);
	if (s->causes.flags & TT_CAUSES_END_DROPPED) /* (how much later not kept) */
		tt_mark_number(m, "end_late_ns", -1);
	tt_mark_number(m, "threshold_ns", si->threshold_ns);
	m->args[m->nargs++] = (struct tt_mark_arg){.key = "threshold_from",
						   .text = tt_snapshot_threshold_from(s)};
	struct tt_an_causes causes = tt_snapshot_an_causes(s);
	if (si->has_split) {
		tt_mark_number(m, "on_cpu_ns", si->on_cpu_ns);
		tt_mark_number(m, "preempted_ns", si->preempted_ns);
		tt_mark_number(m, "blocked_ns", si->blocked_ns);
		tt_mark_number(m, "unknown_ns", s->split.unknown_ns);
		char why[TT_AN_UNKNOWN_TEXT];
		if (tt_an_unknown_text(&causes, why, sizeof why)) {
			if (!(m->no_split = strdup(why)))
				return -1;
			m->args[m->nargs++] = (struct tt_mark_arg){.key = "unknown_why", .text = m->no_split};
		}
	} else {
		char why[TT_AN_NO_SPLIT_TEXT];
		if (!(m->no_split = strdup(tt_an_no_split_text(&causes, s->thread->flags, why, sizeof why))))
			return -1;
		m->args[m->nargs++] = (struct tt_mark_arg){.key = "no_split", .text = m->no_split};
	}
	m->nargs += (uint32_t)tt_mark_causes_args(m->args + m->nargs, &causes);
	return tt_asprintf(&m->name, "spike: %.*s%s took %s", len, s->name.ptr, cut, tt_an_fmt_ns(took, dur));
}

/* A thread whose window the ring cut: at its first record, what it lost before: how
 * many, and over how long when the ring remembers where its losses began. A thread
 * whose whole window was lost, where the losses begin in it (not before the run). */
static int tt_mark_cut(struct tt_decoder *d, const struct tt_snapshot_thread_cut *c)
{
	const struct tt_thread *t = c->thread;
	const struct tt_file *f = t->file;
	const struct tt_clock *clock = &f->clock;
	uint64_t at = t->has_first ? t->first_tsc : f->header.start.tsc;
	if (!t->has_first && f->snapshot->info.from_tsc > at)
		at = f->snapshot->info.from_tsc;
	if (!t->has_first && c->cut.lost_from_tsc > at)
		at = c->cut.lost_from_tsc;
	struct tt_mark *m = tt_mark_new(d, t, at, c->at);
	if (!m)
		return -1;
	tt_mark_number(m, "events", (int64_t)c->cut.events);
	if (c->cut.lost_from_tsc)
		tt_mark_number(m, "lost_ns", tt_clock_ns(clock, c->cut.lost_to_tsc) -
						     tt_clock_ns(clock, c->cut.lost_from_tsc));
	return tt_asprintf(&m->name, "window cut: %s%s%" PRIu64 " events overwritten",
			    t->has_first ? "" : "whole window lost: ", c->cut.lost_from_tsc ? "" : "at least ",
			    c->cut.events);
}

int tt_decoder_add_marks(struct tt_decoder *d)
{
	const struct tt_trace *t = d->trace;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tt_snapshot *s = t->files[i].snapshot;
		if (!s)
			continue;
		if (tt_mark_snapshot(d, &t->files[i]) < 0)
			return tt_error("out of memory for the marks of %s", t->files[i].path);
		for (uint32_t k = 0; k < s->info.cuts; k++)
			if (tt_mark_cut(d, &s->cuts[k]) < 0)
				return tt_error("out of memory for the marks of %s", t->files[i].path);
	}
	return 0;
}

/* The next mark to the sinks, at its time (or the thread's latest). */
static int tt_mark_emit(struct tt_decoder *d, struct tt_thread_state *st)
{
	const struct tt_mark *m = &st->marks[st->next_mark++];
	struct tt_event e = {
		.thread = st->thread,
		/* never before what the thread gave the sinks (a clamped clock, a run of
		 * lost events that ended later) */
		.ts = st->started && st->last_ts > m->ts ? st->last_ts : m->ts,
		.depth = st->depth, .flags = TT_EV_NAMED, .offset = m->offset,
		.text = m->name, .args = m->args,
	};
	return tt_dispatch_instant(d, &e);
}

int tt_decoder_emit_marks(struct tt_decoder *d, struct tt_thread_state *st, int64_t until)
{
	while (st->next_mark < st->nmarks && st->marks[st->next_mark].ts <= until)
		if (tt_mark_emit(d, st) < 0)
			return -1;
	return 0;
}

void tt_decoder_free_marks(struct tt_thread_state *st)
{
	for (uint32_t i = 0; i < st->nmarks; i++) {
		free(st->marks[i].name);
		free(st->marks[i].no_split);
	}
	free(st->marks);
}
