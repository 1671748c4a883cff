/* `ticktrace report` on synthetic raw files with a clock of one tick per nanosecond,
 * so that every time is exact:
 *  - the flat profile of a known workload, to the nanosecond, in JSON, CSV and text,
 *    all threads and per thread, in every sort order;
 *  - on a large pseudo-random one, self + children == total, and every figure agrees
 *    with the Chrome JSON that `convert` writes of the same file; percentiles are
 *    within the documented 1/64 of the exact ones; the runtime's record feeder gives
 *    the very same table as the decoder.
 * Spikes, convert's marks and bad input: test_report_spikes.c. */
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

#include "analysis/analysis.h"
#include "tt_check.h"
#include "tt_tw.h"
#include "report_support.h"

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
	extern size_t test_name(void *, const struct tt_an_thread *, uint64_t, char *, size_t);
	struct tt_clock one_tick_a_ns; /* as the files' header says */
	assert_int_equal(tt_clock_set(&one_tick_a_ns, 0, 0, 1000000000), 0);
	struct tt_an an = {.profile = true, .name = test_name};
	struct tt_an_thread ta[2], *list[2] = {&ta[0], &ta[1]};
	for (int i = 0; i < 2; i++) {
		tt_an_thread_init(&ta[i], &an, NULL);
		struct tt_an_feed feed = {.th = &ta[i], .clock = &one_tick_a_ns};
		const struct recs *b = i ? &t2 : &t1;
		/* in two pieces, as a drain thread would see them */
		assert_int_equal(tt_an_feed_records(&feed, b->r, b->n / 2), 0);
		assert_int_equal(tt_an_feed_records(&feed, b->r + b->n / 2, b->n - b->n / 2), 0);
		assert_int_equal(tt_an_feed_finish(&feed, INT64_MIN, INT64_MIN), 0);
		tt_an_feed_free(&feed);
	}
	struct tt_an_table table;
	assert_int_equal(tt_an_table_build(&table, list, 2, false, TT_AN_SORT_SELF), 0);
	tt_an_table_csv(out, &table);
	fclose(out);
	assert_string_equal(fed, r.out);
	tt_an_table_free(&table);
	for (int i = 0; i < 2; i++)
		tt_an_thread_free(&ta[i]);
	free(fed);
	free(r.out);
	free(slices);
	cJSON_Delete(trace);
}

size_t test_name(void *ctx, const struct tt_an_thread *th, uint64_t key, char *buf, size_t cap)
{
	(void)ctx, (void)th;
	if (key & TT_KEY_FUNC)
		return (size_t)snprintf(buf, cap, "0x%llx", (unsigned long long)(key & ~TT_KEY_FUNC));
	for (size_t i = 0; i < N(sites); i++)
		if (sites[i].address == key)
			return (size_t)snprintf(buf, cap, "%s", sites[i].name);
	return (size_t)snprintf(buf, cap, "?");
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_profile_of_known_workload, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_report_filtered, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_profile_agrees_with_json_trace, setup, tt_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
