/* Snapshots (TICKTRACE_SNAPSHOTS): files built by hand as the runtime writes them (a
 * SNAPSHOT section after PROCESS, every thread's records beginning inside scopes
 * begun before the window, a thread whose window the ring cut), read by every
 * command: info says what the snapshot is, convert marks the spike (or trigger) and
 * the cut in both formats alike, spikes reports the snapshot's own spike without a
 * threshold, report works; and every field of the section damaged is refused at
 * its offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tt_check.h"
#include "tt_demo.h"
#include "tt_tw.h"

#define R TT_TW_REC
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *check_perfetto, *perfetto_proto; /* tests/consumers/, tools/ */

/* TSC ticks at 1 GHz from the default header: the trace starts at TSC 1000, so a
 * record at TSC t is at (t - 1000) ns. The window is 10000..700000; the spike is
 * "work" on the producer, 30000..530000 (500 us over its 100 us threshold). */
enum { FROM = 10000, BEGIN = 30000, END = 530000, TO = 700000, LOST_FROM = 8000, LOST_TO = 50000 };
#define CUT_EVENTS 1234

/* The producer's records begin inside a scope begun before the window (closed by
 * its last END); so do the worker's, whose window the ring cut. */
static const struct tt_record producer[] = {
	R(TT_REC_BEGIN, S_CHILD, 20000), R(TT_REC_END, 0, 25000),
	R(TT_REC_BEGIN, S_WORK, BEGIN), R(TT_REC_END, 0, END),
	R(TT_REC_END, 0, 600000),
};
static const struct tt_record worker[] = {
	R(TT_REC_END, 0, LOST_TO),
	R(TT_REC_BEGIN, S_NEXT, 60000), R(TT_REC_END, 0, 70000),
};
/* The producer's states in the window: blocked 100 us and preempted 100 us of the
 * spike (ns of CLOCK_MONOTONIC: the start anchor is 5 s at TSC 1000). */
#define MONO(tsc) (INT64_C(5000000000) + (tsc) - 1000)
static const struct tt_sched_state states[] = {
	{MONO(FROM), 0, TT_SCHED_RUNNING},
	{MONO(100000), 0, TT_SCHED_BLOCKED},
	{MONO(200000), 1, TT_SCHED_RUNNING},
	{MONO(300000), 1, TT_SCHED_PREEMPTED},
	{MONO(400000), 1, TT_SCHED_RUNNING},
};

static const struct tt_snapshot_info spike_info = {
	.kind = TT_SNAPSHOT_SPIKE, .thread_index = 0, .number = 3,
	.from_tsc = FROM, .to_tsc = TO, .begin_tsc = BEGIN, .end_tsc = END,
	.threshold_ns = 100000, .threshold_from = TT_THRESHOLD_FROM_MARKUP, .has_split = 1,
	.on_cpu_ns = 300000, .preempted_ns = 100000, .blocked_ns = 100000,
};
static const struct tt_snapshot_cut worker_cut = {
	.thread_index = 1, .events = CUT_EVENTS, .lost_from_tsc = LOST_FROM, .lost_to_tsc = LOST_TO,
};

/* Where the builder put the SNAPSHOT section's payload, for the tests that damage it. */
static uint64_t snapshot_at;

/* A snapshot as the runtime writes one, in memory: `info` and its name, the worker's
 * cut when `cut` (its THREAD section then counts the events overwritten). */
static void build(struct tt_tw *w, const struct tt_snapshot_info *info, const char *name, bool cut)
{
	struct tt_file_header h;
	tt_tw_default_header(&h);
	h.flags |= TT_FILE_RING | TT_FILE_SNAPSHOT;
	assert_int_equal(tt_tw_open_memory(w), 0);
	tt_tw_header(w, &h);
	tt_tw_process(w, 4242, "demo");
	snapshot_at = (uint64_t)ftell(w->fp) + sizeof(struct tt_section_header);
	tt_tw_snapshot(w, info, name, &worker_cut, cut ? 1 : 0);
	tt_tw_sites(w, tt_demo_sites, tt_demo_nsites);
	struct tt_thread_info t0 = {.index = 0, .tid = 101, .events = N(producer),
				    .flags = TT_THREAD_WRAPPED | TT_THREAD_SCHED};
	tt_tw_thread_info(w, &t0, "producer");
	tt_tw_events(w, 0, 0, producer, N(producer));
	tt_tw_sched(w, 0, 0, MONO(FROM), states, N(states));
	struct tt_thread_info t1 = {.index = 1, .tid = 102, .events = N(worker),
				    .flags = TT_THREAD_WRAPPED};
	t1.dropped[TT_DROP_OVERWRITTEN] = cut ? CUT_EVENTS : 0;
	tt_tw_thread_info(w, &t1, "worker");
	tt_tw_events(w, 1, 0, worker, N(worker));
	tt_tw_end(w);
	assert_int_equal(tt_tw_close(w), 0);
}

static void save(const char *path, const struct tt_snapshot_info *info, const char *name, bool cut)
{
	struct tt_tw w;
	build(&w, info, name, cut);
	assert_int_equal(tt_tw_save(path, w.data, w.size), 0);
	tt_tw_free(&w);
}

static void assert_has(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("expected \"%s\" in:\n%s", want, text);
}

/* The instant named `name` on thread `tid`; fails the test when there is none. */
static const cJSON *instant(cJSON *root, const char *name, uint32_t tid)
{
	const cJSON *ev = tt_json_find(root, "i", name);
	if (!ev)
		fail_msg("no instant \"%s\"", name);
	assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ev, "tid")), tid);
	return ev;
}

static double arg_number(const cJSON *ev, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "args"), key);
	if (!cJSON_IsNumber(v))
		fail_msg("%s: no number arg %s", cJSON_PrintUnformatted(ev), key);
	return cJSON_GetNumberValue(v);
}

/* Both formats of one snapshot: the JSON, checked to hold what the protobuf holds. */
static cJSON *convert_both(struct tt_fixture *fx)
{
	char pf[160];
	snprintf(pf, sizeof pf, "%s/run.pftrace", fx->dir);
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fx->out, "-f", "-q");
	free(r.out);
	if (r.status != 0)
		fail_msg("convert: status %d\n%s", r.status, r.err);
	TT_RUN(&r, "convert", fx->in, "-o", pf, "-f", "-q");
	free(r.out);
	if (r.status != 0)
		fail_msg("convert to Perfetto: status %d\n%s", r.status, r.err);
	cJSON *root = tt_json_load_checked(check_perfetto, perfetto_proto, pf, fx->out, fx->dir);
	assert_non_null(root);
	return root;
}

/* The spike is an instant on its thread at its end, with its threshold and split;
 * the cut thread has one at its first record; the scopes begun before the window
 * are unbegun, as in any ring file. */
static void test_convert_spike(void **state)
{
	struct tt_fixture *fx = *state;
	save(fx->in, &spike_info, "work", true);
	cJSON *root = convert_both(fx);
	const cJSON *mark = instant(root, "spike: work took 500.000 us", 101);
	assert_int_equal(tt_json_ns(mark, "ts"), END - 1000);
	assert_int_equal(arg_number(mark, "snapshot"), 3);
	assert_int_equal(arg_number(mark, "dur_ns"), END - BEGIN);
	assert_int_equal(arg_number(mark, "threshold_ns"), 100000);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
				    cJSON_GetObjectItemCaseSensitive(mark, "args"), "threshold_from")),
			    "TT_THRESHOLD_NS");
	assert_int_equal(arg_number(mark, "on_cpu_ns"), 300000);
	assert_int_equal(arg_number(mark, "preempted_ns"), 100000);
	assert_int_equal(arg_number(mark, "blocked_ns"), 100000);

	const cJSON *cut = instant(root, "window cut: 1234 events overwritten", 102);
	assert_int_equal(tt_json_ns(cut, "ts"), LOST_TO - 1000);
	assert_int_equal(arg_number(cut, "events"), CUT_EVENTS);
	assert_int_equal(arg_number(cut, "lost_ns"), LOST_TO - LOST_FROM);

	/* the mark after the spike's scope ended, inside the scope begun before the
	 * window; the cut's inside the worker's unbegun scope, which its first record ends */
	char *listing = tt_json_thread_listing(root, "producer");
	assert_string_equal(listing, "X (begun before it was recorded) 0\n"
				     "X child 1\n"
				     "X work 1\n"
				     "i spike: work took 500.000 us 1\n");
	free(listing);
	listing = tt_json_thread_listing(root, "worker");
	assert_string_equal(listing, "X (begun before it was recorded) 0\n"
				     "i window cut: 1234 events overwritten 0\n"
				     "X next 0\n");
	free(listing);
	cJSON_Delete(root);
}

static int setup(void **state)
{
	return tt_fixture_setup(state, "snap.ttr", "snap.json");
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s CHECK_PERFETTO_PY PERFETTO_PROTO\n", argv[0]);
		return 2;
	}
	check_perfetto = argv[1];
	perfetto_proto = argv[2];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_convert_spike, setup, tt_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
