/* `ticktrace report` and `ticktrace spikes` on synthetic raw files with a clock of
 * one tick per nanosecond, so that every time is exact:
 *  - the flat profile of a known workload, to the nanosecond, in JSON, CSV and text,
 *    all threads and per thread, in every sort order;
 *  - on a large pseudo-random one, self + children == total, and every figure agrees
 *    with the Chrome JSON that `convert` writes of the same file; percentiles are
 *    within the documented 1/64 of the exact ones; the runtime's record feeder gives
 *    the very same table as the decoder;
 *  - planted slow calls at known depths: every one is found with its stack, nothing
 *    else, with thresholds from each source combined as documented;
 *  - convert's spike marks; malformed notes and thresholds files are errors that name
 *    the file and the place. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis.h"
#include "tt_check.h"
#include "tt_tw.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MS INT64_C(1000000)
#define US INT64_C(1000)

enum { S_MAIN = 0x1000, S_TICK = 0x1010, S_SCRIPT = 0x1020, S_MESH = 0x1030, S_RENDER = 0x1040,
       S_LOAD = 0x1050, S_SCRIPT_AI = 0x1060, S_IDLE = 0x1070, S_PHYSICS = 0x1080,
       S_LEAF = 0x1090, S_BYTES = 0x10a0, S_NONAME = 0x10b0 };
#define F_WORK 0x401000 /* a function (-finstrument-functions) */

static const struct tt_tw_site sites[] = {
	{S_MAIN, "main", "game.c", "main", 1},           {S_TICK, "GameTick", "game.c", "tick", 2},
	{S_SCRIPT, "ScriptStep", "game.c", "tick", 3},   {S_MESH, "CreateMeshes", "mesh.c", "mk", 4},
	{S_RENDER, "render", "game.c", "tick", 5},       {S_LOAD, "load_level", "game.c", "load", 6},
	{S_SCRIPT_AI, "script_ai", "ai.c", "ai", 7},     {S_IDLE, "idle", "game.c", "idle", 8},
	{S_PHYSICS, "physics", "phys.c", "step", 9},     {S_LEAF, "leaf \"q\",x", "x.c", "f", 10},
	/* bytes that are not UTF-8, and no name at all */
	{S_BYTES, "bytes\xff\xc3", "x.c", "f", 11},        {S_NONAME, "", "x.c", "f", 12},
};

/* ---- writing records: time t ns after the start (tick 1000 is 5 s, the trace start) ---- */

struct recs {
	struct tt_record r[1 << 16];
	size_t n;
};

static void rec(struct recs *b, unsigned kind, uint64_t payload, int64_t t)
{
	assert_true(b->n < N(b->r));
	b->r[b->n++] = TT_TW_REC(kind, payload, (uint64_t)(1000 + t));
}

static void begin(struct recs *b, uint64_t site, int64_t t) { rec(b, TT_REC_BEGIN, site, t); }
static void end(struct recs *b, int64_t t) { rec(b, TT_REC_END, 0, t); }
static void note(struct recs *b, unsigned kind, uint64_t v, int64_t t) { rec(b, kind, v, t); }

static void describe(struct recs *b, const char *text, int64_t t)
{
	size_t len = strlen(text);
	rec(b, TT_REC_DESCRIBE, len, t);
	for (size_t at = 0; at < len; at += TT_TEXT_BYTES) {
		char bytes[16] = {0};
		memcpy(bytes, text + at, len - at < TT_TEXT_BYTES ? len - at : TT_TEXT_BYTES);
		struct tt_record r;
		uint64_t rest = 0;
		memcpy(&r.tsc, bytes, 8);
		memcpy(&rest, bytes + 8, 7);
		r.word = TT_RECORD_WORD(TT_REC_TEXT, rest);
		b->r[b->n++] = r;
	}
}

struct thread_recs {
	uint32_t tid;
	const char *name;
	const struct recs *recs;
};

static void write_file(const char *path, const struct thread_recs *t, size_t n)
{
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, path), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "game");
	tt_tw_sites(&w, sites, N(sites));
	for (size_t i = 0; i < n; i++)
		tt_tw_thread(&w, (uint32_t)i, t[i].tid, t[i].name, t[i].recs->n, 0);
	for (size_t i = 0; i < n; i++)
		tt_tw_events(&w, (uint32_t)i, 0, t[i].recs->r, t[i].recs->n);
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
}

/* ---- fixture and command helpers ---- */

static int setup(void **state)
{
	return tt_fixture_setup(state, "run.ttr", "out");
}

static void run_ok(struct tt_run *r, const char *const *args)
{
	tt_run(r, args);
	if (r->status != 0)
		fail_msg("ticktrace %s failed (%d):\n%s", args[0], r->status, r->err);
}
#define RUN_OK(r, ...) run_ok((r), (const char *const[]){__VA_ARGS__, NULL})

static void assert_err_has(const struct tt_run *r, const char *text)
{
	if (!strstr(r->err, text))
		fail_msg("expected \"%s\" on stderr, got:\n%s", text, r->err);
}

/* Every one of `texts` is somewhere in what the command printed. */
static void assert_out_has(const struct tt_run *r, const char *const *texts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strstr(r->out, texts[i]))
			fail_msg("no \"%s\" in:\n%s", texts[i], r->out);
}

static int64_t num(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsNumber(v))
		fail_msg("no number %s in %s", key, cJSON_PrintUnformatted(obj));
	return (int64_t)v->valuedouble;
}

static const char *str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsString(v))
		fail_msg("no string %s in %s", key, cJSON_PrintUnformatted(obj));
	return v->valuestring;
}

static const cJSON *row_named(const cJSON *rows, const char *name, int64_t tid)
{
	const cJSON *row;
	cJSON_ArrayForEach(row, rows)
	{
		if (strcmp(str(row, "name"), name) == 0 && (tid < 0 || num(row, "tid") == tid))
			return row;
	}
	fail_msg("no row %s (tid %lld)", name, (long long)tid);
	return NULL;
}

/* ---- the flat profile of a known workload ---- */

static struct recs t1, t2;

/* Thread 101: main [0, 100 us] holds GameTick [10, 40] (holding ScriptStep [15, 25]
 * holding CreateMeshes [16, 20]), GameTick [50, 60] (holding render [52, 58] via
 * ENDBEGIN from ScriptStep [51, 52]), and the function F_WORK [70, 95] (holding
 * render [71, 81]). Thread 102: GameTick [0, 7], and ScriptStep [10, 13] with a
 * BEGIN_ARG. Times in us. */
static void known_workload(const char *path)
{
	t1.n = t2.n = 0;
	begin(&t1, S_MAIN, 0);
	begin(&t1, S_TICK, 10 * US);
	begin(&t1, S_SCRIPT, 15 * US);
	begin(&t1, S_MESH, 16 * US);
	end(&t1, 20 * US);
	end(&t1, 25 * US);
	end(&t1, 40 * US);
	begin(&t1, S_TICK, 50 * US);
	begin(&t1, S_SCRIPT, 51 * US);
	rec(&t1, TT_REC_ENDBEGIN, S_RENDER, 52 * US);
	end(&t1, 58 * US);
	end(&t1, 60 * US);
	rec(&t1, TT_REC_FUNC_ENTER, F_WORK, 70 * US);
	begin(&t1, S_RENDER, 71 * US);
	end(&t1, 81 * US);
	rec(&t1, TT_REC_FUNC_EXIT, F_WORK, 95 * US);
	end(&t1, 100 * US);
	begin(&t2, S_TICK, 0);
	end(&t2, 7 * US);
	rec(&t2, TT_REC_BEGIN_ARG, S_SCRIPT, 10 * US);
	t2.r[t2.n++] = TT_TW_REC(TT_REC_VALUE, 0, 99);
	end(&t2, 13 * US);
	const struct thread_recs threads[] = {{101, "MainThread", &t1}, {102, "worker", &t2}};
	write_file(path, threads, N(threads));
}

struct expect_row {
	const char *name;
	int64_t tid; /* -1: all threads */
	int64_t calls, total, self, min, max;
};

static void check_rows(const cJSON *rows, const struct expect_row *want, size_t n)
{
	assert_int_equal(cJSON_GetArraySize(rows), n);
	for (size_t i = 0; i < n; i++) {
		const cJSON *row = row_named(rows, want[i].name, want[i].tid);
		assert_int_equal(num(row, "calls"), want[i].calls);
		assert_int_equal(num(row, "total_ns"), want[i].total);
		assert_int_equal(num(row, "self_ns"), want[i].self);
		assert_int_equal(num(row, "children_ns"), want[i].total - want[i].self);
		assert_int_equal(num(row, "min_ns"), want[i].min);
		assert_int_equal(num(row, "max_ns"), want[i].max);
		assert_int_equal(num(row, "mean_ns"), want[i].total / want[i].calls);
	}
}

static void test_profile_of_known_workload(void **state)
{
	struct tt_fixture *fx = *state;
	known_workload(fx->in);
	struct tt_run r;
	RUN_OK(&r, "report", fx->in, "--json");
	cJSON *root = cJSON_Parse(r.out);
	assert_non_null(root);
	const struct expect_row all[] = {
		{"main", -1, 1, 100 * US, 100 * US - 30 * US - 10 * US - 25 * US, 100 * US, 100 * US},
		{"GameTick", -1, 3, 47 * US, 7 * US + 20 * US + 3 * US, 7 * US, 30 * US},
		{"ScriptStep", -1, 3, 14 * US, 6 * US + 1 * US + 3 * US, 1 * US, 10 * US},
		{"CreateMeshes", -1, 1, 4 * US, 4 * US, 4 * US, 4 * US},
		{"render", -1, 2, 16 * US, 16 * US, 6 * US, 10 * US},
		{"0x401000", -1, 1, 25 * US, 15 * US, 25 * US, 25 * US},
	};
	check_rows(cJSON_GetObjectItemCaseSensitive(root, "rows"), all, N(all));
	/* sorted by self: main 35, GameTick 30, render 16, 0x401000 15, ScriptStep 10, ... */
	const char *order[] = {"main", "GameTick", "render", "0x401000", "ScriptStep", "CreateMeshes"};
	for (size_t i = 0; i < N(order); i++)
		assert_string_equal(
			str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "rows"), (int)i), "name"),
			order[i]);
	assert_int_equal(num(root, "threads"), 2);
	cJSON_Delete(root);
	free(r.out);

	RUN_OK(&r, "report", fx->in, "--json", "--by-thread", "--sort", "calls");
	root = cJSON_Parse(r.out);
	const struct expect_row by_thread[] = {
		{"main", 101, 1, 100 * US, 35 * US, 100 * US, 100 * US},
		{"GameTick", 101, 2, 40 * US, 23 * US, 10 * US, 30 * US},
		{"ScriptStep", 101, 2, 11 * US, 7 * US, 1 * US, 10 * US},
		{"CreateMeshes", 101, 1, 4 * US, 4 * US, 4 * US, 4 * US},
		{"render", 101, 2, 16 * US, 16 * US, 6 * US, 10 * US},
		{"0x401000", 101, 1, 25 * US, 15 * US, 25 * US, 25 * US},
		{"GameTick", 102, 1, 7 * US, 7 * US, 7 * US, 7 * US},
		{"ScriptStep", 102, 1, 3 * US, 3 * US, 3 * US, 3 * US},
	};
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(root, "rows");
	check_rows(rows, by_thread, N(by_thread));
	/* grouped by thread, in the file's order; by calls, then name, within */
	const char *order2[] = {"GameTick", "ScriptStep", "render", "0x401000", "CreateMeshes", "main",
				"GameTick", "ScriptStep"};
	for (size_t i = 0; i < N(order2); i++)
		assert_string_equal(str(cJSON_GetArrayItem(rows, (int)i), "name"), order2[i]);
	assert_string_equal(str(cJSON_GetArrayItem(rows, 0), "thread"), "MainThread");
	assert_int_equal(num(cJSON_GetArrayItem(rows, 7), "pid"), 4242);
	cJSON_Delete(root);
	free(r.out);

	RUN_OK(&r, "report", fx->in, "--csv", "--sort", "name");
	assert_string_equal(r.out,
		"name,calls,total_ns,self_ns,children_ns,min_ns,max_ns,mean_ns,p50_ns,p95_ns,p99_ns\r\n"
		"\"0x401000\",1,25000,15000,10000,25000,25000,25000,25000,25000,25000\r\n"
		"\"CreateMeshes\",1,4000,4000,0,4000,4000,4000,4000,4000,4000\r\n"
		"\"GameTick\",3,47000,30000,17000,7000,30000,15666,10111,30000,30000\r\n"
		"\"ScriptStep\",3,14000,10000,4000,1000,10000,4666,2975,10000,10000\r\n"
		"\"main\",1,100000,35000,65000,100000,100000,100000,100000,100000,100000\r\n"
		"\"render\",2,16000,16000,0,6000,10000,8000,6000,10000,10000\r\n");
	free(r.out);

	RUN_OK(&r, "report", fx->in, "--sort", "max");
	const char *lines[] = {
		"flat profile: 6 names, 11 calls, 2 threads\n",
		"name          calls       total       self   children         min         max",
		"main              1  100.000 us  35.000 us  65.000 us  100.000 us  100.000 us",
		"GameTick          3   47.000 us  30.000 us  17.000 us    7.000 us   30.000 us",
	};
	assert_out_has(&r, lines, N(lines));
	free(r.out);
}

/* ---- agreement with the JSON trace, on a large pseudo-random workload ---- */

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005u + 1442695040888963407u;
	return *s >> 33;
}

/* Random nesting up to 12 deep over the first six sites and two functions, with
 * ENDBEGIN, BEGIN_ARG and scopes left open at the end; times in ns steps of 1..5000. */
static void random_workload(struct recs *b, uint64_t seed, size_t events)
{
	static const uint64_t keys[] = {S_MAIN, S_TICK, S_SCRIPT, S_MESH, S_RENDER, S_LOAD, 0x401000,
					0x402000};
	uint64_t funcs[64];
	int depth = 0;
	int64_t t = 0;
	b->n = 0;
	for (size_t i = 0; i < events; i++) {
		t += 1 + (int64_t)(lcg(&seed) % 5000);
		unsigned what = (unsigned)(lcg(&seed) % 10);
		uint64_t key = keys[lcg(&seed) % N(keys)];
		if (depth > 0 && (what < 4 || depth >= 12)) {
			depth--;
			if (funcs[depth])
				rec(b, TT_REC_FUNC_EXIT, funcs[depth], t);
			else if (what == 0 && key < 0x400000)
				rec(b, TT_REC_ENDBEGIN, key, t), depth++;
			else
				end(b, t);
		} else if (key >= 0x400000) {
			rec(b, TT_REC_FUNC_ENTER, key, t);
			funcs[depth++] = key;
		} else if (what == 9) {
			rec(b, TT_REC_BEGIN_ARG, key, t);
			b->r[b->n++] = TT_TW_REC(TT_REC_VALUE, 0, i);
			funcs[depth++] = 0;
		} else {
			begin(b, key, t);
			funcs[depth++] = 0;
		}
	}
}

struct json_slice {
	int64_t tid, ts, dur;
	const char *name;
};

static int slice_cmp(const void *a, const void *b)
{
	const struct json_slice *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->dur < y->dur) - (x->dur > y->dur); /* the longer, outer one first */
}

struct json_stat {
	const char *name;
	int64_t calls, total, self, min, max;
	int64_t *durs;
};

static struct json_stat *stat_for(struct json_stat *stats, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(stats[i].name, name) == 0)
			return &stats[i];
	stats[*n] = (struct json_stat){.name = name, .min = INT64_MAX};
	return &stats[(*n)++];
}

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Issue 24 item 17: report takes --thread, --from and --to through the one filter
 * (slices cut at the window's edges, as flame does); a filter that keeps nothing
 * says so on stderr, the report empty and the status 0. */
static void test_report_filtered(void **state)
{
	struct tt_fixture *fx = *state;
	known_workload(fx->in);
	struct tt_run r;
	RUN_OK(&r, "report", fx->in, "--json", "--thread", "worker");
	cJSON *root = cJSON_Parse(r.out);
	assert_non_null(root);
	const struct expect_row worker[] = {
		{"GameTick", -1, 1, 7 * US, 7 * US, 7 * US, 7 * US},
		{"ScriptStep", -1, 1, 3 * US, 3 * US, 3 * US, 3 * US},
	};
	check_rows(cJSON_GetObjectItemCaseSensitive(root, "rows"), worker, N(worker));
	cJSON_Delete(root);
	free(r.out);

	/* MainThread from 50 to 60 us: main and the second GameTick, cut to the window */
	RUN_OK(&r, "report", fx->in, "--json", "--thread", "101", "--from", "50us", "--to", "60us");
	root = cJSON_Parse(r.out);
	assert_non_null(root);
	const struct expect_row window[] = {
		{"main", -1, 1, 10 * US, 0, 10 * US, 10 * US},
		{"GameTick", -1, 1, 10 * US, 3 * US, 10 * US, 10 * US},
		{"ScriptStep", -1, 1, 1 * US, 1 * US, 1 * US, 1 * US},
		{"render", -1, 1, 6 * US, 6 * US, 6 * US, 6 * US},
	};
	check_rows(cJSON_GetObjectItemCaseSensitive(root, "rows"), window, N(window));
	cJSON_Delete(root);
	free(r.out);

	RUN_OK(&r, "report", fx->in, "--csv", "--thread", "nosuch");
	assert_err_has(&r, "--thread nosuch: no thread has that tid or name");
	assert_string_equal(r.out, "name,calls,total_ns,self_ns,children_ns,min_ns,max_ns,mean_ns,"
			    "p50_ns,p95_ns,p99_ns\r\n");
	free(r.out);
	RUN_OK(&r, "report", fx->in, "--from", "1s");
	assert_err_has(&r, "the filter keeps nothing: no event of the chosen threads between 1.000 s "
		       "and the end");
	free(r.out);
	TT_RUN(&r, "report", fx->in, "--from", "1.5");
	assert_int_equal(r.status, 2);
	free(r.out);
}

static void test_profile_agrees_with_json_trace(void **state)
{
	struct tt_fixture *fx = *state;
	random_workload(&t1, 42, 20000);
	random_workload(&t2, 7, 15000);
	const struct thread_recs threads[] = {{101, "a", &t1}, {102, "b", &t2}};
	write_file(fx->in, threads, N(threads));
	struct tt_run r;
	RUN_OK(&r, "convert", fx->in, "-o", fx->out);
	free(r.out);
	cJSON *trace = tt_json_load(fx->out);
	assert_non_null(trace);
	/* the X events, nested per thread by their times */
	size_t n = 0, cap = 40000;
	struct json_slice *slices = calloc(cap, sizeof(*slices));
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(trace, "traceEvents"))
	{
		if (strcmp(str(ev, "ph"), "X") != 0)
			continue;
		assert_true(n < cap);
		slices[n++] = (struct json_slice){num(ev, "tid"), tt_json_ns(ev, "ts"), tt_json_ns(ev, "dur"),
						  str(ev, "name")};
	}
	qsort(slices, n, sizeof(*slices), slice_cmp);
	struct json_stat stats[16];
	size_t nstats = 0;
	size_t stack[64];
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		struct json_slice *s = &slices[i];
		while (depth > 0 && (slices[stack[depth - 1]].tid != s->tid ||
				     s->ts >= slices[stack[depth - 1]].ts + slices[stack[depth - 1]].dur))
			depth--;
		struct json_stat *st = stat_for(stats, &nstats, s->name);
		st->calls++;
		bool nested_in_itself = false; /* recursion: the outermost call holds the total */
		for (int d = 0; d < depth; d++)
			nested_in_itself |= strcmp(slices[stack[d]].name, s->name) == 0;
		if (!nested_in_itself)
			st->total += s->dur;
		st->self += s->dur;
		st->min = s->dur < st->min ? s->dur : st->min;
		st->max = s->dur > st->max ? s->dur : st->max;
		if (depth > 0)
			stat_for(stats, &nstats, slices[stack[depth - 1]].name)->self -= s->dur;
		stack[depth++] = i;
	}
	RUN_OK(&r, "report", fx->in, "--json");
	cJSON *report = cJSON_Parse(r.out);
	const cJSON *rows = cJSON_GetObjectItemCaseSensitive(report, "rows");
	assert_int_equal(cJSON_GetArraySize(rows), nstats);
	for (size_t i = 0; i < nstats; i++) {
		const cJSON *row = row_named(rows, stats[i].name, -1);
		assert_int_equal(num(row, "calls"), stats[i].calls);
		assert_int_equal(num(row, "total_ns"), stats[i].total);
		assert_int_equal(num(row, "self_ns"), stats[i].self);
		assert_int_equal(num(row, "self_ns") + num(row, "children_ns"), num(row, "total_ns"));
		assert_int_equal(num(row, "min_ns"), stats[i].min);
		assert_int_equal(num(row, "max_ns"), stats[i].max);
		/* the percentiles: within 1/64 of the exact nearest-rank values */
		int64_t *durs = calloc((size_t)stats[i].calls, sizeof(*durs));
		size_t k = 0;
		for (size_t j = 0; j < n; j++)
			if (strcmp(slices[j].name, stats[i].name) == 0)
				durs[k++] = slices[j].dur;
		qsort(durs, k, sizeof(*durs), i64_cmp);
		const struct {
			const char *key;
			unsigned permille;
		} ps[] = {{"p50_ns", 500}, {"p95_ns", 950}, {"p99_ns", 990}};
		for (size_t p = 0; p < N(ps); p++) {
			size_t rank = (k * ps[p].permille + 999) / 1000;
			int64_t exact = durs[rank - 1], got = num(row, ps[p].key);
			int64_t err = got > exact ? got - exact : exact - got;
			if (err * 64 > exact)
				fail_msg("%s %s: %lld, exact %lld", stats[i].name, ps[p].key, (long long)got,
					 (long long)exact);
		}
		free(durs);
	}
	cJSON_Delete(report);
	free(r.out);

	/* The runtime's way, raw records into the same analysis, prints the same table. */
	RUN_OK(&r, "report", fx->in, "--csv");
	char *fed = NULL;
	size_t fed_len = 0;
	FILE *out = open_memstream(&fed, &fed_len);
	extern size_t test_name(void *, const struct tt__thread_analysis *, uint64_t, char *, size_t);
	extern int64_t test_ns(void *, uint64_t);
	struct tt__analysis an = {.profile = true, .name = test_name};
	struct tt__thread_analysis ta[2], *list[2] = {&ta[0], &ta[1]};
	for (int i = 0; i < 2; i++) {
		tt__thread_analysis_init(&ta[i], &an, NULL);
		struct tt__feed feed = {.th = &ta[i], .ns = test_ns};
		const struct recs *b = i ? &t2 : &t1;
		/* in two pieces, as a drain thread would see them */
		assert_int_equal(tt__feed_records(&feed, b->r, b->n / 2), 0);
		assert_int_equal(tt__feed_records(&feed, b->r + b->n / 2, b->n - b->n / 2), 0);
		assert_int_equal(tt__feed_finish(&feed), 0);
	}
	struct tt__table table;
	assert_int_equal(tt__table_build(&table, list, 2, false, TT__SORT_SELF), 0);
	tt__table_csv(out, &table);
	fclose(out);
	assert_string_equal(fed, r.out);
	tt__table_free(&table);
	for (int i = 0; i < 2; i++)
		tt__thread_analysis_free(&ta[i]);
	free(fed);
	free(r.out);
	free(slices);
	cJSON_Delete(trace);
}

size_t test_name(void *ctx, const struct tt__thread_analysis *th, uint64_t key, char *buf, size_t cap)
{
	(void)ctx, (void)th;
	if (key & TT__KEY_FUNC)
		return (size_t)snprintf(buf, cap, "0x%llx", (unsigned long long)(key & ~TT__KEY_FUNC));
	for (size_t i = 0; i < N(sites); i++)
		if (sites[i].address == key)
			return (size_t)snprintf(buf, cap, "%s", sites[i].name);
	return (size_t)snprintf(buf, cap, "?");
}

int64_t test_ns(void *clock, uint64_t tsc)
{
	(void)clock;
	return (int64_t)tsc; /* one tick a nanosecond, as the files' header says */
}

/* ---- spikes ---- */

static const char thresholds_file[] =
	"# frame budget, and the parts of it\n"
	"GameTick 16ms\n"
	"ScriptStep   5ms   # inline comment\n"
	"CreateMeshes 1ms\n"
	"render 6ms\n"
	"script_* 1ms\n"
	"\n";

/* Planted: what must be found, outermost first in `stack` ("|"-separated). */
struct planted {
	const char *name;
	int64_t tid, start, dur, threshold;
	const char *from;
	int64_t explained;
	const char *stack;
	const char *description;
};

static void game_workload(const char *path)
{
	t1.n = t2.n = 0;
	begin(&t1, S_MAIN, 0);
	/* frame 0: nothing over */
	begin(&t1, S_TICK, 1 * MS);
	begin(&t1, S_SCRIPT, 2 * MS);
	end(&t1, 4 * MS);
	begin(&t1, S_RENDER, 5 * MS);
	end(&t1, 9 * MS);
	end(&t1, 11 * MS);
	/* frame 1: CreateMeshes 13 ms at depth 3; ScriptStep 19 ms, 6 of them its own */
	begin(&t1, S_TICK, 20 * MS);
	begin(&t1, S_SCRIPT, 21 * MS);
	begin(&t1, S_MESH, 22 * MS);
	describe(&t1, "mesh rock.obj, 12000 triangles", 22 * MS);
	end(&t1, 35 * MS);
	end(&t1, 40 * MS);
	end(&t1, 50 * MS); /* GameTick 30 ms, 11 unexplained: not over 16 */
	/* frame 2: render 9 ms */
	begin(&t1, S_TICK, 60 * MS);
	begin(&t1, S_RENDER, 61 * MS);
	end(&t1, 70 * MS);
	end(&t1, 75 * MS);
	/* frame 3: GameTick 20 ms of its own */
	begin(&t1, S_TICK, 80 * MS);
	begin(&t1, S_SCRIPT, 81 * MS);
	end(&t1, 83 * MS);
	end(&t1, 100 * MS);
	/* frame 4: TT_THRESHOLD_NS 5 ms beats the file's 16; ScriptStep 8 ms ignored */
	begin(&t1, S_TICK, 110 * MS);
	note(&t1, TT_REC_THRESHOLD, 5 * MS, 110 * MS);
	begin(&t1, S_SCRIPT, 111 * MS);
	note(&t1, TT_REC_IGNORE, 0, 111 * MS);
	end(&t1, 119 * MS);
	end(&t1, 120 * MS);
	/* load_level: children 20 ms; script_ai's file line (1 ms) beats it */
	begin(&t1, S_LOAD, 130 * MS);
	note(&t1, TT_REC_CHILDREN_THRESHOLD, 20 * MS, 130 * MS);
	begin(&t1, S_PHYSICS, 131 * MS);
	begin(&t1, S_LEAF, 132 * MS); /* 13 ms, under the inherited 20 */
	end(&t1, 145 * MS);
	end(&t1, 146 * MS);
	begin(&t1, S_SCRIPT_AI, 147 * MS);
	end(&t1, 149 * MS);
	begin(&t1, S_PHYSICS, 150 * MS);
	end(&t1, 171 * MS); /* 21 ms: over the inherited 20 */
	end(&t1, 172 * MS);
	/* idle: nothing inside it spikes, at any depth */
	begin(&t1, S_IDLE, 175 * MS);
	note(&t1, TT_REC_IGNORE_CHILDREN, 0, 175 * MS);
	begin(&t1, S_SCRIPT, 176 * MS);
	begin(&t1, S_MESH, 177 * MS);
	end(&t1, 180 * MS);
	end(&t1, 186 * MS);
	end(&t1, 195 * MS);
	end(&t1, 200 * MS);
	/* a worker: a function with TT_THRESHOLD_NS, inside a scope with none */
	begin(&t2, S_LEAF, 0);
	rec(&t2, TT_REC_FUNC_ENTER, F_WORK, 1 * MS);
	note(&t2, TT_REC_THRESHOLD, 2 * MS, 1 * MS);
	rec(&t2, TT_REC_FUNC_EXIT, F_WORK, 4 * MS);
	rec(&t2, TT_REC_FUNC_ENTER, F_WORK, 5 * MS);
	note(&t2, TT_REC_THRESHOLD, 2 * MS, 5 * MS);
	rec(&t2, TT_REC_FUNC_EXIT, F_WORK, 6 * MS);
	end(&t2, 7 * MS);
	const struct thread_recs threads[] = {{101, "MainThread", &t1}, {102, "worker", &t2}};
	write_file(path, threads, N(threads));
}

static const struct planted game_spikes[] = {
	{"0x401000", 102, 1 * MS, 3 * MS, 2 * MS, "TT_THRESHOLD_NS", 0, "leaf \"q\",x", NULL},
	{"CreateMeshes", 101, 22 * MS, 13 * MS, 1 * MS, "thresholds file", 0, "main|GameTick|ScriptStep",
	 "mesh rock.obj, 12000 triangles"},
	{"ScriptStep", 101, 21 * MS, 19 * MS, 5 * MS, "thresholds file", 13 * MS, "main|GameTick", NULL},
	{"render", 101, 61 * MS, 9 * MS, 6 * MS, "thresholds file", 0, "main|GameTick", NULL},
	{"GameTick", 101, 80 * MS, 20 * MS, 16 * MS, "thresholds file", 0, "main", NULL},
	{"GameTick", 101, 110 * MS, 10 * MS, 5 * MS, "TT_THRESHOLD_NS", 0, "main", NULL},
	{"script_ai", 101, 147 * MS, 2 * MS, 1 * MS, "thresholds file", 0, "main|load_level", NULL},
	{"physics", 101, 150 * MS, 21 * MS, 20 * MS, "TT_CHILDREN_THRESHOLD_NS", 0, "main|load_level",
	 NULL},
};

/* Runs spikes --json and compares every line with `want`, in any order. */
static void check_spikes(const char *const *args, const struct planted *want, size_t n)
{
	struct tt_run r;
	run_ok(&r, args);
	bool found[32] = {false};
	size_t lines = 0;
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n"), lines++) {
		cJSON *s = cJSON_Parse(line);
		if (!s)
			fail_msg("not JSON: %s", line);
		size_t i = 0;
		while (i < n && !(strcmp(str(s, "name"), want[i].name) == 0 && num(s, "tid") == want[i].tid &&
				  num(s, "start_ns") == want[i].start))
			i++;
		if (i == n)
			fail_msg("a spike that was not planted: %s", line);
		assert_false(found[i]);
		found[i] = true;
		const struct planted *p = &want[i];
		assert_int_equal(num(s, "dur_ns"), p->dur);
		assert_int_equal(num(s, "threshold_ns"), p->threshold);
		assert_string_equal(str(s, "threshold_from"), p->from);
		assert_int_equal(num(s, "explained_ns"), p->explained);
		char stack[256] = "";
		const cJSON *frame;
		cJSON_ArrayForEach(frame, cJSON_GetObjectItemCaseSensitive(s, "stack"))
		{
			if (*stack)
				strcat(stack, "|");
			strcat(stack, str(frame, "name"));
			/* how long it had been open when the spike ended */
			assert_int_equal(num(frame, "open_ns"), p->start + p->dur - num(frame, "start_ns"));
		}
		assert_string_equal(stack, p->stack);
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(s, "description");
		if (p->description)
			assert_string_equal(d->valuestring, p->description);
		else
			assert_null(d);
		cJSON_Delete(s);
	}
	assert_int_equal(lines, n);
	free(r.out);
}

static void test_planted_spikes_found_with_their_stacks(void **state)
{
	struct tt_fixture *fx = *state;
	game_workload(fx->in);
	assert_int_equal(tt_tw_save(fx->aux, thresholds_file, strlen(thresholds_file)), 0);
	check_spikes((const char *const[]){"spikes", fx->in, "--thresholds", fx->aux, "--json", NULL},
		     game_spikes, N(game_spikes));
	/* with a global threshold as well: main, 200 ms, of which 19 + 9 + 20 + 10 + 2 + 21
	 * are spikes inside it, has 119 ms of its own: a spike over 100 ms, not over 120 */
	struct planted more[N(game_spikes) + 1];
	memcpy(more, game_spikes, sizeof(game_spikes));
	more[N(game_spikes)] = (struct planted){"main", 101, 0, 200 * MS, 100 * MS, "--threshold",
						81 * MS, "", NULL};
	check_spikes((const char *const[]){"spikes", fx->in, "--thresholds", fx->aux, "--threshold",
					   "100ms", "--json", NULL},
		     more, N(more));
	check_spikes((const char *const[]){"spikes", fx->in, "--thresholds", fx->aux, "--threshold",
					   "120ms", "--json", NULL},
		     game_spikes, N(game_spikes));
	/* code thresholds alone: the worker's function, frame 4, and the physics under
	 * load_level's TT_CHILDREN_THRESHOLD_NS */
	const struct planted code_only[] = {game_spikes[0], game_spikes[5], game_spikes[7]};
	check_spikes((const char *const[]){"spikes", fx->in, "--json", NULL}, code_only, N(code_only));

	/* the text form, as the issue shows it */
	struct tt_run r;
	RUN_OK(&r, "spikes", fx->in, "--thresholds", fx->aux);
	const char *text[] = {
		("spike: CreateMeshes took 13.000 ms (threshold 1.000 ms, thresholds file) thread "
		 "MainThread (tid 101) at 22.000 ms\n"
		 "  0) main 35.000 ms\n  1) GameTick 15.000 ms\n  2) ScriptStep 14.000 ms\n"
		 "  3) CreateMeshes 13.000 ms\n"
		 "  description: mesh rock.obj, 12000 triangles\n"),
		("spike: ScriptStep took 19.000 ms (threshold 5.000 ms, thresholds file) thread "
		 "MainThread (tid 101) at 21.000 ms; 13.000 ms of it in spikes above\n"),
		"\n8 spikes\n",
	};
	assert_out_has(&r, text, N(text));
	free(r.out);
	/* --depth: the innermost scopes only */
	RUN_OK(&r, "spikes", fx->in, "--thresholds", fx->aux, "--depth", "2");
	const char *shallow[] = {
		("MainThread (tid 101) at 22.000 ms\n"
		 "  ... 2 scopes around them\n"
		 "  2) ScriptStep 14.000 ms\n"
		 "  3) CreateMeshes 13.000 ms\n"
		 "  description: mesh rock.obj, 12000 triangles\n"),
	};
	assert_out_has(&r, shallow, N(shallow));
	free(r.out);

	/* no thresholds anywhere: said so */
	known_workload(fx->in);
	RUN_OK(&r, "spikes", fx->in);
	assert_string_equal(r.out, "0 spikes\n");
	assert_err_has(&r, "no thresholds: none in the trace");
	free(r.out);
}

/* An empty description (TT_DESCRIBE("%s", "")) is none, and replaces the one before,
 * whether or not any text came before it on the thread. */
static void test_empty_description(void **state)
{
	struct tt_fixture *fx = *state;
	const struct thread_recs one[] = {{101, "MainThread", &t1}};
	t1.n = 0;
	begin(&t1, S_MAIN, 0);
	describe(&t1, "", 1);
	note(&t1, TT_REC_THRESHOLD, 5 * US, 2);
	end(&t1, 10 * US);
	begin(&t1, S_TICK, 20 * US);
	describe(&t1, "level 1", 21 * US);
	describe(&t1, "", 22 * US);
	note(&t1, TT_REC_THRESHOLD, 5 * US, 23 * US);
	end(&t1, 30 * US);
	write_file(fx->in, one, 1);
	const struct planted want[] = {
		{"main", 101, 0, 10 * US, 5 * US, "TT_THRESHOLD_NS", 0, "", NULL},
		{"GameTick", 101, 20 * US, 10 * US, 5 * US, "TT_THRESHOLD_NS", 0, "", NULL},
	};
	check_spikes((const char *const[]){"spikes", fx->in, "--json", NULL}, want, N(want));
}

/* Strict UTF-8 (RFC 3629): no overlong forms, surrogates or code points past U+10FFFF. */
static bool valid_utf8(const char *text, size_t n)
{
	const unsigned char *s = (const unsigned char *)text;
	for (size_t i = 0; i < n;) {
		unsigned c = s[i], len = c < 0x80 ? 1 : c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 :
					 c >= 0xf0 && c < 0xf5 ? 4 : 0;
		if (!len || i + len > n)
			return false;
		for (unsigned k = 1; k < len; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
		if ((c == 0xe0 && s[i + 1] < 0xa0) || (c == 0xed && s[i + 1] >= 0xa0) ||
		    (c == 0xf0 && s[i + 1] < 0x90) || (c == 0xf4 && s[i + 1] >= 0x90))
			return false;
		i += len;
	}
	return true;
}

/* Names, thread names and descriptions with bytes that are not UTF-8 come out of
 * --json as JSON text, those bytes as U+FFFD; an empty name is "(no name)", as in
 * both trace formats. */
static void test_json_output_is_utf8(void **state)
{
	struct tt_fixture *fx = *state;
	const struct thread_recs one[] = {{101, "T\xfe", &t1}};
	t1.n = 0;
	begin(&t1, S_BYTES, 0);
	describe(&t1, "d\xff", 1);
	note(&t1, TT_REC_THRESHOLD, 5 * US, 2);
	end(&t1, 10 * US);
	begin(&t1, S_NONAME, 20 * US);
	end(&t1, 30 * US);
	write_file(fx->in, one, 1);
	static const char *const commands[][6] = {
		{"report", "--json", "--by-thread", NULL},
		{"spikes", "--json", NULL},
	};
	for (size_t i = 0; i < N(commands); i++) {
		const char *args[8] = {commands[i][0], fx->in};
		for (size_t k = 1; commands[i][k]; k++)
			args[k + 1] = commands[i][k];
		struct tt_run r;
		run_ok(&r, args);
		if (!valid_utf8(r.out, r.out_len))
			fail_msg("ticktrace %s --json wrote bytes that are not UTF-8:\n%s", args[0], r.out);
		const char *want[] = {"\"bytes\xEF\xBF\xBD\xEF\xBF\xBD\"", "\"thread\":\"T\xEF\xBF\xBD\"",
				      i == 0 ? "\"name\":\"(no name)\"" : "\"description\":\"d\xEF\xBF\xBD\""};
		assert_out_has(&r, want, N(want));
		free(r.out);
	}
}

/* ---- convert's marks ---- */

static void test_convert_marks_spikes(void **state)
{
	struct tt_fixture *fx = *state;
	game_workload(fx->in);
	assert_int_equal(tt_tw_save(fx->aux, thresholds_file, strlen(thresholds_file)), 0);
	struct tt_run r;
	RUN_OK(&r, "convert", fx->in, "-o", fx->out, "--thresholds", fx->aux);
	free(r.out);
	cJSON *root = tt_json_load(fx->out);
	assert_non_null(root);
	size_t marks = 0;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		if (strcmp(str(ev, "ph"), "i") || strncmp(str(ev, "name"), "spike: ", 7))
			continue;
		marks++;
		if (strcmp(str(ev, "name"), "spike: CreateMeshes took 13.000 ms") == 0) {
			assert_int_equal(tt_json_ns(ev, "ts"), 35 * MS); /* at its end */
			assert_int_equal(num(ev, "tid"), 101);
		}
	}
	assert_int_equal(marks, N(game_spikes));
	assert_non_null(tt_json_find(root, "i", "spike: CreateMeshes took 13.000 ms"));
	cJSON_Delete(root);
	/* Perfetto too; and no marks without a threshold option */
	char pf[160];
	snprintf(pf, sizeof(pf), "%s/run.pftrace", fx->dir);
	RUN_OK(&r, "convert", fx->in, "-o", pf, "--threshold", "1ms");
	free(r.out);
	RUN_OK(&r, "convert", fx->in, "-o", fx->out, "--force");
	free(r.out);
	root = tt_json_load(fx->out);
	assert_null(tt_json_find(root, "i", "spike: CreateMeshes took 13.000 ms"));
	cJSON_Delete(root);
}

/* ---- bad input ---- */

static void expect_error(struct tt_fixture *fx, const char *const *args, const char *msg)
{
	struct tt_run r;
	tt_run(&r, args);
	free(r.out);
	if (r.status != 1)
		fail_msg("exit status %d, not 1:\n%s", r.status, r.err);
	assert_err_has(&r, msg);
	struct stat st;
	assert_int_not_equal(stat(fx->out, &st), 0); /* no partial output */
}

static void test_bad_notes_and_thresholds(void **state)
{
	struct tt_fixture *fx = *state;
	char where[320];
	const char *report[] = {"report", fx->in, "-o", fx->out, NULL};
	const char *spikes[] = {"spikes", fx->in, "-o", fx->out, "--thresholds", fx->aux, NULL};
	const struct thread_recs one[] = {{101, "MainThread", &t1}};
	/* records start at byte 144 + process + sites + thread: find them from the writer */
	t1.n = 0;
	begin(&t1, S_MAIN, 0);
	rec(&t1, TT_REC_DESCRIBE, 20, 10); /* two TEXT records should follow */
	end(&t1, 20);
	write_file(fx->in, one, 1);
	expect_error(fx, report, "DESCRIBE record without its TEXT records");
	t1.n = 1;
	rec(&t1, TT_REC_TEXT, 0, 10);
	write_file(fx->in, one, 1);
	expect_error(fx, report, "TEXT record with no record before it that takes one");
	t1.n = 1;
	rec(&t1, TT_REC_DESCRIBE, 241, 10);
	write_file(fx->in, one, 1);
	expect_error(fx, report, "DESCRIBE of 241 bytes: more than 240");
	t1.n = 1;
	rec(&t1, 26, 0, 10);
	write_file(fx->in, one, 1);
	expect_error(fx, report, "unknown record kind 26");
	/* each error names the file and the offset */
	snprintf(where, sizeof(where), "%s: offset ", fx->in);
	struct tt_run r;
	tt_run(&r, report);
	free(r.out);
	assert_err_has(&r, where);
	/* a thread whose records end inside an event (a dump that read it while it wrote
	 * it): that event is left out and counted, the rest reported */
	t1.n = 1;
	rec(&t1, TT_REC_DESCRIBE, 20, 10);
	write_file(fx->in, one, 1);
	tt_run(&r, report);
	free(r.out);
	if (r.status != 0)
		fail_msg("exit status %d, not 0:\n%s", r.status, r.err);
	assert_err_has(&r, "has only part of its records");
	unlink(fx->out);

	t1.n = 0;
	begin(&t1, S_MAIN, 0);
	end(&t1, 20);
	write_file(fx->in, one, 1);
	static const char bad_time[] = "GameTick 16.6ms\nScriptStep fast\n";
	assert_int_equal(tt_tw_save(fx->aux, bad_time, strlen(bad_time)), 0);
	snprintf(where, sizeof(where), "%s: line 2: \"fast\" is not a duration", fx->aux);
	expect_error(fx, spikes, where);
	static const char no_time[] = "\n\n  GameTick\n";
	assert_int_equal(tt_tw_save(fx->aux, no_time, strlen(no_time)), 0);
	snprintf(where, sizeof(where), "%s: line 3: \"GameTick\" is not \"NAME-PATTERN DURATION\"",
		 fx->aux);
	expect_error(fx, spikes, where);
	unlink(fx->aux);
	expect_error(fx, spikes, "cannot read");

	/* usage errors: status 2 */
	const char *const usage[][6] = {
		{"report", fx->in, "--sort", "speed", NULL},
		{"spikes", fx->in, "--threshold", "soon", NULL},
		{"report", NULL},
		{"report", fx->in, "--threshold", "1ms", NULL}, /* a spikes option */
	};
	for (size_t i = 0; i < N(usage); i++) {
		tt_run(&r, usage[i]);
		free(r.out);
		assert_int_equal(r.status, 2);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_profile_of_known_workload, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_report_filtered, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_profile_agrees_with_json_trace, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_planted_spikes_found_with_their_stacks, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_empty_description, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_json_output_is_utf8, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_convert_marks_spikes, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_bad_notes_and_thresholds, setup, tt_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
