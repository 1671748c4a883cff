/* The runtime's feed of raw records (src/common/analysis/feed.c) holds back the scopes
 * no threshold could make a spike, and tells the analysis of a scope only once it
 * must: the spikes it finds must be exactly those of the same records told scope by
 * scope (a `closed` callback, as `report --frames` sets, turns the holding off). Random
 * threads of nested scopes, mostly short and some long, with what changes the
 * thresholds (notes, a thresholds table, children's and parents' thresholds, ignores),
 * descriptions, values, frames, times going back, ends that match nothing, functions
 * left by a later exit, and the thread's states, fed in pieces of random sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/analysis.h"

#define MAX_RECORDS 60000
#define MAX_SPIKES 20000
#define MAX_STACK 24
#define SITES 6
#define FUNCS 6

/* A spike as found: what a log line or a snapshot says of it. */
struct found {
	uint64_t key;
	int64_t start, dur, threshold, explained;
	int source;
	uint32_t depth;
	uint64_t stack_key[MAX_STACK];
	int64_t stack_start[MAX_STACK];
	char text[TT_DESCRIBE_MAX + 1];
	uint64_t frame;
	int64_t frame_ns;
	bool has_split;
	struct tt_an_split split;
};

struct caught {
	struct found *spikes;
	size_t n;
};

static int catch_spike(void *ctx, const struct tt_an_spike *s)
{
	struct caught *c = ctx;
	assert_true(c->n < MAX_SPIKES);
	struct found *f = &c->spikes[c->n++];
	memset(f, 0, sizeof *f); /* (compared whole: the padding too) */
	f->key = s->key;
	f->start = s->start;
	f->dur = s->dur;
	f->threshold = s->threshold;
	f->explained = s->explained;
	f->source = (int)s->source;
	f->depth = s->depth;
	f->frame = s->frame;
	f->frame_ns = s->frame_ns;
	f->has_split = s->has_split;
	f->split = s->split;
	for (uint32_t i = 0; i < s->depth && i < MAX_STACK; i++) {
		f->stack_key[i] = s->stack[i].key;
		f->stack_start[i] = s->stack[i].start;
	}
	if (s->text)
		memcpy(f->text, s->text, s->text_len);
	return 0;
}

static size_t name_of(void *ctx, const struct tt_an_thread *th, uint64_t key, char *buf, size_t cap)
{
	(void)ctx, (void)th;
	return (size_t)snprintf(buf, cap, "%s%llu", key & TT_KEY_FUNC ? "f" : "s",
				(unsigned long long)((key & ~TT_KEY_FUNC) % 100));
}

static void closed_nothing(void *ctx, const struct tt_an_thread *th, uint64_t key, int64_t self)
{
	(void)ctx, (void)th, (void)key, (void)self;
}

struct gen {
	struct tt_record r[MAX_RECORDS];
	size_t n;
	uint64_t tsc;
	uint64_t open[64]; /* each open scope's kind and payload, as a record's word */
	int depth;
	unsigned seed;
};

static unsigned rnd(struct gen *g, unsigned n)
{
	g->seed = g->seed * 1103515245u + 12345u;
	return (g->seed >> 8) % n;
}

static void put(struct gen *g, unsigned kind, uint64_t payload, uint64_t tsc)
{
	g->r[g->n++] = (struct tt_record){.tsc = tsc, .word = ((uint64_t)kind << TT_KIND_SHIFT) | payload};
}

/* Time passes: mostly a few ns, at times a long while (a spike, or close to one). */
static uint64_t step(struct gen *g)
{
	unsigned k = rnd(g, 1000);
	g->tsc += k < 900 ? rnd(g, 60) : k < 990 ? rnd(g, 4000) : 2000 + rnd(g, 40000);
	/* a signal handler's record, written before one with a later time */
	return rnd(g, 200) == 0 && g->tsc > 500 ? g->tsc - rnd(g, 500) : g->tsc;
}

/* A note on the innermost scope, or a description of it (in a scope just opened, as
 * TT_THRESHOLD_NS and TT_DESCRIBE are most often). */
static void note(struct gen *g, uint64_t t)
{
	static const unsigned notes[] = {TT_REC_THRESHOLD, TT_REC_CHILDREN_THRESHOLD, TT_REC_IGNORE,
					 TT_REC_IGNORE_CHILDREN, TT_REC_PARENTS_THRESHOLD, TT_REC_DESCRIBE};
	unsigned kind = notes[rnd(g, 6)];
	if (kind == TT_REC_DESCRIBE) {
		unsigned len = rnd(g, 40);
		put(g, TT_REC_DESCRIBE, len, t);
		for (unsigned i = 0; i < TT_TEXT_RECORDS(len); i++)
			put(g, TT_REC_TEXT, 0x41 + rnd(g, 26), 0x4242424242424242u + i);
		return;
	}
	put(g, kind, kind == TT_REC_IGNORE || kind == TT_REC_IGNORE_CHILDREN ? 0 : 5 + rnd(g, 6000), t);
}

static void generate(struct gen *g)
{
	g->n = 0;
	g->tsc = 1000;
	g->depth = 0;
	while (g->n + 64 < MAX_RECORDS) {
		unsigned k = rnd(g, 100);
		uint64_t site = 0x1000 + 0x10 * (1 + rnd(g, SITES));
		uint64_t fn = 0x400000 + 0x40 * (1 + rnd(g, FUNCS));
		uint64_t t = step(g);
		if (rnd(g, 300) == 0) {
			/* every scope ends (an iteration of the program's loop) */
			while (g->depth) {
				uint64_t top = g->open[--g->depth];
				if (TT_RECORD_KIND(top) == TT_REC_FUNC_ENTER)
					put(g, TT_REC_FUNC_EXIT, TT_RECORD_PAYLOAD(top), t);
				else
					put(g, TT_REC_END, 0, t);
			}
			continue;
		}
		if ((k < 30 && g->depth < 40) || g->depth == 0) {
			unsigned kind = rnd(g, 3) == 0 ? TT_REC_FUNC_ENTER : rnd(g, 8) ? TT_REC_BEGIN : TT_REC_BEGIN_ARG;
			uint64_t payload = kind == TT_REC_FUNC_ENTER ? fn : site;
			put(g, kind, payload, t);
			if (kind == TT_REC_BEGIN_ARG)
				put(g, TT_REC_VALUE, 0, rnd(g, 1000));
			g->open[g->depth++] = ((uint64_t)kind << TT_KIND_SHIFT) | payload;
			if (rnd(g, 4) == 0)
				note(g, g->tsc);
		} else if (k < 62) {
			/* the innermost ends, as it opened */
			uint64_t top = g->open[--g->depth];
			if (TT_RECORD_KIND(top) == TT_REC_FUNC_ENTER)
				put(g, TT_REC_FUNC_EXIT, TT_RECORD_PAYLOAD(top), t);
			else
				put(g, TT_REC_END, 0, t);
		} else if (k < 68) {
			put(g, TT_REC_ENDBEGIN, site, t);
			g->open[g->depth - 1] = ((uint64_t)TT_REC_BEGIN << TT_KIND_SHIFT) | site;
		} else if (k < 72) {
			/* a function left by a later exit (longjmp), or an exit of none open */
			int at = (int)rnd(g, (unsigned)g->depth);
			uint64_t w = g->open[at];
			if (TT_RECORD_KIND(w) == TT_REC_FUNC_ENTER && rnd(g, 2)) {
				put(g, TT_REC_FUNC_EXIT, TT_RECORD_PAYLOAD(w), t);
				g->depth = at;
			} else {
				put(g, TT_REC_FUNC_EXIT, 0x7f0000, t);
			}
		} else if (k < 74) {
			put(g, TT_REC_END, 0, t); /* (at depth 0 too: unmatched) */
			if (g->depth)
				g->depth--;
		} else if (k < 83) {
			note(g, t);
		} else if (k < 88) {
			put(g, TT_REC_INSTANT, site, t);
		} else if (k < 93) {
			put(g, TT_REC_COUNTER, site, t);
			put(g, TT_REC_VALUE, 0, rnd(g, 100));
		} else if (k < 95) {
			put(g, TT_REC_FRAME, 0x2000, t);
		} else {
			/* a leaf, as most of a real program's calls are */
			put(g, TT_REC_FUNC_ENTER, fn, t);
			put(g, TT_REC_FUNC_EXIT, fn, step(g));
		}
	}
}

/* The thread's states over its records' time, on the analysis's clock. */
static void add_states(struct tt_an_thread *th, const struct tt_clock *clock, uint64_t end_tsc, unsigned seed)
{
	static struct tt_sched_state states[4096];
	size_t n = 0;
	int64_t end = tt_clock_ns(clock, end_tsc);
	for (int64_t ns = 0; ns < end && n < 4096; ns += 1 + (int64_t)(seed % 9000)) {
		seed = seed * 1103515245u + 12345u;
		states[n++] = (struct tt_sched_state){.ns = ns, .what = (seed >> 12) % 3};
	}
	assert_int_equal(tt_an_thread_states(th, states, n, 0), 0);
}

/* The records fed into an analysis in pieces of random sizes; its spikes. */
static void feed(const struct gen *g, const struct tt_clock *clock, const struct tt_an_threshold_rule *rules,
		 size_t nrules, bool held, unsigned seed, struct caught *c)
{
	struct tt_an an = {.find_spikes = true, .threshold = 3000, .rules = rules, .nrules = nrules,
			   .name = name_of, .spike = catch_spike, .ctx = c,
			   .closed = held ? NULL : closed_nothing};
	struct tt_an_thread th;
	tt_an_thread_init(&th, &an, NULL);
	add_states(&th, clock, g->tsc + 100000, g->seed);
	struct tt_an_feed f = {.th = &th, .clock = clock};
	for (size_t i = 0; i < g->n;) {
		seed = seed * 1103515245u + 12345u;
		size_t piece = 1 + (seed >> 8) % 300;
		piece = piece < g->n - i ? piece : g->n - i;
		assert_int_equal(tt_an_feed_records(&f, g->r + i, piece), 0);
		i += piece;
	}
	assert_int_equal(tt_an_feed_finish(&f, INT64_MIN, INT64_MIN), 0);
	assert_false(an.oom);
	tt_an_feed_free(&f);
	tt_an_thread_free(&th);
}

/* Scopes whose length is a few ticks either side of their threshold, 3000 ns (the
 * global one), and 1000 ns (their parent's children's), from ticks starting at `tsc0`
 * (the clock's rounding differs along the way): the first of each that spikes, and
 * each one after, as told. */
static void generate_edges(struct gen *g, uint64_t tsc0)
{
	static const struct {
		int64_t ns;
		bool inside;
	} at[] = {{3000, false}, {1000, true}};
	g->n = 0;
	g->tsc = tsc0;
	for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
		uint64_t ticks = (uint64_t)at[k].ns * UINT64_C(2793435768) / 1000000000;
		if (at[k].inside) {
			put(g, TT_REC_BEGIN, 0x1010, g->tsc);
			put(g, TT_REC_CHILDREN_THRESHOLD, (uint64_t)at[k].ns, g->tsc);
		}
		for (uint64_t d = ticks - 8; d <= ticks + 8; d++)
			for (uint64_t from = 0; from < 7; from++) {
				put(g, TT_REC_FUNC_ENTER, 0x400040, g->tsc += 3 + from);
				put(g, TT_REC_FUNC_EXIT, 0x400040, g->tsc += d);
				put(g, TT_REC_BEGIN, 0x1020, g->tsc += 5);
				put(g, TT_REC_END, 0, g->tsc += d);
			}
		if (at[k].inside)
			put(g, TT_REC_END, 0, g->tsc += 1);
	}
}

static void same_spikes_of(struct gen *g, unsigned seed, const struct tt_an_threshold_rule *rules, size_t nrules)
{
	static struct found a[MAX_SPIKES], b[MAX_SPIKES];
	struct tt_clock clock; /* a TSC of 2.79 GHz: several ticks a ns */
	assert_int_equal(tt_clock_set(&clock, 0, 0, UINT64_C(2793435768)), 0);
	struct caught held = {a, 0}, told = {b, 0};
	feed(g, &clock, rules, nrules, true, seed, &held);
	feed(g, &clock, rules, nrules, false, seed ^ 0x5555u, &told);
	assert_true(told.n > 10); /* (the workload does spike) */
	assert_int_equal(held.n, told.n);
	for (size_t i = 0; i < told.n; i++)
		if (memcmp(&a[i], &b[i], sizeof a[i]) != 0)
			fail_msg("seed %u, spike %zu of %zu: key %llx at %lld for %lld held (split %lld on CPU, "
				 "depth %u, threshold %lld), key %llx at %lld for %lld told (split %lld, depth %u, "
				 "threshold %lld)", seed, i, told.n, (unsigned long long)a[i].key,
				 (long long)a[i].start, (long long)a[i].dur, (long long)a[i].split.on_cpu, a[i].depth,
				 (long long)a[i].threshold, (unsigned long long)b[i].key, (long long)b[i].start,
				 (long long)b[i].dur, (long long)b[i].split.on_cpu, b[i].depth, (long long)b[i].threshold);
}

static void same_spikes(unsigned seed, const struct tt_an_threshold_rule *rules, size_t nrules)
{
	static struct gen g;
	g.seed = seed;
	generate(&g);
	same_spikes_of(&g, seed, rules, nrules);
}

static void test_held_scopes_spike_as_told(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 12; seed++)
		same_spikes(seed, NULL, 0);
}

static void test_held_scopes_spike_as_told_with_a_table(void **state)
{
	(void)state;
	static const struct tt_an_threshold_rule rules[] = {{.pattern = "f*", .ns = 900},
							    {.pattern = "s2*", .ns = 20000}};
	for (unsigned seed = 100; seed <= 108; seed++)
		same_spikes(seed, rules, 2);
}

static void test_held_scopes_at_the_threshold(void **state)
{
	(void)state;
	static struct gen g;
	for (uint64_t tsc0 = 1000; tsc0 < 1000 + 5 * UINT64_C(1000000007); tsc0 += UINT64_C(1000000007)) {
		g.seed = (unsigned)tsc0;
		generate_edges(&g, tsc0);
		same_spikes_of(&g, (unsigned)tsc0, NULL, 0);
	}
}

/* The spikes a thread's open scopes make where its buffer was used up (its events
 * after its records dropped): each ends at its last record and says it may have ended
 * up to the moment given (its exit, or the recording's end), held or told; with none
 * dropped, at its last record or its exit, saying nothing. Before, it ended at its last
 * kept record with nothing said (a stop-mode main's scope 500 ms short in the live log). */
static int64_t lates[4];
static size_t nlates;

static int catch_late(void *ctx, const struct tt_an_spike *s)
{
	(void)ctx;
	lates[nlates++ % 4] = s->end_late_ns;
	return 0;
}

static void test_finish_dropped_says_late(void **state)
{
	(void)state;
	struct tt_clock clock; /* (1 GHz: a tick a ns) */
	assert_int_equal(tt_clock_set(&clock, 0, 0, UINT64_C(1000000000)), 0);
	static struct gen g;
	g.n = 0;
	put(&g, TT_REC_BEGIN, 0x1010, 1000);
	put(&g, TT_REC_BEGIN, 0x1020, 5000);
	put(&g, TT_REC_INSTANT, 0x1030, 9000);
	for (int held = 0; held < 2; held++)
		for (int dropped = 0; dropped < 2; dropped++) {
			struct tt_an an = {.find_spikes = true, .threshold = 3000, .name = name_of,
					   .spike = catch_late, .closed = held ? NULL : closed_nothing};
			struct tt_an_thread th;
			tt_an_thread_init(&th, &an, NULL);
			struct tt_an_feed f = {.th = &th, .clock = &clock};
			nlates = 0;
			assert_int_equal(tt_an_feed_records(&f, g.r, g.n), 0);
			assert_int_equal(tt_an_feed_finish(&f, dropped ? INT64_MIN : 9500, dropped ? 12000 : INT64_MIN), 0);
			tt_an_feed_free(&f);
			tt_an_thread_free(&th);
			assert_int_equal(nlates, 2);
			if (lates[0] != (dropped ? 3000 : 0) || lates[1] != lates[0])
				fail_msg("%s, %s: its end up to %lld and %lld ns later", held ? "held" : "told",
					 dropped ? "dropped after its records" : "none dropped", (long long)lates[0],
					 (long long)lates[1]);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_held_scopes_spike_as_told),
		cmocka_unit_test(test_held_scopes_spike_as_told_with_a_table),
		cmocka_unit_test(test_held_scopes_at_the_threshold),
		cmocka_unit_test(test_finish_dropped_says_late),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
