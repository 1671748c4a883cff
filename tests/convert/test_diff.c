/* `ticktrace diff` on two builds of one program (tests/programs/diff_prog.c: "steady",
 * "noisy" +-30 % in both, "slowed" twice as long in the second build): exactly the
 * slower scope regresses, exit 3 with --fail-above 20%; runs of one build compare
 * with exit 0; runs that cannot be compared (a side with no scope, none in common,
 * scopes gone) exit 4 under --fail-above, saying why; bad input exits 1 naming the
 * file, usage errors 2.
 *   test_diff PROGRAM SLOWER_PROGRAM */
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt_check.h"
#include "tt_tw.h"

#define RUNS_BASE 4 /* a1..a4: two for a pair of single runs, two for a directory */
#define RUNS_SLOW 2 /* b1, b2 */

static const char *prog[2];
static char dir[64];

static void path(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", dir, name);
}

static void record(int build, const char *name)
{
	char out[128], setting[160];
	path(out, sizeof out, name);
	snprintf(setting, sizeof setting, "TICKTRACE_OUT=%s", out);
	struct tt_child c;
	assert_int_equal(tt_child_spawn(&c, prog[build], (const char *const[]){setting, NULL},
					 (const char *const[]){NULL}, NULL), 0);
	assert_int_equal(tt_child_wait(&c, 120), 0);
}

static void remove_dir(int sig)
{
	tt_rmdir(dir);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int diff_json(const char *base, const char *now, cJSON **rows, ...);
static bool controls_moved(const char *base, const char *now, bool slowed_too);

/* Attempts at a pair of runs whose controls held still (below) before the test fails. */
#define PAIR_ATTEMPTS 3

static int setup(void **state)
{
	(void)state;
	tt_tmpdir(dir, sizeof dir);
	signal(SIGTERM, remove_dir); /* meson's timeout: leave nothing behind */
	signal(SIGINT, remove_dir);
	char name[32];
	/* interleaved, so that a busy minute of the machine falls on both builds */
	for (int i = 1; i <= RUNS_BASE; i++) {
		snprintf(name, sizeof name, "a%d.ttr", i);
		record(0, name);
		snprintf(name, sizeof name, "b%d.ttr", i);
		if (i <= RUNS_SLOW)
			record(1, name);
	}
	/* "steady" and "noisy" are the same in both builds: a pair of runs in which one of
	 * them moved beyond 20 % was recorded while the machine was disturbed (a virtual
	 * CPU taken away: it stretches many 20 us calls), not a finding; recorded again */
	for (int k = 1; k < PAIR_ATTEMPTS && controls_moved("a1.ttr", "b1.ttr", false); k++) {
		record(0, "a1.ttr");
		record(1, "b1.ttr");
	}
	for (int k = 1; k < PAIR_ATTEMPTS && controls_moved("a1.ttr", "a2.ttr", true); k++)
		record(0, "a2.ttr");
	/* several runs a side: directories of raw files */
	return tt_sh("mkdir %1$s/A %1$s/B && cp %1$s/a3.ttr %1$s/a4.ttr %1$s/A/ && "
		     "cp %1$s/b1.ttr %1$s/b2.ttr %1$s/B/", dir);
}

static int teardown(void **state)
{
	(void)state;
	tt_rmdir(dir);
	return 0;
}

/* Runs `ticktrace diff BASE NEW -q FORMAT ARGS...` (`format` "" for text; `args`
 * NULL-terminated) into r. */
static void run_diff(struct tt_run *r, const char *base, const char *now, const char *format, va_list args)
{
	char b[128], n[128];
	path(b, sizeof b, base);
	path(n, sizeof n, now);
	const char *argv[16] = {"diff", b, n, "-q"};
	size_t k = 4;
	if (*format)
		argv[k++] = format;
	for (const char *a; (a = va_arg(args, const char *)) && k < 15;)
		argv[k++] = a;
	tt_run(r, argv);
}

/* Runs `ticktrace diff BASE NEW --json ARGS...` (NULL-terminated); the parsed lines
 * in *rows (a JSON array), the exit status returned. */
static int diff_json(const char *base, const char *now, cJSON **rows, ...)
{
	va_list ap;
	va_start(ap, rows);
	struct tt_run r;
	run_diff(&r, base, now, "--json", ap);
	va_end(ap);
	if (r.err[0])
		fprintf(stderr, "%s", r.err);
	*rows = cJSON_CreateArray();
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
		cJSON *row = cJSON_Parse(line);
		if (!row)
			fail_msg("not JSON: %s", line);
		cJSON_AddItemToArray(*rows, row);
	}
	free(r.out);
	return r.status;
}

static cJSON *scope(cJSON *rows, const char *name)
{
	cJSON *row;
	cJSON_ArrayForEach(row, rows)
		if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(row, "name")), name) == 0)
			return row;
	fail_msg("no scope %s", name);
	return NULL;
}

static bool is_true(cJSON *row, const char *key)
{
	return cJSON_IsTrue(cJSON_GetObjectItem(row, key));
}

static double number(cJSON *row, const char *side, const char *key)
{
	cJSON *obj = side ? cJSON_GetObjectItem(row, side) : row;
	return cJSON_GetNumberValue(cJSON_GetObjectItem(obj, key));
}

/* Whether a control scope ("steady", "noisy"; with slowed_too, "slowed" as well) was
 * marked changed beyond 20 % between the runs. */
static bool controls_moved(const char *base, const char *now, bool slowed_too)
{
	cJSON *rows, *row;
	diff_json(base, now, &rows, "--fail-above", "20", NULL);
	bool moved = false;
	cJSON_ArrayForEach(row, rows) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(row, "name"));
		if (slowed_too || strcmp(name, "slowed") != 0)
			moved |= is_true(row, "regressed") || is_true(row, "improved");
	}
	cJSON_Delete(rows);
	return moved;
}

/* Exactly "slowed" regressed, by about 100 % of its median; each scope made `calls`
 * calls a side. */
static void check_slowed_only(cJSON *rows, int calls)
{
	assert_int_equal(cJSON_GetArraySize(rows), 3);
	cJSON *slowed = scope(rows, "slowed");
	assert_true(is_true(slowed, "regressed"));
	double pct = number(slowed, NULL, "change_pct");
	assert_true(pct > 80 && pct < 120);
	assert_true(number(slowed, NULL, "p_value") < 1e-6);
	/* the largest significant increase of total time comes first: "slowed", or on a
	 * loaded machine a control whose total grew more (below the gate's 20 %) */
	cJSON *first = cJSON_GetArrayItem(rows, 0);
	assert_true(first == slowed ||
		    number(first, "new", "total_ns") - number(first, "base", "total_ns") >=
			    number(slowed, "new", "total_ns") - number(slowed, "base", "total_ns"));
	for (int i = 0; i < 2; i++) {
		cJSON *other = scope(rows, i ? "noisy" : "steady");
		assert_false(is_true(other, "regressed"));
		assert_false(is_true(other, "improved"));
		assert_int_equal((int)number(other, "base", "calls"), calls);
		assert_int_equal((int)number(other, "new", "calls"), calls);
	}
}

static void test_slower_build_regresses(void **state)
{
	(void)state;
	cJSON *rows;
	assert_int_equal(diff_json("a1.ttr", "b1.ttr", &rows, "--fail-above", "20%", NULL), 3);
	check_slowed_only(rows, 1500);
	cJSON_Delete(rows);
	/* without --fail-above, marked all the same (beyond 5 %), and no gate; the others are
	 * not checked here: runs of one build differ by 5 % once in about a hundred pairs */
	assert_int_equal(diff_json("a1.ttr", "b1.ttr", &rows, NULL), 0);
	assert_true(is_true(scope(rows, "slowed"), "regressed"));
	cJSON_Delete(rows);
}

static void test_same_build_passes(void **state)
{
	(void)state;
	cJSON *rows, *row;
	assert_int_equal(diff_json("a1.ttr", "a2.ttr", &rows, "--fail-above", "20%", NULL), 0);
	assert_int_equal(cJSON_GetArraySize(rows), 3);
	cJSON_ArrayForEach(row, rows)
		assert_false(is_true(row, "regressed"));
	cJSON_Delete(rows);
	/* a run against itself: no change at all */
	assert_int_equal(diff_json("a1.ttr", "a1.ttr", &rows, "--fail-above", "1", NULL), 0);
	cJSON_ArrayForEach(row, rows) {
		assert_true(number(row, NULL, "change_pct") == 0);
		assert_true(number(row, NULL, "p_value") > 0.99);
	}
	cJSON_Delete(rows);
}

/* Directories: two runs a side, pooled, every run agreeing. */
static void test_runs_pooled(void **state)
{
	(void)state;
	cJSON *rows;
	assert_int_equal(diff_json("A", "B", &rows, "--fail-above", "20", NULL), 3);
	check_slowed_only(rows, 3000);
	cJSON *slowed = scope(rows, "slowed");
	assert_int_equal((int)number(slowed, "base", "calls"), 3000);
	assert_int_equal((int)number(slowed, "new", "runs"), 2);
	assert_true(is_true(slowed, "runs_agree"));
	cJSON_Delete(rows);
	/* the other way round, it is an improvement: no gate */
	assert_int_equal(diff_json("B", "A", &rows, "--fail-above", "20", NULL), 0);
	assert_true(is_true(scope(rows, "slowed"), "improved"));
	assert_false(is_true(scope(rows, "slowed"), "regressed"));
	cJSON_Delete(rows);
}

static void write_mixed(const char *name, const int64_t *ns, const int *n, size_t kinds);
static void write_scopes(const char *name, const char *const *names, size_t nnames, const int64_t *ns,
			 const int *n, size_t kinds);

static void test_metrics_and_filters(void **state)
{
	(void)state;
	cJSON *rows;
	/* the calls did not change */
	assert_int_equal(diff_json("a1.ttr", "b1.ttr", &rows, "--metric", "calls", "--fail-above", "1", NULL), 0);
	cJSON_Delete(rows);
	/* the tail: files whose durations are exact (on a busy machine a run's 20 us calls
	 * can have a p90 of 50 us, as long as the slower build's): the median unchanged,
	 * the p90 tripled */
	const int64_t base_ns[] = {100, 1000}, new_ns[] = {100, 3000};
	write_mixed("tail_base.ttr", base_ns, (const int[]){500, 500}, 2);
	write_mixed("tail_new.ttr", new_ns, (const int[]){500, 500}, 2);
	assert_int_equal(diff_json("tail_base.ttr", "tail_new.ttr", &rows, "--fail-above", "20", NULL), 0);
	cJSON_Delete(rows);
	assert_int_equal(diff_json("tail_base.ttr", "tail_new.ttr", &rows, "--metric", "p90", "--fail-above", "20",
				   NULL), 3);
	assert_true(is_true(scope(rows, "mixed"), "regressed"));
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(scope(rows, "mixed"), "metric")), "p90");
	cJSON_Delete(rows);
	/* too rare to judge: every scope left out, so nothing regressed */
	assert_int_equal(diff_json("a1.ttr", "b1.ttr", &rows, "--min-calls", "1501", "--fail-above", "20", NULL), 0);
	assert_int_equal(cJSON_GetArraySize(rows), 0);
	cJSON_Delete(rows);
	/* by thread name: the main thread's scopes, named */
	assert_int_equal(diff_json("a1.ttr", "b1.ttr", &rows, "--by-thread", "--fail-above", "20", NULL), 3);
	assert_int_equal(cJSON_GetArraySize(rows), 3);
	/* the main thread, named after a program that differs between the builds */
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(scope(rows, "slowed"), "thread")),
			    "main");
	cJSON_Delete(rows);
	/* a thread that is not there: nothing to compare, which the gate cannot pass */
	assert_int_equal(diff_json("a1.ttr", "b1.ttr", &rows, "--thread", "nosuch", "--fail-above", "20", NULL), 4);
	assert_int_equal(cJSON_GetArraySize(rows), 0);
	cJSON_Delete(rows);
}

/* Runs `ticktrace diff BASE NEW -q ARGS...` (NULL-terminated); its exit status, and
 * whether its stderr holds `said`. */
static int diff_says(const char *base, const char *now, const char *said, ...)
{
	va_list ap;
	va_start(ap, said);
	struct tt_run r;
	run_diff(&r, base, now, "", ap);
	va_end(ap);
	if (!strstr(r.err, said))
		fail_msg("diff %s %s: \"%s\" not said: %s", base, now, said, r.err);
	free(r.out);
	return r.status;
}

/* The gate fails when it cannot compare: NEW recorded none of BASE's scopes, or some
 * of them, or nothing; another program. Without --fail-above, a warning. */
static void test_uncompared(void **state)
{
	(void)state;
	const int64_t us[] = {1000}, two_us[] = {2000};
	const int calls[] = {200};
	write_scopes("two.ttr", (const char *const[]){"kept", "dropped"}, 2, us, calls, 1);
	write_scopes("one.ttr", (const char *const[]){"kept"}, 1, us, calls, 1);
	write_scopes("other.ttr", (const char *const[]){"elsewhere"}, 1, us, calls, 1);
	write_scopes("none.ttr", NULL, 0, us, calls, 1);
	const char *gone = "1 scope of ";
	assert_int_equal(diff_says("two.ttr", "one.ttr", gone, "--fail-above", "20", NULL), 4);
	assert_int_equal(diff_says("two.ttr", "one.ttr", "not in ", "--fail-above", "20", NULL), 4);
	assert_int_equal(diff_says("two.ttr", "one.ttr", ": dropped", "--fail-above", "20", NULL), 4);
	assert_int_equal(diff_says("two.ttr", "one.ttr", "--allow-gone accepts", "--fail-above", "20", NULL), 4);
	/* accepted: the scope in common is gated */
	assert_int_equal(diff_says("two.ttr", "one.ttr", "warning: diff: 1 scope of", "--fail-above", "20",
				   "--allow-gone", NULL), 0);
	assert_int_equal(diff_says("two.ttr", "one.ttr", "warning: diff: 1 scope of", NULL), 0);
	/* a scope only NEW has is no loss */
	assert_int_equal(diff_says("one.ttr", "two.ttr", "", "--fail-above", "20", NULL), 0);
	/* another program: nothing in common, which --allow-gone does not accept */
	const char *apart = "have no scope in common";
	assert_int_equal(diff_says("two.ttr", "other.ttr", apart, "--fail-above", "20", NULL), 4);
	assert_int_equal(diff_says("two.ttr", "other.ttr", apart, "--fail-above", "20", "--allow-gone", NULL), 4);
	assert_int_equal(diff_says("a1.ttr", "other.ttr", apart, "--fail-above", "20%", NULL), 4);
	assert_int_equal(diff_says("two.ttr", "other.ttr", apart, NULL), 0);
	/* a side that recorded nothing */
	assert_int_equal(diff_says("two.ttr", "none.ttr", "none.ttr recorded no scope", "--fail-above", "20",
				   "--allow-gone", NULL), 4);
	assert_int_equal(diff_says("none.ttr", "two.ttr", "none.ttr recorded no scope", "--fail-above", "20",
				   NULL), 4);
	assert_int_equal(diff_says("none.ttr", "none.ttr", "neither ", "--fail-above", "20", NULL), 4);
	/* a regression found is said as such, with the scopes gone */
	write_scopes("one_slower.ttr", (const char *const[]){"kept"}, 1, two_us, calls, 1);
	assert_int_equal(diff_says("two.ttr", "one_slower.ttr", gone, "--fail-above", "20", NULL), 3);
}

/* A raw file of the scopes `names` (nnames of them), each making `n[i]` calls
 * lasting `ns[i]` for each of the `kinds`, back to back. */
static void write_scopes(const char *name, const char *const *names, size_t nnames, const int64_t *ns,
			 const int *n, size_t kinds)
{
	struct tt_tw_site site[4];
	struct tt_record r[4096];
	size_t k = 0;
	uint64_t tsc = 2000;
	for (size_t s = 0; s < nnames && s < 4; s++) {
		site[s] = (struct tt_tw_site){0x1000 + 0x100 * s, names[s], "scopes.c", "f", (uint32_t)s + 1};
		for (size_t i = 0; i < kinds; i++)
			for (int c = 0; c < n[i] && k + 2 <= 4096; c++) {
				r[k++] = TT_TW_REC(TT_REC_BEGIN, site[s].address, tsc);
				r[k++] = TT_TW_REC(TT_REC_END, 0, tsc + (uint64_t)ns[i]);
				tsc += (uint64_t)ns[i] + 10;
			}
	}
	char file[128];
	path(file, sizeof file, name);
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, file), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, names ? names[0] : "none");
	tt_tw_sites(&w, site, nnames);
	tt_tw_thread(&w, 0, 4242, names ? names[0] : "none", k, 0);
	tt_tw_events(&w, 0, 0, r, k);
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
}

/* One scope "mixed". */
static void write_mixed(const char *name, const int64_t *ns, const int *n, size_t kinds)
{
	write_scopes(name, (const char *const[]){"mixed"}, 1, ns, n, kinds);
}

/* A median that rose while the calls as a whole got shorter is no regression: the
 * change must be significant in its own direction. */
static void test_direction(void **state)
{
	(void)state;
	const int64_t base_ns[] = {100, 300}, new_ns[] = {10, 200};
	write_mixed("mixed_base.ttr", base_ns, (const int[]){600, 400}, 2); /* p50 100 ns */
	write_mixed("mixed_new.ttr", new_ns, (const int[]){490, 510}, 2);   /* p50 200 ns */
	cJSON *rows;
	assert_int_equal(diff_json("mixed_base.ttr", "mixed_new.ttr", &rows, "--fail-above", "20", NULL), 0);
	cJSON *mixed = scope(rows, "mixed");
	assert_true(number(mixed, NULL, "change_pct") == 100);
	assert_true(number(mixed, NULL, "p_value") < 1e-9);
	assert_true(number(mixed, NULL, "superiority") < 0.5); /* new calls shorter */
	assert_false(is_true(mixed, "significant"));
	assert_false(is_true(mixed, "regressed"));
	cJSON_Delete(rows);
	/* the total went down (180 us -> 106.9 us), with the calls as a whole shorter */
	assert_int_equal(diff_json("mixed_base.ttr", "mixed_new.ttr", &rows, "--metric", "total", "--fail-above",
				   "20", NULL), 0);
	assert_true(is_true(scope(rows, "mixed"), "improved"));
	cJSON_Delete(rows);
	/* and the other way round, up by 68 %: the gate */
	assert_int_equal(diff_json("mixed_new.ttr", "mixed_base.ttr", &rows, "--metric", "total", "--fail-above",
				   "20", NULL), 3);
	mixed = scope(rows, "mixed");
	assert_true(is_true(mixed, "regressed"));
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(mixed, "metric")), "total");
	cJSON_Delete(rows);
}

static void test_formats(void **state)
{
	(void)state;
	char a[128], b[128];
	path(a, sizeof a, "a1.ttr");
	path(b, sizeof b, "b1.ttr");
	struct tt_run r;
	TT_RUN(&r, "diff", a, b, "--fail-above", "20"); /* beyond what a busy machine moves */
	assert_int_equal(r.status, 3);
	char *line = strstr(r.out, "\nslowed ");
	assert_non_null(line);
	char *next = strchr(line + 1, '\n'); /* base's line, then new's with the verdict */
	assert_non_null(next);
	assert_non_null(strstr(next, "REGRESSED"));
	assert_null(strstr(r.out, "improved\n"));
	assert_non_null(strstr(r.err, "1 regressed"));
	free(r.out);
	TT_RUN(&r, "diff", a, b, "--markdown", "-q", "--fail-above", "20");
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.out, "| slowed | REGRESSED |"));
	assert_null(strstr(r.out, "| steady"));
	assert_non_null(strstr(r.out, "2 scopes with no change"));
	free(r.out);
	TT_RUN(&r, "diff", a, b, "--svg", "-q");
	assert_int_equal(r.status, 0);
	assert_memory_equal(r.out, "<?xml", 5);
	assert_non_null(strstr(r.out, "slowed (base)"));
	assert_non_null(strstr(r.out, "slowed (new)"));
	assert_non_null(strstr(r.out, "</svg>"));
	free(r.out);
}

static void test_bad_input(void **state)
{
	(void)state;
	char a[128], missing[128], damaged[128], out[128];
	path(a, sizeof a, "a1.ttr");
	path(missing, sizeof missing, "missing.ttr");
	path(damaged, sizeof damaged, "damaged.ttr");
	path(out, sizeof out, "out.txt");
	struct tt_run r;
	TT_RUN(&r, "diff", a, missing, "-o", out);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, missing));
	free(r.out);
	/* the first 1000 bytes of a run: cut inside its sections */
	assert_int_equal(tt_sh("head -c 1000 %s > %s", a, damaged), 0);
	TT_RUN(&r, "diff", damaged, a, "-o", out, "--fail-above", "20");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, damaged));
	free(r.out);
	assert_int_equal(access(out, F_OK), -1); /* no output left behind */
	char empty[128];
	path(empty, sizeof empty, "empty");
	assert_int_equal(tt_sh("mkdir %s", empty), 0);
	TT_RUN(&r, "diff", empty, a);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, empty));
	free(r.out);
}

static void test_usage(void **state)
{
	(void)state;
	static const char *const cases[][6] = {
		{"diff", "x.ttr", NULL},
		{"diff", "x.ttr", "y.ttr", "z.ttr", NULL},
		{"diff", "x.ttr", "y.ttr", "--metric", "mean"},
		{"diff", "x.ttr", "y.ttr", "--fail-above", "lots"},
		{"diff", "x.ttr", "y.ttr", "--fail-above", "-5"},
		{"diff", "x.ttr", "y.ttr", "--alpha", "2"},
		{"diff", "x.ttr", "y.ttr", "--from", "later"},
		{"diff", "x.ttr", "y.ttr", "--bogus", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct tt_run r;
		tt_run(&r, cases[i]);
		if (r.status != 2)
			fail_msg("case %zu: exit %d, %s", i, r.status, r.err);
		assert_non_null(strstr(r.err, "usage: ticktrace diff"));
		free(r.out);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test_diff PROGRAM SLOWER_PROGRAM\n");
		return 1;
	}
	prog[0] = argv[1];
	prog[1] = argv[2];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slower_build_regresses), cmocka_unit_test(test_same_build_passes),
		cmocka_unit_test(test_runs_pooled),            cmocka_unit_test(test_metrics_and_filters),
		cmocka_unit_test(test_direction),              cmocka_unit_test(test_uncompared),
		cmocka_unit_test(test_formats),                cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_usage),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
