/* Windows' tt-sched, the coarser split of a spike's time: a thread's context
 * switches, each with its reason, come only from the kernel's events (ETW), which
 * need an administrator (base/switches_windows.c, where the process is elevated,
 * behind base.h's tt__switches_*, as Linux's core/sched.c reads them: tt-sched asks
 * for each thread's, the session started at the first, and keeps them here from
 * its first state on, as etw.c did, until its first loss); what any thread of
 * the process may read is its counters, the platform's (tt_os_counters_*, the face
 * Linux's core/counters.c reads through too; what they hold, tt_os_counters_flags:
 * its CPU time, and where ntdll says it, not under Wine, how many times it was
 * switched in, TT_SCHEDSTAT_SWITCH_COUNT, in timeslices: none across a spike says it
 * was on CPU throughout). The thread tt-sched reads every recording thread's, as
 * Linux's counters are read (TT_SEC_SCHEDSTAT, TT_SCHEDSTAT_RUN_ONLY): every 4 ms
 * where its CPU time is its cycle time, every 16 ms where it moves in steps of the
 * system's tick (TT_SCHEDSTAT_TICK_STEPS: Wine). A reading that says what the one
 * before it said stretches that one (only the last of a still stretch and the first
 * after it matter to a split). The readings of a thread are kept in a ring of
 * TT__READINGS (the oldest given up, counted as lost); one more is read as the thread
 * exits and at each dump. TICKTRACE_SCHED=0: none. (This file goes once core/ builds
 * for Windows: its counters.c follows the scopes and reads on the same face.)
 *
 * Locks: tt-sched takes tt__run_lock to list the threads, lets it go, then takes
 * tt__counters.lock to read and store; the dump holds tt__run_lock and tries
 * tt__counters.lock (a tt-sched ended with it held as the process exits would hold
 * it for ever: the readings are then left out, said). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "base/base.h"
#include "portable/portable.h"

#define TT__READINGS 65536u /* a busy thread's 4 minutes at 4 ms */
#define TT__STATES (1u << 20) /* a thread's switches kept at most (16 MiB): later ones lost */
/* An exited thread's switches read on this long (base/switches_windows.c: those the
 * session gives a second or two late), then closed. */
#define TT__STATES_LATE_NS INT64_C(3000000000)
#define TT__CYCLES_MS 4
#define TT__TIMES_MS 16

struct tt__thread_counters {
	int done;    /* its last reading taken, its counters closed */
	struct tt_os_counters os;
	struct tt_schedstat_sample *at; /* a ring: [first, first + n) */
	size_t first, n;
	uint64_t lost;
	/* Its switches (map NULL: none, or closed) and the states kept of them, from
	 * the first on, until one is lost: those after it are counted */
	struct tt__switches sw;
	struct tt_sched_state *states;
	size_t nstates, states_cap;
	uint64_t states_lost;
	int64_t exited_ns; /* first seen exited (0: not yet) */
};

static struct {
	struct tt_os_lock lock;
	struct tt__thread_counters **of; /* by slot index */
	size_t cap;
	uint32_t flags; /* what the platform's readings hold (tt_os_counters_flags) */
	int switches; /* a thread's switches were had (elevated): the dump asks for states */
	int off;    /* TICKTRACE_SCHED=0 */
} tt__counters;

/* A store for thread `tid`, made at its first reading (NULL without memory); one that
 * cannot be read (gone already, no memory for its readings) is done from the start. */
static struct tt__thread_counters *tt__store_new(uint32_t tid)
{
	struct tt__thread_counters *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	int denied; /* (refused: no states, said in its THREAD section) */
	if (tt__switches_open(&c->sw, (int)tid, 0, &denied) == 0)
		__atomic_store_n(&tt__counters.switches, 1, __ATOMIC_RELEASE);
	int opened = tt_os_counters_open(&c->os, tid, -1) == 0;
	c->at = malloc(TT__READINGS * sizeof(*c->at));
	if (!opened || !c->at) {
		if (opened)
			tt_os_counters_close(&c->os);
		free(c->at);
		c->at = NULL;
		c->done = 1;
	}
	return c;
}

/* Makes room in the table for slot `index`: its new array made outside the lock, put
 * in place under it (the old one, freed after, into *old). 0 or -1 without memory. */
static int tt__table_room(uint32_t index, struct tt__thread_counters ***old)
{
	*old = NULL;
	size_t have = __atomic_load_n(&tt__counters.cap, __ATOMIC_RELAXED); /* (tt-sched's alone) */
	if (index < have)
		return 0;
	size_t cap = have ? have : 64;
	while (cap <= index)
		cap *= 2;
	struct tt__thread_counters **grown = calloc(cap, sizeof(*grown));
	if (!grown)
		return -1;
	tt_os_lock(&tt__counters.lock);
	if (have)
		memcpy(grown, tt__counters.of, have * sizeof(*grown));
	*old = tt__counters.of;
	tt__counters.of = grown;
	tt__counters.cap = cap;
	tt_os_unlock(&tt__counters.lock);
	return 0;
}

/* tt__counters.lock held: a reading of the thread's stored (its last, `last`). */
static void tt__store_reading(struct tt__thread_counters *c, struct tt_schedstat_sample r, int last)
{
#define TT__AT(i) c->at[(c->first + (i)) % TT__READINGS]
	if (c->n && r.run_ns < TT__AT(c->n - 1).run_ns) /* (the TSC's rate, refined, may */
		r.run_ns = TT__AT(c->n - 1).run_ns;      /* put a count a little behind) */
#define TT__SAME(a, b) ((a).run_ns == (b).run_ns && (a).timeslices == (b).timeslices)
	if (c->n && (r.ns < TT__AT(c->n - 1).ns || r.timeslices < TT__AT(c->n - 1).timeslices)) {
		/* tt-sched's, read before the lock, after which a dump stored one of its own
		 * (tt__counters_copy): older than the last, left out (readers refuse a
		 * section whose readings go back) */
	} else if (c->n >= 2 && TT__SAME(TT__AT(c->n - 1), r) && TT__SAME(TT__AT(c->n - 2), r)) {
		TT__AT(c->n - 1).ns = r.ns; /* still: the stretch goes on */
	} else if (c->n < TT__READINGS) {
		TT__AT(c->n) = r;
		c->n++;
	} else {
		c->at[c->first] = r;
		c->first = (c->first + 1) % TT__READINGS;
		c->lost++;
	}
#undef TT__SAME
#undef TT__AT
	if (last)
		c->done = 1; /* (its handle closed by tt-sched, after the lock) */
}

/* tt__counters.lock held: the thread's switches since into its states (its last
 * read, and closed, `last`). */
static void tt__take_states(struct tt__thread_counters *c, int last)
{
	while (c->sw.map) {
		struct tt_sched_state got[256];
		size_t n = tt__switches_read(&c->sw, got, sizeof got / sizeof *got);
		size_t keep = c->states_lost ? 0 : n;
		if (keep && c->nstates + keep > c->states_cap) {
			size_t cap = c->states_cap ? 2 * c->states_cap : 256;
			while (cap < c->nstates + keep)
				cap *= 2;
			struct tt_sched_state *grown =
				cap <= TT__STATES ? realloc(c->states, cap * sizeof(*grown)) : NULL;
			if (grown) {
				c->states = grown;
				c->states_cap = cap;
			} else {
				keep = 0;
			}
		}
		if (keep)
			memcpy(c->states + c->nstates, got, keep * sizeof(*got));
		c->nstates += keep;
		c->states_lost += n - keep + c->sw.lost;
		c->sw.lost = 0, c->sw.gap = 0;
		if (n < sizeof got / sizeof *got)
			break;
	}
	if (last)
		tt__switches_close(&c->sw);
}

/* A reading of the thread's now; false where none can be had. */
static int tt__reading(struct tt__thread_counters *c, struct tt_schedstat_sample *r)
{
	return !c->done && tt_os_counters_read(&c->os, r, 0, 0) == 0;
}

struct tt__listed {
	uint32_t index, tid;
	int exited, read;
	struct tt__thread_counters *c;
	struct tt_schedstat_sample r;
};

/* tt-sched's list of the recording threads (a copy taken under tt__run_lock, grown
 * outside it): *n of them; false without memory. */
static int tt__list_threads(struct tt__listed **list, size_t *cap, size_t *n)
{
	for (;;) {
		int more = 0;
		*n = 0;
		tt_os_lock(&tt__run_lock);
		for (struct tt__slot *s = tt__run.first; s && !(more = *n == *cap); s = s->next)
			(*list)[(*n)++] = (struct tt__listed){.index = s->index, .tid = s->tid, .exited = s->exited};
		tt_os_unlock(&tt__run_lock);
		if (!more)
			return 1;
		size_t grown_cap = *cap ? 2 * *cap : 64;
		struct tt__listed *grown = realloc(*list, grown_cap * sizeof(*grown));
		if (!grown)
			return 0;
		*list = grown;
		*cap = grown_cap;
	}
}

/* Each tick: the readings, the stores and the table made, and handles closed, outside
 * every lock, which tt-sched holds only to copy and store in memory: the exit's dump
 * runs while tt-sched does (it is told to return only after), and a crash ends it
 * where it is, where a lock it held would keep the dump from the readings
 * (tt__counters.lock) or from everything (tt__run_lock). */
static void *tt__sched_main(void *arg)
{
	(void)arg;
	struct tt__listed *list = NULL;
	size_t cap = 0, n;
	while (!tt__nap((tt__counters.flags & TT_SCHEDSTAT_TICK_STEPS ? TT__TIMES_MS : TT__CYCLES_MS) * INT64_C(1000000))) {
		if (!tt__list_threads(&list, &cap, &n))
			continue;
		for (size_t i = 0; i < n; i++) {
			struct tt__thread_counters **old;
			list[i].c = tt__table_room(list[i].index, &old) == 0 ? tt__counters.of[list[i].index] : NULL;
			free(old);
			if (!list[i].c && tt__counters.cap > list[i].index &&
			    (list[i].c = tt__store_new(list[i].tid))) {
				tt_os_lock(&tt__counters.lock);
				tt__counters.of[list[i].index] = list[i].c;
				tt_os_unlock(&tt__counters.lock);
			}
			list[i].read = list[i].c && tt__reading(list[i].c, &list[i].r);
		}
		int64_t now = tt_os_monotonic_ns();
		tt_os_lock(&tt__counters.lock);
		for (size_t i = 0; i < n; i++) {
			struct tt__thread_counters *c = list[i].c;
			if (list[i].read)
				tt__store_reading(c, list[i].r, list[i].exited);
			if (c && list[i].exited && !c->exited_ns)
				c->exited_ns = now;
			if (c)
				tt__take_states(c, c->exited_ns && now - c->exited_ns > TT__STATES_LATE_NS);
		}
		tt_os_unlock(&tt__counters.lock);
		for (size_t i = 0; i < n; i++)
			if (list[i].read && list[i].exited)
				tt_os_counters_close(&list[i].c->os);
	}
	free(list);
	return NULL; /* (the exit ends it) */
}

void tt__counters_start(void)
{
	const char *sched = getenv("TICKTRACE_SCHED");
	tt__counters.off = sched && strcmp(sched, "0") == 0;
	if (sched && *sched && !tt__counters.off && strcmp(sched, "1") != 0 && strcmp(sched, "switches") != 0 &&
	    strcmp(sched, "schedstat") != 0) /* (Linux's words: lifecycle/config.c) */
		fprintf(stderr, "ticktrace: TICKTRACE_SCHED=%s is not 0, 1, switches or schedstat; using the "
				"default (the threads' CPU time and switch counts, ETW's switches where "
				"allowed)\n", sched);
	if (tt__counters.off)
		return;
	tt__counters.flags = tt_os_counters_flags();
	if (tt__thread_start(tt__sched_main) != 0)
		fprintf(stderr, "ticktrace: tt-sched did not start: spikes have no split\n");
}

int tt__counters_off(void)
{
	return tt__counters.off;
}

/* The dump's: tt__counters.lock taken within 50 ms, and slot s's store (*c, NULL:
 * none); false, said, where tt-sched holds it (`what` left out). */
static int tt__counters_take(const struct tt__slot *s, const char *what, struct tt__thread_counters **c)
{
	int taken = 0;
	for (int tries = 0; tries < 50 && !(taken = tt_os_trylock(&tt__counters.lock)); tries++)
		Sleep(1);
	if (!taken) {
		fprintf(stderr, "ticktrace: tt-sched holds its lock: thread %u's %s are left out\n",
			(unsigned)s->tid, what);
		return 0;
	}
	*c = s->index < tt__counters.cap ? tt__counters.of[s->index] : NULL;
	return 1;
}

struct tt_sched_state *tt__states_copy(const struct tt__slot *s, size_t *n, struct tt_sched_info *info,
				       uint64_t *lost_after)
{
	*n = 0;
	struct tt__thread_counters *c;
	/* (none had: the stream's passes never wait for tt-sched's lock for them) */
	if (!__atomic_load_n(&tt__counters.switches, __ATOMIC_ACQUIRE) ||
	    !tt__counters_take(s, "thread states", &c))
		return NULL;
	struct tt_sched_state *copy = NULL;
	if (c)
		tt__take_states(c, 0);
	/* Known from its first state on: followed from when tt-sched listed it, it may have
	 * been asleep then (unlike Linux's, which ask as they start: running), so nothing
	 * before its first switch is said; a thread with none has no states. */
	if (c && c->nstates && (copy = malloc(c->nstates * sizeof(*copy)))) {
		memcpy(copy, c->states, c->nstates * sizeof(*copy));
		*n = c->nstates;
		*info = (struct tt_sched_info){.thread_index = s->index, .since_ns = c->states[0].ns};
		*lost_after = c->states_lost;
	}
	tt_os_unlock(&tt__counters.lock);
	return copy;
}

struct tt_schedstat_sample *tt__counters_copy(const struct tt__slot *s, size_t *n,
					      struct tt_schedstat_info *info)
{
	*n = 0;
	struct tt__thread_counters *c;
	if (!tt__counters_take(s, "CPU time readings", &c))
		return NULL;
	struct tt_schedstat_sample *copy = NULL;
	struct tt_schedstat_sample now;
	if (c && tt__reading(c, &now)) /* (its counters are tt-sched's to close) */
		tt__store_reading(c, now, 0);
	if (c && c->n && (copy = malloc(c->n * sizeof(*copy)))) {
		for (size_t i = 0; i < c->n; i++)
			copy[i] = c->at[(c->first + i) % TT__READINGS];
		*n = c->n;
		*info = (struct tt_schedstat_info){
			.thread_index = s->index,
			.flags = tt__counters.flags,
			.lost = c->lost};
	}
	tt_os_unlock(&tt__counters.lock);
	return copy;
}
