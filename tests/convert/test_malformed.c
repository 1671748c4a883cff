/* Hostile and damaged raw files: cut at every byte, wrong magic or version, counts
 * and sizes that lie, bad records. Each must end with exit status 1, an error that
 * names the file and the byte offset, and no output file (nor temporary) left. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include <unistd.h>

#include <cmocka.h>

#include "read/read.h"
#include "tt_check.h"
#include "tt_tw.h"

#define R TT_TW_REC
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct tt_tw_site sites[] = {
	{0x1000, "main", "demo.c", "main", 10},
	{0x1010, "child", "demo.c", "main", 11},
};
static const struct tt_record t0[] = {
	R(TT_REC_BEGIN, 0x1000, 2000),
	R(TT_REC_BEGIN_ARG, 0x1010, 3000), R(TT_REC_VALUE, 0, 7),
	R(TT_REC_END, 0, 4000),
	R(TT_REC_END, 0, 5000),
};
static const struct tt_record t1[] = {
	R(TT_REC_INSTANT, 0x1010, 2500),
	R(TT_REC_COUNTER, 0x1000, 2600), R(TT_REC_VALUE, 0, 3),
};

/* Section order in the demo file, for the tests that damage one. */
enum { SEC_PROCESS, SEC_SITES, SEC_THREAD0, SEC_EVENTS0, SEC_THREAD1, SEC_EVENTS1, SEC_END };

struct fixture {
	struct tt_tw w; /* the well-formed file, in memory */
	char dir[64];
	char in[128];
	char out[128];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct tt_tw *w = &fx->w;
	assert_int_equal(tt_tw_open_memory(w), 0);
	tt_tw_header(w, NULL);
	tt_tw_process(w, 4242, "demo");
	tt_tw_sites(w, sites, N(sites));
	tt_tw_thread(w, 0, 101, "main", N(t0), 0);
	tt_tw_events(w, 0, 0, t0, N(t0));
	tt_tw_thread(w, 1, 102, "worker", N(t1), 0);
	tt_tw_events(w, 1, 0, t1, N(t1));
	tt_tw_end(w);
	assert_int_equal(tt_tw_close(w), 0);
	assert_int_equal(w->nsections, SEC_END + 1);
	tt_tmpdir(fx->dir, sizeof(fx->dir));
	snprintf(fx->in, sizeof(fx->in), "%s/bad.ttr", fx->dir);
	snprintf(fx->out, sizeof(fx->out), "%s/bad.json", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	tt_rmdir(fx->dir);
	tt_tw_free(&fx->w);
	free(fx);
	return 0;
}

/* Converts `size` bytes of `data` and checks the failure: exit 1, the file and
 * "offset " in the message (and `want`, when given), only the input left behind. */
static void expect_failure(struct fixture *fx, const void *data, size_t size, const char *want)
{
	assert_int_equal(tt_tw_save(fx->in, data, size), 0);
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fx->out);
	free(r.out);
	if (r.status != 1 || !strstr(r.err, fx->in) || !strstr(r.err, "offset ") ||
	    (want && !strstr(r.err, want)))
		fail_msg("a file of %zu: status %d, expected 1 and \"%s\", stderr:\n%s", size, r.status,
			 want ? want : "offset", r.err);
	assert_int_equal(tt_dir_entries(fx->dir), 1);
}

/* The demo file with `n` bytes at `offset` replaced. */
static void expect_patched(struct fixture *fx, uint64_t offset, const void *bytes, size_t n,
			   const char *want)
{
	char *copy = malloc(fx->w.size);
	memcpy(copy, fx->w.data, fx->w.size);
	assert_true(offset + n <= fx->w.size);
	memcpy(copy + offset, bytes, n);
	expect_failure(fx, copy, fx->w.size, want);
	free(copy);
}

static void expect_u32(struct fixture *fx, uint64_t offset, uint32_t v, const char *want)
{
	expect_patched(fx, offset, &v, sizeof(v), want);
}

static void expect_u64(struct fixture *fx, uint64_t offset, uint64_t v, const char *want)
{
	expect_patched(fx, offset, &v, sizeof(v), want);
}

/* Converts `size` bytes of `data`, which must succeed: the JSON. */
static cJSON *expect_json(struct fixture *fx, const void *data, size_t size)
{
	assert_int_equal(tt_tw_save(fx->in, data, size), 0);
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fx->out, "-f", "-q");
	assert_int_equal(r.status, 0);
	free(r.out);
	return tt_json_load(fx->out);
}

/* A file in memory begun with the demo's sites, for the tests that add a section. */
static void open_sites(struct tt_tw *w)
{
	assert_int_equal(tt_tw_open_memory(w), 0);
	tt_tw_header(w, NULL);
	tt_tw_process(w, 4242, "demo");
	tt_tw_sites(w, sites, N(sites));
}

/* Where a section's payload starts. */
static uint64_t payload(const struct fixture *fx, int section)
{
	return fx->w.sections[section] + sizeof(struct tt_section_header);
}

static void test_well_formed_converts(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(tt_tw_save(fx->in, fx->w.data, fx->w.size), 0);
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fx->out);
	free(r.out);
	assert_int_equal(r.status, 0);
}

/* Reads the first `n` bytes of the demo file in this process: true where it refuses
 * them with an error (stderr, sent to `err` meanwhile, in `said`) that names the file
 * and an offset. */
static bool refused_in_process(const struct fixture *fx, size_t n, FILE *err, char said[512])
{
	uint8_t *copy = malloc(n + 1); /* (8-byte aligned, as a mapping is) */
	memcpy(copy, fx->w.data, n);
	rewind(err);
	if (ftruncate(fileno(err), 0) != 0)
		return false;
	struct tt_trace t;
	int rc = tt_trace_load(&t, "cut.ttr", copy, n);
	tt_trace_close(&t);
	free(copy);
	fflush(stderr);
	rewind(err);
	said[fread(said, 1, 511, err)] = 0;
	return rc == -1 && strstr(said, "cut.ttr: offset ");
}

/* Cut at every byte, read in this process (the reader is what each cut tests); the
 * command at each section's edges (its exit status and no file left: 861 runs of it
 * were most of the suite's time under the sanitizers). */
static void test_truncated_at_every_byte(void **state)
{
	struct fixture *fx = *state;
	char err_path[160];
	snprintf(err_path, sizeof err_path, "%s/stderr", fx->dir);
	FILE *err = fopen(err_path, "w+");
	assert_non_null(err);
	int saved = dup(STDERR_FILENO);
	assert_true(saved >= 0 && dup2(fileno(err), STDERR_FILENO) == STDERR_FILENO);
	size_t n = 0;
	char said[512] = "";
	while (n < fx->w.size && refused_in_process(fx, n, err, said))
		n++;
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	fclose(err);
	unlink(err_path);
	if (n < fx->w.size)
		fail_msg("the first %zu bytes of %zu: not refused with the file and an offset: \"%s\"", n,
			 fx->w.size, said);
	static const int edges[] = {-1, 0, 1, 8}; /* (8: inside the section's header) */
	for (size_t k = 0; k < fx->w.nsections; k++)
		for (size_t e = 0; e < N(edges); e++)
			if ((int64_t)fx->w.sections[k] + edges[e] >= 0)
				expect_failure(fx, fx->w.data, fx->w.sections[k] + edges[e], NULL);
	/* At a section boundary the message says what is missing. */
	expect_failure(fx, fx->w.data, fx->w.sections[SEC_END], "no END section");
	expect_failure(fx, fx->w.data, fx->w.sections[SEC_EVENTS1] + 20, "runs past the end");
	expect_failure(fx, fx->w.data, 100, "truncated file header (100 bytes, need ");
	/* a count of one byte said as one */
	expect_failure(fx, fx->w.data, 1, "truncated file header (1 byte, need ");
	uint8_t *longer = calloc(1, fx->w.size + 1);
	memcpy(longer, fx->w.data, fx->w.size);
	expect_failure(fx, longer, fx->w.size + 1, ": 1 byte after the END section");
	free(longer);
}

static void test_header(void **state)
{
	struct fixture *fx = *state;
	expect_patched(fx, 0, "TICKTRAX", 8, "offset 0: not a ticktrace raw file");
	expect_u32(fx, offsetof(struct tt_file_header, version), 2,
		   "offset 8: format version 2, this reader knows version 1");
	expect_u32(fx, offsetof(struct tt_file_header, header_size), 8, "header_size 8");
	expect_u32(fx, offsetof(struct tt_file_header, header_size), 0xFFFFFFF0, "header_size");
	expect_u32(fx, offsetof(struct tt_file_header, tsc_source), 7, "unknown tsc_source");
	expect_u64(fx, offsetof(struct tt_file_header, tsc_hz), 0, "tsc_hz is 0");
	/* A rate its anchors do not bear out: 1 Hz made a 6 ms run
	 * 172 days long; 1.5% off is beyond what a live file's refresh can tear. */
	expect_u64(fx, offsetof(struct tt_file_header, tsc_hz), 1, "not what its anchors measured");
	expect_u64(fx, offsetof(struct tt_file_header, tsc_hz), 1015000000, "not what its anchors measured");
	expect_u64(fx, offsetof(struct tt_file_header, end.tsc), 999, "not after the start anchor");
	expect_u64(fx, offsetof(struct tt_file_header, end.monotonic_ns), 0, "not after the start anchor");
	static const char junk[300] = "random bytes, not a trace";
	expect_failure(fx, junk, sizeof(junk), "offset 0: not a ticktrace raw file");
	/* A live file whose run was killed as it began, its room made, its header not yet
	 * written: said empty, not "wrong magic" (a header's worth of zeros, and a byte). */
	static const char zeros[sizeof(struct tt_file_header) + 1];
	expect_failure(fx, zeros, sizeof(zeros), "offset 0: holds nothing (all zeros");
}

static void test_counts_that_lie(void **state)
{
	struct fixture *fx = *state;
	uint64_t end = payload(fx, SEC_END);
	expect_u64(fx, end + offsetof(struct tt_end_info, records), N(t0) + N(t1) + 1,
		   "END counts 9 records, the file holds 8");
	expect_u64(fx, end + offsetof(struct tt_end_info, threads), 3, "END counts 3 threads");
	expect_u64(fx, end + offsetof(struct tt_end_info, dropped), 1, "dropped");
	expect_u64(fx, end + offsetof(struct tt_end_info, sites), 1, "END counts 1 sites");
	expect_u64(fx, payload(fx, SEC_THREAD1) + offsetof(struct tt_thread_info, events), 9,
		   "says 9 events, its EVENTS sections hold 3");
	expect_u64(fx, payload(fx, SEC_SITES), UINT64_C(1) << 40, "SITES count 1099511627776");
	expect_u64(fx, payload(fx, SEC_SITES), 1, "bytes left in SITES after its 1 site");
	expect_u64(fx, payload(fx, SEC_EVENTS1) + offsetof(struct tt_events_info, first_record), 4,
		   "starts at record 4");
	expect_u32(fx, payload(fx, SEC_EVENTS1), 9, "thread index 9, which has no THREAD");
	expect_u32(fx, payload(fx, SEC_THREAD1), 0, "a second THREAD section for thread index 0");
}

static void test_sizes_that_overflow(void **state)
{
	struct fixture *fx = *state;
	uint64_t size_field = offsetof(struct tt_section_header, size);
	expect_u64(fx, fx->w.sections[SEC_EVENTS0] + size_field, UINT64_MAX, "runs past the end");
	expect_u64(fx, fx->w.sections[SEC_EVENTS0] + size_field, UINT64_C(1) << 63,
		   "runs past the end");
	expect_u64(fx, fx->w.sections[SEC_EVENTS0] + size_field, 16 + 16 * N(t0) - 8,
		   "is not whole records");
	expect_u64(fx, fx->w.sections[SEC_PROCESS] + size_field, 4, "PROCESS section too small");
	/* the first site's name length */
	expect_u32(fx, payload(fx, SEC_SITES) + 8 + offsetof(struct tt_site_info, name_len),
		   0xFFFFFFFF, "runs past the end of its SITES section");
	expect_u32(fx, payload(fx, SEC_THREAD0) + offsetof(struct tt_thread_info, name_len),
		   0xFFFFFFFF, "THREAD section too small for its name");
	expect_u32(fx, fx->w.sections[SEC_THREAD1], 77, "unknown section type 77");
	/* bytes after END */
	char *longer = calloc(1, fx->w.size + 16);
	memcpy(longer, fx->w.data, fx->w.size);
	expect_failure(fx, longer, fx->w.size + 16, "16 bytes after the END section");
	free(longer);
}

/* Records are checked while converting, after output has begun: nothing may remain. */
static void test_bad_records(void **state)
{
	struct fixture *fx = *state;
	uint64_t rec0 = payload(fx, SEC_EVENTS0) + sizeof(struct tt_events_info);
	uint64_t word = offsetof(struct tt_record, word);
	char want[64];
	snprintf(want, sizeof(want), "offset %llu: unknown record kind 12",
		 (unsigned long long)(rec0 + 16));
	expect_u64(fx, rec0 + 16 + word, TT_RECORD_WORD(12, 0), want);
	snprintf(want, sizeof(want), "offset %llu: call site 0x2000 is not", (unsigned long long)rec0);
	expect_u64(fx, rec0 + word, TT_RECORD_WORD(TT_REC_BEGIN, 0x2000), want);
	/* the VALUE after BEGIN_ARG replaced by an END */
	snprintf(want, sizeof(want), "offset %llu: BEGIN_ARG record without its VALUE",
		 (unsigned long long)(rec0 + 16));
	expect_u64(fx, rec0 + 32 + word, TT_RECORD_WORD(TT_REC_END, 0), want);
	expect_u64(fx, rec0 + word, TT_RECORD_WORD(TT_REC_VALUE, 0), "VALUE record with no record");
	/* the worker's COUNTER is its last record but one: its VALUE cut to a PAD does not
	 * count, and the thread ends */
	uint64_t rec1 = payload(fx, SEC_EVENTS1) + sizeof(struct tt_events_info);
	expect_u64(fx, rec1 + 32 + word, TT_RECORD_WORD(TT_REC_PAD, 0),
		   "COUNTER record without its VALUE");
}

/* Records whose times jump by years, forward or back, from a run of a millisecond
 * (the header's anchors): refused, naming the record. A minute's room is left. */
static void test_times_outside_the_run(void **state)
{
	struct fixture *fx = *state;
	uint64_t rec1 = payload(fx, SEC_EVENTS0) + sizeof(struct tt_events_info) + 16;
	uint64_t years = 3ull * 365 * 86400 * 1000000000; /* ticks, at tsc_hz 1 GHz */
	char want[96];
	snprintf(want, sizeof(want), "offset %llu: a record (kind %u) at TSC %llu, long after the run",
		 (unsigned long long)rec1, TT_REC_BEGIN_ARG, (unsigned long long)(3000 + years));
	expect_u64(fx, rec1 + offsetof(struct tt_record, tsc), 3000 + years, want);
	/* the worker's first record, years before the start (wrapped around zero) */
	uint64_t rec = payload(fx, SEC_EVENTS1) + sizeof(struct tt_events_info);
	snprintf(want, sizeof(want), "offset %llu: a record (kind %u) at TSC", (unsigned long long)rec,
		 TT_REC_INSTANT);
	expect_u64(fx, rec + offsetof(struct tt_record, tsc), 2500 - years, want);
	/* within a minute of the end: converts */
	char *copy = malloc(fx->w.size);
	memcpy(copy, fx->w.data, fx->w.size);
	uint64_t late = 1000000 + 59ull * 1000000000;
	memcpy(copy + payload(fx, SEC_EVENTS0) + sizeof(struct tt_events_info) + 4 * 16, &late, 8);
	assert_int_equal(tt_tw_save(fx->in, copy, fx->w.size), 0);
	free(copy);
	struct tt_run r;
	TT_RUN(&r, "convert", "--force", fx->in, "-o", fx->out);
	free(r.out);
	if (r.status != 0)
		fail_msg("an END 59 s after the end anchor: status %d: %s", r.status, r.err);
	unlink(fx->out);
}

/* A FUNCS section that lists an address twice, or a call site's, or lies about its
 * count; and a BEGIN that names a function instead of a call site. */
static void test_bad_funcs(void **state)
{
	struct fixture *fx = *state;
	static const uint64_t twice[] = {0x401000, 0x401000}, a_site[] = {0x1000}, one[] = {0x401000};
	static const struct tt_record begins_a_function[] = {
		R(TT_REC_BEGIN, 0x401000, 2000), R(TT_REC_INSTANT, 0x1010, 2050),
		R(TT_REC_INSTANT, 0x1010, 2060), R(TT_REC_END, 0, 2100), R(TT_REC_END, 0, 2200),
	};
	_Static_assert(N(begins_a_function) == N(t0), "same length as t0");
	static const struct {
		const uint64_t *funcs;
		size_t n;
		uint64_t count; /* written over the count, when not 0 */
		const struct tt_record *rec;
		const char *want;
	} cases[] = {
		{twice, 2, 0, t0, "function address 0x401000 is listed twice"},
		{a_site, 1, 0, t0, "function address 0x1000 is listed twice, or is also a call site"},
		{one, 1, 1000, t0, "FUNCS count 1000 does not fit"},
		{one, 1, 0, begins_a_function, "call site 0x401000 is not in any SITES section"},
	};
	for (size_t i = 0; i < N(cases); i++) {
		struct tt_tw w;
		open_sites(&w);
		tt_tw_funcs(&w, cases[i].funcs, cases[i].n);
		tt_tw_thread(&w, 0, 101, "main", N(t0), 0);
		tt_tw_events(&w, 0, 0, cases[i].rec, N(t0));
		tt_tw_end(&w);
		assert_int_equal(tt_tw_close(&w), 0);
		if (cases[i].count)
			memcpy(w.data + w.sections[2] + sizeof(struct tt_section_header), &cases[i].count,
			       sizeof(cases[i].count));
		expect_failure(fx, w.data, w.size, cases[i].want);
		tt_tw_free(&w);
	}
}

/* An ARG_NAMES section that names a site no SITES section described, or runs past
 * its end; a well-formed one names the argument in the JSON. */
static void test_bad_arg_names(void **state)
{
	struct fixture *fx = *state;
	static const uint64_t child[] = {0x1010}, unknown[] = {0x2000};
	static const char *const bytes[] = {"bytes"};
	static const struct {
		const uint64_t *address;
		uint32_t name_len; /* written over the name's length, when not 0 */
		const char *want;
	} cases[] = {
		{unknown, 0, "argument name of 0x2000, which no SITES section before it describes"},
		{child, 1000, "argument name 0 of 1 runs past the end of its ARG_NAMES section"},
		{child, 0, NULL},
	};
	for (size_t i = 0; i < N(cases); i++) {
		struct tt_tw w;
		open_sites(&w);
		tt_tw_arg_names(&w, cases[i].address, bytes, 1);
		tt_tw_thread(&w, 0, 101, "main", N(t0), 0);
		tt_tw_events(&w, 0, 0, t0, N(t0));
		tt_tw_end(&w);
		assert_int_equal(tt_tw_close(&w), 0);
		uint64_t info = w.sections[2] + sizeof(struct tt_section_header) + sizeof(uint64_t);
		if (cases[i].name_len)
			memcpy(w.data + info + offsetof(struct tt_arg_name_info, name_len),
			       &cases[i].name_len, sizeof(uint32_t));
		if (cases[i].want) {
			expect_failure(fx, w.data, w.size, cases[i].want);
		} else {
			cJSON *root = expect_json(fx, w.data, w.size);
			const cJSON *x = tt_json_find(root, "X", "child");
			assert_non_null(x);
			assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(
						 cJSON_GetObjectItemCaseSensitive(x, "args"), "bytes")), 7);
			cJSON_Delete(root);
		}
		tt_tw_free(&w);
	}
}

/* SCHED sections (thread states) damaged: refused at their offset; a whole one
 * converts into the thread's state track. */
static void test_bad_sched(void **state)
{
	struct fixture *fx = *state;
	enum { FLAGGED, UNFLAGGED };
	static const struct {
		int thread;
		struct tt_sched_state states[2];
		int64_t since; /* its since_ns */
		size_t cut; /* bytes cut off the section's payload */
		const char *want;
		int64_t exited; /* its exited_ns */
	} cases[] = {
		{UNFLAGGED, {{5000002000, 0, TT_SCHED_BLOCKED}, {5000003000, 0, TT_SCHED_RUNNING}}, 5000001000, 0,
		 "SCHED section of thread index 0, whose THREAD section says it has no states", 0},
		{FLAGGED, {{5000002000, 0, 7}, {5000003000, 0, TT_SCHED_RUNNING}}, 5000001000, 0, "state 7 of thread index 0 is not one", 0},
		{FLAGGED, {{5000002000, 0, TT_SCHED_BLOCKED}, {5000001000, 0, TT_SCHED_RUNNING}}, 5000001000, 0,
		 "is before the state before it", 0},
		{FLAGGED, {{4000000000, 0, TT_SCHED_BLOCKED}, {5000003000, 0, TT_SCHED_RUNNING}}, 4000000000, 0,
		 "has since_ns 4000000000, before the run or its thread's last state", 0},
		{FLAGGED, {{5000002000, 0, TT_SCHED_BLOCKED}, {5000003000, 0, TT_SCHED_RUNNING}}, 5000002500, 0,
		 "has since_ns 5000002500, after its first state", 0},
		{FLAGGED, {{5000002000, 0, TT_SCHED_BLOCKED}, {5000003000, 0, TT_SCHED_RUNNING}}, 5000001000, 8,
		 "SCHED payload of 24 bytes is not whole states", 0},
		{FLAGGED, {{5000002000, 0, TT_SCHED_BLOCKED}, {5000003000, 1, TT_SCHED_RUNNING}}, 5000001000, 0,
		 "has exited_ns 5000002999, before its thread's last state", 5000002999},
		{FLAGGED, {{5000002000, 0, TT_SCHED_BLOCKED}, {5000003000, 1, TT_SCHED_RUNNING}}, 5000001000, 0, NULL, 0},
		{FLAGGED, {{5000002000, 0, TT_SCHED_BLOCKED}, {5000003000, 1, TT_SCHED_RUNNING}}, 5000001000, 0, NULL,
		 5000004000},
	};
	for (size_t i = 0; i < N(cases); i++) {
		struct tt_tw w;
		open_sites(&w);
		struct tt_thread_info ti = {.index = 0, .tid = 101, .events = N(t0),
					    .flags = cases[i].thread == FLAGGED ? TT_THREAD_SCHED : 0};
		tt_tw_thread_info(&w, &ti, "main");
		tt_tw_events(&w, 0, 0, t0, N(t0));
		tt_tw_sched(&w, 0, 0, cases[i].since, cases[i].states, 2);
		tt_tw_end(&w);
		assert_int_equal(tt_tw_close(&w), 0);
		if (cases[i].cut) { /* the section says fewer bytes, its padding stays */
			uint64_t at = w.sections[4] + offsetof(struct tt_section_header, size);
			uint64_t size = sizeof(struct tt_sched_info) + 2 * sizeof(struct tt_sched_state) -
					cases[i].cut;
			memcpy(w.data + at, &size, sizeof size);
		}
		if (cases[i].exited) {
			uint64_t at = w.sections[4] + sizeof(struct tt_section_header) +
				      offsetof(struct tt_sched_info, exited_ns);
			memcpy(w.data + at, &cases[i].exited, sizeof cases[i].exited);
		}
		if (cases[i].want) {
			expect_failure(fx, w.data, w.size, cases[i].want);
		} else {
			cJSON *root = expect_json(fx, w.data, w.size);
			const cJSON *x = tt_json_find(root, "X", "Blocked");
			assert_non_null(x);
			assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(x, "tid")),
					 101 | 0x40000000);
			assert_true(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(x, "dur")) == 1.0);
			cJSON_Delete(root);
		}
		tt_tw_free(&w);
	}
}

/* SCHEDSTAT sections (the threads' counters) damaged: refused at their offset; a
 * whole one read: a spike's page faults from the readings around it (at most), and no split
 * where they are too near its edges to bound them (`spikes --json`). */
static void test_bad_schedstat(void **state)
{
	struct fixture *fx = *state;
	/* at main's start (5000001000 ns) and 2 us after its end: 2 us on CPU, 0.5 us queued */
	static const struct {
		uint32_t index, flags;
		struct tt_schedstat_sample readings[2];
		size_t cut; /* bytes cut off the section's payload */
		const char *want;
	} cases[] = {
		{0, 0, {{5000006000, 2000, 500, 2, 1, 0}, {5000001000, 2500, 500, 2, 1, 0}}, 0,
		 "reading at 5000001000 ns of thread index 0 is before the one before it, or counts less"},
		{0, 0, {{5000001000, 2000, 500, 2, 1, 0}, {5000006000, 1000, 500, 2, 1, 0}}, 0,
		 "or counts less"},
		{0, 256, {{5000001000, 0, 0, 1, 0, 0}, {5000006000, 2000, 500, 2, 3, 1}}, 0,
		 "SCHEDSTAT section with unknown flags 0x100"},
		/* (a budget's count, then its reserved field: the first reading's first two) */
		{0, TT_SCHEDSTAT_BUDGET, {{3, 7, 0, 1, 0, 0}, {5000006000, 2000, 500, 2, 3, 1}}, 0,
		 "SCHEDSTAT budget's reserved field is 7, not 0"},
		{0, 0, {{5000001000, 0, 0, 1, 0, 0}, {5000006000, 2000, 500, 2, 3, 1}}, 8,
		 "SCHEDSTAT payload of 88 bytes is not whole readings"},
		{5, 0, {{5000001000, 0, 0, 1, 0, 0}, {5000006000, 2000, 500, 2, 3, 1}}, 0,
		 "SCHEDSTAT for thread index 5, which has no THREAD section before it"},
		{0, 0, {{5000001000, 0, 0, 1, 0, 0}, {5000006000, 2000, 500, 2, 3, 1}}, 0, NULL},
	};
	for (size_t i = 0; i < N(cases); i++) {
		struct tt_tw w;
		open_sites(&w);
		tt_tw_thread(&w, 0, 101, "main", N(t0), 0);
		tt_tw_events(&w, 0, 0, t0, N(t0));
		tt_tw_schedstat(&w, cases[i].index, cases[i].flags, cases[i].readings, 2);
		tt_tw_end(&w);
		assert_int_equal(tt_tw_close(&w), 0);
		if (cases[i].cut) { /* the section says fewer bytes, its padding stays */
			uint64_t at = w.sections[4] + offsetof(struct tt_section_header, size);
			uint64_t size = sizeof(struct tt_schedstat_info) + 2 * sizeof(struct tt_schedstat_sample) -
					cases[i].cut;
			memcpy(w.data + at, &size, sizeof size);
		}
		if (cases[i].want) {
			expect_failure(fx, w.data, w.size, cases[i].want);
			tt_tw_free(&w);
			continue;
		}
		assert_int_equal(tt_tw_save(fx->in, w.data, w.size), 0);
		struct tt_run r;
		TT_RUN(&r, "spikes", fx->in, "--json", "--threshold", "1ns");
		assert_int_equal(r.status, 0);
		/* the child (5000002000 to 5000003000 ns) first: the readings bound its parts
		 * no nearer than its length, and it has no split; then main (5000001000 to
		 * 5000004000), read at its start and 2 us after its end: each reading within
		 * its span (TT_SCHEDSTAT_SPAN_NS, 50 us) of an edge, which it bounds from below
		 * alone (its wait may have been read before the edge), and none after: no split
		 * (an estimator that took them as read at once split it 1 us on CPU and 0.5 us
		 * queued, within 1 us) */
		char *main_line = strstr(r.out, "\"name\":\"main\"");
		assert_non_null(main_line);
		assert_non_null(strstr(main_line, "\"no_split\":\"no counters reading near its"));
		/* (read from its start to 2 us after its end: faults there would count too, an
		 * upper bound said as one; outside recheck r46, F1) */
		assert_non_null(strstr(main_line, "\"minor_faults\":3,\"major_faults\":1,"
						  "\"faults_at_most\":1,\"faults_read_ns\":5000"));
		char *child_line = strstr(r.out, "\"name\":\"child\"");
		assert_non_null(child_line);
		assert_true(child_line < main_line && !memmem(child_line, (size_t)(main_line - child_line),
							       "on_cpu_ns", 9));
		free(r.out);
		tt_tw_free(&w);
	}
}

/* MACHINE sections (a time namespace's offsets) damaged: refused at their offset; a
 * whole one, longer than this version's (a later one's fields), converts the states
 * that are on the namespace's clock. */
static void test_bad_machine(void **state)
{
	struct fixture *fx = *state;
	enum { AFTER_PROCESS, BEFORE_PROCESS, TWICE };
	static const struct {
		struct tt_machine_info m;
		size_t size;
		int where;
		const char *want;
	} cases[] = {
		{{.timens_monotonic_ns = 4000000000}, sizeof(struct tt_machine_info), AFTER_PROCESS,
		 "time namespace offsets without TT_MACHINE_TIMENS"},
		{{.flags = TT_MACHINE_TIMENS, .timens_monotonic_ns = 6000000000},
		 sizeof(struct tt_machine_info), AFTER_PROCESS,
		 "CLOCK_MONOTONIC offset 6000000000 ns puts the run's start (5000000000 ns) before"},
		{{.flags = TT_MACHINE_TIMENS, .timens_monotonic_ns = 4000000000, .timens_boottime_ns = 1},
		 sizeof(struct tt_machine_info), AFTER_PROCESS,
		 "CLOCK_BOOTTIME offset 1 ns puts the run's start (0 ns) before"},
		{{.flags = TT_MACHINE_TIMENS, .timens_monotonic_ns = 4000000000}, 16, AFTER_PROCESS,
		 "MACHINE section too small"},
		{{.flags = TT_MACHINE_TIMENS, .timens_monotonic_ns = 4000000000},
		 TT_MACHINE_INFO_V1_SIZE + 8, AFTER_PROCESS, "MACHINE section too small"},
		{{.flags = TT_MACHINE_TIMENS, .timens_monotonic_ns = 4000000000},
		 sizeof(struct tt_machine_info), BEFORE_PROCESS, "a MACHINE section before PROCESS"},
		{{.flags = TT_MACHINE_TIMENS, .timens_monotonic_ns = 4000000000},
		 sizeof(struct tt_machine_info), TWICE, "a MACHINE section again"},
		/* the thread times' tick (TT_MACHINE_TICK): with its flag, and with its value */
		{{.flags = TT_MACHINE_TIMENS, .timens_monotonic_ns = 4000000000, .tick_ns = 10000000},
		 sizeof(struct tt_machine_info), AFTER_PROCESS,
		 "MACHINE section's tick of 10000000 ns without TT_MACHINE_TICK"},
		{{.flags = TT_MACHINE_TIMENS | TT_MACHINE_TICK, .timens_monotonic_ns = 4000000000},
		 sizeof(struct tt_machine_info), AFTER_PROCESS, "MACHINE section's tick of 0 ns with TT_MACHINE_TICK"},
		{{.flags = TT_MACHINE_TIMENS | TT_MACHINE_TICK_EACH, .timens_monotonic_ns = 4000000000},
		 sizeof(struct tt_machine_info), AFTER_PROCESS, "MACHINE section's tick of 0 ns without TT_MACHINE_TICK"},
		{{.flags = TT_MACHINE_TIMENS | TT_MACHINE_TICK | TT_MACHINE_TICK_EACH, .timens_monotonic_ns = 4000000000,
		  .tick_ns = 10000000},
		 sizeof(struct tt_machine_info), AFTER_PROCESS, NULL},
		{{.flags = TT_MACHINE_TIMENS, .timens_monotonic_ns = 4000000000},
		 sizeof(struct tt_machine_info) + 40, AFTER_PROCESS, NULL},
		/* the first version's section */
		{{.flags = TT_MACHINE_TIMENS, .timens_monotonic_ns = 4000000000},
		 TT_MACHINE_INFO_V1_SIZE, AFTER_PROCESS, NULL},
	};
	static const struct tt_sched_state states[] = {
		{5000002000, 0, TT_SCHED_BLOCKED}, {5000003000, 0, TT_SCHED_RUNNING}};
	for (size_t i = 0; i < N(cases); i++) {
		struct tt_tw w;
		assert_int_equal(tt_tw_open_memory(&w), 0);
		tt_tw_header(&w, NULL);
		if (cases[i].where == BEFORE_PROCESS)
			tt_tw_machine(&w, &cases[i].m, cases[i].size);
		tt_tw_process(&w, 4242, "demo");
		for (int k = cases[i].where == TWICE ? 2 : cases[i].where == AFTER_PROCESS; k > 0; k--)
			tt_tw_machine(&w, &cases[i].m, cases[i].size);
		tt_tw_sites(&w, sites, N(sites));
		struct tt_thread_info ti = {.index = 0, .tid = 101, .events = N(t0), .flags = TT_THREAD_SCHED};
		tt_tw_thread_info(&w, &ti, "main");
		tt_tw_events(&w, 0, 0, t0, N(t0));
		tt_tw_sched(&w, 0, 0, 5000001000, states, N(states));
		tt_tw_end(&w);
		assert_int_equal(tt_tw_close(&w), 0);
		if (cases[i].want) {
			expect_failure(fx, w.data, w.size, cases[i].want);
		} else {
			cJSON *root = expect_json(fx, w.data, w.size);
			assert_non_null(tt_json_find(root, "X", "Blocked"));
			cJSON_Delete(root);
		}
		tt_tw_free(&w);
	}
}

/* FILTERED sections (TICKTRACE_MIN_DUR's erased calls) damaged: refused at their
 * offset; a whole one converts. */
static void test_bad_filtered(void **state)
{
	struct fixture *fx = *state;
	static const struct {
		uint32_t index, count;
		uint64_t min_dur_ns;
		struct tt_filtered_fn fn;
		int twice;
		const char *want;
	} cases[] = {
		{0, 2, 1000, {0x401000, 5, 900}, 0, "FILTERED section of 24 bytes does not hold its 2 functions"},
		{0, 1, 0, {0x401000, 5, 900}, 0, "FILTERED section with no min_dur_ns"},
		{0, 1, 1000, {0x401000, 0, 900}, 0, "FILTERED function 0 of thread index 0 has no calls"},
		{0, 1, 1000, {0, 5, 900}, 0, "FILTERED function 0 of thread index 0 has no address"},
		{3, 1, 1000, {0x401000, 5, 900}, 0,
		 "FILTERED for thread index 3, which has no THREAD section before it"},
		{0, 1, 1000, {0x401000, 5, 900}, 1, "a second FILTERED section of thread index 0"},
		{0, 1, 1000, {0x401000, 5, 900}, 0, NULL},
	};
	for (size_t i = 0; i < N(cases); i++) {
		struct tt_tw w;
		open_sites(&w);
		tt_tw_thread(&w, 0, 101, "main", N(t0), 0);
		tt_tw_events(&w, 0, 0, t0, N(t0));
		for (int k = 0; k <= cases[i].twice; k++)
			tt_tw_filtered(&w, cases[i].index, cases[i].count, cases[i].min_dur_ns, &cases[i].fn, 1);
		tt_tw_end(&w);
		assert_int_equal(tt_tw_close(&w), 0);
		if (cases[i].want)
			expect_failure(fx, w.data, w.size, cases[i].want);
		else
			cJSON_Delete(expect_json(fx, w.data, w.size));
		tt_tw_free(&w);
	}
}

/* A MACHINE section as this version writes it (every field filled), then each of its
 * fields damaged in turn: refused at that field's offset, with what is wrong. */
static void test_bad_machine_fields(void **state)
{
	struct fixture *fx = *state;
	const struct tt_clock_reading reading = {
		.realtime_ns = INT64_C(1790000000) * 1000000000, .tai_ns = INT64_C(1790000037) * 1000000000,
		.esterror_ns = 250000, .maxerror_ns = 16000000000, .state = TIME_OK, .status = STA_PLL};
	struct tt_machine_info whole = {
		.flags = TT_MACHINE_START_CLOCK | TT_MACHINE_WRITTEN_CLOCK,
		.boot_id = {1, 2, 3}, .machine_id = {4, 5, 6}, .host_name_len = 5, .host_name = "alpha",
		.start = reading, .written = reading};
	whole.start.tsc = 1000;     /* the default header's start anchor */
	whole.written.tsc = 900000; /* before its end anchor */
#define AT(field) offsetof(struct tt_machine_info, field)
	static const struct {
		size_t at, width;
		int64_t value;
		const char *want;
		size_t said_at; /* where the error is said, if not `at` */
	} cases[] = {
		{AT(flags), 4, TT_MACHINE_WRITTEN_CLOCK, "a start clock reading without its flag", AT(start)},
		{AT(flags), 4, TT_MACHINE_START_CLOCK, "a written clock reading without its flag",
		 AT(written)},
		{AT(host_name_len), 4, 65, "host name of 65 bytes (at most 64)", 0},
		{AT(host_name) + 2, 1, 0, "host name holds a NUL", 0},
		{AT(host_name) + 5, 1, 'x', "bytes after its host name", 0},
		{AT(start.tsc), 8, 1001, "start clock reading at TSC 1001, not the start anchor's 1000", 0},
		{AT(written.tsc), 8, 999, "written clock reading at TSC 999, before the start anchor's", 0},
		{AT(start.tai_ns), 8, INT64_C(1789999998) * 1000000000,
		 "start CLOCK_TAI is -2000000000 ns from CLOCK_REALTIME", 0},
		{AT(written.tai_ns), 8, INT64_C(1790200000) * 1000000000,
		 "written CLOCK_TAI is 200000000000000 ns from CLOCK_REALTIME", 0},
		{AT(start.esterror_ns), 8, -1, "start clock error -1 ns is below 0", 0},
		{AT(written.maxerror_ns), 8, -5, "written clock's maximum error -5 ns is below 0", 0},
		{AT(start.state), 4, TIME_ERROR + 1, "start clock state 6 is none adjtimex returns", 0},
		{AT(written.state), 4, -2, "written clock state -2 is none adjtimex returns", 0},
		{0, 0, 0, NULL, 0}, /* the whole section, undamaged */
	};
#undef AT
	for (size_t i = 0; i < N(cases); i++) {
		struct tt_machine_info m = whole;
		memcpy((char *)&m + cases[i].at, &cases[i].value, cases[i].width);
		struct tt_tw w;
		assert_int_equal(tt_tw_open_memory(&w), 0);
		tt_tw_header(&w, NULL);
		tt_tw_process(&w, 4242, "demo");
		tt_tw_machine(&w, &m, sizeof m);
		uint64_t section = w.sections[w.nsections - 1] + sizeof(struct tt_section_header);
		tt_tw_sites(&w, sites, N(sites));
		struct tt_thread_info ti = {.index = 0, .tid = 101, .events = N(t0)};
		tt_tw_thread_info(&w, &ti, "main");
		tt_tw_events(&w, 0, 0, t0, N(t0));
		tt_tw_end(&w);
		assert_int_equal(tt_tw_close(&w), 0);
		if (cases[i].want) {
			char want[256];
			snprintf(want, sizeof want, "offset %" PRIu64 ": MACHINE section",
				 section + (cases[i].said_at ? cases[i].said_at : cases[i].at));
			expect_failure(fx, w.data, w.size, want);
			expect_failure(fx, w.data, w.size, cases[i].want);
		} else {
			cJSON_Delete(expect_json(fx, w.data, w.size));
		}
		tt_tw_free(&w);
	}
}

/* UNLOADED sections that end before the run, hold a section they may not, or more
 * than one section. */
static void test_bad_unloaded(void **state)
{
	struct fixture *fx = *state;
	static const struct {
		uint64_t until;
		int inner; /* 0: SITES, 1: PROCESS, 2: SITES and 16 bytes more */
		const char *want;
	} cases[] = {
		{0, 0, "UNLOADED section until TSC 0"},
		{5000, 1, "section type 1 in an UNLOADED section"},
		{5000, 2, "the section in an UNLOADED section does not fill it"},
	};
	static const char more[16];
	for (size_t i = 0; i < N(cases); i++) {
		struct tt_tw w;
		open_sites(&w);
		tt_tw_unloaded_begin(&w, cases[i].until);
		if (cases[i].inner == 1)
			tt_tw_process(&w, 4242, "demo");
		else
			tt_tw_sites(&w, (const struct tt_tw_site[]){{0x2000, "gone", "g.c", "g", 1}}, 1);
		if (cases[i].inner == 2)
			fwrite(more, sizeof(more), 1, w.fp);
		tt_tw_unloaded_end(&w);
		tt_tw_thread(&w, 0, 101, "main", N(t0), 0);
		tt_tw_events(&w, 0, 0, t0, N(t0));
		tt_tw_end(&w);
		assert_int_equal(tt_tw_close(&w), 0);
		expect_failure(fx, w.data, w.size, cases[i].want);
		tt_tw_free(&w);
	}
}

/* Records packed as mode stream does, every word given in full. */
static size_t pack_literally(const struct tt_record *r, size_t n, uint8_t *out)
{
	uint8_t *p = out;
	uint64_t last = 0;
	for (size_t i = 0; i < n; i++) {
		*p++ = TT_PACKED_LITERAL;
		memcpy(p, &r[i].word, 8);
		p += 8;
		uint64_t field = r[i].tsc;
		if (TT_RECORD_HAS_TIME(TT_RECORD_KIND(r[i].word))) {
			field = tt_zigzag(field - last);
			last = r[i].tsc;
		}
		do {
			*p = field & 0x7f;
			field >>= 7;
			*p++ |= field ? 0x80 : 0;
		} while (field);
	}
	return (size_t)(p - out);
}

/* Packed records (mode stream) that cannot be unpacked: refused at their offset. A
 * well-formed packed file converts as its plain twin does. */
static void test_bad_packed(void **state)
{
	struct fixture *fx = *state;
	uint8_t good[N(t0) * TT_PACKED_MAX_RECORD];
	size_t good_size = pack_literally(t0, N(t0), good);
	uint8_t word_cut[] = {TT_PACKED_LITERAL, 1, 2, 3};
	uint8_t empty_slot[] = {7, 0};
	uint8_t time_cut[] = {TT_PACKED_LITERAL, 0, 0, 0, 0, 0, 0, 0, 0x04, 0x80};
	uint8_t time_long[21] = {TT_PACKED_LITERAL, 0, 0, 0, 0, 0, 0, 0, 0x04};
	memset(time_long + 9, 0x80, 11);
	time_long[20] = 0;
	static const struct {
		uint64_t records;
		int bytes; /* 0: good, 1..4: the arrays above, 5: good and one byte more */
		const char *want;
	} cases[] = {
		{N(t0), 0, NULL},
		{N(t0) + 1, 0, "packed record 5 of 6: the section ends before it"},
		{N(t0), 5, "packed record 5 of 5: bytes are left after the section's records"},
		{1, 1, "packed record 0 of 1: its word runs past the section"},
		{1, 2, "packed record 0 of 1: it names a word slot that no word of the section took"},
		{1, 3, "packed record 0 of 1: its time runs past the section"},
		{1, 4, "packed record 0 of 1: its time is longer than 10 bytes"},
		{0, 0, "EVENTS_PACKED holds 0 records (1 to 4096)"},
	};
	const uint8_t *bytes[] = {good, word_cut, empty_slot, time_cut, time_long, good};
	const size_t sizes[] = {good_size, sizeof word_cut, sizeof empty_slot, sizeof time_cut,
				sizeof time_long, good_size + 1};
	for (size_t i = 0; i < N(cases); i++) {
		struct tt_tw w;
		open_sites(&w);
		tt_tw_thread(&w, 0, 101, "main", N(t0), 0);
		tt_tw_events_packed(&w, 0, 0, cases[i].records, bytes[cases[i].bytes],
				    sizes[cases[i].bytes]);
		tt_tw_end(&w);
		assert_int_equal(tt_tw_close(&w), 0);
		if (cases[i].want) {
			expect_failure(fx, w.data, w.size, cases[i].want);
		} else {
			/* the same events as the demo's main thread, in the same JSON */
			struct tt_run packed, plain;
			assert_int_equal(tt_tw_save(fx->in, w.data, w.size), 0);
			TT_RUN(&packed, "report", fx->in);
			struct tt_tw p;
			open_sites(&p);
			tt_tw_thread(&p, 0, 101, "main", N(t0), 0);
			tt_tw_events(&p, 0, 0, t0, N(t0));
			tt_tw_end(&p);
			assert_int_equal(tt_tw_close(&p), 0);
			assert_int_equal(tt_tw_save(fx->in, p.data, p.size), 0);
			TT_RUN(&plain, "report", fx->in);
			assert_int_equal(packed.status, 0);
			assert_int_equal(plain.status, 0);
			assert_string_equal(packed.out, plain.out);
			free(packed.out);
			free(plain.out);
			tt_tw_free(&p);
			unlink(fx->in);
		}
		tt_tw_free(&w);
	}
}

/* A thread whose records end inside an event, in a whole file (a dump that read the
 * thread while it wrote its last event): the file converts, that event left out and
 * counted as dropped, with a word. */
static void test_torn_last_event_is_counted(void **state)
{
	struct fixture *fx = *state;
	struct tt_tw w;
	open_sites(&w);
	tt_tw_thread(&w, 0, 101, "main", N(t0), 0);
	tt_tw_events(&w, 0, 0, t0, N(t0));
	tt_tw_thread(&w, 1, 102, "worker", N(t1) - 1, 0);
	tt_tw_events(&w, 1, 0, t1, N(t1) - 1); /* the COUNTER without its VALUE */
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
	assert_int_equal(tt_tw_save(fx->in, w.data, w.size), 0);
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fx->out);
	free(r.out);
	if (r.status != 0 || !strstr(r.err, "1 events dropped") || !strstr(r.err, "cut in half where the file ends: 1") ||
	    !strstr(r.err, "has only part of its records"))
		fail_msg("status %d, stderr:\n%s", r.status, r.err);
	tt_tw_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_well_formed_converts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_at_every_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counts_that_lie, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sizes_that_overflow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_times_outside_the_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_funcs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_arg_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_sched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_schedstat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_machine, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_filtered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_machine_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_unloaded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_packed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_last_event_is_counted, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
