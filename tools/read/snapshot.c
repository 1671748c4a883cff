/* A snapshot's SNAPSHOT section (TICKTRACE_SNAPSHOTS): what the window is, why it was
 * written, and the threads whose window the ring cut; validated as it is read, and
 * against the threads once every section is read. */
#include "read_internal.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define TT_PAD8(n) (((uint64_t)(n) + 7) & ~UINT64_C(7))

/* Where a snapshot's threshold came from, by enum tt_snapshot_threshold_from: the
 * runtime's words for the thresholds it was given (src/report/spikes.c). */
static const char *const tt_threshold_from_names[] = {
	[TT_THRESHOLD_FROM_NONE] = "",
	[TT_THRESHOLD_FROM_MARKUP] = "TT_THRESHOLD_NS",
	[TT_THRESHOLD_FROM_FILE] = "TICKTRACE_SPIKE_THRESHOLDS",
	[TT_THRESHOLD_FROM_CHILDREN] = "TT_CHILDREN_THRESHOLD_NS",
	[TT_THRESHOLD_FROM_GLOBAL] = "TICKTRACE_SPIKE_THRESHOLD",
};

const char *tt_snapshot_threshold_from(const struct tt_snapshot *s)
{
	return tt_threshold_from_names[s->info.threshold_from];
}

const char *tt_snapshot_kind_name(const struct tt_snapshot *s)
{
	return s->info.kind == TT_SNAPSHOT_SPIKE ? "spike" : "trigger";
}

struct tt_an_split tt_snapshot_an_split(const struct tt_snapshot *s)
{
	return (struct tt_an_split){s->info.on_cpu_ns, s->info.preempted_ns, s->info.blocked_ns,
				    s->split.unknown_ns};
}

/* What a snapshot says of its readings beside why: the edges none bounded, how late
 * the first came, the readings on their far sides and the thread's wait (an earlier
 * version's: not said). */
static struct tt_an_miss_detail tt_snapshot_miss_detail(const struct tt_snapshot *s)
{
	const struct tt_snapshot_unsplit *u = &s->unsplit;
	const struct tt_snapshot_unknown *k = &s->unknown;
	uint32_t why = u->why | k->why, flags = u->flags | k->flags;
	int64_t start_ns = u->start_ns | k->start_ns, end_ns = u->end_ns | k->end_ns;
	/* (the first reading after its start: inside it, or past its end, the one after it;
	 * late where the spike lasted long enough to be read, as the analysis says it) */
	int64_t first = 0, dur = s->split.dur_ns;
	if (why == TT_UNSPLIT_TOO_FAR)
		first = start_ns;
	else if (why == TT_UNSPLIT_NOT_INSIDE && __builtin_add_overflow(dur, end_ns, &first))
		first = 0;
	bool late = dur > TT_COUNTERS_AFTER_NS && first >= 2 * TT_COUNTERS_AFTER_NS;
	return (struct tt_an_miss_detail){
		.edges = (flags & TT_UNSPLIT_FAR_START ? TT_AN_EDGE_START : 0u) |
			 (flags & TT_UNSPLIT_FAR_END ? TT_AN_EDGE_END : 0u),
		.tick = s->miss.flags & TT_MISS_TICK,
		.before_ns = s->miss.before_ns, .after_ns = s->miss.after_ns,
		.late_ns = late ? first - TT_COUNTERS_AFTER_NS : 0,
		.waited_ns = s->miss.waited_ns, .over_ns = s->miss.over_ns,
	};
}

struct tt_an_causes tt_snapshot_an_causes(const struct tt_snapshot *s)
{
	const struct tt_snapshot_causes *c = &s->causes;
	/* (why no split, or, with one, why its time without switches is unknown) */
	const struct tt_snapshot_unsplit *u = &s->unsplit;
	const struct tt_snapshot_unknown *k = &s->unknown;
	/* (exact but for wake-ups and the kernel's moves: error_ns is its stolen time's) */
	bool exact = c->from == TT_CAUSES_SWITCHES &&
		     !(c->flags & (TT_CAUSES_WAKEUPS | TT_CAUSES_WAKEUPS_UNBOUNDED | TT_CAUSES_MOVED));
	return (struct tt_an_causes){
		.from = (enum tt_an_causes_from)c->from, .error_ns = exact ? 0 : c->error_ns,
		/* (how much moved is not kept: "~" and the error alone) */
		.wakeups_unbounded = c->flags & TT_CAUSES_WAKEUPS_UNBOUNDED,
		.faults = c->flags & TT_CAUSES_FAULTS, .minor_faults = c->minor_faults,
		.major_faults = c->major_faults, .faults_at_least = c->flags & TT_CAUSES_FAULTS_AT_LEAST,
		.faults_at_most = c->flags & TT_CAUSES_FAULTS_AT_MOST,
		.stolen_known = c->flags & TT_CAUSES_STOLEN,
		.stolen_ns = c->stolen_ns,
		.stolen_error_ns = TT_CAUSES_STOLEN_MISS(c->flags) ? s->info.on_cpu_ns : c->error_ns,
		.stolen_miss = (enum tt_an_stolen_miss)TT_CAUSES_STOLEN_MISS(c->flags),
		.miss = (enum tt_an_counters_miss)(u->why | k->why), .miss_start_ns = u->start_ns | k->start_ns,
		.miss_end_ns = u->end_ns | k->end_ns, .miss_budget = (u->flags | k->flags) & TT_UNSPLIT_BUDGET,
		.miss_blind = s->miss.flags & TT_MISS_BLIND, .miss_detail = tt_snapshot_miss_detail(s),
		.lost = k->lost, .lost_ns = k->without_ns,
		.covered_ns = k->without_ns ? k->without_ns - s->split.unknown_ns : 0,
	};
}

/* Whether a TSC the snapshot says an event had is outside the times a record may
 * hold (a damaged field, which would put its marks anywhere). */
static bool tt_snapshot_tsc_bad(const struct tt_file *f, uint64_t tsc)
{
	return tsc < f->tsc_min || tsc > f->tsc_max;
}

/* The fields that stand on their own: kind, threshold, split, the window's order. */
static int tt_snapshot_check_info(struct tt_file *f, const struct tt_snapshot_info *si, uint64_t at)
{
#define TT_AT(field) (at + offsetof(struct tt_snapshot_info, field))
	if (si->kind != TT_SNAPSHOT_SPIKE && si->kind != TT_SNAPSHOT_TRIGGER)
		return TT_FAIL(f, TT_AT(kind), "SNAPSHOT of kind %" PRIu32 ", neither a spike (%d) nor "
			       "a trigger (%d)", si->kind, TT_SNAPSHOT_SPIKE, TT_SNAPSHOT_TRIGGER);
	if (si->number == 0)
		return TT_FAIL(f, TT_AT(number), "SNAPSHOT number 0 (they count from 1)");
	bool spike = si->kind == TT_SNAPSHOT_SPIKE;
	if (si->threshold_from > TT_THRESHOLD_FROM_GLOBAL ||
	    (spike && si->threshold_from == TT_THRESHOLD_FROM_NONE) ||
	    (!spike && si->threshold_from != TT_THRESHOLD_FROM_NONE))
		return TT_FAIL(f, TT_AT(threshold_from), "SNAPSHOT of a %s says its threshold came "
			       "from %" PRIu32 ", which %s", spike ? "spike" : "trigger",
			       si->threshold_from, si->threshold_from > TT_THRESHOLD_FROM_GLOBAL ?
			       "is no source of thresholds" : spike ? "is none" : "a trigger has not");
	if (spike ? si->threshold_ns <= 0 : si->threshold_ns != 0)
		return TT_FAIL(f, TT_AT(threshold_ns), "SNAPSHOT of a %s with threshold %" PRId64
			       " ns", spike ? "spike" : "trigger", si->threshold_ns);
	if (si->has_split > 1)
		return TT_FAIL(f, TT_AT(has_split), "SNAPSHOT has_split %" PRIu32 ", not 0 or 1",
			       si->has_split);
	if (si->has_split && (si->on_cpu_ns < 0 || si->preempted_ns < 0 || si->blocked_ns < 0))
		return TT_FAIL(f, TT_AT(on_cpu_ns), "SNAPSHOT split into negative times: on CPU %"
			       PRId64 " ns, preempted %" PRId64 " ns, blocked %" PRId64 " ns",
			       si->on_cpu_ns, si->preempted_ns, si->blocked_ns);
	/* The window's ends may lie outside the run (TICKTRACE_SNAPSHOT_BEFORE reaching
	 * back before it began, or from 0; the exit before the window ended); the spike
	 * or trigger is an event of it. */
	const struct {
		uint64_t tsc;
		size_t at;
		const char *what;
	} window[] = {
		{si->from_tsc, offsetof(struct tt_snapshot_info, from_tsc), "from_tsc"},
		{si->begin_tsc, offsetof(struct tt_snapshot_info, begin_tsc), "begin_tsc"},
		{si->end_tsc, offsetof(struct tt_snapshot_info, end_tsc), "end_tsc"},
		{si->to_tsc, offsetof(struct tt_snapshot_info, to_tsc), "to_tsc"},
	};
	for (size_t i = 0; i < sizeof window / sizeof window[0]; i++) {
		bool event = i == 1 || i == 2;
		if (event && tt_snapshot_tsc_bad(f, window[i].tsc))
			return TT_FAIL(f, at + window[i].at, "SNAPSHOT %s %" PRIu64 " is long %s the "
				       "run (TSC %" PRIu64 " to %" PRIu64 "): a damaged field", window[i].what,
				       window[i].tsc, window[i].tsc < f->tsc_min ? "before" : "after",
				       f->header.start.tsc, f->header.end.tsc);
		if (i && window[i].tsc < window[i - 1].tsc)
			return TT_FAIL(f, at + window[i].at, "SNAPSHOT %s %" PRIu64 " is before its %s %"
				       PRIu64 " (the window holds the spike: from <= begin <= end <= to)",
				       window[i].what, window[i].tsc, window[i - 1].what, window[i - 1].tsc);
	}
	if (!spike && si->end_tsc != si->begin_tsc)
		return TT_FAIL(f, TT_AT(end_tsc), "SNAPSHOT of a trigger ends at TSC %" PRIu64 ", not "
			       "where it begins (%" PRIu64 ")", si->end_tsc, si->begin_tsc);
	return 0;
#undef TT_AT
}

/* The rest of the split: the spike's duration, which its split makes up. */
static int tt_snapshot_check_split(struct tt_file *f, const struct tt_snapshot_info *si,
				   const struct tt_snapshot_split *split, uint64_t at)
{
#define TT_AT(field) (at + offsetof(struct tt_snapshot_split, field))
	if (split->dur_ns < 0 || split->unknown_ns < 0)
		return TT_FAIL(f, TT_AT(dur_ns), "SNAPSHOT of a spike of %" PRId64 " ns, %" PRId64
			       " ns of it unknown", split->dur_ns, split->unknown_ns);
	if (!si->has_split && split->unknown_ns)
		return TT_FAIL(f, TT_AT(unknown_ns), "SNAPSHOT without a split says %" PRId64
			       " ns of it are unknown", split->unknown_ns);
	int64_t sum = 0;
	bool over = __builtin_add_overflow(si->on_cpu_ns, si->preempted_ns, &sum) ||
		    __builtin_add_overflow(sum, si->blocked_ns, &sum) ||
		    __builtin_add_overflow(sum, split->unknown_ns, &sum);
	if (si->has_split && (over || sum != split->dur_ns))
		return TT_FAIL(f, TT_AT(unknown_ns), "SNAPSHOT split (on CPU %" PRId64 " ns, preempted %"
			       PRId64 " ns, blocked %" PRId64 " ns, unknown %" PRId64 " ns) does not make "
			       "up its spike's %" PRId64 " ns", si->on_cpu_ns, si->preempted_ns,
			       si->blocked_ns, split->unknown_ns, split->dur_ns);
	return 0;
#undef TT_AT
}

/* What else the split says: a source it has (none without a split), a resolution
 * within its duration, stolen time within its time on CPU. */
static int tt_snapshot_check_causes(struct tt_file *f, const struct tt_snapshot_info *si,
				    const struct tt_snapshot_split *split,
				    const struct tt_snapshot_causes *c, uint64_t at)
{
#define TT_AT(field) (at + offsetof(struct tt_snapshot_causes, field))
	if (c->from > TT_CAUSES_THREAD_TIMES || (c->from != TT_CAUSES_NONE) != (si->has_split != 0))
		return TT_FAIL(f, TT_AT(from), "SNAPSHOT split's source %" PRIu32 " (1: switches, "
			       "2: schedstat, 3: thread times) for a snapshot %s a split", c->from,
			       si->has_split ? "with" : "without");
	if (c->error_ns < 0 || c->error_ns > split->dur_ns)
		return TT_FAIL(f, TT_AT(error_ns), "SNAPSHOT split within %" PRId64 " ns of a spike of %"
			       PRId64 " ns", c->error_ns, split->dur_ns);
	if ((c->flags & TT_CAUSES_STOLEN) && (c->stolen_ns < 0 || c->stolen_ns > si->on_cpu_ns))
		return TT_FAIL(f, TT_AT(stolen_ns), "SNAPSHOT split's stolen time %" PRId64 " ns is not "
			       "within its %" PRId64 " ns on CPU", c->stolen_ns, si->on_cpu_ns);
	return 0;
#undef TT_AT
}

/* Why a spike has no split: a reason the format has, none with a split or for a
 * trigger, the readings' distances not negative. */
static int tt_snapshot_check_unsplit(struct tt_file *f, const struct tt_snapshot_info *si,
				     const struct tt_snapshot_unsplit *u, uint64_t at)
{
#define TT_AT(field) (at + offsetof(struct tt_snapshot_unsplit, field))
	if (u->why > TT_UNSPLIT_NEVER_READ)
		return TT_FAIL(f, TT_AT(why), "SNAPSHOT says its spike has no split for reason %" PRIu32
			       ", which is none (0 to %d)", u->why, TT_UNSPLIT_NEVER_READ);
	bool none = si->has_split || si->kind == TT_SNAPSHOT_TRIGGER;
	if (none && (u->why || u->flags || u->start_ns || u->end_ns))
		return TT_FAIL(f, TT_AT(why), "SNAPSHOT of a %s says why it has no split (reason %"
			       PRIu32 ", flags 0x%" PRIx32 ")",
			       si->has_split ? "spike with a split" : "trigger", u->why, u->flags);
	if (u->start_ns < 0 || u->end_ns < 0)
		return TT_FAIL(f, TT_AT(start_ns), "SNAPSHOT says its spike's nearest counters readings "
			       "were %" PRId64 " ns from its start and %" PRId64 " ns from its end",
			       u->start_ns, u->end_ns);
	return 0;
#undef TT_AT
}

/* The spike's time without switches: none without a split or for a trigger; within
 * its duration, holding all it says unknown; why only with some unknown. */
static int tt_snapshot_check_unknown(struct tt_file *f, const struct tt_snapshot_info *si,
				     const struct tt_snapshot_split *split,
				     const struct tt_snapshot_unknown *u, uint64_t at)
{
#define TT_AT(field) (at + offsetof(struct tt_snapshot_unknown, field))
	bool none = !si->has_split || si->kind == TT_SNAPSHOT_TRIGGER;
	if (none && (u->lost || u->without_ns || u->why || u->flags || u->start_ns || u->end_ns))
		return TT_FAIL(f, TT_AT(lost), "SNAPSHOT of a %s says %" PRId64 " ns of it had no switches",
			       si->has_split ? "trigger" : "spike without a split", u->without_ns);
	if (!none && (u->without_ns < split->unknown_ns || u->without_ns > split->dur_ns))
		return TT_FAIL(f, TT_AT(without_ns), "SNAPSHOT says %" PRId64 " ns of its spike had no "
			       "switches, of %" PRId64 " ns, %" PRId64 " ns of them unknown", u->without_ns,
			       split->dur_ns, split->unknown_ns);
	if (u->why > TT_UNSPLIT_NEVER_READ || (u->why && !split->unknown_ns))
		return TT_FAIL(f, TT_AT(why), "SNAPSHOT says why %" PRId64 " ns of its spike are unknown "
			       "(reason %" PRIu32 ", 0 to %d)", split->unknown_ns, u->why, TT_UNSPLIT_NEVER_READ);
	if (u->start_ns < 0 || u->end_ns < 0)
		return TT_FAIL(f, TT_AT(start_ns), "SNAPSHOT says the counters readings nearest its time "
			       "without switches were %" PRId64 " ns from its start and %" PRId64 " ns from "
			       "its end", u->start_ns, u->end_ns);
	return 0;
#undef TT_AT
}

/* The readings beside why: none where no why is said; a flag the format has; a far
 * side's distance not below TT_MISS_FAR_NONE; a wait not below 0, read over a time
 * (the kernel counts a wait whole as it ends: one begun before the first reading may
 * make it longer than that time). */
static int tt_snapshot_check_miss(struct tt_file *f, bool why_said, const struct tt_snapshot_miss *m,
				  uint64_t at)
{
#define TT_AT(field) (at + offsetof(struct tt_snapshot_miss, field))
	if (!why_said && (m->flags || m->before_ns || m->after_ns || m->waited_ns || m->over_ns))
		return TT_FAIL(f, TT_AT(flags), "SNAPSHOT says where its counters were read (flags 0x%" PRIx32
			       ") but not why they bound nothing", m->flags);
	const uint32_t known = TT_MISS_TICK | TT_MISS_BLIND;
	if (m->flags & ~known || m->reserved)
		return TT_FAIL(f, TT_AT(flags), "SNAPSHOT's readings have flags 0x%" PRIx32 " (reserved 0x%"
			       PRIx32 "), of which 0x%" PRIx32 " alone are known", m->flags, m->reserved, known);
	if (m->before_ns < TT_MISS_FAR_NONE || m->after_ns < TT_MISS_FAR_NONE)
		return TT_FAIL(f, TT_AT(before_ns), "SNAPSHOT says the readings beyond its edges were %" PRId64
			       " ns before and %" PRId64 " ns after it", m->before_ns, m->after_ns);
	if (m->waited_ns < 0 || m->over_ns < 0 || (m->waited_ns && !m->over_ns))
		return TT_FAIL(f, TT_AT(waited_ns), "SNAPSHOT says its thread waited %" PRId64 " ns for a CPU "
			       "in %" PRId64 " ns", m->waited_ns, m->over_ns);
	return 0;
#undef TT_AT
}

int tt_file_read_snapshot(struct tt_file *f, uint64_t at, uint64_t size, bool after_process)
{
	if (f->snapshot)
		return TT_FAIL(f, at, "a second SNAPSHOT section");
	if (!after_process)
		return TT_FAIL(f, at, "a SNAPSHOT section before the PROCESS section");
	if (!(f->header.flags & TT_FILE_SNAPSHOT))
		return TT_FAIL(f, at, "a SNAPSHOT section in a file whose header does not say it is "
			       "a snapshot");
	if (f->header.flags & TT_FILE_LIVE)
		return TT_FAIL(f, offsetof(struct tt_file_header, flags), "a snapshot (written whole) "
			       "that says it is a live file");
	struct tt_snapshot_info si;
	if (size < sizeof si)
		return TT_FAIL(f, at, "SNAPSHOT section of %" PRIu64 " %s, too small for its "
			       "header (%zu)", size, TT_BYTES(size), sizeof si);
	memcpy(&si, f->data + at, sizeof si);
	uint64_t want = sizeof si + TT_PAD8(si.name_len) + (uint64_t)si.cuts * sizeof(struct tt_snapshot_cut);
	/* (the first version's ends at its cuts: no tt_snapshot_split; the second's at it:
	 * no tt_snapshot_causes; the third's at that: no tt_snapshot_unsplit; the fifth's at
	 * tt_snapshot_unknown: no tt_snapshot_miss) */
	uint64_t with_split = want + sizeof(struct tt_snapshot_split);
	uint64_t with_causes = with_split + sizeof(struct tt_snapshot_causes);
	uint64_t with_unsplit = with_causes + sizeof(struct tt_snapshot_unsplit);
	uint64_t with_unknown = with_unsplit + sizeof(struct tt_snapshot_unknown);
	uint64_t with_miss = with_unknown + sizeof(struct tt_snapshot_miss);
	if (size != want && size != with_split && size != with_causes && size < with_unsplit)
		return TT_FAIL(f, at, "SNAPSHOT section of %" PRIu64 " %s, but its name (%" PRIu32
			       " %s, padded to 8), %" PRIu32 " cuts and the rest of its split take %"
			       PRIu64, size, TT_BYTES(size), si.name_len, TT_BYTES(si.name_len), si.cuts, with_unsplit);
	if (tt_snapshot_check_info(f, &si, at) < 0)
		return -1;
	struct tt_snapshot_split split = {
		.dur_ns = tt_clock_ns(&f->clock, si.end_tsc) - tt_clock_ns(&f->clock, si.begin_tsc)};
	struct tt_snapshot_causes causes = {0};
	struct tt_snapshot_unsplit unsplit = {0};
	struct tt_snapshot_unknown unknown = {0};
	struct tt_snapshot_miss miss = {0};
	if (size != want) {
		memcpy(&split, f->data + at + want, sizeof split);
		if (tt_snapshot_check_split(f, &si, &split, at + want) < 0)
			return -1;
	}
	if (size >= with_causes) {
		memcpy(&causes, f->data + at + with_split, sizeof causes);
		if (tt_snapshot_check_causes(f, &si, &split, &causes, at + with_split) < 0)
			return -1;
	}
	if (size >= with_unsplit) {
		memcpy(&unsplit, f->data + at + with_causes, sizeof unsplit);
		if (tt_snapshot_check_unsplit(f, &si, &unsplit, at + with_causes) < 0)
			return -1;
	}
	if (size >= with_unknown) {
		memcpy(&unknown, f->data + at + with_unsplit, sizeof unknown);
		if (tt_snapshot_check_unknown(f, &si, &split, &unknown, at + with_unsplit) < 0)
			return -1;
	}
	if (size >= with_miss) {
		memcpy(&miss, f->data + at + with_unknown, sizeof miss);
		if (tt_snapshot_check_miss(f, unsplit.why || unknown.why, &miss, at + with_unknown) < 0)
			return -1;
	}
	struct tt_snapshot *s = calloc(1, sizeof *s);
	if (!s || (si.cuts && !(s->cuts = calloc(si.cuts, sizeof *s->cuts)))) {
		free(s);
		return TT_FAIL(f, at, "out of memory for a SNAPSHOT of %" PRIu32 " cuts", si.cuts);
	}
	f->snapshot = s;
	s->info = si;
	s->split = split;
	s->causes = causes;
	s->unsplit = unsplit;
	s->unknown = unknown;
	s->miss = miss;
	s->at = at;
	s->name = (struct tt_str){(const char *)f->data + at + sizeof si, si.name_len};
	uint64_t cuts_at = at + sizeof si + TT_PAD8(si.name_len);
	for (uint32_t i = 0; i < si.cuts; i++) {
		struct tt_snapshot_cut cut;
		uint64_t pos = cuts_at + (uint64_t)i * sizeof cut;
		memcpy(&cut, f->data + pos, sizeof cut);
		if (cut.events == 0)
			return TT_FAIL(f, pos + offsetof(struct tt_snapshot_cut, events),
				       "SNAPSHOT cut %" PRIu32 " lost no events", i);
		/* (lost_from_tsc 0: the ring forgot where its losses began) */
		if (cut.lost_from_tsc > cut.lost_to_tsc)
			return TT_FAIL(f, pos + offsetof(struct tt_snapshot_cut, lost_from_tsc),
				       "SNAPSHOT cut %" PRIu32 " lost TSC %" PRIu64 " to %" PRIu64 ": backwards",
				       i, cut.lost_from_tsc, cut.lost_to_tsc);
		/* (the last event lost is one of the run's, the first no later) */
		if (tt_snapshot_tsc_bad(f, cut.lost_to_tsc))
			return TT_FAIL(f, pos + offsetof(struct tt_snapshot_cut, lost_to_tsc),
				       "SNAPSHOT cut %" PRIu32 " lost TSC %" PRIu64 " to %" PRIu64
				       ", long outside the run: a damaged field", i, cut.lost_from_tsc,
				       cut.lost_to_tsc);
		s->cuts[i].cut = cut;
		s->cuts[i].at = pos;
	}
	return 0;
}

/* The thread of file index `index`, or NULL. */
static const struct tt_thread *tt_thread_of(const struct tt_file *f, uint32_t index)
{
	uint32_t pos;
	return tt_map_get(&f->thread_map, index, &pos) ? &f->threads[pos] : NULL;
}

int tt_file_check_snapshot(struct tt_file *f)
{
	struct tt_snapshot *s = f->snapshot;
	if (!s) {
		if (f->header.flags & TT_FILE_SNAPSHOT)
			return TT_FAIL(f, offsetof(struct tt_file_header, flags), "the header says the "
				       "file is a snapshot, but it has no SNAPSHOT section");
		return 0;
	}
	/* a trigger may come from a thread that never recorded: no thread of the file */
	bool none = s->info.thread_index == TT_SNAPSHOT_NO_THREAD && s->info.kind == TT_SNAPSHOT_TRIGGER;
	if (!(s->thread = tt_thread_of(f, s->info.thread_index)) && !none)
		return TT_FAIL(f, s->at + offsetof(struct tt_snapshot_info, thread_index),
			       "SNAPSHOT of thread index %" PRIu32 ", which has no THREAD section",
			       s->info.thread_index);
	for (uint32_t i = 0; i < s->info.cuts; i++) {
		struct tt_snapshot_thread_cut *c = &s->cuts[i];
		uint64_t at = c->at + offsetof(struct tt_snapshot_cut, thread_index);
		if (!(c->thread = tt_thread_of(f, c->cut.thread_index)))
			return TT_FAIL(f, at, "SNAPSHOT cut %" PRIu32 " of thread index %" PRIu32
				       ", which has no THREAD section", i, c->cut.thread_index);
		for (uint32_t k = 0; k < i; k++)
			if (s->cuts[k].thread == c->thread)
				return TT_FAIL(f, at, "SNAPSHOT cuts %" PRIu32 " and %" PRIu32 " are of "
					       "one thread (index %" PRIu32 ")", k, i, c->cut.thread_index);
		/* the thread counts what the ring overwrote in its window, as lost */
		if (c->thread->dropped[TT_DROP_OVERWRITTEN] != c->cut.events)
			return TT_FAIL(f, c->at + offsetof(struct tt_snapshot_cut, events),
				       "SNAPSHOT cut %" PRIu32 " lost %" PRIu64 " events of thread index %"
				       PRIu32 ", which counts %" PRIu64 " overwritten", i, c->cut.events,
				       c->cut.thread_index, c->thread->dropped[TT_DROP_OVERWRITTEN]);
	}
	return 0;
}

void tt_snapshot_free(struct tt_snapshot *s)
{
	if (s)
		free(s->cuts);
	free(s);
}
