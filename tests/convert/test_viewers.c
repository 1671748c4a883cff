/* What a user looks at, through the ticktrace command (and, where a limit cannot be
 * reached in a test's time, tt_convert itself): the warning about JSON too large for
 * a viewer; --clip cutting slices at the --from/--to window; `info` sites. */
#include <fcntl.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt_check.h"
#include "cmd/cmd.h"
#include "tt_demo.h"
#include "tt_tw.h"

#define R TT_TW_REC

/* Runs tt_convert in this process with stderr into `err` (cap bytes); its status. */
static int convert_capturing(const struct tt_convert_opts *opts, char *err, size_t cap)
{
	char path[] = "/tmp/tt-stderr-XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	fflush(stderr);
	dup2(fd, 2);
	int rc = tt_convert(opts, NULL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ssize_t n = pread(fd, err, cap - 1, 0);
	err[n > 0 ? n : 0] = 0;
	close(fd);
	unlink(path);
	return rc;
}

/* JSON over what viewers load gets a warning that says what to do instead; JSON
 * under it, and Perfetto's format, none. (The real limit is 512 MB: the test lowers
 * it to the size of the demo's JSON.) */
static void test_json_too_large(void **state)
{
	struct tt_fixture *fx = *state;
	assert_int_equal(tt_demo_write(fx->in), 0);
	char *inputs[] = {fx->in}, err[4096];
	struct tt_convert_opts opts = {.inputs = inputs, .ninputs = 1, .output = fx->out,
				       .quiet = true, .thresholds.global = TT_AN_NO_THRESHOLD};
	assert_int_equal(convert_capturing(&opts, err, sizeof(err)), 0);
	assert_null(strstr(err, "JSON"));
	off_t size = lseek(open(fx->out, O_RDONLY | O_CLOEXEC), 0, SEEK_END);
	assert_true(size > 100);

	opts.force = true;
	opts.json_limit = (uint64_t)size; /* exactly at the limit: loads */
	assert_int_equal(convert_capturing(&opts, err, sizeof(err)), 0);
	assert_null(strstr(err, "JSON"));
	opts.json_limit = (uint64_t)size - 1;
	assert_int_equal(convert_capturing(&opts, err, sizeof(err)), 0);
	if (!strstr(err, "warning: ") || !strstr(err, "of JSON, more than the") ||
	    !strstr(err, "Perfetto's format") || !strstr(err, "--min-dur"))
		fail_msg("no warning, or not the advice:\n%s", err);

	opts.output = fx->aux;
	opts.format = TT_FORMAT_PERFETTO;
	opts.json_limit = 1;
	assert_int_equal(convert_capturing(&opts, err, sizeof(err)), 0);
	assert_null(strstr(err, "JSON"));
}

static const char *check_perfetto, *perfetto_proto; /* tests/consumers/, tools/ */

static double number(const cJSON *o, const char *key)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static bool flag(const cJSON *slice, const char *key)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(slice, "args"), key));
}

/* --clip cuts every slice at the window and flags the cut ones; the Perfetto output
 * holds the same slices (tests/consumers/check-perfetto.py). Without it, "main"
 * spans more than the window. */
static void test_clip(void **state)
{
	struct tt_fixture *fx = *state;
	assert_int_equal(tt_demo_write(fx->in), 0);
	struct tt_run r;
	TT_RUN(&r, "convert", "-q", fx->in, "-o", fx->out, "--from", "5us", "--to", "6us");
	assert_int_equal(r.status, 0);
	free(r.out);
	cJSON *whole = tt_json_load(fx->out);
	const cJSON *main_whole = tt_json_find(whole, "X", "main");
	assert_true(number(main_whole, "dur") > 1.5);
	assert_false(flag(main_whole, "clipped_begin"));

	TT_RUN(&r, "convert", "-q", "-f", fx->in, "-o", fx->out, "--from", "5us", "--to", "6us", "--clip");
	assert_int_equal(r.status, 0);
	free(r.out);
	cJSON *root = tt_json_load(fx->out);
	const cJSON *main_cut = tt_json_find(root, "X", "main");
	assert_non_null(main_cut);
	assert_true(flag(main_cut, "clipped_begin") && flag(main_cut, "clipped_end"));
	double from = number(main_cut, "ts"), to = from + number(main_cut, "dur");
	assert_true(to - from > 0.999 && to - from < 1.001); /* the window: 1 us */
	assert_true(from > number(main_whole, "ts"));
	const cJSON *ev;
	size_t slices = 0, cut = 0;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
		if (strcmp(ph->valuestring, "X") != 0)
			continue;
		double ts = number(ev, "ts"), end = ts + number(ev, "dur");
		if (ts < from - 1e-6 || end > to + 1e-6)
			fail_msg("a slice outside the window [%.3f, %.3f]: %.3f..%.3f", from, to, ts, end);
		slices++;
		cut += flag(ev, "clipped_begin") || flag(ev, "clipped_end");
	}
	assert_true(slices >= 3 && cut >= 2);
	cJSON_Delete(root);
	cJSON_Delete(whole);

	TT_RUN(&r, "convert", "-q", fx->in, "-o", fx->aux, "-F", "perfetto", "--from", "5us", "--to",
	       "6us", "--clip");
	assert_int_equal(r.status, 0);
	free(r.out);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s' '%s' '%s'", check_perfetto, fx->aux,
		 perfetto_proto, fx->out);
	int st = system(cmd);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		print_message("no protoc: the Perfetto output is not compared\n");
	else
		assert_int_equal(WEXITSTATUS(st), 0);

	TT_RUN(&r, "convert", fx->in, "-o", "-", "--clip");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--clip"));
	free(r.out);
}

/* Threads that carry the process's name are named after their first scope; the main
 * thread, named threads and threads with no scope keep their names. */
static void test_pool_threads(void **state)
{
	struct tt_fixture *fx = *state;
	const struct tt_record work[] = {TT_TW_REC(TT_REC_INSTANT, S_WAKE, 1100),
					 TT_TW_REC(TT_REC_BEGIN, S_WORK, 1200),
					 TT_TW_REC(TT_REC_END, 0, 1300)};
	const struct tt_record idle[] = {TT_TW_REC(TT_REC_INSTANT, S_WAKE, 1100)};
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, fx->in), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "pool");
	tt_tw_sites(&w, tt_demo_sites, tt_demo_nsites);
	const struct { uint32_t tid; const char *name; const struct tt_record *rec; size_t n; } th[] = {
		{4242, "pool", work, 3}, {4243, "pool", work, 3}, {4244, "custom", work, 3},
		{4245, "pool", idle, 1}};
	for (uint32_t i = 0; i < 4; i++) {
		tt_tw_thread(&w, i, th[i].tid, th[i].name, th[i].n, 0);
		tt_tw_events(&w, i, 0, th[i].rec, th[i].n);
	}
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
	struct tt_run r;
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 0);
	static const char *const rows[] = {"    4242  pool  ", "    4243  pool: work  ",
					   "    4244  custom  ", "    4245  pool  "};
	for (size_t i = 0; i < 4; i++)
		if (!strstr(r.out, rows[i]))
			fail_msg("no row \"%s\" in:\n%s", rows[i], r.out);
	free(r.out);
	TT_RUN(&r, "convert", "-q", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 0);
	free(r.out);
	cJSON *root = tt_json_load(fx->out);
	const cJSON *ev;
	bool named = false;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(args, "name");
		named |= number(ev, "tid") == 4243 && cJSON_IsString(name) &&
			 strcmp(name->valuestring, "pool: work") == 0;
	}
	assert_true(named);
	cJSON_Delete(root);
	/* --thread takes the name it had, the process's, as well as the new one */
	static const char *const keep[][2] = {{"pool", "4242 4243 4245 "}, {"pool: work", "4243 "}};
	for (size_t i = 0; i < 2; i++) {
		TT_RUN(&r, "convert", "-q", "-f", fx->in, "-o", fx->out, "--thread", keep[i][0]);
		assert_int_equal(r.status, 0);
		free(r.out);
		root = tt_json_load(fx->out);
		bool seen[4] = {false}; /* tids 4242 to 4245 with events kept (names are not) */
		cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
		{
			int tid = (int)number(ev, "tid");
			if (strcmp(cJSON_GetObjectItemCaseSensitive(ev, "ph")->valuestring, "M") != 0 &&
			    tid >= 4242 && tid <= 4245)
				seen[tid - 4242] = true;
		}
		char tids[64] = "";
		for (int t = 0; t < 4; t++)
			if (seen[t])
				snprintf(tids + strlen(tids), sizeof(tids) - strlen(tids), "%d ", 4242 + t);
		if (strcmp(tids, keep[i][1]) != 0)
			fail_msg("--thread '%s' kept the threads %s, not %s", keep[i][0], tids, keep[i][1]);
		cJSON_Delete(root);
	}
}

/* info lists call sites most used first, functions as name(), at most --sites N. */
static void test_info_sites(void **state)
{
	struct tt_fixture *fx = *state;
	uint64_t funcs[] = {0x401000};
	const struct tt_record rec[] = {
		TT_TW_REC(TT_REC_BEGIN, S_WORK, 1100), TT_TW_REC(TT_REC_END, 0, 1110),
		TT_TW_REC(TT_REC_FUNC_ENTER, 0x401000, 1120), TT_TW_REC(TT_REC_FUNC_EXIT, 0x401000, 1130),
		TT_TW_REC(TT_REC_BEGIN, S_WORK, 1140), TT_TW_REC(TT_REC_END, 0, 1150),
		TT_TW_REC(TT_REC_INSTANT, S_WAKE, 1160), TT_TW_REC(TT_REC_BEGIN, S_WORK, 1170),
		TT_TW_REC(TT_REC_END, 0, 1180), TT_TW_REC(TT_REC_INSTANT, S_WAKE, 1190)};
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, fx->in), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "demo");
	tt_tw_sites(&w, tt_demo_sites, tt_demo_nsites);
	tt_tw_funcs(&w, funcs, 1);
	tt_tw_thread(&w, 0, 4242, "main", 10, 0);
	tt_tw_events(&w, 0, 0, rec, 10);
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
	struct tt_run r;
	TT_RUN(&r, "info", fx->in, "--sites", "0");
	assert_int_equal(r.status, 0);
	const char *work = strstr(r.out, " 3  work "), *wake = strstr(r.out, " 2  wake "),
		   *func = strstr(r.out, " 1  0x401000() ");
	if (!work || !wake || !func || !(work < wake && wake < func) || strstr(r.out, "more, used less"))
		fail_msg("not work (3), wake (2), 0x401000() (1) in that order:\n%s", r.out);
	free(r.out);
	TT_RUN(&r, "info", fx->in, "--sites", "2");
	assert_int_equal(r.status, 0);
	if (!strstr(r.out, " 3  work ") || !strstr(r.out, " 2  wake ") || strstr(r.out, "0x401000()") ||
	    !strstr(r.out, "... 7 more, used less (--sites 0 lists them all)"))
		fail_msg("--sites 2:\n%s", r.out);
	free(r.out);
	TT_RUN(&r, "info", fx->in, "--sites", "many");
	assert_int_equal(r.status, 2);
	free(r.out);
}

/* `ticktrace report -q FILE`'s peak RSS in KiB. */
static long report_peak_rss_kib(const char *file)
{
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		execl(getenv("TT_TEST_TOOL"), "ticktrace", "report", "-q", file, (char *)NULL);
		_exit(127);
	}
	int st;
	struct rusage ru;
	assert_int_equal(wait4(pid, &st, 0, &ru), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return ru.ru_maxrss;
}

/* Memory while converting stays well below the input's size when the threads'
 * sections interleave in the file, as a streamed run writes them (64 KiB chunks of
 * four threads in turn): pages mapped back around each fault were never released,
 * and kept some 40% of such a file resident. */
static void test_memory_flat(void **state)
{
	struct tt_fixture *fx = *state;
	enum { THREADS = 4, CHUNK = 4096, CHUNKS = 512 }; /* 128 MiB of records */
	struct tt_record *rec = malloc(CHUNK * sizeof(*rec));
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, fx->in), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "demo");
	tt_tw_sites(&w, tt_demo_sites, tt_demo_nsites);
	for (uint32_t t = 0; t < THREADS; t++)
		tt_tw_thread(&w, t, 101 + t, "worker", (uint64_t)CHUNK * CHUNKS, 0);
	for (uint64_t c = 0; c < CHUNKS; c++)
		for (uint32_t t = 0; t < THREADS; t++) {
			for (size_t i = 0; i < CHUNK; i++) {
				uint64_t k = c * CHUNK + i;
				rec[i] = TT_TW_REC(k % 2 ? TT_REC_END : TT_REC_BEGIN, k % 2 ? 0 : S_WORK,
						   2000 + 4 * k + t);
			}
			tt_tw_events(&w, t, c * CHUNK, rec, CHUNK);
		}
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
	free(rec);
	/* against the same command on a tiny file: sanitizers add their own */
	assert_int_equal(tt_demo_write(fx->aux), 0);
	long tiny = report_peak_rss_kib(fx->aux), big = report_peak_rss_kib(fx->in);
	print_message("report: peak RSS %ld MiB for 128 MiB of records, %ld MiB for a tiny file\n",
		      big >> 10, tiny >> 10);
	if (big - tiny > 24 << 10)
		fail_msg("report's peak RSS is %ld MiB for 128 MiB of records, %ld for a tiny file",
			 big >> 10, tiny >> 10);
}

/* Reads an SVG into text (cap bytes), after checking that it is well-formed XML. */
static void read_svg(const char *path, char *text, size_t cap)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' '%s'", path);
	assert_int_equal(system(cmd), 0);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(text, 1, cap - 1, f);
	fclose(f);
	text[n] = 0;
}

/* ticktrace flame: self time by path, threads of one name merged, exactly; the SVG
 * is well-formed XML with a frame for each path, as wide as its time. */
static void test_flame(void **state)
{
	struct tt_fixture *fx = *state;
	const struct tt_record app[] = {
		TT_TW_REC(TT_REC_BEGIN, S_MAIN, 1000), TT_TW_REC(TT_REC_BEGIN, S_CHILD, 1100),
		TT_TW_REC(TT_REC_END, 0, 1400), TT_TW_REC(TT_REC_END, 0, 2000)};
	const struct tt_record w1[] = {TT_TW_REC(TT_REC_BEGIN, S_WORK, 1000), TT_TW_REC(TT_REC_END, 0, 1500)};
	const struct tt_record w2[] = {TT_TW_REC(TT_REC_BEGIN, S_WORK, 1000), TT_TW_REC(TT_REC_END, 0, 1200)};
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, fx->in), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "demo");
	tt_tw_sites(&w, tt_demo_sites, tt_demo_nsites);
	tt_tw_thread(&w, 0, 4242, "app", 4, 0);
	tt_tw_events(&w, 0, 0, app, 4);
	tt_tw_thread(&w, 1, 4243, "worker", 2, 0);
	tt_tw_events(&w, 1, 0, w1, 2);
	tt_tw_thread(&w, 2, 4244, "worker", 2, 0);
	tt_tw_events(&w, 2, 0, w2, 2);
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);

	struct tt_run r;
	TT_RUN(&r, "flame", "-q", fx->in, "-o", "-");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "app;main 700\napp;main;child 300\nworker;work 700\n");
	free(r.out);
	TT_RUN(&r, "flame", "-q", fx->in, "-o", "-", "--thread", "4244", "--from", "100ns");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "worker;work 100\n"); /* 1100..1200: the window cuts it */
	free(r.out);

	char svg[160];
	snprintf(svg, sizeof(svg), "%s/flame.svg", fx->dir);
	TT_RUN(&r, "flame", "-q", fx->in, "-o", svg);
	assert_int_equal(r.status, 0);
	free(r.out);
	char text[16384];
	read_svg(svg, text, sizeof(text));
	/* 1180 px for 1.7 us: app 1000 ns is 694.1 px wide, child 300 ns 208.2 px */
	static const char *const want[] = {
		"<title>app: 1.000 us (58.82%), self 0 ns</title><rect x=\"10.0\"", "width=\"694.1\"",
		"<title>child: 300 ns (17.65%), self 300 ns</title>", "width=\"208.2\"",
		"<title>worker: 700 ns (41.18%), self 0 ns</title><rect x=\"704.1\"", ">child</text>",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(text, want[i]))
			fail_msg("no %s in the SVG:\n%s", want[i], text);

	TT_RUN(&r, "flame", fx->in);
	assert_int_equal(r.status, 2);
	free(r.out);
	TT_RUN(&r, "flame", fx->in, "-o", "-", "-F", "png");
	assert_int_equal(r.status, 2);
	free(r.out);
	TT_RUN(&r, "flame", fx->out, "-o", "-");
	assert_int_equal(r.status, 1);
	free(r.out);
}

/* report --svg: well-formed, a row per name in the table's order with its figures,
 * its share of the self time as a bar's width. */
static void test_report_plot(void **state)
{
	struct tt_fixture *fx = *state;
	assert_int_equal(tt_demo_write(fx->in), 0);
	char svg[160];
	snprintf(svg, sizeof(svg), "%s/report.svg", fx->dir);
	struct tt_run r;
	TT_RUN(&r, "report", "-q", fx->in, "--svg", "-o", svg);
	assert_int_equal(r.status, 0);
	free(r.out);
	char text[32768];
	read_svg(svg, text, sizeof(text));
	/* the table's order (by self time); child has 4 us of the 10 us of self time: 0.4 of
	 * the 240 px under its name */
	static const char *const rows[] = {
		"<title>child: 1 calls, self 4.000 us, p50 4.000 us, p99 4.000 us</title>",
		"<title>main: 1 calls, self 2.000 us, p50 6.000 us, p99 6.000 us</title>",
		"<title>work: 1 calls", "<title>next: 1 calls", "<title>0x401000: 1 calls"};
	const char *at = text;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (!(at = strstr(at, rows[i])))
			fail_msg("no %s after the rows before it:\n%s", rows[i], text);
	if (!strstr(text, "width=\"96.0\" height=\"18\" fill=\"#f3d7b5\"") || !strstr(text, ">100 ns<") ||
	    !strstr(text, ">10 us<"))
		fail_msg("no share bar of 96 px, or no axis from 100 ns to 10 us:\n%s", text);
}

/* An instant goes after what ends and begins at its time (as JSON's viewers order
 * them), so the Perfetto writer holds it until its thread's time moves on, or writes
 * it early and takes it back (tt_pf_settle): instants followed at their own time by
 * an end, a begin, a new counter's first value and a known one's, a frame, another
 * instant and the thread's end, on two threads whose events interleave; the .pftrace
 * must hold what the JSON does, every instant in the same slice. */
static void test_instants_held(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_tw_site sites[] = {
		{0x1000, "outer", "t.c", "f", 1}, {0x1010, "inner", "t.c", "f", 2},
		{0x1020, "mark", "t.c", "f", 3},  {0x1030, "depth", "t.c", "f", 4},
		{0x1040, "frame", "t.c", "f", 5},
	};
	enum { OUTER = 0x1000, INNER = 0x1010, MARK = 0x1020, DEPTH = 0x1030, FRAME = 0x1040 };
	const struct tt_record a[] = {
		R(TT_REC_BEGIN, OUTER, 1000), R(TT_REC_BEGIN, INNER, 1100),
		R(TT_REC_INSTANT, MARK, 1200), R(TT_REC_END, 0, 1200),
		R(TT_REC_INSTANT, MARK, 1300), R(TT_REC_BEGIN, INNER, 1300),
		R(TT_REC_INSTANT, MARK, 1400), R(TT_REC_COUNTER, DEPTH, 1400), R(TT_REC_VALUE, 0, 5),
		R(TT_REC_INSTANT, MARK, 1500), R(TT_REC_COUNTER, DEPTH, 1500), R(TT_REC_VALUE, 0, 6),
		R(TT_REC_INSTANT, MARK, 1550), R(TT_REC_FRAME, FRAME, 1550),
		R(TT_REC_INSTANT, MARK, 1560), R(TT_REC_FRAME, FRAME, 1560),
		R(TT_REC_END, 0, 1600),
		R(TT_REC_INSTANT, MARK, 1700), R(TT_REC_INSTANT, MARK, 1700), R(TT_REC_END, 0, 1700),
		R(TT_REC_BEGIN, OUTER, 1800), R(TT_REC_INSTANT, MARK, 1900), R(TT_REC_END, 0, 2000),
		R(TT_REC_INSTANT, MARK, 2100),
	};
	const struct tt_record b[] = {
		R(TT_REC_BEGIN, OUTER, 1150), R(TT_REC_INSTANT, MARK, 1200), R(TT_REC_BEGIN, INNER, 1250),
		R(TT_REC_INSTANT, MARK, 1300), R(TT_REC_END, 0, 1350), R(TT_REC_INSTANT, MARK, 1900),
		R(TT_REC_END, 0, 1900), R(TT_REC_INSTANT, MARK, 1950),
	};
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, fx->in), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "held");
	tt_tw_sites(&w, sites, sizeof(sites) / sizeof(sites[0]));
	tt_tw_thread(&w, 0, 5000, "a", sizeof(a) / sizeof(a[0]), 0);
	tt_tw_thread(&w, 1, 5001, "b", sizeof(b) / sizeof(b[0]), 0);
	tt_tw_events(&w, 0, 0, a, sizeof(a) / sizeof(a[0]));
	tt_tw_events(&w, 1, 0, b, sizeof(b) / sizeof(b[0]));
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fx->out, "-q");
	assert_int_equal(r.status, 0);
	free(r.out);
	TT_RUN(&r, "convert", fx->in, "-o", fx->aux, "-F", "perfetto", "-q");
	assert_int_equal(r.status, 0);
	free(r.out);
	cJSON *root = tt_json_load_checked(check_perfetto, perfetto_proto, fx->aux, fx->out, fx->dir);
	assert_non_null(root);
	char *listing = tt_json_thread_listing(root, "a");
	assert_non_null(listing);
	/* (phase, name, depth): the instants at an end's time outside the slice it ends */
	assert_non_null(strstr(listing, "X inner 1\ni mark 1\n"));
	free(listing);
	cJSON_Delete(root);
}

static int setup(void **state)
{
	return tt_fixture_setup(state, "run.ttr", "run.json");
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test_viewers CHECK_PERFETTO_PY PERFETTO_PROTO\n");
		return 2;
	}
	check_perfetto = argv[1];
	perfetto_proto = argv[2];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_clip, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_pool_threads, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_info_sites, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_memory_flat, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_flame, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_report_plot, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_json_too_large, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_instants_held, setup, tt_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
