/* Files that once were refused whole, or hung the converter, or were drawn wrong (issue
 * 24): each converts, what cannot be kept left out and counted with a word. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt_check.h"
#include "tt_demo.h"
#include "tt_tw.h"

#define R TT_TW_REC
#define N(a) (sizeof(a) / sizeof((a)[0]))

static int setup(void **state)
{
	return tt_fixture_setup(state, "run.ttr", "run.json");
}

static void assert_err_has(const struct tt_run *r, const char *text)
{
	if (!strstr(r->err, text))
		fail_msg("expected \"%s\" on stderr, got:\n%s", text, r->err);
}

/* Converts fx->in to fx->out, which must succeed; what it said in r->err. */
static void convert_ok(const struct tt_fixture *fx, struct tt_run *r)
{
	TT_RUN(r, "convert", fx->in, "-o", fx->out);
	free(r->out);
	if (r->status != 0)
		fail_msg("status %d: %s", r->status, r->err);
}

/* One thread's records in a demo file. */
static void write_thread(const char *path, const struct tt_record *rec, size_t n)
{
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, path), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "demo");
	tt_tw_sites(&w, tt_demo_sites, tt_demo_nsites);
	tt_tw_thread(&w, 0, 101, "deep", n, 0);
	tt_tw_events(&w, 0, 0, rec, n);
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
}

/* `depth` nested scopes, each begun `step` ticks into its parent's time, then a
 * sibling at the top: open i at tick 10 + i / per_tick, closed mirrored. */
static struct tt_record *nested(size_t depth, size_t per_tick, size_t *n)
{
	*n = 2 * depth + 2;
	struct tt_record *rec = malloc(*n * sizeof(*rec));
	assert_non_null(rec);
	uint64_t last = 10 + depth / per_tick + 1;
	for (size_t i = 0; i < depth; i++) {
		rec[i] = R(TT_REC_BEGIN, S_WORK, 10 + i / per_tick);
		rec[2 * depth - 1 - i] = R(TT_REC_END, 0, 2 * last - (10 + i / per_tick));
	}
	rec[2 * depth] = R(TT_REC_BEGIN, S_MAIN, 2 * last + 5);
	rec[2 * depth + 1] = R(TT_REC_END, 0, 2 * last + 9);
	return rec;
}

/* Item 4: nesting past what the decoder keeps (1,048,576) refused the whole file. Now
 * the scopes nested deeper are left out and counted, the rest is kept: the sibling
 * after them is there, and the outermost slice too. */
static void test_past_the_nesting_limit(void **state)
{
	struct tt_fixture *fx = *state;
	enum { DEPTH = (1 << 20) + 6 };
	size_t n;
	struct tt_record *rec = nested(DEPTH, 1, &n);
	write_thread(fx->in, rec, n);
	free(rec);
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 0);
	assert_err_has(&r, "6 scopes nested deeper than 1048576 levels left out");
	free(r.out);
	cJSON *root = tt_json_load(fx->out);
	assert_non_null(root);
	assert_non_null(tt_json_find(root, "X", "main"));
	assert_non_null(tt_json_find(root, "X", "work"));
	cJSON_Delete(root);
	TT_RUN(&r, "report", fx->in, "--csv");
	assert_int_equal(r.status, 0);
	if (!strstr(r.out, "main"))
		fail_msg("report lacks the slice after the deep ones:\n%s", r.out);
	free(r.out);
}

/* Item 4: the folded flame output wrote each node's whole path, n^2/2 names for n
 * nested scopes (20,000: 1.2 GB). A line now names at most 512 frames, the middle
 * left out with a marker, and the self times still add up. */
static void test_flame_folded_depth(void **state)
{
	struct tt_fixture *fx = *state;
	enum { DEPTH = 20000, PER_TICK = 100 };
	size_t n;
	struct tt_record *rec = nested(DEPTH, PER_TICK, &n);
	write_thread(fx->in, rec, n);
	free(rec);
	struct tt_run r;
	TT_RUN(&r, "flame", fx->in, "-o", fx->out, "-F", "folded");
	assert_int_equal(r.status, 0);
	assert_err_has(&r, "stacks nested deeper than 512 frames written with their middle left out");
	free(r.out);
	struct stat sb;
	assert_int_equal(stat(fx->out, &sb), 0);
	/* 200 lines with self time, 512 names of 4 bytes each and the marker: under 1 MB;
	 * the whole paths took 20 MB */
	if (sb.st_size > (1 << 20))
		fail_msg("folded output of %lld bytes", (long long)sb.st_size);
	char *text = tt_read_text(fx->out);
	assert_non_null(text);
	uint64_t self = 0;
	size_t lines = 0, marked = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		size_t frames = 1;
		for (const char *c = line; *c; c++)
			frames += *c == ';';
		if (frames > 513)
			fail_msg("a line of %zu frames", frames);
		marked += strstr(line, " levels left out);") != NULL;
		self += strtoull(strrchr(line, ' ') + 1, NULL, 10);
		lines++;
	}
	free(text);
	assert_true(marked > 0 && marked < lines);
	/* every tick of the run is some scope's self time: the outermost spans
	 * 2 * (DEPTH / PER_TICK + 1) ticks, main 4 */
	assert_int_equal(self, 2 * (DEPTH / PER_TICK + 1) + 4);
}

/* A file of one module at `path` (build-id `id`) and one call of the function at
 * `func` in it, listed in FUNCS. */
static void write_module_call(const char *file, const char *path, const char *id, uint64_t func)
{
	const struct tt_tw_module modules[] = {{0x7f0000000000, 0x7f0000100000, path, id}};
	const uint64_t funcs[] = {func};
	const struct tt_record rec[] = {
		R(TT_REC_FUNC_ENTER, func, 2000), R(TT_REC_FUNC_EXIT, func, 3000),
	};
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, file), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "demo");
	tt_tw_modules(&w, modules, N(modules));
	tt_tw_funcs(&w, funcs, N(funcs));
	tt_tw_thread(&w, 0, 101, "main", N(rec), 0);
	tt_tw_events(&w, 0, 0, rec, N(rec));
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
}

/* Item 6: a raw file whose MODULES section names a FIFO (a file can come from anyone):
 * every subcommand blocked for ever in open(). The FIFO is refused with a word, the
 * function named by its offset, and each command ends (in 60 s on a loaded machine,
 * where it takes milliseconds). */
static void test_modules_name_a_fifo(void **state)
{
	struct tt_fixture *fx = *state;
	char fifo[160];
	snprintf(fifo, sizeof(fifo), "%s/lib.so", fx->dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	write_module_call(fx->in, fifo, "aa", 0x7f0000001230);
	const char *tool = getenv("TT_TEST_TOOL");
	static const char *const commands[] = {"convert", "report", "flame", "info"};
	char err[200];
	snprintf(err, sizeof(err), "%s/err", fx->dir);
	for (size_t i = 0; i < N(commands); i++) {
		int status = tt_sh("timeout 60 '%s' %s '%s' %s '%s' 2>'%s'", tool ? tool : "ticktrace",
				   commands[i], fx->in, i == 3 ? ">" : "-f -o", fx->out, err);
		char *said = tt_read_text(err);
		assert_non_null(said);
		if (status != 0 || !strstr(said, "lib.so: cannot read it (not a regular file)"))
			fail_msg("%s: status %d (124: it hung), said:\n%s", commands[i], status, said);
		free(said);
	}
}

/* Item 5: a site name over 65,536 bytes (a run-time name, before the runtime cut
 * them) made every subcommand refuse the whole file. It is cut, with a word. */
static void test_long_site_name(void **state)
{
	struct tt_fixture *fx = *state;
	enum { LONG = TT_NAME_MAX + 1000 };
	char *name = malloc(LONG + 1);
	assert_non_null(name);
	memset(name, 'n', LONG);
	name[LONG] = 0;
	const struct tt_tw_site sites[] = {{0x1000, name, "long.c", "f", 1}};
	static const struct tt_record rec[] = {R(TT_REC_INSTANT, 0x1000, 2000)};
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, fx->in), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "demo");
	tt_tw_sites(&w, sites, N(sites));
	tt_tw_thread(&w, 0, 101, "main", N(rec), 0);
	tt_tw_events(&w, 0, 0, rec, N(rec));
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
	struct tt_run r;
	convert_ok(fx, &r);
	assert_err_has(&r, "1 names of call sites longer than 65536 bytes, cut to 65536 bytes");
	cJSON *root = tt_json_load(fx->out);
	assert_non_null(root);
	name[TT_NAME_MAX] = 0;
	assert_non_null(tt_json_find(root, "i", name));
	cJSON_Delete(root);
	free(name);
}

/* Item 7: mode stream with drops in a program instrumented with
 * -finstrument-functions. A run of lost events begins functions whose exits come
 * after it; those exits once found no open FUNC_ENTER, were ignored, and the scopes
 * the gap opened for them stayed open: each gap stacked more (3,040 levels where the
 * program's depth was 26). The exits now close them. */
static void test_stream_gaps_keep_the_nesting(void **state)
{
	struct tt_fixture *fx = *state;
	enum { F = 0x7000, G = 0x7100, H = 0x7200, GAPS = 1000 };
	static const uint64_t funcs[] = {F, G, H};
	size_t n = 0;
	struct tt_record *rec = malloc((4 + 4 * GAPS) * sizeof(*rec));
	assert_non_null(rec);
	uint64_t tsc = 2000;
	rec[n++] = R(TT_REC_FUNC_ENTER, F, tsc);
	for (size_t i = 0; i < GAPS; i++) {
		/* G and H entered among the lost events, left after them */
		rec[n++] = R(TT_REC_DROPPED, 5, tsc += 10);
		rec[n++] = R(TT_REC_VALUE, TT_GAP_DEPTHS(0, 2), tsc += 10);
		rec[n++] = R(TT_REC_FUNC_EXIT, H, tsc += 10);
		rec[n++] = R(TT_REC_FUNC_EXIT, G, tsc += 10);
	}
	rec[n++] = R(TT_REC_FUNC_EXIT, F, tsc += 10);
	struct tt_tw w;
	struct tt_file_header h;
	tt_tw_default_header(&h);
	assert_int_equal(tt_tw_open_file(&w, fx->in), 0);
	tt_tw_header(&w, &h);
	tt_tw_process(&w, 4242, "demo");
	tt_tw_funcs(&w, funcs, N(funcs));
	tt_tw_thread(&w, 0, 101, "main", n, 5 * GAPS);
	tt_tw_events(&w, 0, 0, rec, n);
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
	free(rec);
	struct tt_run r;
	convert_ok(fx, &r);
	if (strstr(r.err, "function exits with no entry"))
		fail_msg("exits left unmatched:\n%s", r.err);
	cJSON *root = tt_json_load(fx->out);
	assert_non_null(root);
	char *listing = tt_json_listing(root, 101);
	assert_non_null(listing);
	/* F at 0, each gap's slice and the two scopes it began under it */
	unsigned deepest = 0, slices = 0;
	for (char *line = strtok(listing, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned depth = (unsigned)strtoul(strrchr(line, ' ') + 1, NULL, 10);
		deepest = depth > deepest ? depth : deepest;
		slices += line[0] == 'X';
	}
	assert_int_equal(deepest, 2);
	assert_int_equal(slices, 1 + 3 * GAPS);
	free(listing);
	cJSON_Delete(root);
}

/* Issue 24 item 18: mode ring's overwriting its oldest events (what a ring is for)
 * was a warning per thread, among its dropped events; it is said once for the run,
 * and events truly lost still are, per thread. */
static void test_ring_overwrite_said_once(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record rec[] = {R(TT_REC_INSTANT, S_WAKE, 2000)};
	struct tt_file_header h;
	tt_tw_default_header(&h);
	h.flags |= TT_FILE_RING;
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, fx->in), 0);
	tt_tw_header(&w, &h);
	tt_tw_process(&w, 4242, "demo");
	tt_tw_sites(&w, tt_demo_sites, tt_demo_nsites);
	for (uint32_t i = 0; i < 3; i++) {
		struct tt_thread_info ti = {.index = i, .tid = 101 + i, .events = 1,
					    .flags = TT_THREAD_WRAPPED};
		ti.dropped[TT_DROP_OVERWRITTEN] = 1000;
		ti.dropped[TT_DROP_REENTERED] = i == 2 ? 5 : 0;
		tt_tw_thread_info(&w, &ti, "worker");
		tt_tw_events(&w, i, 0, rec, N(rec));
	}
	w.dropped = 3005;
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
	struct tt_run r;
	convert_ok(fx, &r);
	assert_err_has(&r, "mode ring kept the latest events: 3000 older ones of 3 threads were "
		       "overwritten by newer ones");
	assert_err_has(&r, "tid 103 (worker): 5 events dropped");
	if (strstr(r.err, "overwritten by newer:") || strstr(r.err, "tid 101 (worker): 1000"))
		fail_msg("the overwriting said per thread:\n%s", r.err);
}

/* Issue 24 item 18: info counted a frame mark's site (TT_FRAME_MARK) as never used. */
static void test_info_counts_frame_marks(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record rec[] = {
		R(TT_REC_FRAME, S_NEXT, 2000), R(TT_REC_FRAME, S_NEXT, 3000), R(TT_REC_FRAME, S_NEXT, 4000),
	};
	write_thread(fx->in, rec, N(rec));
	struct tt_run r;
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 0);
	if (!strstr(r.out, "0x1050           3  next"))
		fail_msg("info does not count the frame marks:\n%s", r.out);
	free(r.out);
}

/* Item 6, the debug info: an ELF file that a raw file names, whose debug link names
 * a FIFO beside it. libdwfl's own search opened it and blocked for ever; the search
 * opens only regular files. The ELF file is this test's own program, stripped of its
 * debug info into a file its link names, then that file replaced by a FIFO. */
static void test_debuglink_names_a_fifo(void **state)
{
	struct tt_fixture *fx = *state;
	if (tt_sh("command -v objcopy >/dev/null && command -v readelf >/dev/null") != 0) {
		print_message("objcopy or readelf missing: skipped\n");
		skip();
	}
	assert_int_equal(tt_sh("cd '%s' && cp /proc/%d/exe prog && objcopy --only-keep-debug prog "
			       "prog.debug && objcopy --strip-debug --add-gnu-debuglink=prog.debug prog && "
			       "rm prog.debug && mkfifo prog.debug && readelf -n prog | "
			       "sed -n 's/.*Build ID: *//p' > id",
			       fx->dir, (int)getpid()), 0);
	char path[160], *hex;
	snprintf(path, sizeof(path), "%s/id", fx->dir);
	assert_non_null(hex = tt_read_text(path));
	char id[64] = "";
	size_t len = 0;
	for (unsigned byte; len + 1 < sizeof(id) && sscanf(hex + 2 * len, "%2x", &byte) == 1; len++)
		id[len] = (char)byte;
	free(hex);
	assert_true(len >= 8);
	snprintf(path, sizeof(path), "%s/prog", fx->dir);
	/* an address of its text: named from the debug info, were there any */
	write_module_call(fx->in, path, id, 0x7f0000001000);
	const char *tool = getenv("TT_TEST_TOOL");
	int status = tt_sh("timeout 60 '%s' convert -q '%s' -o '%s' 2>'%s/err'", tool ? tool : "ticktrace",
			   fx->in, fx->out, fx->dir);
	if (status != 0)
		fail_msg("convert: status %d (124: it hung)", status);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_past_the_nesting_limit, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_flame_folded_depth, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_modules_name_a_fifo, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_long_site_name, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_ring_overwrite_said_once, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_info_counts_frame_marks, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_debuglink_names_a_fifo, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_stream_gaps_keep_the_nesting, setup,
						tt_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
