/* The converter end to end on synthetic raw files: every event kind round-trips into
 * JSON that cJSON parses, with the expected (phase, name, depth) sequence per thread,
 * args, counters and flows; scopes left open and ends with nothing open are repaired
 * and reported; the output file rules (--force, stdout, usage) hold. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt_check.h"
#include "tt_demo.h"
#include "tt_tw.h"

#define R TT_TW_REC
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Starts a file at `path` with header `h` (NULL: the default, 1 GHz), the demo's
 * process and its call sites. */
static void open_demo(struct tt_tw *w, const char *path, const struct tt_file_header *h)
{
	assert_int_equal(tt_tw_open_file(w, path), 0);
	tt_tw_header(w, h);
	tt_tw_process(w, 4242, "demo");
	tt_tw_sites(w, tt_demo_sites, tt_demo_nsites);
}

/* Starts a demo file whose default header also has `flags` (TT_FILE_LIVE, ...). */
static void open_flagged(struct tt_tw *w, const char *path, uint32_t flags)
{
	struct tt_file_header h;
	tt_tw_default_header(&h);
	h.flags |= flags;
	open_demo(w, path, &h);
}

/* One thread's records in a file whose header is `h` (NULL: the default, 1 GHz);
 * with `idle`, a second thread that recorded nothing. */
static void write_one_clocked(const char *path, const struct tt_file_header *h,
			      const struct tt_record *rec, size_t n, bool idle)
{
	struct tt_tw w;
	open_demo(&w, path, h);
	tt_tw_thread(&w, 0, 101, "producer", n, 0);
	tt_tw_events(&w, 0, 0, rec, n);
	if (idle)
		tt_tw_thread(&w, 1, 102, "idle", 0, 0);
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
}

static void write_one(const char *path, const struct tt_record *rec, size_t n)
{
	write_one_clocked(path, NULL, rec, n, false);
}

static int setup(void **state)
{
	return tt_fixture_setup(state, "run.ttr", "run.json");
}

/* Shows what the command printed when the expected text is not there. */
static void assert_err_has(const struct tt_run *r, const char *text)
{
	if (!strstr(r->err, text))
		fail_msg("expected \"%s\" on stderr, got:\n%s", text, r->err);
}

static const cJSON *field(const cJSON *ev, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, name);
	if (!v)
		fail_msg("event %s has no field %s", cJSON_PrintUnformatted(ev), name);
	return v;
}

static const cJSON *arg(const cJSON *ev, const char *name)
{
	/* NULL when the event has no args at all */
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "args"), name);
}

/* Events lost before their thread had a buffer are in the header, not in any
 * thread: they still count in the summary, with a warning, and in `info`. */
static void test_unregistered_drops_reported(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record rec[] = {R(TT_REC_INSTANT, S_WAKE, 10)};
	struct tt_file_header h;
	tt_tw_default_header(&h);
	h.unregistered_dropped = 7;
	write_one_clocked(fx->in, &h, rec, N(rec), false);
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 0);
	assert_err_has(&r, "7 events dropped before their thread had a buffer");
	assert_err_has(&r, ", 7 dropped,");
	free(r.out);
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 0);
	if (!strstr(r.out, "dropped before their thread had a buffer: 7"))
		fail_msg("info did not report the drops:\n%s", r.out);
	free(r.out);
}

/* A live file (TICKTRACE_LIVE=1, the run killed): each thread's records from its
 * chunks, in time order; a thread described but left with no chunk (it recorded
 * nothing, or its chunks were recycled) converts too, with nothing on it. */
static void test_live_file(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record early[] = {R(TT_REC_BEGIN, S_MAIN, 2000), R(TT_REC_INSTANT, S_WAKE, 2500)};
	static const struct tt_record late[] = {R(TT_REC_INSTANT, S_WAKE, 3000), R(TT_REC_END, 0, 4000)};
	struct tt_tw w;
	open_flagged(&w, fx->in, TT_FILE_LIVE);
	tt_tw_thread(&w, 0, 101, "producer", 0, 0);
	tt_tw_thread(&w, 1, 102, "idle", 0, 0);
	tt_tw_live_chunk(&w, 0, late, N(late)); /* the chunks of a thread in any order */
	tt_tw_live_chunk(&w, 0, early, N(early));
	assert_int_equal(tt_tw_close(&w), 0);
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 0);
	assert_err_has(&r, "these are its live buffers");
	assert_err_has(&r, "4 events, 2 threads");
	cJSON *root = tt_json_load(fx->out);
	char *p = tt_json_listing(root, 101);
	assert_string_equal(p, "X main 0\ni wake 1\ni wake 1\n");
	free(p);
	p = tt_json_listing(root, 102);
	assert_string_equal(p, "");
	free(p);
	cJSON_Delete(root);
	free(r.out);
}

/* Converts, reports and describes a file cut short inside its last event: each
 * must succeed, leave that event out and count it as dropped. */
static void expect_cut_event_dropped(const struct tt_fixture *fx, const char *listing)
{
	struct tt_run r;
	TT_RUN(&r, "convert", "--force", fx->in, "-o", fx->out);
	if (r.status != 0)
		fail_msg("convert: status %d: %s", r.status, r.err);
	assert_err_has(&r, "its last event, at offset ");
	assert_err_has(&r, "1 dropped");
	free(r.out);
	cJSON *root = tt_json_load(fx->out);
	char *p = tt_json_listing(root, 101);
	assert_string_equal(p, listing);
	free(p);
	cJSON_Delete(root);
	static const char *const cmds[] = {"info", "report"};
	for (size_t i = 0; i < N(cmds); i++) {
		TT_RUN(&r, cmds[i], fx->in);
		if (r.status != 0)
			fail_msg("%s: status %d: %s", cmds[i], r.status, r.err);
		free(r.out);
	}
}

/* A run killed between the two records of an event with a value:
 * in its live file, and in a streamed file whose last section ends there. */
static void test_cut_in_half_event_dropped(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record rec[] = {
		R(TT_REC_BEGIN, S_MAIN, 2000), R(TT_REC_INSTANT_ARG, S_WAKE, 2500), R(TT_REC_VALUE, 0, 9),
		R(TT_REC_END, 0, 2600), R(TT_REC_INSTANT_ARG, S_WAKE, 3000)};
	struct tt_tw w;
	open_flagged(&w, fx->in, TT_FILE_LIVE);
	tt_tw_thread(&w, 0, 101, "producer", 0, 0);
	tt_tw_live_chunk(&w, 0, rec, N(rec));
	assert_int_equal(tt_tw_close(&w), 0);
	expect_cut_event_dropped(fx, "X main 0\ni wake 1\n");

	/* A DESCRIBE whose text the run did not finish, in a streamed file. */
	static const struct tt_record described[] = {
		R(TT_REC_BEGIN, S_MAIN, 2700), R(TT_REC_INSTANT, S_WAKE, 2750), R(TT_REC_END, 0, 2900),
		R(TT_REC_DESCRIBE, 20, 2950), R(TT_REC_TEXT, 0, 0)};
	open_flagged(&w, fx->in, TT_FILE_STREAMED);
	tt_tw_thread(&w, 0, 101, "producer", 0, 0);
	tt_tw_events(&w, 0, 0, rec, 3);
	tt_tw_events(&w, 0, 3, described, N(described));
	assert_int_equal(tt_tw_close(&w), 0);
	expect_cut_event_dropped(fx, "X main 0\ni wake 1\nX main 1\ni wake 2\n");
}

/* A stream killed by SIGKILL has no totals for its running threads: the runs of
 * events it dropped (DROPPED records) are its counts, in the summary, `info` and the
 * thread's column. */
static void test_killed_stream_counts_its_gaps(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record rec[] = {
		R(TT_REC_INSTANT, S_WAKE, 2000), R(TT_REC_DROPPED, 58, 2100), R(TT_REC_VALUE, 0, 2200),
		R(TT_REC_INSTANT, S_WAKE, 2300), R(TT_REC_DROPPED, 4, 2400), R(TT_REC_VALUE, 0, 2500),
		R(TT_REC_INSTANT, S_WAKE, 2600)};
	struct tt_tw w;
	open_flagged(&w, fx->in, TT_FILE_STREAMED);
	tt_tw_thread(&w, 0, 101, "producer", 0, 0);
	tt_tw_events(&w, 0, 0, rec, N(rec));
	assert_int_equal(tt_tw_close(&w), 0);
	struct tt_run r;
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 0);
	if (!strstr(r.out, "dropped 62,") || !strstr(r.out, "producer") || !strstr(r.out, " 62 "))
		fail_msg("info:\n%s", r.out);
	free(r.out);
	TT_RUN(&r, "convert", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 0);
	assert_err_has(&r, " 62 dropped, ");
	assert_err_has(&r, "62 events dropped (buffer full: 0, no memory: 0, disk behind: 62");
	free(r.out);
}

static void test_round_trip(void **state)
{
	struct tt_fixture *fx = *state;
	assert_int_equal(tt_demo_write(fx->in), 0);
	struct tt_run r;
	TT_RUN(&r, "convert", "--source", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 0);
	assert_err_has(&r, "17 events, 2 threads, 0 dropped, 0 unmatched");
	free(r.out);
	cJSON *root = tt_json_load(fx->out);
	assert_non_null(root);

	char *p = tt_json_listing(root, 101);
	assert_non_null(p);
	assert_string_equal(p, "X main 0\n"
			       "X child 1\n"
			       "i wake 2\n"
			       "i drop 2\n"
			       "X flow_out 2\n"
			       "X next 0\n"
			       "X 0x401000 1\n"
			       "X flow_in 2\n");
	free(p);
	p = tt_json_listing(root, 102);
	assert_non_null(p);
	assert_string_equal(p, "X work 0\n"
			       "X flow_in 1\n"
			       "X flow_out 1\n"
			       "i q\"uo\\te\n\x01tab\t\xef\xbf\xbd\xc3\xa9 1\n");
	free(p);

	/* Every event has the six fields; metadata comes first. */
	const cJSON *events = field(root, "traceEvents");
	const cJSON *ev;
	int i = 0, last_meta = -1, first_other = -1;
	cJSON_ArrayForEach(ev, events)
	{
		static const char *const must[] = {"name", "cat", "ph", "ts", "pid", "tid"};
		for (size_t k = 0; k < N(must); k++)
			field(ev, must[k]);
		assert_int_equal((int)field(ev, "pid")->valuedouble, 4242);
		if (strcmp(field(ev, "ph")->valuestring, "M") == 0)
			last_meta = i;
		else if (first_other < 0)
			first_other = i;
		i++;
	}
	assert_true(last_meta >= 0 && last_meta < first_other);
	ev = tt_json_find(root, "M", "process_name");
	assert_string_equal(arg(ev, "name")->valuestring, "demo");
	assert_non_null(tt_json_find(root, "M", "thread_name"));

	/* Exact times: ts is ns since the trace start, dur the difference. */
	ev = tt_json_find(root, "X", "main");
	assert_int_equal(tt_json_ns(ev, "ts"), 1000);
	assert_int_equal(tt_json_ns(ev, "dur"), 6000);
	assert_string_equal(arg(ev, "src")->valuestring, "demo.c:10");
	/* Without --source, slices carry only their own arguments. */
	TT_RUN(&r, "convert", "-q", "--force", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 0);
	cJSON *plain = tt_json_load(fx->out);
	assert_non_null(plain);
	assert_null(cJSON_GetObjectItemCaseSensitive(tt_json_find(plain, "X", "main"), "args"));
	assert_int_equal((int)arg(tt_json_find(plain, "X", "child"), "arg")->valuedouble, 77);
	cJSON_Delete(plain);
	ev = tt_json_find(root, "X", "child");
	assert_int_equal((int)arg(ev, "arg")->valuedouble, 77);
	assert_int_equal(tt_json_ns(ev, "dur"), 4000);
	ev = tt_json_find(root, "X", "next");
	assert_int_equal(tt_json_ns(ev, "ts"), 7000); /* ENDBEGIN: one time for both */
	assert_int_equal(tt_json_ns(ev, "dur"), 2000);
	/* A flow is a zero-length slice and an s (out) or f (in) event at its time and
	 * thread; s comes first in the file, as the DevTools engine needs. */
	ev = tt_json_find(root, "X", "flow_out");
	assert_int_equal(tt_json_ns(ev, "ts"), 5500);
	assert_int_equal(tt_json_ns(ev, "dur"), 0);
	assert_string_equal(arg(ev, "id")->valuestring, "0x42");
	const cJSON *s = tt_json_find(root, "s", "flow");
	const cJSON *f = tt_json_find(root, "f", "flow");
	/* (the arrow's own id, unique in the trace: the one recorded is in args) */
	assert_string_equal(field(s, "id")->valuestring, field(f, "id")->valuestring);
	assert_int_equal(tt_json_ns(s, "ts"), 5500);
	assert_int_equal((int)field(s, "tid")->valuedouble, 101);
	assert_string_equal(field(f, "bp")->valuestring, "e");
	assert_int_equal(tt_json_ns(f, "ts"), 5900);
	assert_int_equal((int)field(f, "tid")->valuedouble, 102);
	assert_string_equal(field(f, "cat")->valuestring, field(s, "cat")->valuestring);
	int s_at = -1, f_at = -1, k = 0;
	cJSON_ArrayForEach(ev, field(root, "traceEvents"))
	{
		if (ev == s)
			s_at = k;
		if (ev == f)
			f_at = k;
		k++;
	}
	assert_true(s_at >= 0 && s_at < f_at);
	ev = tt_json_find(root, "i", "drop");
	assert_string_equal(field(ev, "s")->valuestring, "t");
	assert_int_equal((int)arg(ev, "arg")->valuedouble, 5);
	ev = tt_json_find(root, "C", "queue_depth");
	assert_int_equal((int)arg(ev, "value")->valuedouble, -3);
	assert_int_equal(tt_json_ns(ev, "ts"), 5000);
	ev = field(root, "otherData");
	assert_int_equal((int)field(ev, "events")->valuedouble, 17);
	cJSON_Delete(root);

	/* Timestamps are written as integer microseconds and exactly three digits. */
	char *text = tt_read_text(fx->out);
	assert_non_null(text);
	int checked = 0;
	for (const char *q = text; (q = strstr(q, "\"ts\":")); q += 5, checked++) {
		const char *d = q + 5;
		while (*d >= '0' && *d <= '9')
			d++;
		if (d[0] == '.')
			assert_true(d[1] >= '0' && d[1] <= '9' && d[2] >= '0' && d[2] <= '9' &&
				    d[3] >= '0' && d[3] <= '9' && (d[4] == ',' || d[4] == '}'));
		else
			assert_true(*d == ',' && d[-1] == '0' && d - q == 6); /* metadata "ts":0 */
	}
	assert_true(checked > 15);
	free(text);
	free(r.out);
}

static void test_unterminated(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record rec[] = {
		R(TT_REC_BEGIN, S_MAIN, 2000),
		R(TT_REC_BEGIN, S_CHILD, 3000),
		R(TT_REC_INSTANT, S_WAKE, 3500),
		R(TT_REC_BEGIN, S_NEXT, 4000),
		R(TT_REC_END, 0, 6000),
	};
	write_one(fx->in, rec, N(rec));
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 0);
	assert_err_has(&r, "2 scopes left open");
	assert_err_has(&r, "innermost: child");
	assert_err_has(&r, "2 unterminated");
	cJSON *root = tt_json_load(fx->out);
	char *p = tt_json_listing(root, 101);
	assert_string_equal(p, "X main 0\nX child 1\ni wake 2\nX next 2\n");
	free(p);
	const cJSON *ev = tt_json_find(root, "X", "main");
	assert_true(cJSON_IsTrue(arg(ev, "unterminated")));
	assert_int_equal(tt_json_ns(ev, "dur"), 4000); /* to the last event, at TSC 6000 */
	ev = tt_json_find(root, "X", "next");
	assert_null(arg(ev, "unterminated"));
	cJSON_Delete(root);
	free(r.out);
}

/* A TSC rate that is no whole number of ticks per nanosecond, as real ones are: every
 * time is the exact floor of ticks * 1e9 / hz, and a duration the difference of two. */
static void test_real_clock_rate(void **state)
{
	struct tt_fixture *fx = *state;
	const uint64_t hz = 2899999973, t0 = 1000;
	const uint64_t begin = 1234567, end = 98765432, instant = 98765431;
	struct tt_file_header h;
	tt_tw_default_header(&h);
	h.tsc_hz = hz;
	h.start = (struct tt_anchor){.tsc = t0, .monotonic_ns = 5000000000};
	h.end = (struct tt_anchor){.tsc = t0 + hz, .monotonic_ns = 6000000000};
	const struct tt_record rec[] = {
		R(TT_REC_BEGIN, S_MAIN, t0 + begin),
		R(TT_REC_INSTANT, S_WAKE, t0 + instant),
		R(TT_REC_END, 0, t0 + end),
	};
	write_one_clocked(fx->in, &h, rec, N(rec), false);
	struct tt_run r;
	TT_RUN(&r, "convert", "-q", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 0);
	cJSON *root = tt_json_load(fx->out);
	assert_non_null(root);
	int64_t ns_begin = (int64_t)((unsigned __int128)begin * 1000000000u / hz);
	int64_t ns_end = (int64_t)((unsigned __int128)end * 1000000000u / hz);
	int64_t ns_instant = (int64_t)((unsigned __int128)instant * 1000000000u / hz);
	assert_int_equal(ns_begin, 425712); /* 425712.76...: the fraction is dropped */
	const cJSON *ev = tt_json_find(root, "X", "main");
	assert_int_equal(tt_json_ns(ev, "ts"), ns_begin);
	assert_int_equal(tt_json_ns(ev, "dur"), ns_end - ns_begin);
	assert_int_equal(tt_json_ns(tt_json_find(root, "i", "wake"), "ts"), ns_instant);
	cJSON_Delete(root);
	free(r.out);
}

/* A reader that adds "ts" and "dur" as doubles (the DevTools engine) must get the
 * double of the slice's end exactly: one ulp more, and the slice that begins there
 * (ENDBEGIN) goes inside this one; one less, and a child that ends with it is
 * dropped. Slices of every length end where the next begins, at times up to 1000 s,
 * and children end with their parents. */
static void test_ends_add_up_as_doubles(void **state)
{
	struct tt_fixture *fx = *state;
	enum { SIBLINGS = 4000 };
	struct tt_record rec[4 + 3 * SIBLINGS];
	size_t n = 0;
	uint64_t t = 1000, x = 88172645463325252u; /* xorshift: varied times */
	rec[n++] = R(TT_REC_BEGIN, S_MAIN, t);
	rec[n++] = R(TT_REC_BEGIN, S_NEXT, t);
	for (int i = 0; i < SIBLINGS; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		t += 1 + x % (i < SIBLINGS / 2 ? 5000 : 500000000); /* 1 GHz: ns */
		if (i % 4 == 0) { /* a child that ends with the slice */
			rec[n++] = R(TT_REC_BEGIN, S_CHILD, t - 1);
			rec[n++] = R(TT_REC_END, 0, t);
		}
		rec[n++] = R(TT_REC_ENDBEGIN, S_NEXT, t);
	}
	rec[n++] = R(TT_REC_END, 0, t + 7);
	rec[n++] = R(TT_REC_END, 0, t + 7);
	/* a run as long as its records (minutes): the decoder refuses times outside it */
	struct tt_file_header h;
	tt_tw_default_header(&h);
	h.end = (struct tt_anchor){.tsc = t + 8, .monotonic_ns = h.start.monotonic_ns + (int64_t)(t + 8 - 1000)};
	write_one_clocked(fx->in, &h, rec, n, false);
	struct tt_run r;
	TT_RUN(&r, "convert", "-q", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 0);
	free(r.out);
	cJSON *root = tt_json_load(fx->out);
	assert_non_null(root);
	size_t slices = 0, long_durations = 0;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		if (strcmp(field(ev, "ph")->valuestring, "X") != 0)
			continue;
		double ts = field(ev, "ts")->valuedouble, dur = field(ev, "dur")->valuedouble;
		int64_t end_ns = tt_json_ns(ev, "ts") + tt_json_ns(ev, "dur");
		if (ts + dur != (double)end_ns / 1000)
			fail_msg("%s: ts %.17g + dur %.17g is not the end, %" PRId64 " ns",
				 cJSON_PrintUnformatted(ev), ts, dur, end_ns);
		slices++;
		long_durations += dur * 1000 != (double)tt_json_ns(ev, "dur");
	}
	assert_int_equal(slices, 2 + SIBLINGS + SIBLINGS / 4);
	assert_true(long_durations > 0); /* the three decimals alone would not do */
	cJSON_Delete(root);
}

static void test_unmatched_and_clamped(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record rec[] = {
		R(TT_REC_END, 0, 1500),
		R(TT_REC_BEGIN, S_MAIN, 2000),
		R(TT_REC_FUNC_EXIT, 0x401000, 2500), /* no FUNC_ENTER open */
		R(TT_REC_INSTANT, S_WAKE, 1900),     /* a signal handler's record: earlier TSC */
		R(TT_REC_END, 0, 3000),
		R(TT_REC_END, 0, 3100),
	};
	write_one(fx->in, rec, N(rec));
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 0);
	assert_err_has(&r, "3 unmatched, 1 clamped");
	assert_err_has(&r, "2 ends with no open scope, ignored (first at offset");
	assert_err_has(&r, "1 function exits with no entry, ignored (first: 0x401000 at offset");
	assert_err_has(&r, "1 timestamps went backwards");
	cJSON *root = tt_json_load(fx->out);
	const cJSON *ev = tt_json_find(root, "i", "wake");
	assert_int_equal(tt_json_ns(ev, "ts"), 1500); /* clamped to the record before */
	char *p = tt_json_listing(root, 101);
	assert_string_equal(p, "X main 0\ni wake 1\n");
	free(p);
	cJSON_Delete(root);
	free(r.out);
}

/* FUNC_EXIT closes what was left open inside its function. */
static void test_func_exit_unwinds(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record rec[] = {
		R(TT_REC_FUNC_ENTER, 0xabc, 2000),
		R(TT_REC_BEGIN, S_MAIN, 2100),
		R(TT_REC_FUNC_ENTER, 0xdef, 2200),
		R(TT_REC_FUNC_EXIT, 0xabc, 3000),
	};
	write_one(fx->in, rec, N(rec));
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 0);
	cJSON *root = tt_json_load(fx->out);
	char *p = tt_json_listing(root, 101);
	assert_string_equal(p, "X 0xabc 0\nX main 1\nX 0xdef 2\n");
	free(p);
	assert_true(cJSON_IsTrue(arg(tt_json_find(root, "X", "0xdef"), "unterminated")));
	assert_int_equal(tt_json_ns(tt_json_find(root, "X", "main"), "dur"), 900);
	cJSON_Delete(root);
	free(r.out);
}

/* Several raw files, one timeline: each process keeps its pid and name, and each
 * file's own clock puts its events on the common CLOCK_MONOTONIC axis. */
/* The same raw file given twice, or a copy of it, would double every event (issue
 * 13, item 8): refused, with no output. */
static void test_same_run_twice_refused(void **state)
{
	struct tt_fixture *fx = *state;
	assert_int_equal(tt_demo_write(fx->in), 0);
	assert_int_equal(tt_demo_write(fx->aux), 0); /* a copy, under another name */
	const char *const twice[][2] = {{fx->in, fx->in}, {fx->in, fx->aux}};
	for (size_t i = 0; i < N(twice); i++) {
		struct tt_run r;
		TT_RUN(&r, "convert", twice[i][0], twice[i][1], "-o", fx->out);
		assert_int_equal(r.status, 1);
		assert_err_has(&r, "the same run as");
		assert_err_has(&r, "offset ");
		free(r.out);
		assert_int_equal(tt_dir_entries(fx->dir), 2);
	}
}

/* Ends a demo file with one thread (tid 101) holding `rec`. */
static void end_one(struct tt_tw *w, const char *thread, const struct tt_record *rec, size_t n)
{
	tt_tw_thread(w, 0, 101, thread, n, 0);
	tt_tw_events(w, 0, 0, rec, n);
	tt_tw_end(w);
	assert_int_equal(tt_tw_close(w), 0);
}

/* Converts fx->in: it must succeed and say `text` on stderr (in r->err). */
static void convert_says(const struct tt_fixture *fx, struct tt_run *r, const char *text)
{
	TT_RUN(r, "convert", fx->in, "-o", fx->out);
	free(r->out);
	if (r->status != 0)
		fail_msg("convert: status %d: %s", r->status, r->err);
	assert_err_has(r, text);
}

/* Names from a trace reach convert's warnings: a terminal's
 * escape sequences in them are shown, not sent. */
static void test_warnings_escape_names(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record rec[] = {R(TT_REC_BEGIN, S_MAIN, 10)}; /* left open */
	struct tt_tw w;
	open_demo(&w, fx->in, NULL);
	end_one(&w, "evil\033]0;owned\007\033[2J", rec, N(rec));
	struct tt_run r;
	convert_says(fx, &r, "evil\\x1b]0;owned\\x07\\x1b[2J");
	assert_null(strchr(r.err, '\033'));
	assert_null(strchr(r.err, '\007'));
}

/* A library unloaded (dlclose), then another loaded at the same address:
 * the converter says that names there may be the wrong library's. */
static void test_library_loaded_where_another_was(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_tw_module modules[] = {
		{0x7f0000000000, 0x7f0000010000, "/opt/plugin-a.so", "aa"},
		{0x7f0000008000, 0x7f0000020000, "/opt/plugin-b.so", "bb"},
	};
	static const struct tt_record rec[] = {R(TT_REC_INSTANT, S_WAKE, 10)};
	struct tt_tw w;
	open_demo(&w, fx->in, NULL);
	tt_tw_modules(&w, modules, N(modules));
	end_one(&w, "producer", rec, N(rec));
	struct tt_run r;
	convert_says(fx, &r, "/opt/plugin-a.so and /opt/plugin-b.so were loaded at overlapping addresses");
}

/* The same, in a file that says when the first was unloaded (UNLOADED sections):
 * each record is named after the library there when it was made, whether the file
 * wraps the first library's descriptions (a dump) or says it went after describing
 * it as loaded (a streamed or live file); nothing to warn about. */
static void test_library_named_by_time(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_tw_module a[] = {{0x7f0000000000, 0x7f0000010000, "/opt/plugin-a.so", "aa"}};
	static const struct tt_tw_module b[] = {{0x7f0000000000, 0x7f0000010000, "/opt/plugin-b.so", "bb"}};
	static const struct tt_tw_site in_a[] = {{0x7f0000008000, "a_scope", "a.c", "a_run", 3}};
	static const struct tt_tw_site in_b[] = {{0x7f0000008000, "b_scope", "b.c", "b_run", 4}};
	static const struct tt_record rec[] = {
		R(TT_REC_BEGIN, 0x7f0000008000, 2000), R(TT_REC_END, 0, 3000), /* a, until 5000 */
		R(TT_REC_BEGIN, 0x7f0000008000, 6000), R(TT_REC_END, 0, 7000), /* b */
	};
	for (int streamed = 0; streamed < 2; streamed++) {
		struct tt_tw w;
		open_demo(&w, fx->in, NULL);
		if (streamed) { /* described while loaded, then said to be unloaded */
			tt_tw_sites(&w, in_a, N(in_a));
			tt_tw_unloaded_begin(&w, 5000);
			tt_tw_modules(&w, a, N(a));
			tt_tw_unloaded_end(&w);
		} else {
			tt_tw_unloaded_begin(&w, 5000);
			tt_tw_modules(&w, a, N(a));
			tt_tw_unloaded_end(&w);
			tt_tw_unloaded_begin(&w, 5000);
			tt_tw_sites(&w, in_a, N(in_a));
			tt_tw_unloaded_end(&w);
		}
		tt_tw_modules(&w, b, N(b));
		tt_tw_sites(&w, in_b, N(in_b));
		end_one(&w, "main", rec, N(rec));
		struct tt_run r;
		TT_RUN(&r, "convert", fx->in, "-o", fx->out, "-f");
		free(r.out);
		if (r.status != 0)
			fail_msg("convert: status %d: %s", r.status, r.err);
		assert_null(strstr(r.err, "overlapping"));
		cJSON *root = tt_json_load(fx->out);
		char *p = tt_json_listing(root, 101);
		assert_string_equal(p, "X a_scope 0\nX b_scope 0\n");
		free(p);
		cJSON_Delete(root);
	}
}

static void test_merge_processes(void **state)
{
	struct tt_fixture *fx = *state;
	char child[160];
	snprintf(child, sizeof(child), "%s/child.ttr", fx->dir);
	assert_int_equal(tt_demo_write(fx->in), 0);
	struct tt_file_header h;
	tt_tw_default_header(&h);
	/* 2 GHz, and its start anchor 3 us after the parent's (at TSC 10000) */
	h.tsc_hz = 2000000000;
	h.start = (struct tt_anchor){.tsc = 10000, .monotonic_ns = 5000003000};
	h.end = (struct tt_anchor){.tsc = 10000 + 2000000000, .monotonic_ns = 6000003000};
	static const struct tt_record rec[] = {
		R(TT_REC_BEGIN, S_WORK, 12000), /* 1000 ns after its anchor */
		R(TT_REC_END, 0, 16000),
	};
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, child), 0);
	tt_tw_header(&w, &h);
	tt_tw_process(&w, 5353, "forked");
	tt_tw_sites(&w, tt_demo_sites, tt_demo_nsites);
	tt_tw_thread(&w, 0, 5354, "child-main", N(rec), 0);
	tt_tw_events(&w, 0, 0, rec, N(rec));
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);

	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, child, "-o", fx->out);
	assert_int_equal(r.status, 0);
	assert_err_has(&r, "19 events, 3 threads");
	cJSON *root = tt_json_load(fx->out);
	int processes = 0;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, field(root, "traceEvents"))
	{
		if (strcmp(field(ev, "name")->valuestring, "process_name") == 0) {
			int pid = (int)field(ev, "pid")->valuedouble;
			assert_string_equal(arg(ev, "name")->valuestring, pid == 5353 ? "forked" : "demo");
			processes++;
		}
		if (strcmp(field(ev, "ph")->valuestring, "X") == 0 &&
		    strcmp(field(ev, "name")->valuestring, "work") == 0 &&
		    (int)field(ev, "pid")->valuedouble == 5353) {
			assert_int_equal((int)field(ev, "tid")->valuedouble, 5354);
			assert_int_equal(tt_json_ns(ev, "ts"), 4000);
			assert_int_equal(tt_json_ns(ev, "dur"), 2000);
		}
	}
	assert_int_equal(processes, 2);
	char *p = tt_json_listing(root, 5354);
	assert_string_equal(p, "X work 0\n");
	free(p);
	cJSON_Delete(root);
	free(r.out);
}

/* `-o` where another user planted something in a shared directory: a link to a
 * device, a FIFO. Neither is written through: it exists (--force), and --force
 * replaces it with a file of the user's. A FIFO of the user's that no one reads is
 * refused, not waited on. Root alone can plant as another user here. */
static void test_output_planted(void **state)
{
	struct tt_fixture *fx = *state;
	assert_int_equal(tt_demo_write(fx->in), 0);
	char fifo[160];
	snprintf(fifo, sizeof fifo, "%s/fifo", fx->dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fifo);
	assert_int_equal(r.status, 1);
	assert_err_has(&r, "a FIFO no one reads");
	free(r.out);
	unlink(fifo);
	if (geteuid() != 0)
		skip(); /* (another user's files need root to plant) */
	const uid_t other = 65534;
	assert_int_equal(symlink("/dev/null", fx->out), 0);
	assert_int_equal(lchown(fx->out, other, other), 0);
	assert_int_equal(mkfifo(fifo, 0666), 0);
	assert_int_equal(chown(fifo, other, other), 0);
	const char *const planted[] = {fx->out, fifo};
	for (size_t i = 0; i < N(planted); i++) {
		TT_RUN(&r, "convert", fx->in, "-o", planted[i]);
		assert_int_equal(r.status, 1);
		assert_err_has(&r, "--force");
		free(r.out);
		TT_RUN(&r, "convert", "--force", fx->in, "-o", planted[i]);
		assert_int_equal(r.status, 0);
		free(r.out);
		struct stat st;
		assert_int_equal(lstat(planted[i], &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_uid, geteuid());
		cJSON *root = tt_json_load(planted[i]);
		assert_non_null(root);
		cJSON_Delete(root);
	}
}

static void test_force_and_stdout(void **state)
{
	struct tt_fixture *fx = *state;
	assert_int_equal(tt_demo_write(fx->in), 0);
	assert_int_equal(tt_tw_save(fx->out, "keep", 4), 0);
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 1);
	assert_err_has(&r, "--force");
	struct stat st;
	assert_int_equal(stat(fx->out, &st), 0);
	assert_int_equal(st.st_size, 4);
	free(r.out);

	TT_RUN(&r, "convert", "--force", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 0);
	cJSON *root = tt_json_load(fx->out);
	assert_non_null(root);
	cJSON_Delete(root);
	assert_int_equal(tt_dir_entries(fx->dir), 2); /* no temporary file left */
	free(r.out);

	TT_RUN(&r, "convert", fx->in, "-o", "-");
	assert_int_equal(r.status, 0);
	root = cJSON_Parse(r.out);
	assert_non_null(tt_json_find(root, "X", "work"));
	cJSON_Delete(root);
	free(r.out);
}

/* Runs convert with extra arguments and returns the listing of one thread. */
static char *filtered_listing(struct tt_fixture *fx, uint32_t tid, const char *a, const char *b,
			      const char *c, const char *d)
{
	struct tt_run r;
	TT_RUN(&r, "convert", "-q", "--force", fx->in, "-o", fx->out, a, b, c, d);
	if (r.status != 0)
		fail_msg("convert %s %s %s %s: %d\n%s", a, b, c, d, r.status, r.err);
	free(r.out);
	cJSON *root = tt_json_load(fx->out);
	char *p = tt_json_listing(root, tid);
	cJSON_Delete(root);
	return p;
}

static void test_filters(void **state)
{
	struct tt_fixture *fx = *state;
	assert_int_equal(tt_demo_write(fx->in), 0);
	char *p = filtered_listing(fx, 101, "--thread", "worker", "--thread", "nobody");
	assert_string_equal(p, "");
	free(p);
	p = filtered_listing(fx, 102, "--thread", "worker", "--thread", "nobody");
	assert_string_equal(p, "X work 0\nX flow_in 1\nX flow_out 1\ni q\"uo\\te\n\x01tab\t\xef\xbf\xbd\xc3\xa9 1\n");
	free(p);
	p = filtered_listing(fx, 102, "--thread", "101", "--min-dur", "0");
	assert_string_equal(p, "");
	free(p);

	/* The window keeps what overlaps it, whole: main and child began before it. */
	p = filtered_listing(fx, 101, "--from", "5us", "--to", "0.006ms");
	assert_string_equal(p, "X main 0\nX child 1\nX flow_out 2\n");
	free(p);
	p = filtered_listing(fx, 102, "--from", "5000ns", "--to", "6us");
	assert_string_equal(p, "X work 0\nX flow_in 1\nX flow_out 1\n");
	free(p);

	/* Slices of 3 us or more; instants and flows stay, their slices gone around them. */
	p = filtered_listing(fx, 101, "--min-dur", "3us", "--thread", "producer");
	assert_string_equal(p, "X main 0\nX child 1\ni wake 2\ni drop 2\nX flow_out 2\nX flow_in 0\n");
	free(p);

	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", "-", "--from", "soon");
	assert_int_equal(r.status, 2);
	free(r.out);
	TT_RUN(&r, "convert", fx->in, "-o", "-", "--from", "2us", "--to", "1us");
	assert_int_equal(r.status, 2);
	free(r.out);
	TT_RUN(&r, "convert", fx->in, "-o", "-", "-F", "perfetto", "--min-dur", "1us");
	assert_int_equal(r.status, 1);
	assert_err_has(&r, "--min-dur works with JSON output only");
	free(r.out);
}

/* The filter on deeply nested slices: a run of lost events after which 262,142 scopes
 * are open, then 500,000 short slices inside them, with --from and --min-dur. The
 * filter once walked the open slices at every event: 3 10^11 steps here, minutes. */
static void test_filter_deep_nesting(void **state)
{
	struct tt_fixture *fx = *state;
	enum { OPEN = (1 << 18) - 2, PAIRS = 500000 };
	struct tt_record *rec = malloc((2 + 2 * PAIRS) * sizeof(*rec));
	rec[0] = R(TT_REC_DROPPED, 9, 5000);
	rec[1] = R(TT_REC_VALUE, TT_GAP_DEPTHS(0, OPEN), 6000);
	for (size_t i = 0; i < PAIRS; i++) {
		rec[2 + 2 * i] = R(TT_REC_BEGIN, S_WORK, 7000 + 2 * i);
		rec[3 + 2 * i] = R(TT_REC_END, 0, 7001 + 2 * i);
	}
	struct tt_tw w;
	open_demo(&w, fx->in, NULL);
	tt_tw_thread(&w, 0, 101, "deep", 2 + 2 * PAIRS, 9);
	tt_tw_events(&w, 0, 0, rec, 2 + 2 * PAIRS);
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
	free(rec);
	struct tt_run r;
	/* every slice is shorter than 10 ms: the unbegun ones end at the last event */
	TT_RUN(&r, "convert", fx->in, "-o", fx->out, "--from", "1us", "--min-dur", "10ms");
	assert_int_equal(r.status, 0);
	assert_err_has(&r, "262142 scopes whose beginning was not recorded");
	assert_err_has(&r, "1000001 events");
	cJSON *root = tt_json_load(fx->out);
	char *p = tt_json_listing(root, 101);
	assert_string_equal(p, "");
	free(p);
	cJSON_Delete(root);
	free(r.out);
}

/* Issue 24 item 17: filters that keep nothing once passed without a word. They are
 * said on stderr; convert still writes a valid, empty trace and exits 0, as does
 * flame. */
static void test_filter_keeps_nothing(void **state)
{
	struct tt_fixture *fx = *state;
	assert_int_equal(tt_demo_write(fx->in), 0);
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fx->out, "--thread", "nosuch");
	free(r.out);
	assert_int_equal(r.status, 0);
	assert_err_has(&r, "--thread nosuch: no thread has that tid or name");
	cJSON *root = tt_json_load(fx->out);
	assert_non_null(root);
	char *p = tt_json_listing(root, 0);
	assert_string_equal(p, "");
	free(p);
	cJSON_Delete(root);
	TT_RUN(&r, "convert", fx->in, "-o", fx->out, "-f", "--from", "10s");
	free(r.out);
	assert_int_equal(r.status, 0);
	assert_err_has(&r, "the filter keeps nothing: no event of the chosen threads between 10.000 s "
		       "and the end");
	root = tt_json_load(fx->out);
	assert_non_null(root);
	cJSON_Delete(root);
	TT_RUN(&r, "flame", fx->in, "-o", "-", "--thread", "nosuch");
	assert_int_equal(r.status, 0);
	assert_err_has(&r, "--thread nosuch: no thread has that tid or name");
	free(r.out);
	/* one that matches is not warned about */
	TT_RUN(&r, "convert", fx->in, "-o", fx->out, "-f", "--thread", "producer", "--thread", "nosuch");
	free(r.out);
	assert_int_equal(r.status, 0);
	assert_err_has(&r, "--thread nosuch: no thread");
	if (strstr(r.err, "--thread producer") || strstr(r.err, "keeps nothing"))
		fail_msg("a thread that matched was warned about:\n%s", r.err);
}

static void test_info(void **state)
{
	struct tt_fixture *fx = *state;
	assert_int_equal(tt_demo_write(fx->in), 0);
	struct tt_run r;
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 0);
	/* the header, the process, a thread row (tid, name, 12 events, nothing lost), the
	 * call sites with their uses */
	static const char *const want[] = {
		"format version 1", "4242 (demo)", "command line: demo --fast", "1000000000 Hz",
		"2 threads, 8 call sites", "tid", "101  producer", " 12 ", "worker.c:20 (run)",
		"q\"uo\\te\\x0a",
	};
	for (size_t i = 0; i < N(want); i++)
		if (!strstr(r.out, want[i]))
			fail_msg("info lacks \"%s\":\n%s", want[i], r.out);
	free(r.out);

	static const struct tt_record rec[] = {
		R(TT_REC_END, 0, 1500),
		R(TT_REC_BEGIN, S_MAIN, 2000),
	};
	write_one(fx->in, rec, N(rec));
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 0);
	/* events 2, dropped 0, unmatched 1, clamped 0, open 1 */
	if (!strstr(r.out, "2          0          1        0        1"))
		fail_msg("info counts:\n%s", r.out);
	free(r.out);

	/* A streamed file: the converter's own sites (for runs of lost events) are not
	 * call sites; a thread without events says so. */
	struct tt_file_header h;
	tt_tw_default_header(&h);
	h.flags |= TT_FILE_STREAMED;
	write_one_clocked(fx->in, &h, rec, N(rec), true);
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 0);
	if (!strstr(r.out, "2 threads, 8 call sites") || !strstr(r.out, "0  no events\n") ||
	    strstr(r.out, "events dropped"))
		fail_msg("info on a streamed file:\n%s", r.out);
	free(r.out);

	assert_int_equal(tt_tw_save(fx->in, "TICKTRC\x1a", 8), 0);
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 1);
	assert_err_has(&r, "offset 8: truncated file header");
	free(r.out);
	TT_RUN(&r, "info");
	assert_int_equal(r.status, 2);
	free(r.out);
}

/* A large input gets a progress bar when stderr is a terminal, and none otherwise. */
static void test_progress(void **state)
{
	struct tt_fixture *fx = *state;
	if (system("command -v script >/dev/null 2>&1") != 0)
		skip(); /* util-linux's script makes the terminal */
	enum { RECORDS = 9 << 20, CHUNK = 1 << 16 };
	struct tt_record *chunk = malloc(CHUNK * sizeof(*chunk));
	for (size_t i = 0; i < CHUNK; i++)
		chunk[i] = R(TT_REC_INSTANT, S_WAKE, 2000 + i);
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, fx->in), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "big");
	tt_tw_sites(&w, tt_demo_sites, tt_demo_nsites);
	tt_tw_thread(&w, 0, 101, "main", RECORDS, 0);
	for (uint64_t first = 0; first < RECORDS; first += CHUNK) {
		for (size_t i = 0; i < CHUNK; i++)
			chunk[i].tsc = 2000 + first + i;
		tt_tw_events(&w, 0, first, chunk, CHUNK);
	}
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
	free(chunk);

	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "script -qec '%s convert %s -o /dev/null' /dev/null",
		 getenv("TT_TEST_TOOL"), fx->in);
	FILE *p = popen(cmd, "r");
	char text[8192];
	size_t n = fread(text, 1, sizeof(text) - 1, p);
	pclose(p);
	text[n] = 0;
	if (!strstr(text, "% of 9437184 records") || !strchr(text, '\r'))
		fail_msg("no progress bar on a terminal:\n%s", text);
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", "/dev/null");
	assert_int_equal(r.status, 0);
	assert_null(strchr(r.err, '\r'));
	assert_err_has(&r, "9437184 events");
	free(r.out);
	unlink(fx->in);
}

/* One HTTP exchange with 127.0.0.1:port; the whole response, malloc'ed (what came
 * within 10 s: a server that keeps silent fails the test, not hangs it). */
static char *http(int port, const char *request)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval limit = {.tv_sec = 10};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(write(fd, request, strlen(request)), (ssize_t)strlen(request));
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	ssize_t r;
	while ((r = read(fd, buf + n, cap - n)) > 0)
		if ((n += (size_t)r) == cap)
			buf = realloc(buf, (cap *= 2) + 1);
	buf[n] = 0;
	close(fd);
	return buf;
}

/* The server a test started, stopped by its teardown if the test failed. */
static pid_t open_server;

static int open_teardown(void **state)
{
	if (open_server > 0) {
		kill(open_server, SIGKILL);
		waitpid(open_server, NULL, 0);
		open_server = 0;
	}
	return tt_fixture_teardown(state);
}

/* Starts `ticktrace open PATH` on a free port; its pid, the port in *port and the
 * file's URL path in url_path ("/NAME"). */
static pid_t start_open(const char *path, int *port, char *url_path, size_t cap)
{
	int out[2];
	assert_int_equal(pipe(out), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		execl(getenv("TT_TEST_TOOL"), "ticktrace", "open", "--port", "0", path, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	char banner[1024];
	FILE *fp = fdopen(out[0], "r");
	/* the URL is on the second line */
	assert_non_null(fgets(banner, sizeof(banner) / 2, fp));
	assert_non_null(fgets(banner + strlen(banner), sizeof(banner) / 2, fp));
	fclose(fp);
	static const char prefix[] = "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:";
	const char *url = strstr(banner, prefix);
	assert_non_null(url);
	*port = atoi(url + strlen(prefix));
	assert_true(*port > 0);
	const char *slash = strchr(url + strlen(prefix), '/');
	assert_non_null(slash);
	snprintf(url_path, cap, "%.*s", (int)strcspn(slash, "\n"), slash);
	return open_server = pid;
}

/* A request for `target` from a browser on this machine (Host 127.0.0.1:port). */
static char *http_get(int port, const char *method, const char *target)
{
	char req[512];
	snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
		 "Origin: https://ui.perfetto.dev\r\n\r\n", method, target, port);
	return http(port, req);
}

static void expect_exit_0(pid_t pid)
{
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	open_server = 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("ticktrace open ended with status %#x", st);
}

/* The demo converted to JSON and served by start_open. */
static pid_t open_demo_json(struct tt_fixture *fx, int *port, char *url_path, size_t cap)
{
	assert_int_equal(tt_demo_write(fx->in), 0);
	struct tt_run r;
	TT_RUN(&r, "convert", "-q", fx->in, "-o", fx->out);
	free(r.out);
	return start_open(fx->out, port, url_path, cap);
}

/* ticktrace open serves the file once on loopback with the UI's CORS headers. */
static void test_open(void **state)
{
	int port;
	char target[256];
	pid_t pid = open_demo_json(*state, &port, target, sizeof(target));
	/* "/TOKEN/run.json", TOKEN 32 random hex digits (issue 24 item 14: another local
	 * user fetched "/run.json" first, and the file is served once) */
	assert_int_equal(strlen(target), 1 + 32 + 1 + strlen("run.json"));
	assert_int_equal(strspn(target + 1, "0123456789abcdef"), 32);
	assert_string_equal(target + 33, "/run.json");

	char *resp = http_get(port, "GET", "/other.json");
	assert_non_null(strstr(resp, "404"));
	free(resp);
	/* the file's name without the token, or another token: 404, the file still there */
	resp = http_get(port, "GET", "/run.json");
	assert_non_null(strstr(resp, "404"));
	free(resp);
	char guess[256];
	snprintf(guess, sizeof(guess), "/%032x/run.json", 0);
	resp = http_get(port, "GET", guess);
	assert_non_null(strstr(resp, "404"));
	free(resp);
	resp = http_get(port, "OPTIONS", target);
	assert_non_null(strstr(resp, "HTTP/1.1 204"));
	assert_non_null(strstr(resp, "Access-Control-Allow-Origin: https://ui.perfetto.dev\r\n"));
	free(resp);
	resp = http_get(port, "GET", target);
	assert_non_null(strstr(resp, "HTTP/1.1 200 OK"));
	assert_non_null(strstr(resp, "Access-Control-Allow-Origin: https://ui.perfetto.dev\r\n"));
	const char *body = strstr(resp, "\r\n\r\n");
	assert_non_null(body);
	cJSON *served = cJSON_Parse(body + 4);
	assert_non_null(tt_json_find(served, "X", "work"));
	cJSON_Delete(served);
	free(resp);
	/* served once: it exits by itself */
	expect_exit_0(pid);
}

/* What hostile clients did to ticktrace open: a page that made
 * its own name resolve to 127.0.0.1 is refused; a client that hangs up mid-file
 * does not kill it (SIGPIPE); one that connects and says nothing does not keep the
 * browser waiting. The browser is served after each. */
static void test_open_hostile_clients(void **state)
{
	struct tt_fixture *fx = *state;
	/* big enough that sending it outlasts the socket buffers; an empty JSON array, so
	 * that open takes it for a trace */
	static char big[16 << 20];
	memset(big, ' ', sizeof(big));
	big[0] = '[';
	big[sizeof(big) - 1] = ']';
	assert_int_equal(tt_tw_save(fx->out, big, sizeof(big)), 0);
	int port;
	char target[256];
	pid_t pid = start_open(fx->out, &port, target, sizeof(target));

	char req[512];
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: rebound.example:%d\r\n\r\n", target, port);
	char *resp = http(port, req);
	assert_null(strstr(resp, "200 OK"));
	assert_non_null(strstr(resp, "421"));
	free(resp);
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\n\r\n", target); /* no Host at all */
	resp = http(port, req);
	assert_null(strstr(resp, "200 OK"));
	free(resp);

	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int quitter = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(quitter, (struct sockaddr *)&a, sizeof(a)), 0);
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", target, port);
	assert_int_equal(write(quitter, req, strlen(req)), (ssize_t)strlen(req));
	char some[4096];
	assert_true(read(quitter, some, sizeof(some)) > 0); /* it began sending */
	close(quitter);

	int idle = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(idle, (struct sockaddr *)&a, sizeof(a)), 0);
	resp = http_get(port, "GET", target);
	close(idle);
	assert_non_null(strstr(resp, "HTTP/1.1 200 OK"));
	free(resp);
	expect_exit_0(pid);
}

/* A client that sends its request one byte every half second, in a child: 0 once the
 * server closed its connection within `seconds`, 1 if it never did. */
static pid_t start_trickle(int port, int seconds)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		_exit(2);
	static const char head[] = "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
	for (int i = 0; i < 2 * seconds; i++) {
		char c = i < (int)sizeof(head) - 1 ? head[i] : 'a';
		if (send(fd, &c, 1, MSG_NOSIGNAL) != 1)
			_exit(0);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		char got;
		if (poll(&p, 1, 500) > 0 && recv(fd, &got, 1, 0) <= 0)
			_exit(0);
	}
	_exit(1);
}

/* Issue 24 item 15: a client that sends its request head a byte at a time once held
 * the server for everyone (the timeout was per recv). Now the browser is served
 * beside it, and the trickler is dropped when its head is not complete in 5 s. */
static void test_open_slow_client(void **state)
{
	int port;
	char target[256];
	pid_t pid = open_demo_json(*state, &port, target, sizeof(target));
	pid_t trickler = start_trickle(port, 30);
	/* let it connect and begin */
	usleep(300 * 1000);
	char *resp = http_get(port, "GET", "/other.json");
	assert_non_null(strstr(resp, "404"));
	free(resp);
	int st;
	assert_int_equal(waitpid(trickler, &st, 0), trickler);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("the slow client was not dropped within 30 s (status %#x)", st);
	resp = http_get(port, "GET", target);
	assert_non_null(strstr(resp, "HTTP/1.1 200 OK"));
	free(resp);
	expect_exit_0(pid);
}

static void test_usage(void **state)
{
	(void)state;
	struct tt_run r;
	TT_RUN(&r, "convert");
	assert_int_equal(r.status, 2);
	free(r.out);
	TT_RUN(&r, "convert", "x.ttr");
	assert_int_equal(r.status, 2);
	free(r.out);
	TT_RUN(&r, "frobnicate");
	assert_int_equal(r.status, 2);
	free(r.out);
	TT_RUN(&r, "convert", "--help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage: ticktrace convert"));
	free(r.out);
	TT_RUN(&r, "--help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "convert"));
	free(r.out);
	TT_RUN(&r, "convert", "/nonexistent/x.ttr", "-o", "-");
	assert_int_equal(r.status, 1);
	assert_err_has(&r, "/nonexistent/x.ttr");
	free(r.out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_unregistered_drops_reported, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_live_file, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_cut_in_half_event_dropped, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_killed_stream_counts_its_gaps, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_unterminated, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_real_clock_rate, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_ends_add_up_as_doubles, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_unmatched_and_clamped, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_func_exit_unwinds, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_merge_processes, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_library_loaded_where_another_was, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_library_named_by_time, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_warnings_escape_names, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_same_run_twice_refused, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_force_and_stdout, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_output_planted, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_filters, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_filter_deep_nesting, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_filter_keeps_nothing, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_info, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_progress, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_open, setup, open_teardown),
		cmocka_unit_test_setup_teardown(test_open_hostile_clients, setup, open_teardown),
		cmocka_unit_test_setup_teardown(test_open_slow_client, setup, open_teardown),
		cmocka_unit_test(test_usage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
