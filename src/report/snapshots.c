/* Snapshots, the flight recorder that keeps each spike: with TICKTRACE_SNAPSHOTS=DIR,
 * each spike the live detector finds (spikes.c, modes stop and ring) and each call of
 * tt_trigger, with its why, writes into DIR a raw file of every thread's records and
 * states from TICKTRACE_SNAPSHOT_BEFORE (100 ms) before the spike began to
 * TICKTRACE_SNAPSHOT_AFTER (10 ms) after it ended: spike-PID-N-NAME.ttr,
 * trigger-PID-N-WHY.ttr (N: the spike's number among the spikes found, the trigger's among
 * the triggers; PID.T where a run before this one of the same pid left its snapshots
 * there: a file there is never replaced, tt__snapshot_id).
 *
 * A flight recorder left running for hours must keep the worst: of the spikes, the
 * TICKTRACE_SNAPSHOT_MAX (16) that went furthest past their threshold, duration over
 * threshold (a 30 ms scope over a 10 ms threshold: 3.0; a tie to the earlier), kept
 * in a heap whose top is the least of them. A spike that ranks below it is not even
 * copied (skipped); one above it takes its place: a snapshot waiting for its window
 * is dropped, a written one is removed once the new one is whole, before it has its
 * name (a write that fails keeps it; the folder never holds both). On a full disk (ENOSPC, EDQUOT) the new one takes the room of the
 * least written ones below it, removed until the room left holds it (none where all
 * of them would not: the disk filled by others): else the first ones, written while
 * there was room, would stay for good. A window the rings overwrote whole before it
 * was copied is no file and takes no place (r49 F5: an empty one kept among 8). A spike whose file made room keeps its place
 * among the worst. Triggers are the program asking: the first TICKTRACE_SNAPSHOT_MAX,
 * never replaced. What was replaced, skipped, refused or not written is counted and
 * said at exit.
 *
 * The thread tt-spikes writes them, once their window has ended, after each look at
 * the threads' records: it copies each thread's window as a reader (core's
 * tt__reading: the rings go on recycling, and no recording thread ever waits), then
 * writes the copies. What a ring overwrote of a window before it was copied is
 * counted in the file (core/overwritten.c). A trigger takes its place without a lock
 * or a system call, in a slot of its own that tt-spikes empties. Mode stream keeps
 * every record in its file: no snapshots.
 *
 * A trigger's 0 is a promise: its snapshot is written (or its failure counted). At
 * exit, the door closes (`on` false) before the last triggers are taken; a trigger
 * that finds it closed after filling its slot takes the slot back (-ESHUTDOWN),
 * unless tt-spikes took it first: one of the two sees the other (both seq_cst). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "report/report.h"

#define TT__SNAPSHOT_BEFORE_NS 100000000
#define TT__SNAPSHOT_AFTER_NS 10000000
#define TT__SNAPSHOT_MAX 16
#define TT__SNAPSHOT_NAME_MAX 48 /* bytes of a name kept in a file's name */
#define TT__SNAPSHOTS_WAITING 64 /* snapshots whose window has not ended yet */
#define TT__TRIGGERS 32          /* triggers not yet taken by tt-spikes */
/* The copies of a window come out of the memory budget: this part of it (a quarter)
 * is no thread's buffers. A window with more records begins later. */
#define TT__SNAPSHOT_MEMORY_PART 4

/* A snapshot whose window has not ended yet: a trigger's, or the spike kept in
 * `kept`'s place. */
#define TT__NOT_KEPT SIZE_MAX
struct tt__snapshot_due {
	struct tt__window window;
	char name[64];
	size_t kept; /* the place in tt__snap.kept, or TT__NOT_KEPT */
};

/* A spike kept: what ranks it (tt__ranks_above), and its file's number and name
 * (number 0: none, the place is empty). */
struct tt__kept_spike {
	int64_t dur, threshold, start;
	uint64_t number;
	uint64_t room; /* its file's on disk, once written */
	bool gone;     /* its file removed to make room for a worse one's (a full disk) */
	unsigned tag;  /* its file's (tt__snapshot_id), once written */
	char name[TT__SNAPSHOT_NAME_MAX + 1]; /* as its file's name has it */
};

/* One of the places of the worst spikes: the spike in it, waiting for its window's
 * end or written, and while it waits, the written one it replaces once written. */
struct tt__kept {
	struct tt__kept_spike now, replaces;
	bool written;
	size_t at; /* its index in tt__snap.heap */
};

/* A trigger's slot: free, being filled by the thread that called tt_trigger, ready
 * for tt-spikes, or being taken by it. */
enum { TT__TRIGGER_FREE, TT__TRIGGER_FILLING, TT__TRIGGER_READY, TT__TRIGGER_TAKING };
struct tt__trigger {
	int state;
	uint32_t thread;
	uint64_t tsc, number;
	char why[64];
};

static struct tt__snapshots {
	bool on;
	bool ended; /* the exit's snapshots are being written: no more are taken */
	char dir[4096];
	int64_t before_ns, after_ns;
	uint64_t max;
	uint64_t triggered;        /* triggers given a number, atomically */
	uint64_t places;           /* of `waiting`, taken by the snapshots given a number, atomically */
	/* not taken: TICKTRACE_SNAPSHOT_MAX triggers reached, too many waiting, too many
	 * triggers between two looks of tt-spikes (atomically) */
	uint64_t over_max, busy, triggers_busy;
	/* tt-spikes': files written, and removed (replaced); writes and removals failed */
	uint64_t written, removed, failed, not_removed;
	uint64_t made_room; /* files removed on a full disk for a worse spike's room */
	uint64_t lost; /* spikes' windows the rings overwrote whole before the copy: no file */
	uint64_t shortened;        /* written with a later beginning (tt__window_fit) */
	uint64_t copies_bytes;     /* the budget's part for the copies */
	/* The tag in this process's files' names (tt__snapshot_id), chosen as its first is
	 * written (`tagged`). */
	unsigned tag;
	bool tagged, retagged; /* (retagged: it changed after the first file) */
	/* the spikes (tt-spikes'): found, those whose snapshot a worse one replaced (before
	 * it was written, or its file removed), and those not worse than the least kept */
	uint64_t spikes, replaced, replaced_waiting, skipped;
	struct tt__kept *kept;     /* the places of the worst spikes, nkept of max used */
	size_t *heap;              /* their indices, the least spike on top */
	size_t nkept, kept_cap;
	struct tt__snapshot_due waiting[TT__SNAPSHOTS_WAITING]; /* tt-spikes' */
	size_t nwaiting;
	struct tt__trigger triggers[TT__TRIGGERS];
} tt__snap;

/* A duration setting, or its default when unset or said to be wrong. */
static int64_t tt__snapshot_duration(const char *var, int64_t fallback)
{
	const char *text = getenv(var);
	int64_t ns;
	char then[32];
	if (!text || !*text)
		return fallback;
	snprintf(then, sizeof then, "using %" PRId64 "ms", fallback / 1000000);
	if (tt_an_parse_duration(text, &ns) == -1) {
		fprintf(tt__err, "ticktrace: %s=%s is not a time (100ms, 1.5s); %s\n", var, text, then);
		return fallback;
	}
	return tt_time_in_range(var, text, ns, tt__err, then) ? ns : fallback;
}

static uint64_t tt__snapshot_max(void)
{
	const char *text = getenv("TICKTRACE_SNAPSHOT_MAX");
	if (!text || !*text)
		return TT__SNAPSHOT_MAX;
	char *end;
	errno = 0;
	unsigned long long max = strtoull(text, &end, 10);
	if (!errno && end != text && !*end && *text != '-' && max <= 1000000)
		return max;
	fprintf(tt__err, "ticktrace: TICKTRACE_SNAPSHOT_MAX=%s is not a number from 0 to 1000000; "
		"using %d\n", text, TT__SNAPSHOT_MAX);
	return TT__SNAPSHOT_MAX;
}

/* TSC ticks per second, from the start anchor to now: for the ring's history only,
 * before the spike detector's clock is measured. */
static uint64_t tt__rough_hz(void)
{
	struct tt_anchor now;
	tt_os_anchor(&now);
	if (now.monotonic_ns - tt__start_anchor.monotonic_ns < 10000)
		return UINT64_C(3000000000); /* (too short a span to measure) */
	return tt_os_anchor_hz(&tt__start_anchor, &now);
}

static uint64_t tt__ticks(int64_t ns, uint64_t hz)
{
	return (uint64_t)((unsigned __int128)(uint64_t)ns * hz / 1000000000);
}

unsigned tt__snapshots_memory_part(void)
{
	const char *dir = getenv("TICKTRACE_SNAPSHOTS");
	return dir && *dir && !tt__mode->drains ? TT__SNAPSHOT_MEMORY_PART : 0;
}

static bool tt__snapshots_open(struct tt__snapshots *sn)
{
	const char *dir = getenv("TICKTRACE_SNAPSHOTS");
	if (!dir || !*dir)
		return false;
	if (tt__mode->drains) {
		fprintf(tt__err, "ticktrace: TICKTRACE_SNAPSHOTS needs TICKTRACE_MODE ring or stop (a "
			"stream keeps every record in its file): no snapshots\n");
		return false;
	}
	/* (one directory for the processes of a run: a file's name says whose it is) */
	if (tt__expand_pid(dir, sn->dir, sizeof sn->dir) < 0) {
		fprintf(tt__err, "ticktrace: TICKTRACE_SNAPSHOTS=%s is too long: no snapshots\n", dir);
		return false;
	}
	int made = tt_os_dir_make(sn->dir);
	int err = made && made != -EEXIST ? made : tt_os_dir_writable(sn->dir);
	if (err) {
		fprintf(tt__err, "ticktrace: TICKTRACE_SNAPSHOTS=%s: %s: no snapshots\n", sn->dir,
			strerror(-err));
		return false;
	}
	char why[160];
	if (!tt_os_dir_ours(sn->dir, why, sizeof why)) {
		fprintf(tt__err, "ticktrace: TICKTRACE_SNAPSHOTS=%s is not yours: %s; no snapshots\n",
			sn->dir, why);
		return false;
	}
	sn->before_ns = tt__snapshot_duration("TICKTRACE_SNAPSHOT_BEFORE", TT__SNAPSHOT_BEFORE_NS);
	sn->after_ns = tt__snapshot_duration("TICKTRACE_SNAPSHOT_AFTER", TT__SNAPSHOT_AFTER_NS);
	sn->max = tt__snapshot_max();
	/* The ring's history of what it overwrote: fine over the last four windows or so. */
	uint64_t grain = tt__ticks(sn->before_ns + sn->after_ns, tt__rough_hz()) / (TT__OVERWRITES / 4);
	tt__overwrite_grain = grain ? grain : 1;
	return true;
}

bool tt__snapshots_start(void)
{
	struct tt__snapshots *sn = &tt__snap;
	if (!tt__snapshots_open(sn)) {
		/* (the budget's part for the copies goes back to the buffers) */
		if (tt__arena_set_aside_bytes())
			tt__arena_set_aside(0);
		return false;
	}
	sn->copies_bytes = tt__arena_set_aside_bytes();
	__atomic_store_n(&sn->on, true, __ATOMIC_RELEASE);
	return true;
}

/* Adds one to *counter unless it reached `limit`: whether it did. */
static bool tt__take_one(uint64_t *counter, uint64_t limit, uint64_t *now)
{
	uint64_t n = __atomic_load_n(counter, __ATOMIC_RELAXED);
	do {
		if (n >= limit)
			return false;
	} while (!__atomic_compare_exchange_n(counter, &n, n + 1, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	*now = n + 1;
	return true;
}

/* A place among the snapshots waiting for their window's end: whether one was free
 * (or counted). */
static bool tt__snapshot_place(struct tt__snapshots *sn)
{
	uint64_t places;
	if (tt__take_one(&sn->places, TT__SNAPSHOTS_WAITING, &places))
		return true;
	__atomic_add_fetch(&sn->busy, 1, __ATOMIC_RELAXED);
	return false;
}

/* A trigger's place among the snapshots waiting and its number, or 0:
 * TICKTRACE_SNAPSHOT_MAX were given, or every place is taken (each counted). */
static uint64_t tt__trigger_number(struct tt__snapshots *sn)
{
	uint64_t number;
	if (!tt__snapshot_place(sn))
		return 0;
	if (!tt__take_one(&sn->triggered, sn->max, &number)) {
		__atomic_sub_fetch(&sn->places, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&sn->over_max, 1, __ATOMIC_RELAXED);
		return 0;
	}
	return number;
}

int tt__snapshot_trigger(const char *why, uint64_t tsc, uint32_t thread)
{
	struct tt__snapshots *sn = &tt__snap;
	if (!__atomic_load_n(&sn->on, __ATOMIC_ACQUIRE))
		return __atomic_load_n(&sn->ended, __ATOMIC_RELAXED) ? -ESHUTDOWN : -ENOTCONN;
	for (size_t i = 0; i < TT__TRIGGERS; i++) {
		struct tt__trigger *t = &sn->triggers[i];
		int free_slot = TT__TRIGGER_FREE;
		if (!__atomic_compare_exchange_n(&t->state, &free_slot, TT__TRIGGER_FILLING, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		t->number = tt__trigger_number(sn);
		if (!t->number) {
			__atomic_store_n(&t->state, TT__TRIGGER_FREE, __ATOMIC_RELEASE);
			return __atomic_load_n(&sn->triggered, __ATOMIC_RELAXED) >= sn->max ? -EDQUOT : -EBUSY;
		}
		t->tsc = tsc;
		t->thread = thread;
		size_t len = why ? strnlen(why, sizeof t->why - 1) : 0;
		memcpy(t->why, why ? why : "", len);
		t->why[len] = 0;
		__atomic_store_n(&t->state, TT__TRIGGER_READY, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&sn->on, __ATOMIC_SEQ_CST))
			return 0;
		int ready = TT__TRIGGER_READY;
		if (!__atomic_compare_exchange_n(&t->state, &ready, TT__TRIGGER_FREE, false,
						 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return 0; /* (taken by the exit's last look: it will be written) */
		__atomic_sub_fetch(&sn->places, 1, __ATOMIC_RELAXED);
		return -ESHUTDOWN;
	}
	__atomic_add_fetch(&sn->triggers_busy, 1, __ATOMIC_RELAXED);
	return -EBUSY;
}

/* A name as a file's name may hold it: [A-Za-z0-9._-], the rest '_'. */
static void tt__snapshot_file_name(char *out, const char *name)
{
	size_t i = 0;
	for (; name[i] && i < TT__SNAPSHOT_NAME_MAX; i++) {
		unsigned char c = (unsigned char)name[i];
		int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '.' || c == '_' || c == '-';
		out[i] = plain ? (char)c : '_';
	}
	out[i] = 0;
}

/* A snapshot to write once its window ended (its place taken with its number), into
 * `due`: a new one (NULL), or a spike's it replaces. */
static void tt__snapshot_wait(struct tt__snapshots *sn, struct tt__snapshot_due *due,
			      const struct tt__window *w, const char *name, size_t kept)
{
	if (!due)
		due = &sn->waiting[sn->nwaiting++];
	due->window = *w;
	due->kept = kept;
	size_t len = tt_utf8_cut(name, sizeof due->name - 1);
	memcpy(due->name, name, len);
	due->name[len] = 0;
	due->window.name = due->name;
}

/* The window's ends on both clocks, from begin_tsc and end_tsc. */
static void tt__snapshot_window(struct tt__snapshots *sn, struct tt__window *w,
				const struct tt_clock *clock)
{
	uint64_t before = tt__ticks(sn->before_ns, clock->hz);
	w->info.from_tsc = w->info.begin_tsc > before ? w->info.begin_tsc - before : 0;
	w->info.to_tsc = w->info.end_tsc + tt__ticks(sn->after_ns, clock->hz);
	w->from_ns = tt__start_anchor.monotonic_ns + tt_clock_ns(clock, w->info.from_tsc);
	w->to_ns = tt__start_anchor.monotonic_ns + tt_clock_ns(clock, w->info.to_tsc);
}

/* Whether spike a went further past its threshold than b: duration over threshold,
 * a tie to the earlier. Any spike ranks above an empty place. */
static bool tt__ranks_above(const struct tt__kept_spike *a, const struct tt__kept_spike *b)
{
	if (!a->number || !b->number)
		return a->number && !b->number;
	__int128 x = (__int128)a->dur * b->threshold, y = (__int128)b->dur * a->threshold;
	return x != y ? x > y : a->start < b->start;
}

/* The heap of the places (tt__snap.heap): each spike ranks above its parent's, the
 * least on top. */
static bool tt__heap_below(const struct tt__snapshots *sn, size_t i, size_t j)
{
	return tt__ranks_above(&sn->kept[sn->heap[j]].now, &sn->kept[sn->heap[i]].now);
}

static void tt__heap_swap(struct tt__snapshots *sn, size_t i, size_t j)
{
	size_t k = sn->heap[i];
	sn->heap[i] = sn->heap[j];
	sn->heap[j] = k;
	sn->kept[sn->heap[i]].at = i;
	sn->kept[sn->heap[j]].at = j;
}

/* The place at heap index i, after its spike changed: where it belongs. */
static void tt__heap_settle(struct tt__snapshots *sn, size_t i)
{
	while (i > 0 && tt__heap_below(sn, i, (i - 1) / 2)) {
		tt__heap_swap(sn, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	for (;;) {
		size_t least = i, left = 2 * i + 1, right = left + 1;
		if (left < sn->nkept && tt__heap_below(sn, left, least))
			least = left;
		if (right < sn->nkept && tt__heap_below(sn, right, least))
			least = right;
		if (least == i)
			return;
		tt__heap_swap(sn, i, least);
		i = least;
	}
}

/* A new place at the heap's end (the arrays grown as places are used: a large
 * TICKTRACE_SNAPSHOT_MAX costs only what is kept), or NULL without memory. */
static struct tt__kept *tt__kept_new(struct tt__snapshots *sn)
{
	if (sn->nkept == sn->kept_cap) {
		size_t cap = sn->kept_cap ? 2 * sn->kept_cap : 16;
		tt__background_work(1); /* (a fork waits: it never finds this thread in malloc) */
		struct tt__kept *kept = realloc(sn->kept, cap * sizeof *kept);
		size_t *heap = kept ? realloc(sn->heap, cap * sizeof *heap) : NULL;
		tt__background_work(0);
		if (kept)
			sn->kept = kept;
		if (!heap)
			return NULL;
		sn->heap = heap;
		sn->kept_cap = cap;
	}
	struct tt__kept *k = &sn->kept[sn->nkept];
	*k = (struct tt__kept){.at = sn->nkept};
	sn->heap[sn->nkept] = sn->nkept;
	sn->nkept++;
	return k;
}

/* The waiting snapshot of the place k. */
static struct tt__snapshot_due *tt__kept_due(struct tt__snapshots *sn, const struct tt__kept *k)
{
	for (size_t i = 0; i < sn->nwaiting; i++)
		if (sn->waiting[i].kept == (size_t)(k - sn->kept))
			return &sn->waiting[i];
	return NULL;
}

/* The place a spike takes among the worst, and in *due the waiting snapshot it
 * replaces (NULL: a new one, its place taken); NULL when it is not to be kept (not
 * worse than the least kept, or no place to wait: counted). */
static struct tt__kept *tt__snapshot_keep(struct tt__snapshots *sn, const struct tt__kept_spike *spike,
					  struct tt__snapshot_due **due)
{
	*due = NULL;
	struct tt__kept *k = sn->nkept ? &sn->kept[sn->heap[0]] : NULL;
	if (sn->nkept < sn->max) {
		if (!tt__snapshot_place(sn))
			return NULL;
		if (!(k = tt__kept_new(sn))) {
			__atomic_sub_fetch(&sn->places, 1, __ATOMIC_RELAXED);
			sn->failed++;
			return NULL;
		}
	} else if (!k || !tt__ranks_above(spike, &k->now)) {
		sn->skipped++;
		return NULL;
	} else if (!k->written && k->now.number) {
		*due = tt__kept_due(sn, k); /* never written: nothing to remove */
		sn->replaced++;
		sn->replaced_waiting++;
	} else if (!tt__snapshot_place(sn)) {
		return NULL;
	} else if (k->written) {
		k->replaces = k->now;
	}
	k->now = *spike;
	k->written = false;
	tt__heap_settle(sn, k->at);
	return k;
}

/* What the snapshot says of the readings beside why none bounds a spike (or its time
 * without switches): the edges none bounded (TT_UNSPLIT_FAR_*), and tt_snapshot_miss. */
static uint32_t tt__unsplit_edges(const struct tt_an_causes *c)
{
	if (c->miss != TT_AN_MISS_TOO_FAR)
		return 0;
	return (c->miss_detail.edges & TT_AN_EDGE_START ? TT_UNSPLIT_FAR_START : 0u) |
	       (c->miss_detail.edges & TT_AN_EDGE_END ? TT_UNSPLIT_FAR_END : 0u);
}

static struct tt_snapshot_miss tt__snapshot_miss(const struct tt_an_causes *c)
{
	const struct tt_an_miss_detail *d = &c->miss_detail;
	if (c->miss == TT_AN_MISS_NONE)
		return (struct tt_snapshot_miss){0};
	return (struct tt_snapshot_miss){
		.flags = (d->tick ? TT_MISS_TICK : 0u) | (c->miss_blind ? TT_MISS_BLIND : 0u), .before_ns = d->before_ns, .after_ns = d->after_ns,
		.waited_ns = d->waited_ns, .over_ns = d->over_ns,
	};
}

void tt__snapshot_spike(const struct tt_an_spike *s, const struct tt_clock *clock,
			uint32_t thread)
{
	struct tt__snapshots *sn = &tt__snap;
	if (!sn->on)
		return;
	/* (a threshold of 0 ranks by duration alone) */
	struct tt__kept_spike spike = {.dur = s->dur, .threshold = s->threshold > 0 ? s->threshold : 1,
				       .start = s->start, .number = ++sn->spikes};
	struct tt__snapshot_due *due;
	struct tt__kept *k = tt__snapshot_keep(sn, &spike, &due);
	if (!k)
		return;
	char name[512];
	size_t len = tt__report_name(NULL, s->thread, s->key, name, sizeof name);
	name[len < sizeof name ? len : sizeof name - 1] = 0;
	tt__snapshot_file_name(k->now.name, name);
	struct tt__window w = {.info = {
		.kind = TT_SNAPSHOT_SPIKE, .thread_index = thread, .number = spike.number,
		.begin_tsc = clock->tsc0 + tt__ticks(s->start, clock->hz),
		.end_tsc = clock->tsc0 + tt__ticks(s->start + s->dur, clock->hz),
		.threshold_ns = s->threshold, .threshold_from = (uint32_t)s->source,
		.has_split = s->has_split, .on_cpu_ns = s->split.on_cpu,
		.preempted_ns = s->split.preempted, .blocked_ns = s->split.blocked,
	}, .none_if_lost = true, .found_tsc = __rdtsc(), .split = {.dur_ns = s->dur, .unknown_ns = s->split.unknown}, .causes = {
		.from = s->has_split ? (uint32_t)s->causes.from : TT_CAUSES_NONE,
		.flags = (s->causes.faults ? TT_CAUSES_FAULTS : 0u) | (s->causes.stolen_known ? TT_CAUSES_STOLEN : 0u) |
			 (s->causes.wakeups_known ? TT_CAUSES_WAKEUPS : 0u) |
			 (s->causes.wakeups_unbounded ? TT_CAUSES_WAKEUPS_UNBOUNDED : 0u) |
			 (s->causes.moved_known || s->causes.moved_most_ns || s->causes.cpu_ahead_most_ns
				  ? TT_CAUSES_MOVED : 0u) |
			 (uint32_t)s->causes.stolen_miss << TT_CAUSES_STOLEN_MISS_SHIFT |
			 (s->causes.faults_at_least ? TT_CAUSES_FAULTS_AT_LEAST : 0u) |
			 (s->causes.faults_at_most ? TT_CAUSES_FAULTS_AT_MOST : 0u) |
			 (s->end_late_ns ? TT_CAUSES_END_DROPPED : 0u),
		/* (the switches' parts are exact but for wake-ups and the kernel's moves: the
		 * field holds their stolen time's error, or the larger; stolen time not known
		 * may be all of on CPU, as its flags say) */
		.error_ns = !s->has_split ? 0
			  : s->causes.from != TT_AN_CAUSES_SWITCHES ? s->causes.error_ns
			  : s->causes.stolen_known && s->causes.stolen_error_ns > s->causes.error_ns
				  ? s->causes.stolen_error_ns : s->causes.error_ns,
		.stolen_ns = s->causes.stolen_ns,
		.minor_faults = s->causes.minor_faults, .major_faults = s->causes.major_faults,
	}};
	if (!s->has_split) { /* (why, as the run's file cannot say it once its ring lost the scope) */
		w.unsplit = (struct tt_snapshot_unsplit){
			.why = (uint32_t)s->causes.miss,
			.flags = (s->causes.miss_budget ? TT_UNSPLIT_BUDGET : 0u) | tt__unsplit_edges(&s->causes),
			.start_ns = s->causes.miss_start_ns, .end_ns = s->causes.miss_end_ns,
		};
		w.miss = tt__snapshot_miss(&s->causes);
	} else if (s->causes.lost_ns) { /* (and why what no reading covers is unknown) */
		bool covered = !s->split.unknown;
		w.unknown = (struct tt_snapshot_unknown){
			.lost = s->causes.lost, .without_ns = s->causes.lost_ns,
			.why = covered ? 0u : (uint32_t)s->causes.miss,
			.flags = covered ? 0u : (s->causes.miss_budget ? TT_UNSPLIT_BUDGET : 0u) | tt__unsplit_edges(&s->causes),
			.start_ns = covered ? 0 : s->causes.miss_start_ns, .end_ns = covered ? 0 : s->causes.miss_end_ns,
		};
		if (!covered)
			w.miss = tt__snapshot_miss(&s->causes);
	}
	tt__snapshot_window(sn, &w, clock);
	tt__snapshot_wait(sn, due, &w, name, (size_t)(k - sn->kept));
}

/* The triggers called since the last look, to wait for their window's end. */
static void tt__snapshot_take_triggers(struct tt__snapshots *sn, const struct tt_clock *clock)
{
	for (size_t i = 0; i < TT__TRIGGERS; i++) {
		struct tt__trigger *t = &sn->triggers[i];
		int ready = TT__TRIGGER_READY;
		if (!__atomic_compare_exchange_n(&t->state, &ready, TT__TRIGGER_TAKING, false,
						 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			continue;
		struct tt__window w = {.info = {
			.kind = TT_SNAPSHOT_TRIGGER, .thread_index = t->thread, .number = t->number,
			.begin_tsc = t->tsc, .end_tsc = t->tsc,
		}};
		tt__snapshot_window(sn, &w, clock);
		tt__snapshot_wait(sn, NULL, &w, t->why, TT__NOT_KEPT);
		__atomic_store_n(&t->state, TT__TRIGGER_FREE, __ATOMIC_RELEASE);
	}
}

/* Whose a snapshot is, in its file's name: the pid, an exec'd image's tag (it has the
 * pid of the one before it), as its trace has them, and `tag`, where a run before
 * this one with the same pid (a container's 1, after wrap-around) left its snapshots
 * in DIR: ".T", as the default name is numbered, never over another run's file. */
static void tt__snapshot_id(char *id, size_t size, unsigned tag)
{
	int n = snprintf(id, size, "%d", (int)tt_os_process_id());
	if (tt__exec_image && n >= 0 && (size_t)n < size)
		n += snprintf(id + n, size - (size_t)n, ".exec%u", tt__exec_image);
	if (tag && n >= 0 && (size_t)n < size)
		snprintf(id + n, size - (size_t)n, ".%u", tag);
}

/* A snapshot's file `name`: where its ID begins (tt__snapshot_path); NULL: not one. */
static const char *tt__snapshot_whose(const char *name)
{
	return strncmp(name, "spike-", 6) == 0 ? name + 6 : strncmp(name, "trigger-", 8) == 0 ? name + 8 : NULL;
}

/* The first tag above every one a snapshot of this pid and image in DIR has (0: none
 * there; a device or a FIFO of the user's at a name is not one: written in place, as
 * the program that made it asks); 0 where DIR cannot be read (then the write's link
 * refuses a name taken). */
static unsigned tt__snapshot_free_tag(const struct tt__snapshots *sn)
{
	char id[48];
	tt__snapshot_id(id, sizeof id, 0);
	size_t len = strlen(id);
	unsigned next = 0;
	DIR *d = opendir(sn->dir);
	for (struct dirent *e; d && (e = readdir(d));) {
		const char *p = tt__snapshot_whose(e->d_name);
		if (!p || strncmp(p, id, len) != 0)
			continue;
		char *end = (char *)p + len;
		unsigned long tag = 0;
		if (*end == '.' && *(end + 1) >= '0' && *(end + 1) <= '9')
			tag = strtoul(end + 1, &end, 10);
		char path[sizeof sn->dir + 256 + 2];
		snprintf(path, sizeof path, "%s/%s", sn->dir, e->d_name);
		if (*end == '-' && tag < UINT32_MAX && tag >= next && !tt_os_is_device(path))
			next = (unsigned)tag + 1;
	}
	if (d)
		closedir(d);
	return next;
}

/* The tag taken (`since`: past the one in use, another process's file at its name),
 * said where it is not 0: once as it is first chosen, and again at each change. */
static void tt__snapshot_tag(struct tt__snapshots *sn, unsigned tag, bool since)
{
	bool changed = !sn->tagged || tag != sn->tag;
	sn->retagged |= sn->tagged && tag != sn->tag;
	sn->tag = tag;
	sn->tagged = true;
	if (!tag || !changed)
		return;
	char before[48], id[48];
	tt__snapshot_id(before, sizeof before, 0);
	tt__snapshot_id(id, sizeof id, tag);
	fprintf(tt__err, "ticktrace: %s: %s, spike-%s-* or trigger-%s-*, kept: this one's are "
		"spike-%s-N-NAME.ttr and trigger-%s-N-WHY.ttr\n", sn->dir,
		since ? "a process with this pid (the system gave it again) put snapshots there since "
			"this one started"
		      : "snapshots of a run before this one are there (its process had this pid, which the "
			"system gave again)",
		before, before, id, id);
}

#define TT__SNAPSHOT_PATH_MAX (sizeof tt__snap.dir + 128)

/* A snapshot's file: KIND-ID-NUMBER-NAME.ttr in DIR (ID: tt__snapshot_id of `tag`;
 * NAME as tt__snapshot_file_name made it). */
static void tt__snapshot_path(const struct tt__snapshots *sn, char *path, uint32_t kind, unsigned tag,
			      uint64_t number, const char *name)
{
	char id[48];
	tt__snapshot_id(id, sizeof id, tag);
	snprintf(path, TT__SNAPSHOT_PATH_MAX, "%s/%s-%s-%" PRIu64 "-%s.ttr", sn->dir,
		 kind == TT_SNAPSHOT_SPIKE ? "spike" : "trigger", id, number, name);
}

/* A snapshot's file for window w, into `path`. */
static void tt__snapshot_window_path(const struct tt__snapshots *sn, char *path,
				     const struct tt__window *w)
{
	char name[TT__SNAPSHOT_NAME_MAX + 1];
	tt__snapshot_file_name(name, w->name);
	tt__snapshot_path(sn, path, w->info.kind, sn->tag, w->info.number, name);
}

/* 0 and the room its file takes on disk in *room, or -errno (not counted:
 * tt__snapshot_failed). Never over another process's file: where one is at the name
 * (a run before this one of the same pid), this process's tag moves past it. */
static int tt__snapshot_write(struct tt__snapshots *sn, struct tt__window *w, uint64_t *room)
{
	char path[TT__SNAPSHOT_PATH_MAX];
	if (!sn->tagged)
		tt__snapshot_tag(sn, tt__snapshot_free_tag(sn), false);
	int err = -EEXIST;
	for (int tries = 0; err == -EEXIST && tries < 8; tries++) {
		if (tries) {
			unsigned next = tt__snapshot_free_tag(sn);
			tt__snapshot_tag(sn, next > sn->tag ? next : sn->tag + 1, true);
		}
		tt__snapshot_window_path(sn, path, w);
		tt__background_work(1); /* (a fork waits: it never finds this thread in malloc) */
		err = tt__write_window(path, w);
		tt__background_work(0);
	}
	if (err)
		return err;
	*room = tt_os_file_room(path);
	sn->written++;
	sn->shortened += w->shortened;

	return 0;
}

/* The snapshot of window w not written (`err`): counted, the first said. */
static void tt__snapshot_failed(struct tt__snapshots *sn, const struct tt__window *w, int err)
{
	if (sn->failed++)
		return;
	char path[TT__SNAPSHOT_PATH_MAX];
	tt__snapshot_window_path(sn, path, w);
	if (err == -ENOBUFS)
		fprintf(tt__err, "ticktrace: snapshot %s not written: the threads' records from its spike "
			"or trigger on pass the %" PRIu64 " MiB of TICKTRACE_MEMORY kept for the copies\n",
			path, sn->copies_bytes >> 20);
	else
		fprintf(tt__err, "ticktrace: snapshot %s not written: %s\n", path, strerror(-err));
}

/* A kept spike's file removed (replaced by a worse one's); whether it is gone. */
static bool tt__kept_remove(struct tt__snapshots *sn, const struct tt__kept_spike *spike)
{
	char path[TT__SNAPSHOT_PATH_MAX];
	tt__snapshot_path(sn, path, TT_SNAPSHOT_SPIKE, spike->tag, spike->number, spike->name);
	sn->replaced++;
	int err = tt_os_remove(path);
	if (!err || err == -ENOENT) {
		sn->removed++;
		return true;
	}
	if (!sn->not_removed++)
		fprintf(tt__err, "ticktrace: snapshot %s, replaced by a worse spike's, not removed: "
			"%s\n", path, strerror(-err));
	return false;
}

/* The least written file of a spike below place k's (k's own it replaces, or another
 * place's), or NULL. */
static struct tt__kept_spike *tt__least_below(struct tt__snapshots *sn, struct tt__kept *k)
{
	struct tt__kept_spike *least = k->replaces.number && !k->replaces.gone ? &k->replaces : NULL;
	for (size_t i = 0; i < sn->nkept; i++) {
		struct tt__kept_spike *p = &sn->kept[i].now;
		if (&sn->kept[i] != k && sn->kept[i].written && !p->gone && tt__ranks_above(&k->now, p) &&
		    (!least || tt__ranks_above(least, p)))
			least = p;
	}
	return least;
}

/* On a full disk (`err`: ENOSPC, EDQUOT), the room the disk has left, where the files
 * of spikes below place k's and that room hold `need` bytes; else (the disk filled by
 * others) -1: none is removed for it. */
static int64_t tt__room_to_be_made(struct tt__snapshots *sn, struct tt__kept *k, int err,
				   uint64_t need)
{
	int64_t disk = tt_os_disk_room(sn->dir);
	if (disk < 0)
		return -1;
	/* (a quota's room is not the disk's: none) */
	uint64_t room = err == -EDQUOT ? 0 : (uint64_t)disk, could = room;
	for (size_t i = 0; i < sn->nkept; i++) {
		struct tt__kept *p = &sn->kept[i];
		if (p != k && p->written && !p->now.gone && tt__ranks_above(&k->now, &p->now))
			could += p->now.room;
	}
	if (k->replaces.number && !k->replaces.gone)
		could += k->replaces.room;
	return could >= need ? (int64_t)room : -1;
}

/* The snapshot `due` of a kept spike is whole, not yet named: the file it replaces
 * removed now, before the new one takes its name (a reader of the folder never finds
 * both: more than TICKTRACE_SNAPSHOT_MAX; a run killed meanwhile leaves neither). */
static void tt__snapshot_whole(struct tt__window *w)
{
	struct tt__snapshots *sn = &tt__snap;
	const struct tt__snapshot_due *due =
		(const struct tt__snapshot_due *)((char *)w - offsetof(struct tt__snapshot_due, window));
	struct tt__kept *k = &sn->kept[due->kept];
	if (k->replaces.number && !k->replaces.gone)
		tt__kept_remove(sn, &k->replaces);
	k->replaces.gone = true; /* (or said as not removed: not tried again) */
}

/* The place k's snapshot was written (or not: `err`): the file it replaces removed
 * (tt__snapshot_whole, or here where the new one failed for a full disk). Not written for a full disk: its spike keeps the place all the same (gone), and the
 * file it replaces, below it, goes (else a spike below it could take the place, and
 * the worst would not be kept: the room goes to the worst that fit); for another
 * reason (a file size limit, a window the rings overwrote whole: no file, not one of
 * the worst), the one it replaces is kept in the place again, or the place is empty. */
static void tt__kept_written(struct tt__snapshots *sn, struct tt__kept *k, int err)
{
	bool full = err == -ENOSPC || err == -EDQUOT;
	if (err && !full) {
		k->now = k->replaces;
		k->written = k->now.number != 0;
	} else {
		if (k->replaces.number && !k->replaces.gone)
			tt__kept_remove(sn, &k->replaces);
		k->now.gone = full;
		k->written = true;
	}
	k->replaces.number = 0;
	tt__heap_settle(sn, k->at);
}

/* The snapshot `due` written: on a full disk, for a kept spike, again once the least
 * files below it are removed, as many as free the bytes its file needs (the writer
 * counts them past the failure), and after each one more while it still fails (a
 * block's rounding), up to twice its bytes; each such spike keeps its place, gone (one
 * below it still ranks below it). 0 or -errno. */
static int tt__snapshot_write_due(struct tt__snapshots *sn, struct tt__snapshot_due *due)
{
	uint64_t room;
	due->window.whole = due->kept == TT__NOT_KEPT ? NULL : tt__snapshot_whole;
	int err = tt__snapshot_write(sn, &due->window, &room);
	if (due->kept == TT__NOT_KEPT)
		return err;
	struct tt__kept *k = &sn->kept[due->kept];
	uint64_t need = due->window.bytes, freed = 0;
	int64_t left = err == -ENOSPC || err == -EDQUOT ? tt__room_to_be_made(sn, k, err, need) : -1;
	struct tt__kept_spike *least;
	while (left >= 0 && (err == -ENOSPC || err == -EDQUOT) && freed < 2 * need &&
	       (least = tt__least_below(sn, k)) && tt__kept_remove(sn, least)) {
		freed += least->room;
		least->gone = true;
		sn->made_room++;
		if ((uint64_t)left + freed >= need)
			err = tt__snapshot_write(sn, &due->window, &room);
	}
	if (!err) {
		k->now.room = room;
		k->now.tag = sn->tag;
	}
	return err;
}

/* The snapshots waiting whose window ended written (with `last`, every one). */
static void tt__snapshots_write_ended(struct tt__snapshots *sn, bool last)
{
	uint64_t now = __rdtsc();
	for (size_t i = 0; i < sn->nwaiting;) {
		struct tt__snapshot_due *due = &sn->waiting[i];
		if (due->window.info.to_tsc > now && !last) {
			i++;
			continue;
		}
		int err = tt__snapshot_write_due(sn, due);
		if (err == -ENODATA)
			sn->lost++;
		else if (err)
			tt__snapshot_failed(sn, &due->window, err);
		if (due->kept != TT__NOT_KEPT)
			tt__kept_written(sn, &sn->kept[due->kept], err);
		/* (the last one into its place, its name pointer moved with it) */
		*due = sn->waiting[--sn->nwaiting];
		due->window.name = due->name;
		__atomic_sub_fetch(&sn->places, 1, __ATOMIC_RELAXED);
	}
}

int64_t tt__snapshots_next_end_ns(const struct tt_clock *clock)
{
	const struct tt__snapshots *sn = &tt__snap;
	uint64_t now = __rdtsc(), next = UINT64_MAX;
	for (size_t i = 0; sn->on && i < sn->nwaiting; i++)
		next = sn->waiting[i].window.info.to_tsc < next ? sn->waiting[i].window.info.to_tsc : next;
	if (next == UINT64_MAX)
		return INT64_MAX;
	return next <= now ? 0 : tt_clock_span(clock, next - now);
}

bool tt__snapshots_ended(void)
{
	const struct tt__snapshots *sn = &tt__snap;
	uint64_t now = __rdtsc();
	for (size_t i = 0; sn->on && i < sn->nwaiting; i++)
		if (sn->waiting[i].window.info.to_tsc <= now)
			return true;
	return false;
}

void tt__snapshots_copy_ended(void)
{
	tt__snapshots_write_ended(&tt__snap, false);
}

/* Of the `files` snapshots this run wrote and kept, those still in DIR at its end (a
 * user may remove or move them meanwhile: the exit said 5 of an empty folder, outside
 * test ot30 F6); `files` where it cannot tell (DIR unreadable, its names' tag changed
 * during the run). */
static uint64_t tt__snapshots_there(const struct tt__snapshots *sn, uint64_t files)
{
	if (!files || sn->retagged)
		return files;
	char id[48];
	tt__snapshot_id(id, sizeof id, sn->tag);
	size_t len = strlen(id);
	DIR *d = opendir(sn->dir);
	if (!d)
		return errno == ENOENT ? 0 : files;
	uint64_t there = 0;
	for (struct dirent *e; (e = readdir(d));) {
		const char *p = tt__snapshot_whose(e->d_name);
		there += p && strncmp(p, id, len) == 0 && p[len] == '-';
	}
	closedir(d);
	return there < files ? there : files;
}

bool tt__snapshots_take(const struct tt_clock *clock, bool last)
{
	struct tt__snapshots *sn = &tt__snap;
	if (!sn->on)
		return false;
	if (last) {
		/* (the door closed before the last triggers are taken: see the top) */
		__atomic_store_n(&sn->ended, true, __ATOMIC_SEQ_CST);
		__atomic_store_n(&sn->on, false, __ATOMIC_SEQ_CST);
	}
	tt__snapshot_take_triggers(sn, clock);
	tt__snapshots_write_ended(sn, last);
	tt__copy_room_idle(); /* (a second after the last window: the copies' memory let go) */
	if (!last)
		return sn->nwaiting > 0;
	uint64_t files = sn->written - sn->removed;
	uint64_t there = tt__snapshots_there(sn, files);
	if (there < files)
		fprintf(tt__err, "ticktrace: %" PRIu64 " snapshot%s in %s: of the %" PRIu64 " written there and "
			"kept, %" PRIu64 " %s gone (removed or moved by another since)\n", there,
			there == 1 ? "" : "s", sn->dir, files, files - there, files - there == 1 ? "is" : "are");
	else if (files)
		fprintf(tt__err, "ticktrace: %" PRIu64 " snapshot%s in %s\n", files, files == 1 ? "" : "s",
			sn->dir);
	size_t kept = 0, gone = 0;
	for (size_t i = 0; i < sn->nkept; i++) {
		kept += sn->kept[i].written && !sn->kept[i].now.gone;
		gone += sn->kept[i].written && sn->kept[i].now.gone;
	}
	uint64_t over_max = __atomic_load_n(&sn->over_max, __ATOMIC_RELAXED);
	/* (none kept by the user's choice: not "the 0 worst", nor "=0 were taken") */
	if (!sn->max && (sn->skipped || over_max))
		fprintf(tt__err, "ticktrace: TICKTRACE_SNAPSHOT_MAX=0: snapshots are off, none taken of "
			"%" PRIu64 " spike%s and %" PRIu64 " trigger%s\n", sn->skipped,
			sn->skipped == 1 ? "" : "s", over_max, over_max == 1 ? "" : "s");
	else if (sn->replaced || sn->skipped)
		/* (what a full disk held, where it held fewer: not the setting's count, r49 F8) */
		fprintf(tt__err, "ticktrace: of %" PRIu64 " spikes, the snapshots keep the %zu worst "
			"(%s, by duration over threshold): %" PRIu64 " replaced by "
			"worse ones (%" PRIu64 " before they were written), %" PRIu64 " not worse than "
			"those kept, not taken\n", sn->spikes, kept,
			gone && kept < sn->max ? "as many as the full disk held, below TICKTRACE_SNAPSHOT_MAX"
					       : "TICKTRACE_SNAPSHOT_MAX", sn->replaced, sn->replaced_waiting,
			sn->skipped);
	uint64_t busy = __atomic_load_n(&sn->busy, __ATOMIC_RELAXED);
	uint64_t triggers_busy = __atomic_load_n(&sn->triggers_busy, __ATOMIC_RELAXED);
	if (over_max && sn->max)
		fprintf(tt__err, "ticktrace: %" PRIu64 " trigger%s had no snapshot: "
			"TICKTRACE_SNAPSHOT_MAX=%" PRIu64 " were taken\n", over_max,
			over_max == 1 ? "" : "s", sn->max);
	if (busy)
		fprintf(tt__err, "ticktrace: %" PRIu64 " spike%s and trigger%s had no snapshot: more than "
			"%d waited for their window to end at once\n", busy, busy == 1 ? "" : "s",
			busy == 1 ? "" : "s", TT__SNAPSHOTS_WAITING);
	if (triggers_busy)
		fprintf(tt__err, "ticktrace: %" PRIu64 " trigger%s had no snapshot: more than %d were called "
			"within one look of tt-spikes (20 ms)\n", triggers_busy, triggers_busy == 1 ? "" : "s",
			TT__TRIGGERS);
	if (sn->shortened)
		fprintf(tt__err, "ticktrace: %" PRIu64 " snapshot%s began later than TICKTRACE_SNAPSHOT_BEFORE "
			"asked: the threads' records of the window passed the %" PRIu64 " MiB of "
			"TICKTRACE_MEMORY kept for the copies\n", sn->shortened, sn->shortened == 1 ? "" : "s",
			sn->copies_bytes >> 20);
	if (sn->made_room)
		fprintf(tt__err, "ticktrace: %" PRIu64 " snapshot%s removed on a full disk to make room "
			"for worse spikes' snapshots (the least kept below them)\n", sn->made_room, sn->made_room == 1 ? "" : "s");
	if (sn->lost)
		fprintf(tt__err, "ticktrace: %" PRIu64 " spike%s had no snapshot: the rings overwrote %s "
			"whole window before it was copied (the TICKTRACE_BUFFER line above says why); not "
			"kept among the worst, %s\n", sn->lost, sn->lost == 1 ? "" : "s", sn->lost == 1 ? "its" : "each one's",
			sn->lost == 1 ? "its place went to the next spike" : "their places went to the next spikes");
	if (sn->failed)
		fprintf(tt__err, "ticktrace: %" PRIu64 " snapshot%s could not be written (the first said "
			"why)\n", sn->failed, sn->failed == 1 ? "" : "s");
	return false;
}

void tt__snapshots_crashed(int sig)
{
	struct tt__snapshots *sn = &tt__snap;
	if (!__atomic_load_n(&sn->on, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&sn->ended, true, __ATOMIC_SEQ_CST);
	__atomic_store_n(&sn->on, false, __ATOMIC_SEQ_CST);
	/* (tt-spikes may be what crashed: its waiting ones read as they are) */
	size_t promised = __atomic_load_n(&sn->nwaiting, __ATOMIC_RELAXED);
	/* (a trigger still filling its slot finds the door closed: -ESHUTDOWN) */
	for (size_t i = 0; i < TT__TRIGGERS; i++)
		promised += __atomic_load_n(&sn->triggers[i].state, __ATOMIC_SEQ_CST) >= TT__TRIGGER_READY;
	if (promised)
		fprintf(tt__err, "ticktrace: %zu snapshot%s of spikes and triggers taken (tt_trigger returned "
			"0) not written: the program died of signal %d before their windows ended\n",
			promised, promised == 1 ? "" : "s", sig);
}

void tt__snapshots_after_fork(void)
{
	struct tt__snapshots *sn = &tt__snap;
	if (!sn->on)
		return;
	/* The child's own, numbered from 1 under its own pid; the parent's waiting ones
	 * are the parent's. */
	sn->triggered = sn->places = sn->over_max = sn->busy = sn->triggers_busy = 0;
	sn->written = sn->removed = sn->failed = sn->not_removed = sn->shortened = 0;
	sn->made_room = sn->lost = 0;
	sn->spikes = sn->replaced = sn->replaced_waiting = sn->skipped = 0;
	sn->nkept = 0; /* (the parent's files are the parent's) */
	sn->tag = 0;
	sn->tagged = false; /* (the child's pid: chosen for it) */
	sn->nwaiting = 0;
	memset(sn->triggers, 0, sizeof sn->triggers);
}
