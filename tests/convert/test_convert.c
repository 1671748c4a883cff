/* The converter end to end on synthetic raw files: every event kind round-trips into
 * JSON that cJSON parses, with the expected (phase, name, depth) sequence per thread,
 * args, counters and flows; scopes left open and ends with nothing open are repaired
 * and reported. The commands' options: test_convert_cli.c; open: test_convert_open.c. */
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
#include "convert_support.h"

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

/* A live file whose threads' identities are not wholly between its descriptions and
 * its chunks (past the chunks, over the descriptions, too near the chunks to hold
 * them all) is refused at the header's field. */
static void test_live_threads_out_of_place(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record rec[] = {R(TT_REC_BEGIN, S_MAIN, 2000), R(TT_REC_END, 0, 3000)};
	struct tt_tw w;
	open_flagged(&w, fx->in, TT_FILE_LIVE);
	tt_tw_thread(&w, 0, 101, "producer", 0, 0);
	tt_tw_live_chunk(&w, 0, rec, N(rec));
	uint64_t chunks_at = w.live_chunks_at;
	assert_int_equal(tt_tw_close(&w), 0);
	const uint64_t wrong[] = {chunks_at + 16, 8, chunks_at}; /* (its sections end there) */
	char where[64];
	snprintf(where, sizeof where, "offset %zu", offsetof(struct tt_file_header, live_threads_at));
	for (size_t i = 0; i < N(wrong); i++) {
		FILE *fp = fopen(fx->in, "r+b");
		assert_non_null(fp);
		assert_int_equal(fseek(fp, offsetof(struct tt_file_header, live_threads_at), SEEK_SET), 0);
		assert_int_equal(fwrite(&wrong[i], sizeof wrong[i], 1, fp), 1);
		assert_int_equal(fclose(fp), 0);
		struct tt_run r;
		TT_RUN(&r, "convert", fx->in, "-o", fx->out);
		assert_int_equal(r.status, 1);
		assert_err_has(&r, where);
		assert_err_has(&r, "threads' identities");
		assert_int_not_equal(access(fx->out, F_OK), 0);
		free(r.out);
	}
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

/* A streamed file of one thread ("producer") with `rec`. */
static void write_streamed(const char *path, const struct tt_record *rec, size_t n)
{
	struct tt_tw w;
	open_flagged(&w, path, TT_FILE_STREAMED);
	tt_tw_thread(&w, 0, 101, "producer", 0, 0);
	tt_tw_events(&w, 0, 0, rec, n);
	assert_int_equal(tt_tw_close(&w), 0);
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
	write_streamed(fx->in, rec, N(rec));
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

/* A run of dropped events (its DROPPED record) is counted among the dropped alone,
 * never as an event besides: a thread's events and dropped add up to what it recorded
 * (descriptors' "dup2, record" counted 640,001 for 640,000, a worker's one gap twice). */
static void test_gaps_are_not_events(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record rec[] = {
		R(TT_REC_BEGIN, S_WAKE, 2000), R(TT_REC_END, 0, 2050), R(TT_REC_DROPPED, 58, 2100),
		R(TT_REC_VALUE, TT_GAP_DEPTHS(0, 0), 2200), R(TT_REC_INSTANT, S_WAKE, 2300)};
	write_streamed(fx->in, rec, N(rec));
	struct tt_run r;
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 0);
	/* tid, name, events, dropped */
	if (!strstr(r.out, "producer                        3         58 "))
		fail_msg("info: producer's events 3 and dropped 58:\n%s", r.out);
	free(r.out);
	TT_RUN(&r, "convert", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 0);
	assert_err_has(&r, ": 3 events, 1 threads, 58 dropped, ");
	free(r.out);
}

/* A run of lost events can end and begin at most one scope each: a DROPPED record
 * whose depths say more is damaged, refused with its offset (a fuzzed 1.2 KB file said
 * 2^20 scopes began among 10 lost events, and each converter took seconds to open
 * them), nothing written; as many as it lost convert. */
static void test_gap_depths_past_its_events(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct {
		uint64_t depths;
		const char *want;
	} cases[] = {
		{TT_GAP_DEPTHS(0, 5), "a run of 4 lost events said to end 0 scopes and begin 5: more than it holds"},
		{TT_GAP_DEPTHS(5, 0), "a run of 4 lost events said to end 5 scopes and begin 0: more than it holds"},
		{TT_GAP_DEPTHS(4, 4), NULL},
	};
	for (size_t i = 0; i < N(cases); i++) {
		const struct tt_record rec[] = {
			R(TT_REC_BEGIN, S_WAKE, 2000), R(TT_REC_BEGIN, S_WAKE, 2010), R(TT_REC_BEGIN, S_WAKE, 2020),
			R(TT_REC_BEGIN, S_WAKE, 2030), R(TT_REC_DROPPED, 4, 2100),
			R(TT_REC_VALUE, cases[i].depths, 2200), R(TT_REC_INSTANT, S_WAKE, 2300)};
		struct tt_tw w;
		open_flagged(&w, fx->in, TT_FILE_STREAMED);
		tt_tw_thread(&w, 0, 101, "producer", 0, 0);
		tt_tw_events(&w, 0, 0, rec, N(rec));
		uint64_t dropped_at = w.sections[w.nsections - 1] + sizeof(struct tt_section_header) +
				      sizeof(struct tt_events_info) + 4 * sizeof(struct tt_record);
		assert_int_equal(tt_tw_close(&w), 0);
		struct tt_run r;
		TT_RUN(&r, "convert", fx->in, "-o", fx->out);
		free(r.out);
		if (!cases[i].want) {
			assert_int_equal(r.status, 0);
			assert_err_has(&r, "4 events dropped");
			unlink(fx->out);
			continue;
		}
		char offset[48];
		snprintf(offset, sizeof offset, "offset %" PRIu64 ": ", dropped_at);
		assert_int_equal(r.status, 1);
		assert_err_has(&r, fx->in);
		assert_err_has(&r, offset);
		assert_err_has(&r, cases[i].want);
		assert_int_equal(access(fx->out, F_OK), -1);
	}
}

/* A scope whose end was among dropped events (a stream's disk behind) closes at the
 * run's start, flagged unterminated: its spike says how much later it may have ended,
 * by the next record (f1's open point: its end's uncertainty not said), in spikes'
 * text and --json and convert's marks; one that ended before the run says nothing. */
static void test_gap_end_late_said(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record rec[] = {
		R(TT_REC_BEGIN, S_WAKE, 1500), R(TT_REC_END, 0, 1600), R(TT_REC_BEGIN, S_MAIN, 2000),
		R(TT_REC_DROPPED, 58, 2100), R(TT_REC_VALUE, TT_GAP_DEPTHS(1, 0), 2200),
		R(TT_REC_INSTANT, S_WAKE, 2350)};
	write_streamed(fx->in, rec, N(rec));
	struct tt_run r;
	TT_RUN(&r, "spikes", "--json", "--threshold", "50ns", fx->in);
	assert_int_equal(r.status, 0);
	/* main: 1000 to 1100 ns, its end by the instant at 1350; wake ended before the run */
	cJSON *main_spike = NULL;
	for (char *line = r.out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		cJSON *j = cJSON_Parse(line);
		assert_non_null(j);
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(j, "name"));
		if (name && strcmp(name, "main") == 0)
			main_spike = j;
		else {
			if (cJSON_GetObjectItem(j, "end_late_ns"))
				fail_msg("a spike that ended before the run says its end was lost: %s", r.out);
			cJSON_Delete(j);
		}
	}
	if (!main_spike || !cJSON_GetObjectItem(main_spike, "end_late_ns") ||
	    cJSON_GetObjectItem(main_spike, "end_late_ns")->valuedouble != 250 ||
	    cJSON_GetObjectItem(main_spike, "dur_ns")->valuedouble != 100)
		fail_msg("main's spike, ended among the dropped events, up to 250 ns after 100: %s", r.out);
	cJSON_Delete(main_spike);
	free(r.out);
	TT_RUN(&r, "spikes", "--threshold", "50ns", fx->in);
	assert_int_equal(r.status, 0);
	if (!strstr(r.out, "its end was among dropped events: it ended up to 250 ns later"))
		fail_msg("spikes:\n%s", r.out);
	free(r.out);
	TT_RUN(&r, "convert", "--threshold", "50ns", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 0);
	free(r.out);
	cJSON *root = tt_json_load(fx->out);
	assert_non_null(root);
	const cJSON *ev;
	int marked = 0;
	cJSON_ArrayForEach(ev, field(root, "traceEvents"))
	{
		const cJSON *args = cJSON_GetObjectItem(ev, "args");
		const cJSON *late = args ? cJSON_GetObjectItem(args, "end_late_ns") : NULL;
		marked += late && late->valuedouble == 250;
	}
	cJSON_Delete(root);
	assert_int_equal(marked, 1);
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

/* --clip in JSON: slices open at the window's start are cut there and held until the
 * outermost one ends, so that parents come first. A slice that ends meanwhile
 * inside the window (the second "next") released them early, with the begins of
 * those still open: "child" once more, at its original start and of no length. */
static void test_clip_nested(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record rec[] = {
		R(TT_REC_BEGIN, S_MAIN, 1000),  R(TT_REC_BEGIN, S_CHILD, 2000),
		R(TT_REC_BEGIN, S_NEXT, 2500),  R(TT_REC_END, 0, 4500),
		R(TT_REC_BEGIN, S_NEXT, 5000),  R(TT_REC_END, 0, 5500),
		R(TT_REC_END, 0, 6000),         R(TT_REC_END, 0, 7000),
	};
	write_one(fx->in, rec, N(rec));
	struct tt_run r;
	TT_RUN(&r, "convert", "-q", fx->in, "-o", fx->out, "--from", "3us", "--to", "10us", "--clip");
	assert_int_equal(r.status, 0);
	free(r.out);
	cJSON *root = tt_json_load(fx->out);
	char *listing = tt_json_listing(root, 101);
	assert_non_null(listing);
	assert_string_equal(listing, "X main 0\nX child 1\nX next 2\nX next 2\n");
	free(listing);
	const cJSON *child = tt_json_find(root, "X", "child");
	assert_int_equal(tt_json_ns(child, "ts"), 3000);
	assert_int_equal(tt_json_ns(child, "dur"), 2000);
	assert_true(cJSON_IsTrue(arg(child, "clipped_begin")));
	cJSON_Delete(root);
}

/* The .pftrace is lean (issue 33): nothing an event need not say. Two nested scopes
 * 40 ns apart and a counter, 4,000 times: begins carry only their time's delta, the
 * sequence, the interned name, location and category (no sequence_flags: 27 bytes a
 * scope, begin and end), counters their track's short uuid (17 bytes; 26 with the
 * 64-bit uuid), about 14.2 bytes an event with the file's descriptors; 16.8 before. */
static void test_perfetto_lean(void **state)
{
	struct tt_fixture *fx = *state;
	enum { REPS = 4000, PER = 6 }; /* records a repetition: 5 events and a value */
	struct tt_record *rec = calloc(REPS * PER, sizeof(*rec));
	assert_non_null(rec);
	for (uint64_t i = 0, t = 2000; i < REPS; i++, t += 200) {
		struct tt_record *r = rec + i * PER;
		r[0] = R(TT_REC_BEGIN, S_MAIN, t);
		r[1] = R(TT_REC_BEGIN, S_CHILD, t + 40);
		r[2] = R(TT_REC_END, 0, t + 80);
		r[3] = R(TT_REC_END, 0, t + 120);
		r[4] = R(TT_REC_COUNTER, S_QUEUE, t + 160);
		r[5] = R(TT_REC_VALUE, 0, i % 100);
	}
	write_one(fx->in, rec, REPS * PER);
	free(rec);
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fx->aux, "-F", "perfetto");
	assert_int_equal(r.status, 0);
	free(r.out);
	struct stat st;
	assert_int_equal(stat(fx->aux, &st), 0);
	double per_event = (double)st.st_size / (REPS * 5);
	if (per_event > 14.5)
		fail_msg("%.2f bytes an event, more than 14.5", per_event);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_unregistered_drops_reported, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_gaps_are_not_events, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_live_file, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_live_threads_out_of_place, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_cut_in_half_event_dropped, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_killed_stream_counts_its_gaps, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_gap_end_late_said, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_gap_depths_past_its_events, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_unterminated, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_real_clock_rate, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_ends_add_up_as_doubles, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_unmatched_and_clamped, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_func_exit_unwinds, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_same_run_twice_refused, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_perfetto_lean, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_clip_nested, setup, tt_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
