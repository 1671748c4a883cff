/* The filter sink: passes to another sink only the events of the chosen threads and
 * time window, and only slices at least as long as a minimum, keeping nesting valid.
 *
 * A slice is kept when it overlaps the window [from, to] (and lasts min_dur or more).
 * Sinks that take slice_begin (Perfetto) get it once the slice is known to be kept:
 * at once when it begins inside the window, or, for a slice open before the window,
 * at the thread's first event inside it, with its own begin time. A slice kept has
 * its parent kept, so nesting holds. With clip, a slice that crosses an edge of the
 * window is cut there and flagged: the window's start is its begin, the window's end
 * its end (nesting still holds: a child's cut slice lies within its parent's).
 * With by_begin (a shard of --split), a slice is kept when it begins in the window,
 * and only there: a slice open across the window's edge belongs to the window where
 * it begins, whole, and a child begun inside the window is kept without its parent
 * begun before it, so that consecutive windows hold every slice exactly once. */
#include <stdlib.h>
#include <string.h>

#include "sinks.h"

/* TT_BEFORE: begun before a by_begin window, left out, its children judged alone */
enum tt_fate { TT_PENDING, TT_KEPT, TT_DROPPED, TT_BEFORE };

struct tt_filter_thread {
	bool chosen;
	uint8_t *fate; /* by depth: enum tt_fate of the open slices */
	struct tt_event *pending; /* by depth: the begins of slices open before the window */
	uint32_t cap;
	/* Open slices still TT_PENDING: once the thread's time reaches the window they are
	 * all kept, and no slice begun after that is pending, so the stack is walked once
	 * (a walk per event made deep nesting quadratic). */
	uint32_t npending;
	/* With clip, for sinks that read no slice_begin (JSON): the slices cut at the
	 * window's start, held in pending[1..held] until the outermost one ends, so that
	 * parents come first (they begin at one time, and a child that also ends with its
	 * parent is nested only by the order of events). One a depth: they were open at
	 * the window's start. */
	uint32_t held;
};

struct tt_filter_sink {
	struct tt_sink sink;
	struct tt_sink *inner;
	struct tt_filter f;
	/* With f.cut_states: the trace as the inner sink is shown it (tt_filter_view) */
	struct tt_trace view;
	const struct tt_trace *trace; /* the trace it was shown (tt_filter_set_end cuts again) */
	struct tt_thread *view_threads;
	struct tt_sched_state *view_states;
	int64_t *own_gone; /* f.gone, where the caller gave none */
	struct tt_filter_thread *threads; /* by thread id */
	size_t nthreads;
	/* Whether anything was kept, and when the chosen threads' events were: a filter
	 * that keeps nothing says why. */
	uint64_t kept;
	int64_t first_ts, last_ts;
};

/* An event of a chosen thread, kept or not. */
static void tt_filter_saw(struct tt_filter_sink *fs, int64_t from, int64_t to)
{
	fs->first_ts = from < fs->first_ts ? from : fs->first_ts;
	fs->last_ts = to > fs->last_ts ? to : fs->last_ts;
}

static bool tt_name_is(struct tt_str s, const char *name)
{
	return strlen(name) == s.len && memcmp(s.ptr, name, s.len) == 0;
}

/* A thread the tools named after its first scope ("zstd: POOL_thread") still goes by
 * its process's name, the one it had. */
static bool tt_was_named(const struct tt_thread *t, const char *name)
{
	struct tt_str process = t->file->process.name;
	size_t n = strlen(name);
	return n == process.len && memcmp(name, process.ptr, n) == 0 && t->name.len > n + 2 &&
	       memcmp(t->name.ptr, name, n) == 0 && memcmp(t->name.ptr + n, ": ", 2) == 0;
}

bool tt_filter_keeps_thread(const struct tt_filter *f, const struct tt_thread *t)
{
	if (f->nthreads == 0)
		return true;
	for (size_t i = 0; i < f->nthreads; i++) {
		char *end;
		unsigned long tid = strtoul(f->threads[i], &end, 10);
		if ((*end == 0 && tid == t->tid) || tt_name_is(t->name, f->threads[i]) ||
		    tt_was_named(t, f->threads[i]))
			return true;
	}
	return false;
}

/* Thread th's states within [lo, hi) (ns on its clock), into out: none when it was
 * gone for good (tt_states_gone) by lo, else the first moved to lo where it began before, and an unknown state at hi where a later one begins there
 * or after, or where the thread's exit that ends its last run (tt_state_exits) is
 * there or after, so that each piece ends where the window does (the last state,
 * which nothing ends, gets no end here either). A RUNNING state whose CPU only its
 * switch out says (tt_state_cpu) keeps it, that switch perhaps past hi. How many. */
static size_t tt_states_cut(const struct tt_thread *th, int64_t gone, int64_t lo, int64_t hi,
			    struct tt_sched_state *out)
{
	size_t n = 0, i, first = 0, past = th->nstates;
	if (gone <= lo)
		return 0;
	while (first < past) { /* the first state that ends after lo */
		size_t mid = first + (past - first) / 2;
		if (mid + 1 < th->nstates && th->states[mid + 1].ns <= lo)
			first = mid + 1;
		else
			past = mid;
	}
	for (i = first; i < th->nstates && th->states[i].ns < hi; i++) {
		out[n] = th->states[i];
		out[n].cpu = tt_state_cpu(th, i);
		out[n].ns = out[n].ns > lo ? out[n].ns : lo;
		n++;
	}
	if (n && (i < th->nstates || (tt_state_exits(th, i - 1) && th->exited_ns >= hi)))
		out[n++] = (struct tt_sched_state){.ns = hi, .what = TT_SCHED_UNKNOWN}; /* (none lost) */
	return n;
}

/* With cut_states: the trace t as the inner sink is shown it, in fs->view: the same
 * files and threads, but each thread's states (the writers show them whole at their
 * start) cut to the window, and none of a thread not chosen; so that --from/--to and
 * each shard of --split carry the states of their time only, and the shards' states
 * add up to the run's. The view's files and threads are copies: events still point
 * to t's, which sinks know by their index and id, never by their address. Freed with
 * the filter, which goes after the inner sink. */
static void tt_filter_cut(struct tt_filter_sink *fs, const struct tt_trace *t);

static int tt_filter_view(struct tt_filter_sink *fs, const struct tt_trace *t)
{
	size_t states = 0;
	fs->trace = t;
	for (size_t i = 0; i < t->nfiles; i++)
		for (size_t k = 0; k < t->files[i].nthreads; k++)
			states += t->files[i].threads[k].nstates + 1; /* (and an end) */
	fs->view = *t;
	fs->view.states_at_finish = fs->f.open_end;
	fs->view.files = calloc(t->nfiles ? t->nfiles : 1, sizeof(*fs->view.files));
	fs->view_threads = calloc(t->nthreads ? t->nthreads : 1, sizeof(*fs->view_threads));
	fs->view_states = malloc((states ? states : 1) * sizeof(*fs->view_states));
	if (!fs->view.files || !fs->view_threads || !fs->view_states)
		return tt_error("out of memory for the threads' states");
	if (!fs->f.gone) {
		fs->f.gone = fs->own_gone = malloc((t->nthreads ? t->nthreads : 1) * sizeof(*fs->own_gone));
		if (!fs->own_gone || tt_states_gone(t, fs->own_gone) < 0)
			return fs->own_gone ? -1 : tt_error("out of memory for the threads' states");
	}
	tt_filter_cut(fs, t);
	return 0;
}

/* The view's states cut to the window as it is now (again, once a shard's end is
 * known: tt_filter_set_end). */
static void tt_filter_cut(struct tt_filter_sink *fs, const struct tt_trace *t)
{
	int64_t lo = INT64_MIN, hi = INT64_MAX;
	if (fs->f.has_from && __builtin_add_overflow(t->base_ns, fs->f.from, &lo))
		lo = fs->f.from < 0 ? INT64_MIN : INT64_MAX;
	/* (to is the window's last ns: it ends at the next) */
	if (fs->f.has_to && (__builtin_add_overflow(t->base_ns, fs->f.to, &hi) ||
			     __builtin_add_overflow(hi, 1, &hi)))
		hi = fs->f.to < 0 ? INT64_MIN : INT64_MAX;
	struct tt_thread *th = fs->view_threads;
	struct tt_sched_state *st = fs->view_states;
	for (size_t i = 0; i < t->nfiles; i++) {
		struct tt_file *f = &fs->view.files[i];
		*f = t->files[i];
		f->threads = th;
		for (size_t k = 0; k < f->nthreads; k++, th++) {
			*th = t->files[i].threads[k];
			th->states = st;
			th->nstates = fs->threads[th->id].chosen ?
					      tt_states_cut(&t->files[i].threads[k], fs->f.gone[th->id], lo, hi, st) : 0;
			th->states_cap = th->nstates;
			/* (its exit said in the window that holds it) */
			th->exited_ns = th->exited_ns >= lo && th->exited_ns < hi ? th->exited_ns : 0;
			st += th->nstates;
		}
	}
}

void tt_filter_set_end(struct tt_sink *s, int64_t to)
{
	struct tt_filter_sink *fs = (struct tt_filter_sink *)s;
	fs->f.has_to = true;
	fs->f.to = to;
	if (fs->f.cut_states && fs->trace)
		tt_filter_cut(fs, fs->trace);
}

static int tt_filter_start(struct tt_sink *s, const struct tt_trace *t)
{
	struct tt_filter_sink *fs = (struct tt_filter_sink *)s;
	fs->threads = calloc(t->nthreads ? t->nthreads : 1, sizeof(*fs->threads));
	if (!fs->threads)
		return tt_error("out of memory");
	fs->nthreads = t->nthreads;
	for (size_t i = 0; i < t->nfiles; i++)
		for (size_t k = 0; k < t->files[i].nthreads; k++) {
			const struct tt_thread *th = &t->files[i].threads[k];
			fs->threads[th->id].chosen = tt_filter_keeps_thread(&fs->f, th);
		}
	for (size_t a = 0; a < fs->f.nthreads; a++) {
		struct tt_filter one = {.threads = &fs->f.threads[a], .nthreads = 1};
		bool found = false;
		for (size_t i = 0; i < t->nfiles && !found; i++)
			for (size_t k = 0; k < t->files[i].nthreads && !found; k++)
				found = tt_filter_keeps_thread(&one, &t->files[i].threads[k]);
		if (!found)
			tt_warn("--thread %s: no thread has that tid or name (`ticktrace info` lists "
				"them)", fs->f.threads[a]);
	}
	if (fs->f.cut_states && tt_filter_view(fs, t) < 0)
		return -1;
	const struct tt_trace *shown = fs->f.cut_states ? &fs->view : t;
	return fs->inner->ops->start ? fs->inner->ops->start(fs->inner, shown) : 0;
}

#define TT_FORWARD(fs, op, ...) ((fs)->inner->ops->op ? (fs)->inner->ops->op((fs)->inner, __VA_ARGS__) : 0)

/* At a thread's first event inside the window: the begins of the slices still open
 * from before it, outermost first. */
static int tt_filter_flush(struct tt_filter_sink *fs, struct tt_filter_thread *th, uint32_t depth,
			   int64_t ts)
{
	if (ts < fs->f.from || th->npending == 0)
		return 0;
	for (uint32_t d = 0; d < depth; d++) {
		if (th->fate[d] != TT_PENDING)
			continue;
		th->fate[d] = TT_KEPT;
		th->npending--;
		struct tt_event begin = th->pending[d];
		if (fs->f.clip) {
			begin.ts = fs->f.from;
			begin.flags |= TT_EV_CLIPPED_BEGIN;
		}
		if (TT_FORWARD(fs, slice_begin, &begin) < 0)
			return -1;
	}
	return 0;
}

static int tt_filter_begin(struct tt_sink *s, const struct tt_event *e)
{
	struct tt_filter_sink *fs = (struct tt_filter_sink *)s;
	struct tt_filter_thread *th = &fs->threads[e->thread->id];
	if (!th->chosen)
		return 0;
	if (e->depth >= th->cap) {
		uint32_t cap = th->cap ? th->cap * 2 : 64;
		uint8_t *fate = realloc(th->fate, cap);
		if (fate) /* (a parent this filter never saw: begun before a shard's filter was made) */
			memset(fate + th->cap, TT_PENDING, cap - th->cap);
		if (fate)
			th->fate = fate;
		struct tt_event *pending = realloc(th->pending, cap * sizeof(*pending));
		if (pending)
			th->pending = pending;
		if (!fate || !pending)
			return tt_error("out of memory");
		th->cap = cap;
	}
	if (tt_filter_flush(fs, th, e->depth, e->ts) < 0)
		return -1;
	bool parent_dropped = e->depth > 0 && th->fate[e->depth - 1] == TT_DROPPED;
	if (parent_dropped || e->ts > fs->f.to) {
		th->fate[e->depth] = TT_DROPPED;
		return 0;
	}
	if (e->ts < fs->f.from && fs->f.by_begin) {
		th->fate[e->depth] = TT_BEFORE;
		return 0;
	}
	if (e->ts < fs->f.from) {
		th->fate[e->depth] = TT_PENDING;
		th->pending[e->depth] = *e;
		th->npending++;
		return 0;
	}
	th->fate[e->depth] = TT_KEPT;
	return TT_FORWARD(fs, slice_begin, e);
}

static int tt_filter_release_held(struct tt_filter_sink *fs, struct tt_filter_thread *th);

static int tt_filter_end(struct tt_sink *s, const struct tt_event *e)
{
	struct tt_filter_sink *fs = (struct tt_filter_sink *)s;
	struct tt_filter_thread *th = &fs->threads[e->thread->id];
	if (!th->chosen)
		return 0;
	int64_t end = e->ts + e->dur;
	tt_filter_saw(fs, e->ts, end);
	if (tt_filter_flush(fs, th, e->depth + 1, end) < 0)
		return -1;
	if (th->fate[e->depth] == TT_PENDING)
		th->npending--; /* it ended before the window */
	if (th->fate[e->depth] != TT_KEPT)
		return 0; /* outside the window */
	struct tt_event cut = *e;
	if (fs->f.clip && cut.ts < fs->f.from) {
		cut.ts = fs->f.from;
		cut.flags |= TT_EV_CLIPPED_BEGIN;
	}
	if (fs->f.clip && end > fs->f.to) {
		end = fs->f.to;
		cut.flags |= TT_EV_CLIPPED_END;
	}
	cut.dur = end - cut.ts;
	if (cut.dur < fs->f.min_dur)
		return 0; /* its children are shorter still: nesting holds */
	fs->kept++;
	if ((cut.flags & TT_EV_CLIPPED_BEGIN) && e->depth > 0 && !fs->inner->ops->slice_begin) {
		th->pending[e->depth] = cut; /* its slot is free: the slice has ended */
		th->held = th->held > e->depth ? th->held : e->depth;
		return 0;
	}
	int rc = TT_FORWARD(fs, slice_end, &cut);
	/* The held slices' outermost parent is at depth 0 (all were open at the window's
	 * start): the end of a slice deeper, begun inside the window, would let go of
	 * slots whose slices are still open, their begins in them. */
	return rc < 0 || e->depth > 0 ? rc : tt_filter_release_held(fs, th);
}

/* The slices held by tt_filter_end, outermost first, after their parent. */
static int tt_filter_release_held(struct tt_filter_sink *fs, struct tt_filter_thread *th)
{
	uint32_t n = th->held;
	th->held = 0;
	for (uint32_t d = 1; d <= n; d++)
		if (TT_FORWARD(fs, slice_end, &th->pending[d]) < 0)
			return -1;
	return 0;
}

/* Instants, counters and flows: kept inside the window. */
static bool tt_filter_point(struct tt_filter_sink *fs, const struct tt_event *e, int *rc)
{
	struct tt_filter_thread *th = &fs->threads[e->thread->id];
	*rc = 0;
	if (th->chosen)
		tt_filter_saw(fs, e->ts, e->ts);
	if (!th->chosen || e->ts < fs->f.from || e->ts > fs->f.to)
		return false;
	fs->kept++;
	*rc = tt_filter_flush(fs, th, e->depth, e->ts);
	return *rc == 0;
}

static int tt_filter_instant(struct tt_sink *s, const struct tt_event *e)
{
	struct tt_filter_sink *fs = (struct tt_filter_sink *)s;
	int rc;
	return tt_filter_point(fs, e, &rc) ? TT_FORWARD(fs, instant, e) : rc;
}

static int tt_filter_counter(struct tt_sink *s, const struct tt_event *e)
{
	struct tt_filter_sink *fs = (struct tt_filter_sink *)s;
	int rc;
	return tt_filter_point(fs, e, &rc) ? TT_FORWARD(fs, counter, e) : rc;
}

/* Flows come at the end of the decoder's window, after the thread's later events:
 * they are checked against the window only. */
static int tt_filter_flow(struct tt_sink *s, const struct tt_event *e)
{
	struct tt_filter_sink *fs = (struct tt_filter_sink *)s;
	if (!fs->threads[e->thread->id].chosen || e->ts < fs->f.from || e->ts > fs->f.to)
		return 0;
	return TT_FORWARD(fs, flow, e);
}

/* Frames are the process's, not a thread's: kept when they end inside the window. */
static int tt_filter_frame(struct tt_sink *s, const struct tt_event *e)
{
	struct tt_filter_sink *fs = (struct tt_filter_sink *)s;
	if (e->ts < fs->f.from || e->ts > fs->f.to)
		return 0;
	return TT_FORWARD(fs, frame, e);
}

static int tt_filter_thread_end(struct tt_sink *s, const struct tt_thread *t,
				const struct tt_thread_summary *sum)
{
	struct tt_filter_sink *fs = (struct tt_filter_sink *)s;
	if (!fs->threads[t->id].chosen)
		return 0;
	int rc = tt_filter_release_held(fs, &fs->threads[t->id]); /* none: depth 0 ends last */
	return rc < 0 ? rc : TT_FORWARD(fs, thread_end, t, sum);
}

static int tt_filter_advance(struct tt_sink *s, int64_t ts, const struct tt_summary *so_far)
{
	return TT_FORWARD((struct tt_filter_sink *)s, advance, ts, so_far);
}

static void tt_filter_warning(struct tt_sink *s, const char *message)
{
	struct tt_filter_sink *fs = (struct tt_filter_sink *)s;
	if (fs->inner->ops->warning)
		fs->inner->ops->warning(fs->inner, message);
}

static int tt_filter_finish(struct tt_sink *s, const struct tt_summary *sum)
{
	struct tt_filter_sink *fs = (struct tt_filter_sink *)s;
	char a[32], b[32], c[32], d[32];
	if (fs->kept || fs->first_ts > fs->last_ts) /* (no event of a chosen thread: said) */
		return TT_FORWARD(fs, finish, sum);
	if ((fs->f.has_from || fs->f.has_to) && (fs->f.from > fs->last_ts || fs->f.to < fs->first_ts))
		tt_warn("the filter keeps nothing: no event of the chosen threads between %s and %s "
			"(theirs span %s to %s from the run's start)",
			fs->f.has_from ? tt_an_fmt_ns(a, fs->f.from) : "the start",
			fs->f.has_to ? tt_an_fmt_ns(b, fs->f.to) : "the end", tt_an_fmt_ns(c, fs->first_ts),
			tt_an_fmt_ns(d, fs->last_ts));
	else
		tt_warn("the filter keeps nothing: no slice of the chosen threads in the window "
			"lasts %s or more", tt_an_fmt_ns(a, fs->f.min_dur));
	return TT_FORWARD(fs, finish, sum);
}

static void tt_filter_destroy(struct tt_sink *s)
{
	struct tt_filter_sink *fs = (struct tt_filter_sink *)s;
	for (size_t i = 0; fs->threads && i < fs->nthreads; i++) {
		free(fs->threads[i].fate);
		free(fs->threads[i].pending);
	}
	free(fs->threads);
	free(fs->view.files);
	free(fs->view_threads);
	free(fs->view_states);
	free(fs->own_gone);
	free(fs);
}

static const struct tt_sink_ops tt_filter_ops = {
	.start = tt_filter_start,
	.slice_begin = tt_filter_begin,
	.slice_end = tt_filter_end,
	.instant = tt_filter_instant,
	.counter = tt_filter_counter,
	.flow = tt_filter_flow,
	.frame = tt_filter_frame,
	.thread_end = tt_filter_thread_end,
	.advance = tt_filter_advance,
	.warning = tt_filter_warning,
	.finish = tt_filter_finish,
	.destroy = tt_filter_destroy,
};

struct tt_sink *tt_filter_sink_new(struct tt_sink *inner, const struct tt_filter *f)
{
	struct tt_filter_sink *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return NULL;
	fs->sink.ops = &tt_filter_ops;
	fs->inner = inner;
	fs->f = *f;
	fs->first_ts = INT64_MAX;
	fs->last_ts = INT64_MIN;
	if (!f->has_from)
		fs->f.from = INT64_MIN;
	if (!f->has_to)
		fs->f.to = INT64_MAX;
	return &fs->sink;
}

bool tt_filter_active(const struct tt_filter *f)
{
	return f->nthreads > 0 || f->has_from || f->has_to || f->min_dur > 0;
}
