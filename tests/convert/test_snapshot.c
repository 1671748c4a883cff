/* Snapshots (TICKTRACE_SNAPSHOTS): files built by hand as the runtime writes them (a
 * SNAPSHOT section after PROCESS, every thread's records beginning inside scopes
 * begun before the window, a thread whose window the ring cut), read by every
 * command: info says what the snapshot is, convert marks the spike (or trigger) and
 * the cut in both formats alike, spikes reports the snapshot's own spike without a
 * threshold, report works; and every field of the section damaged is refused at
 * its offset. */
#include <errno.h>
#include <inttypes.h>
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
/* What the builder ends the section with (NULL: nothing, as the first version; the
 * split without causes: as the second; without unsplit: as the third) */
static const struct tt_snapshot_split *snapshot_split;
static const struct tt_snapshot_causes *snapshot_causes;
static const struct tt_snapshot_unsplit *snapshot_unsplit;
/* and after unsplit, tt_snapshot_unknown and tt_snapshot_miss (NULL: neither, as the
 * fourth version) */
static const struct snapshot_tail {
	struct tt_snapshot_unknown unknown;
	struct tt_snapshot_miss miss;
} *snapshot_tail;
/* The producer without states (perf refused): no SCHED section */
static bool producer_refused;
/* where a field of it is, with a name of at most 8 bytes */
#define INFO(field) (snapshot_at + offsetof(struct tt_snapshot_info, field))
#define CUT(field) (snapshot_at + sizeof(struct tt_snapshot_info) + 8 + offsetof(struct tt_snapshot_cut, field))

/* What the worker recorded in the window, and lost to a full buffer. */
struct worker {
	const struct tt_record *records;
	size_t n;
	uint64_t dropped_full;
};

/* A snapshot as the runtime writes one, in memory: `info` and its name, the `ncuts`
 * cuts (worker_cut's, the worker's THREAD section then counting the events
 * overwritten), the worker's records (NULL: `worker`). */
static void build_with(struct tt_tw *w, const struct tt_snapshot_info *info, const char *name,
		       size_t ncuts, const struct worker *work)
{
	const struct tt_snapshot_cut cuts[] = {worker_cut, worker_cut};
	const struct worker usual = {worker, N(worker), 0};
	if (!work)
		work = &usual;
	struct tt_file_header h;
	tt_tw_default_header(&h);
	h.flags |= TT_FILE_RING | TT_FILE_SNAPSHOT;
	assert_int_equal(tt_tw_open_memory(w), 0);
	tt_tw_header(w, &h);
	tt_tw_process(w, 4242, "demo");
	snapshot_at = (uint64_t)ftell(w->fp) + sizeof(struct tt_section_header);
	tt_tw_snapshot_split(w, info, name, cuts, ncuts, snapshot_split, snapshot_causes, snapshot_unsplit,
			     snapshot_tail, snapshot_tail ? sizeof *snapshot_tail : 0);
	tt_tw_sites(w, tt_demo_sites, tt_demo_nsites);
	uint32_t why_states = producer_refused ? TT_THREAD_NO_STATES_FLAGS(TT_NO_STATES_REFUSED, EACCES)
					       : TT_THREAD_SCHED;
	struct tt_thread_info t0 = {.index = 0, .tid = 101, .events = N(producer),
				    .flags = TT_THREAD_WRAPPED | why_states};
	tt_tw_thread_info(w, &t0, "producer");
	tt_tw_events(w, 0, 0, producer, N(producer));
	if (!producer_refused)
		tt_tw_sched(w, 0, 0, MONO(FROM), states, N(states));
	struct tt_thread_info t1 = {.index = 1, .tid = 102, .events = work->n,
				    .flags = TT_THREAD_WRAPPED};
	t1.dropped[TT_DROP_OVERWRITTEN] = ncuts ? CUT_EVENTS : 0;
	t1.dropped[TT_DROP_FULL] = work->dropped_full;
	tt_tw_thread_info(w, &t1, "worker");
	tt_tw_events(w, 1, 0, work->records, work->n);
	tt_tw_end(w);
	assert_int_equal(tt_tw_close(w), 0);
}

static void build(struct tt_tw *w, const struct tt_snapshot_info *info, const char *name, bool cut)
{
	build_with(w, info, name, cut ? 1 : 0, NULL);
}

static void save_with(const char *path, const struct tt_snapshot_info *info, const char *name,
		      size_t ncuts, const struct worker *work)
{
	struct tt_tw w;
	build_with(&w, info, name, ncuts, work);
	assert_int_equal(tt_tw_save(path, w.data, w.size), 0);
	tt_tw_free(&w);
}

static void save(const char *path, const struct tt_snapshot_info *info, const char *name, bool cut)
{
	save_with(path, info, name, cut ? 1 : 0, NULL);
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

/* The thread's events as tt_json_listing lists them. */
static void assert_listing(cJSON *root, const char *thread, const char *want)
{
	char *listing = tt_json_thread_listing(root, thread);
	assert_string_equal(listing, want);
	free(listing);
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
	assert_listing(root, "producer", "X (begun before it was recorded) 0\n"
		       "X child 1\n"
		       "X work 1\n"
		       "i spike: work took 500.000 us 1\n");
	assert_listing(root, "worker", "X (begun before it was recorded) 0\n"
		       "i window cut: 1234 events overwritten 0\n"
		       "X next 0\n");
	cJSON_Delete(root);
}

/* The runtime's spike is a few hundred ns off its scope's records (its detector's
 * clock): the mark goes where the scope of its name ends (not the one around it,
 * begun and ended as near, nor a short one of its name begun as near), right after
 * it, before what follows within those ns; spikes finds it as the snapshot's. */
static void test_convert_spike_off(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record busy[] = {
		R(TT_REC_END, 0, LOST_TO),
		R(TT_REC_BEGIN, S_NEXT, 59300), R(TT_REC_END, 0, 59400),
		R(TT_REC_BEGIN, S_WAKE, 59900),
		R(TT_REC_BEGIN, S_NEXT, 60000), R(TT_REC_END, 0, 70000),
		R(TT_REC_END, 0, 70050),
		R(TT_REC_BEGIN, S_CHILD, 70100), R(TT_REC_END, 0, 80000),
	};
	const struct worker work = {busy, N(busy), 0};
	struct tt_snapshot_info off = spike_info;
	off.thread_index = 1;
	off.begin_tsc = 60000 + 200;
	off.end_tsc = 70000 + 300;
	off.threshold_ns = 5000;
	save_with(fx->in, &off, "next", 1, &work);
	cJSON *root = convert_both(fx);
	const cJSON *mark = instant(root, "spike: next took 10.100 us", 102);
	assert_int_equal(tt_json_ns(mark, "ts"), 70000 - 1000);
	assert_listing(root, "worker", "X (begun before it was recorded) 0\n"
		       "i window cut: 1234 events overwritten 0\n"
		       "X next 0\n"
		       "X wake 0\n"
		       "X next 1\n"
		       "i spike: next took 10.100 us 1\n"
		       "X child 0\n");
	cJSON_Delete(root);
	struct tt_run r;
	TT_RUN(&r, "spikes", fx->in, "-q");
	assert_int_equal(r.status, 0);
	assert_has(r.out, "spike: next took 10.000 us (threshold 5.000 us, TT_THRESHOLD_NS) thread "
			  "worker (tid 102) at 59.000 us\n");
	assert_has(r.out, "  the spike snapshot 3 was written for (");
	assert_has(r.out, "\n1 spikes\n");
	free(r.out);
}

/* A window that begins inside a function no FUNCS section lists (its exit the
 * thread's third record): its unbegun slice, held by the Perfetto writer until the
 * thread's time moves on, keeps its name there as in JSON. */
static void test_convert_unbegun_function(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record inside[] = {
		R(TT_REC_BEGIN, S_NEXT, LOST_TO), R(TT_REC_END, 0, 60000),
		R(TT_REC_FUNC_EXIT, 0x401000, 70000),
	};
	const struct worker work = {inside, N(inside), 0};
	save_with(fx->in, &spike_info, "work", 1, &work);
	cJSON *root = convert_both(fx);
	assert_listing(root, "worker", "X 0x401000 0\n"
		       "X next 1\n"
		       "i window cut: 1234 events overwritten 2\n");
	cJSON_Delete(root);
}

/* A window that ends inside a scope begun at the thread's last record: closed there
 * by the converter, of zero length at its parent's end, where both formats put it
 * after its parent (the Perfetto writer holds such a beginning). */
static void test_convert_ends_inside(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record open[] = {
		R(TT_REC_END, 0, LOST_TO),
		R(TT_REC_BEGIN, S_NEXT, 60000), R(TT_REC_BEGIN, S_CHILD, 70000),
	};
	const struct worker work = {open, N(open), 0};
	save_with(fx->in, &spike_info, "work", 1, &work);
	cJSON *root = convert_both(fx);
	assert_listing(root, "worker", "X (begun before it was recorded) 0\n"
		       "i window cut: 1234 events overwritten 0\n"
		       "X next 0\n"
		       "X child 0\n");
	cJSON_Delete(root);
}

/* A trigger: its instant where tt_trigger was called, with the snapshot's number
 * and nothing of a threshold; no thread cut, no cut instant. Here after the thread's
 * last record: given when its records end, after the scopes they left open. */
static void test_convert_trigger(void **state)
{
	struct tt_fixture *fx = *state;
	struct tt_snapshot_info info = {.kind = TT_SNAPSHOT_TRIGGER, .thread_index = 1, .number = 1,
					.from_tsc = FROM, .to_tsc = TO, .begin_tsc = 650000, .end_tsc = 650000};
	save(fx->in, &info, "deadline \"missed\"", false);
	cJSON *root = convert_both(fx);
	const cJSON *mark = instant(root, "trigger: deadline \"missed\"", 102);
	assert_int_equal(tt_json_ns(mark, "ts"), 650000 - 1000);
	assert_int_equal(arg_number(mark, "snapshot"), 1);
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(mark, "args");
	assert_int_equal(cJSON_GetArraySize(args), 1);
	assert_null(tt_json_find(root, "i", "window cut: 1234 events overwritten"));
	assert_listing(root, "worker", "X (begun before it was recorded) 0\n"
		       "X next 0\n"
		       "i trigger: deadline \"missed\" 0\n");
	cJSON_Delete(root);
}

/* A mark inside a run of lost events the thread's records end later than the mark:
 * given at the run's end, never before what the thread gave the sinks (Perfetto
 * would take the step back for a time far in the future). */
static void test_convert_mark_in_gap(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record lossy[] = {
		R(TT_REC_END, 0, LOST_TO),
		R(TT_REC_DROPPED, 3, 55000), R(TT_REC_VALUE, TT_GAP_DEPTHS(0, 0), 65000),
		R(TT_REC_BEGIN, S_NEXT, 66000), R(TT_REC_END, 0, 70000),
	};
	const struct worker work = {lossy, N(lossy), 3};
	struct tt_snapshot_info info = {.kind = TT_SNAPSHOT_TRIGGER, .thread_index = 1, .number = 1,
					.from_tsc = FROM, .to_tsc = TO, .begin_tsc = 60000, .end_tsc = 60000};
	save_with(fx->in, &info, "late", 0, &work);
	cJSON *root = convert_both(fx);
	assert_int_equal(tt_json_ns(instant(root, "trigger: late", 102), "ts"), 65000 - 1000);
	cJSON_Delete(root);
}

/* What the runtime may write at the edges: a window from TSC 0 (BEFORE longer than
 * the machine's uptime) to long after the run (it exited first), said by info from
 * the run's start to its end, a cut whose start
 * the ring forgot (lost_from_tsc 0: at least that many), a trigger called by a
 * thread that never recorded (said in a warning: no thread to mark it on). */
static void test_edges(void **state)
{
	struct tt_fixture *fx = *state;
	struct tt_snapshot_info info = {.kind = TT_SNAPSHOT_TRIGGER, .thread_index = TT_SNAPSHOT_NO_THREAD,
					.number = 4, .from_tsc = 0, .to_tsc = UINT64_MAX, .begin_tsc = 65000,
					.end_tsc = 65000};
	struct tt_tw w;
	build_with(&w, &info, "off", 1, NULL);
	memset(w.data + CUT(lost_from_tsc), 0, 8); /* (worker_cut's, forgotten) */
	assert_int_equal(tt_tw_save(fx->in, w.data, w.size), 0);
	tt_tw_free(&w);

	struct tt_run r;
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 0);
	assert_has(r.out, "  snapshot: number 4, of a trigger: \"off\" on a thread that never recorded, "
			  "tt_trigger called at 0.000064000 s\n    window: 0.000000000 s .. ");
	/* (from the run's start, to its end: r43 R8, a window printed from before the run) */
	assert_has(r.out, "; from the run's start: the window asked began 1.000 us before it; to the run's end: "
			  "the window asked ended ");
	assert_has(r.out, "    window cut: tid 102 (worker): at least 1234 events overwritten from before "
			  "the ring remembers to 0.000049000 s\n");
	free(r.out);

	cJSON *root = convert_both(fx);
	const cJSON *cut = instant(root, "window cut: at least 1234 events overwritten", 102);
	assert_int_equal(tt_json_ns(cut, "ts"), LOST_TO - 1000); /* the worker's first record */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cut, "args")), 1);
	assert_null(tt_json_find(root, "i", "trigger: off"));
	const cJSON *warnings = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(root, "otherData"), "warnings");
	bool said = false;
	const cJSON *wn;
	cJSON_ArrayForEach(wn, warnings)
		said |= strstr(cJSON_GetStringValue(wn), "snapshot 4: tt_trigger(\"off\") was called at 64000 "
				"ns by a thread that never recorded") != NULL;
	assert_true(said);
	cJSON_Delete(root);
}

/* A thread whose whole window the ring overwrote (no record left in it): its cut
 * marked where its losses began in the window, not before, and said whole (info,
 * convert). */
static void test_convert_cut_whole(void **state)
{
	struct tt_fixture *fx = *state;
	const struct worker none = {NULL, 0, 0};
	struct tt_tw w;
	build_with(&w, &spike_info, "work", 1, &none);
	const uint64_t lost_from = 20000;
	memcpy(w.data + CUT(lost_from_tsc), &lost_from, sizeof lost_from);
	assert_int_equal(tt_tw_save(fx->in, w.data, w.size), 0);
	tt_tw_free(&w);
	struct tt_run r;
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 0);
	assert_has(r.out, "    window cut: tid 102 (worker): its whole window lost: 1234 events overwritten");
	free(r.out);
	cJSON *root = convert_both(fx);
	const cJSON *cut = instant(root, "window cut: whole window lost: 1234 events overwritten", 102);
	assert_int_equal(tt_json_ns(cut, "ts"), lost_from - 1000);
	assert_int_equal(arg_number(cut, "lost_ns"), LOST_TO - lost_from);
	cJSON_Delete(root);
}

/* convert --threshold finds the snapshot's spike too: it stays one mark, the
 * decoder's, with its arguments; other spikes get the analysis' marks. */
static void test_convert_threshold(void **state)
{
	struct tt_fixture *fx = *state;
	save(fx->in, &spike_info, "work", true);
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, "-o", fx->out, "-q", "--threshold", "4us");
	free(r.out);
	if (r.status != 0)
		fail_msg("convert: status %d\n%s", r.status, r.err);
	cJSON *root = tt_json_load(fx->out);
	assert_non_null(root);
	int marks = 0;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "name"));
		marks += name && strcmp(name, "spike: work took 500.000 us") == 0;
	}
	assert_int_equal(marks, 1);
	assert_int_equal(arg_number(tt_json_find(root, "i", "spike: work took 500.000 us"), "snapshot"), 3);
	assert_non_null(tt_json_find(root, "i", "spike: child took 5.000 us"));
	cJSON_Delete(root);
}

/* info says what the snapshot is: kind, name, number, the spike, its split, the
 * window and the cut, times since the trace start as info shows them. */
static void test_info(void **state)
{
	struct tt_fixture *fx = *state;
	save(fx->in, &spike_info, "work", true);
	struct tt_run r;
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 0);
	assert_has(r.out, "a snapshot: a window of the run around a spike or a trigger");
	assert_has(r.out, "  snapshot: number 3, of a spike: \"work\" on tid 101 (producer)\n"
			  "    spike:  began at 0.000029000 s, took 500.000 us, threshold 100.000 us "
			  "(TT_THRESHOLD_NS)\n"
			  "            on CPU 300.000 us, preempted 100.000 us, blocked 100.000 us, unknown 0 ns\n"
			  "    window: 0.000009000 s .. 0.000699000 s (690.000 us)\n"
			  "    window cut: tid 102 (worker): 1234 events overwritten from 0.000007000 s "
			  "to 0.000049000 s\n");
	assert_has(r.err, "snapshot: the ring overwrote 1234 events of 1 threads in the window");
	/* each thread's states: how many switches, from when, how many lost */
	assert_has(r.out, "  thread states (their switches, from the kernel):\n"
			  "       tid  name                     switches       lost  known from (since the "
			  "trace start)\n"
			  "       101  producer                        5          0  0.000009000 s\n"
			  "  1 thread without states: the file does not say why its thread has no "
			  "states (written before ticktrace said)\n");
	free(r.out);

	struct tt_snapshot_info info = {.kind = TT_SNAPSHOT_TRIGGER, .thread_index = 1, .number = 2,
					.from_tsc = FROM, .to_tsc = TO, .begin_tsc = 65000, .end_tsc = 65000};
	save(fx->in, &info, "why", false);
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 0);
	assert_has(r.out, "  snapshot: number 2, of a trigger: \"why\" on tid 102 (worker), tt_trigger "
			  "called at 0.000064000 s\n    window: 0.000009000 s .. 0.000699000 s");
	assert_null(strstr(r.out, "window cut"));
	free(r.out);
}

/* spikes reports the snapshot's spike without a threshold given, as the
 * snapshot's, with its threshold's source, its split and its stack; given one,
 * the others as well and the snapshot's once. */
static void test_spikes(void **state)
{
	struct tt_fixture *fx = *state;
	save(fx->in, &spike_info, "work", true);
	struct tt_run r;
	TT_RUN(&r, "spikes", fx->in, "-q");
	assert_int_equal(r.status, 0);
	char want[1024];
	snprintf(want, sizeof want, "spike: work took 500.000 us (threshold 100.000 us, TT_THRESHOLD_NS) "
		 "thread producer (tid 101) at 29.000 us\n"
		 "  on CPU ~300.000 us, preempted ~100.000 us, blocked ~100.000 us, unknown 0 ns\n"
		 "  (blocked may hold waits for a CPU after wake-ups, which the switches count as "
		 "blocked: no counters reading bounds them); the kernel's own CPU time may count up "
		 "to 40.000 us more than on CPU (it charges a thread from when it picks it, before the "
		 "switch in its record comes after, at switches in that no two readings measured): "
		 "each part within 140.000 us of its figures\n"
		 "  0) (begun before it was recorded) at least 510.000 us\n"
		 "  1) work 500.000 us\n"
		 "  the spike snapshot 3 was written for (%s)\n"
		 "1 spikes\n", fx->in);
	assert_string_equal(r.out, want);
	assert_null(strstr(r.err, "no thresholds"));
	free(r.out);

	/* JSON: the keys of every spike, and the snapshot's number; a threshold from
	 * the environment said in the runtime's words */
	struct tt_snapshot_info global = spike_info;
	global.threshold_from = TT_THRESHOLD_FROM_GLOBAL;
	save(fx->in, &global, "work", true);
	TT_RUN(&r, "spikes", fx->in, "-q", "--json");
	assert_int_equal(r.status, 0);
	cJSON *spike = cJSON_Parse(r.out);
	assert_non_null(spike);
	const struct {
		const char *key;
		double v;
	} numbers[] = {
		{"tid", 101}, {"start_ns", BEGIN - 1000}, {"dur_ns", END - BEGIN}, {"threshold_ns", 100000},
		{"on_cpu_ns", 300000}, {"preempted_ns", 100000}, {"blocked_ns", 100000}, {"snapshot", 3},
	};
	for (size_t i = 0; i < N(numbers); i++)
		if (cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(spike, numbers[i].key)) != numbers[i].v)
			fail_msg("%s is not %g in %s", numbers[i].key, numbers[i].v, r.out);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spike, "threshold_from")),
			    "TICKTRACE_SPIKE_THRESHOLD");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(spike, "stack")), 1);
	cJSON_Delete(spike);
	free(r.out);

	/* a threshold given: every scope over it, the snapshot's once, as the snapshot's */
	TT_RUN(&r, "spikes", fx->in, "-q", "--threshold", "4us");
	assert_int_equal(r.status, 0);
	const char *snapshot_line = strstr(r.out, "spike: work took 500.000 us (threshold 100.000 us, "
					 "TICKTRACE_SPIKE_THRESHOLD)");
	assert_non_null(snapshot_line);
	assert_null(strstr(snapshot_line + 1, "spike: work took"));
	assert_has(r.out, "spike: child took 5.000 us (threshold 4.000 us, --threshold)");
	assert_has(r.out, "spike: next took 10.000 us (threshold 4.000 us, --threshold)");
	assert_has(r.out, "4 spikes\n");
	free(r.out);
}

/* A snapshot whose spike's scope began before the producer's records (the ring cut
 * its window past the spike's beginning): the analysis cannot find it, and spikes
 * says it as the SNAPSHOT section does. */
static void test_spikes_unbegun(void **state)
{
	struct tt_fixture *fx = *state;
	struct tt_snapshot_info early = spike_info;
	early.begin_tsc = 15000; /* before the producer's first record (20000) */
	save(fx->in, &early, "work", true);
	struct tt_run r;
	TT_RUN(&r, "spikes", fx->in, "-q");
	assert_int_equal(r.status, 0);
	char want[1024];
	snprintf(want, sizeof want, "spike: work took 515.000 us (threshold 100.000 us, TT_THRESHOLD_NS) "
		 "thread producer (tid 101) at 14.000 us\n"
		 "  on CPU 300.000 us, preempted 100.000 us, blocked 100.000 us, unknown 0 ns\n"
		 "  the spike snapshot 3 was written for (%s)\n"
		 "  (its scope is not whole in the snapshot: as the snapshot says it)\n"
		 "1 spikes\n", fx->in);
	assert_string_equal(r.out, want);
	free(r.out);
	TT_RUN(&r, "spikes", fx->in, "-q", "--json");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "{\"name\":\"work\",\"pid\":4242,\"tid\":101,\"thread\":\"producer\","
				   "\"start_ns\":14000,\"dur_ns\":515000,\"threshold_ns\":100000,"
				   "\"explained_ns\":0,\"on_cpu_ns\":300000,\"preempted_ns\":100000,"
				   "\"blocked_ns\":100000,\"unknown_ns\":0,\"threshold_from\":\"TT_THRESHOLD_NS\","
				   "\"snapshot\":3,\"stack\":[]}\n");
	free(r.out);
}

/* Two snapshots of one run are refused together (their windows may overlap: events
 * would count twice), with what to do instead. */
static void test_two_snapshots(void **state)
{
	struct tt_fixture *fx = *state;
	save(fx->in, &spike_info, "work", true);
	save(fx->aux, &spike_info, "work", false);
	struct tt_run r;
	TT_RUN(&r, "convert", fx->in, fx->aux, "-o", fx->out);
	free(r.out);
	assert_int_equal(r.status, 1);
	assert_has(r.err, "its events would count twice (two snapshots of one run, whose windows may "
			  "overlap: one at a time)");
}

/* report: the flat profile of the window, the cut's events said not counted. */
static void test_report(void **state)
{
	struct tt_fixture *fx = *state;
	save(fx->in, &spike_info, "work", true);
	struct tt_run r;
	TT_RUN(&r, "report", fx->in, "-q", "--json");
	assert_int_equal(r.status, 0);
	cJSON *root = cJSON_Parse(r.out);
	assert_non_null(root);
	assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(root, "dropped")), CUT_EVENTS);
	int found = 0;
	const cJSON *row;
	cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(root, "rows"))
	{
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "name"));
		if (strcmp(name, "work") == 0) {
			found++;
			assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(row, "total_ns")),
					 END - BEGIN);
			assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(row, "blocked_ns")),
					 100000);
		}
	}
	assert_int_equal(found, 1);
	cJSON_Delete(root);
	free(r.out);
}

/* The input, which every command that reads it must refuse: exit 1, an error
 * naming the file, `offset` and `want`, no output left behind. */
static void expect_refused_file(struct tt_fixture *fx, uint64_t offset, const char *want)
{
	char at[64];
	snprintf(at, sizeof at, "offset %" PRIu64 ": ", offset);
	const char *const commands[][2] = {{"convert", "-o"}, {"info", NULL}, {"spikes", NULL}};
	for (size_t i = 0; i < N(commands); i++) {
		struct tt_run r;
		if (commands[i][1])
			TT_RUN(&r, commands[i][0], fx->in, commands[i][1], fx->out);
		else
			TT_RUN(&r, commands[i][0], fx->in);
		if (r.status != 1 || !strstr(r.err, fx->in) || !strstr(r.err, at) || !strstr(r.err, want))
			fail_msg("%s: status %d, expected 1, \"%s\" and \"%s\"; stderr:\n%s", commands[i][0],
				 r.status, at, want, r.err);
		if (r.out_len)
			fail_msg("%s printed %zu bytes on a refused file:\n%s", commands[i][0], r.out_len, r.out);
		free(r.out);
	}
	assert_int_equal(tt_dir_entries(fx->dir), 1); /* the input alone */
}

/* The same for `size` bytes of `data`. */
static void expect_refused(struct tt_fixture *fx, const void *data, size_t size, uint64_t offset,
			   const char *want)
{
	assert_int_equal(tt_tw_save(fx->in, data, size), 0);
	expect_refused_file(fx, offset, want);
}


/* The input converted to both formats (then removed: the refusals that follow find
 * the input alone in the directory), and its spike's mark ("work", 500.007 us). */
static cJSON *converted_spike(struct tt_fixture *fx, const cJSON **mark)
{
	cJSON *root = convert_both(fx);
	*mark = instant(root, "spike: work took 500.007 us", 101);
	tt_sh("rm -f '%s/run.pftrace' '%s/perfetto.out' '%s'", fx->dir, fx->dir, fx->out);
	return root;
}

/* A snapshot as this version writes it ends with the rest of its split: the duration
 * the split makes up (the detector's, a few ns off begin_tsc..end_tsc) and the part
 * of it no state covered, which every place that shows the spike says; a split that
 * does not make up that duration is refused. */
static void test_split_unknown(void **state)
{
	struct tt_fixture *fx = *state;
	struct tt_snapshot_info info = spike_info;
	info.blocked_ns = 40000;
	const struct tt_snapshot_split split = {.dur_ns = 500007, .unknown_ns = 60007};
	snapshot_split = &split;
	save(fx->in, &info, "work", true);
	const cJSON *mark;
	cJSON *root = converted_spike(fx, &mark);
	assert_int_equal(arg_number(mark, "dur_ns"), 500007);
	assert_int_equal(arg_number(mark, "blocked_ns"), 40000);
	assert_int_equal(arg_number(mark, "unknown_ns"), 60007);
	cJSON_Delete(root);

	struct tt_run r;
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 0);
	assert_has(r.out, "took 500.007 us, threshold 100.000 us (TT_THRESHOLD_NS)\n"
			  "            on CPU 300.000 us, preempted 100.000 us, blocked 40.000 us, "
			  "unknown 60.007 us\n");
	free(r.out);
	/* (a spike whose scope is not whole in the snapshot: spikes says it as the
	 * snapshot does; a whole one it splits by the thread's states in the file) */
	info.begin_tsc = 15000;
	save(fx->in, &info, "work", true);
	TT_RUN(&r, "spikes", fx->in, "-q");
	assert_int_equal(r.status, 0);
	assert_has(r.out, "spike: work took 500.007 us (threshold 100.000 us, TT_THRESHOLD_NS) "
			  "thread producer (tid 101) at 14.000 us\n"
			  "  on CPU 300.000 us, preempted 100.000 us, blocked 40.000 us, unknown 60.007 us\n");
	free(r.out);
	TT_RUN(&r, "spikes", fx->in, "-q", "--json");
	assert_int_equal(r.status, 0);
	assert_has(r.out, "\"dur_ns\":500007,");
	assert_has(r.out, "\"blocked_ns\":40000,\"unknown_ns\":60007,");
	free(r.out);

	const uint64_t split_at = snapshot_at + sizeof(struct tt_snapshot_info) + 8 +
				  sizeof(struct tt_snapshot_cut);
	const struct tt_snapshot_split short_by_one = {.dur_ns = 500007, .unknown_ns = 60006};
	snapshot_split = &short_by_one;
	info.begin_tsc = spike_info.begin_tsc;
	save(fx->in, &info, "work", true);
	expect_refused_file(fx, split_at + offsetof(struct tt_snapshot_split, unknown_ns),
			    "SNAPSHOT split (on CPU 300000 ns, preempted 100000 ns, blocked 40000 ns, "
			    "unknown 60006 ns) does not make up its spike's 500007 ns");
	info.has_split = 0;
	save(fx->in, &info, "work", true);
	expect_refused_file(fx, split_at + offsetof(struct tt_snapshot_split, unknown_ns),
			    "SNAPSHOT without a split says 60006 ns of it are unknown");
	snapshot_split = NULL;
}

static const char *arg_text(const cJSON *ev, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "args"), key);
	if (!cJSON_IsString(v))
		fail_msg("%s: no text arg %s", cJSON_PrintUnformatted(ev), key);
	return cJSON_GetStringValue(v);
}

/* A spike split from the thread's counters (perf refused): the snapshot says so after
 * its split, with the resolution and the page faults, and every place that shows it
 * says it: the mark's arguments (the keys of spikes --json), info and spikes with "~"
 * and the line under the split. A source that is none of them, one that a snapshot
 * without a split says, a resolution past the spike, and a section cut inside it are
 * refused. */
static void test_split_causes(void **state)
{
	struct tt_fixture *fx = *state;
	struct tt_snapshot_info info = spike_info;
	info.blocked_ns = 40000;
	const struct tt_snapshot_split split = {.dur_ns = 500007, .unknown_ns = 60007};
	struct tt_snapshot_causes causes = {.from = TT_CAUSES_SCHEDSTAT, .flags = TT_CAUSES_FAULTS,
					    .error_ns = 12345, .minor_faults = 3, .major_faults = 1};
	snapshot_split = &split;
	snapshot_causes = &causes;
	save(fx->in, &info, "work", true);
	const cJSON *mark;
	cJSON *root = converted_spike(fx, &mark);
	assert_string_equal(arg_text(mark, "causes_from"), "schedstat");
	assert_int_equal(arg_number(mark, "causes_error_ns"), 12345);
	assert_int_equal(arg_number(mark, "minor_faults"), 3);
	assert_int_equal(arg_number(mark, "major_faults"), 1);
	assert_int_equal(arg_number(mark, "unknown_ns"), 60007);
	cJSON_Delete(root);

	struct tt_run r;
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 0);
	assert_has(r.out, "            on CPU ~300.000 us, preempted ~100.000 us, blocked ~40.000 us, "
			  "unknown 60.007 us\n"
			  "            (from the thread's counters, each within 12.345 us); page faults: "
			  "3 minor, 1 major: it waited on the disk\n");
	free(r.out);
	/* whole in the window, whose states split it otherwise (test_spikes: blocked ~100
	 * us): spikes says the runtime's split, as info does (outside recheck r47 F1) */
	const char *said = "  on CPU ~300.000 us, preempted ~100.000 us, blocked ~40.000 us, unknown 60.007 us\n"
			   "  (from the thread's counters, each within 12.345 us); page faults: 3 minor, 1 major: "
			   "it waited on the disk\n";
	TT_RUN(&r, "spikes", fx->in, "-q");
	assert_int_equal(r.status, 0);
	assert_has(r.out, said);
	assert_has(r.out, "the spike snapshot 3 was written for");
	free(r.out);
	info.begin_tsc = 15000; /* (not whole in the snapshot: spikes says it as the snapshot does) */
	save(fx->in, &info, "work", true);
	TT_RUN(&r, "spikes", fx->in, "-q");
	assert_int_equal(r.status, 0);
	assert_has(r.out, said);
	free(r.out);
	TT_RUN(&r, "spikes", fx->in, "-q", "--json");
	assert_int_equal(r.status, 0);
	assert_has(r.out, "\"causes_from\":\"schedstat\",\"causes_error_ns\":12345,"
			  "\"minor_faults\":3,\"major_faults\":1");
	free(r.out);
	/* (counted inside it alone: at least, in each place it is shown) */
	causes.flags |= TT_CAUSES_FAULTS_AT_LEAST;
	save(fx->in, &info, "work", true);
	root = converted_spike(fx, &mark);
	assert_int_equal(arg_number(mark, "faults_at_least"), 1);
	cJSON_Delete(root);
	TT_RUN(&r, "spikes", fx->in, "-q");
	assert_int_equal(r.status, 0);
	assert_has(r.out, "page faults: at least 3 minor, 1 major (read inside it alone): it waited on the disk\n");
	free(r.out);
	TT_RUN(&r, "spikes", fx->in, "-q", "--json");
	assert_int_equal(r.status, 0);
	assert_has(r.out, "\"minor_faults\":3,\"major_faults\":1,\"faults_at_least\":1");
	free(r.out);
	causes.flags &= ~(uint32_t)TT_CAUSES_FAULTS_AT_LEAST;
	/* (read around it, reaching outside it: at most, in each place; outside recheck r46, F1) */
	causes.flags |= TT_CAUSES_FAULTS_AT_MOST;
	save(fx->in, &info, "work", true);
	root = converted_spike(fx, &mark);
	assert_int_equal(arg_number(mark, "faults_at_most"), 1);
	cJSON_Delete(root);
	TT_RUN(&r, "spikes", fx->in, "-q");
	assert_int_equal(r.status, 0);
	assert_has(r.out, "page faults: at most 3 minor, 1 major (read around it: some may lie outside it): "
			  "it may have waited on the disk\n");
	free(r.out);
	TT_RUN(&r, "spikes", fx->in, "-q", "--json");
	assert_int_equal(r.status, 0);
	assert_has(r.out, "\"minor_faults\":3,\"major_faults\":1,\"faults_at_most\":1,");
	assert_null(strstr(r.out, "faults_read_ns")); /* (not kept in a snapshot) */
	free(r.out);
	causes.flags &= ~(uint32_t)TT_CAUSES_FAULTS_AT_MOST;
	info.begin_tsc = spike_info.begin_tsc;

	const uint64_t causes_at = snapshot_at + sizeof(struct tt_snapshot_info) + 8 +
				   sizeof(struct tt_snapshot_cut) + sizeof(struct tt_snapshot_split);
	causes.from = TT_CAUSES_THREAD_TIMES + 1;
	save(fx->in, &info, "work", true);
	expect_refused_file(fx, causes_at, "SNAPSHOT split's source 4 (1: switches, 2: schedstat, "
			    "3: thread times) for a snapshot with a split");
	causes.from = TT_CAUSES_SCHEDSTAT;
	causes.error_ns = 500008;
	save(fx->in, &info, "work", true);
	expect_refused_file(fx, causes_at + offsetof(struct tt_snapshot_causes, error_ns),
			    "SNAPSHOT split within 500008 ns of a spike of 500007 ns");
	causes.error_ns = 12345;
	info.has_split = 0;
	snapshot_split = &(const struct tt_snapshot_split){.dur_ns = 500007};
	save(fx->in, &info, "work", true);
	expect_refused_file(fx, causes_at, "SNAPSHOT split's source 2 (1: switches, 2: schedstat, "
			    "3: thread times) for a snapshot without a split");
	snapshot_split = NULL;
	snapshot_causes = NULL;
}

/* `spikes` of a snapshot of `info` (as the builder's settings make it) says `want`. */
static void spikes_say(struct tt_fixture *fx, const struct tt_snapshot_info *info, const char *want)
{
	save(fx->in, info, "work", true);
	struct tt_run r;
	TT_RUN(&r, "spikes", fx->in, "-q");
	assert_int_equal(r.status, 0);
	assert_has(r.out, want);
	free(r.out);
}

/* A spike without a split (here its scope not whole in the snapshot, which only the
 * SNAPSHOT section tells of): the snapshot says why as the run's detector knew it
 * (its thread's counters read, but none inside it, and tt-sched's budget reached),
 * and every place that shows the spike says it as `spikes` on the run does, not its
 * thread's flags: spikes (text and JSON), info, the mark (no_split). A section of the
 * version before (no reason) says its thread's flags; a reason that is none, one
 * beside a split, a negative distance, and a section cut inside it are refused. */
static void test_unsplit_said(void **state)
{
	struct tt_fixture *fx = *state;
	static const char why[] = "no counters reading inside it (the nearest 13.000 ms before it, "
				  "58.000 ms after it); tt-sched's CPU budget left scopes of its thread "
				  "unread, this one maybe (info says how many)";
	struct tt_snapshot_info info = spike_info;
	info.has_split = 0;
	info.on_cpu_ns = info.preempted_ns = info.blocked_ns = 0;
	info.begin_tsc = 15000; /* (before the producer's first record) */
	const struct tt_snapshot_split split = {.dur_ns = 500007};
	const struct tt_snapshot_causes causes = {0};
	struct tt_snapshot_unsplit unsplit = {.why = TT_UNSPLIT_NOT_INSIDE, .flags = TT_UNSPLIT_BUDGET,
					      .start_ns = 13000000, .end_ns = 58000000};
	snapshot_split = &split;
	snapshot_causes = &causes;
	snapshot_unsplit = &unsplit;
	char want[512];
	snprintf(want, sizeof want, "thread producer (tid 101) at 14.000 us\n  no split: %s\n", why);
	spikes_say(fx, &info, want);
	struct tt_run r;
	TT_RUN(&r, "spikes", fx->in, "-q", "--json");
	assert_int_equal(r.status, 0);
	cJSON *spike = cJSON_Parse(r.out);
	assert_non_null(spike);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(spike, "no_split")), why);
	assert_null(cJSON_GetObjectItemCaseSensitive(spike, "on_cpu_ns"));
	cJSON_Delete(spike);
	free(r.out);
	TT_RUN(&r, "info", fx->in);
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof want, "threshold 100.000 us (TT_THRESHOLD_NS)\n"
		 "            no split: %s\n", why);
	assert_has(r.out, want);
	free(r.out);
	const cJSON *mark;
	cJSON *root = converted_spike(fx, &mark);
	assert_string_equal(arg_text(mark, "no_split"), why);
	cJSON_Delete(root);

	/* the version before: its thread's flags (the producer's say nothing) */
	snapshot_unsplit = NULL;
	spikes_say(fx, &info, "  no split: the file does not say why its thread has no states (written "
		   "before ticktrace said)\n");

	/* a whole scope, of a thread without states whose counters the window holds none
	 * of: the runtime's reason too, not the thread's (perf refused); the version
	 * before, the thread's */
	snapshot_unsplit = &unsplit;
	producer_refused = true;
	info.begin_tsc = spike_info.begin_tsc;
	snprintf(want, sizeof want, "thread producer (tid 101) at 29.000 us\n  no split: %s\n", why);
	spikes_say(fx, &info, want);
	snapshot_unsplit = NULL;
	spikes_say(fx, &info, "  no split: the kernel refused its thread states (perf_event_open: "
		   "Permission denied)\n");
	producer_refused = false;
	info.begin_tsc = 15000;

	/* read inside it, none near its end: that edge said (TT_UNSPLIT_FAR_END; the far
	 * side's readings not kept); a snapshot of the version before, which did not say
	 * the edge, in its words */
	struct tt_snapshot_unsplit far = {.why = TT_UNSPLIT_TOO_FAR, .flags = TT_UNSPLIT_FAR_END,
					  .start_ns = 8000, .end_ns = 24000000};
	snapshot_unsplit = &far;
	spikes_say(fx, &info, "  no split: no counters reading near its end: the last inside it 24.000 ms "
		   "before its end\n");
	/* the sixth version: the readings beyond its edges and the thread's wait said, as
	 * the run's detector said them */
	struct snapshot_tail tail = {.miss = {.after_ns = 40000000}};
	snapshot_tail = &tail;
	spikes_say(fx, &info, "  no split: no counters reading near its end: the last inside it 24.000 ms "
		   "before its end (the next, 40.000 ms after it)\n");
	far.flags = TT_UNSPLIT_FAR_START;
	far.start_ns = 9000000;
	tail.miss = (struct tt_snapshot_miss){.before_ns = TT_MISS_FAR_NONE, .flags = TT_MISS_BLIND,
					      .waited_ns = 3000000, .over_ns = 10000000};
	spikes_say(fx, &info, "  no split: no counters reading near its start: the first inside it 9.000 ms "
		   "after its start (none before it); its thread waited 3.000 ms for a CPU in the 10.000 ms "
		   "between the readings around its start (a loaded machine: tt-sched, in the same process, "
		   "waits for one too); its thread recorded more than tt-sched's share let it follow, its "
		   "scopes not known from then on: it was read blind, each 2 to 80 ms (info says which "
		   "threads)\n");
	/* damaged: refused at the field */
	const uint64_t miss_at = snapshot_at + sizeof(struct tt_snapshot_info) + 8 + sizeof(struct tt_snapshot_cut) +
				 sizeof(struct tt_snapshot_split) + sizeof(struct tt_snapshot_causes) +
				 sizeof(struct tt_snapshot_unsplit) + sizeof(struct tt_snapshot_unknown);
	tail.miss.over_ns = -1;
	save(fx->in, &info, "work", true);
	expect_refused_file(fx, miss_at + offsetof(struct tt_snapshot_miss, waited_ns), "SNAPSHOT says its "
			    "thread waited 3000000 ns for a CPU in -1 ns");
	/* a wait counted whole as it ends, begun before the first reading: longer than
	 * the time between the two, said so (outside recheck r47 F5) */
	tail.miss.over_ns = 2000000;
	spikes_say(fx, &info, "  no split: no counters reading near its start: the first inside it 9.000 ms "
		   "after its start (none before it); its thread's waits for a CPU that ended in the 2.000 ms "
		   "between the readings around its start came to 3.000 ms (a wait is counted whole as it ends: "
		   "some began before the first; a loaded machine: tt-sched, in the same process, waits for one "
		   "too); its thread recorded more than tt-sched's share let it follow, its scopes not known from "
		   "then on: it was read blind, each 2 to 80 ms (info says which threads)\n");
	tail.miss.waited_ns = 0;
	tail.miss.after_ns = -2;
	save(fx->in, &info, "work", true);
	expect_refused_file(fx, miss_at + offsetof(struct tt_snapshot_miss, before_ns), "SNAPSHOT says the "
			    "readings beyond its edges were -1 ns before and -2 ns after it");
	tail.miss = (struct tt_snapshot_miss){.flags = 1u << 7};
	save(fx->in, &info, "work", true);
	expect_refused_file(fx, miss_at, "SNAPSHOT's readings have flags 0x80 (reserved 0x0), of which 0x3 "
			    "alone are known");
	far.why = TT_UNSPLIT_THREAD;
	far.flags = 0;
	far.start_ns = far.end_ns = 0;
	tail.miss = (struct tt_snapshot_miss){.after_ns = 5};
	save(fx->in, &info, "work", true);
	expect_refused_file(fx, miss_at, "SNAPSHOT says where its counters were read (flags 0x0) but not "
			    "why they bound nothing");
	snapshot_tail = NULL;
	far = (struct tt_snapshot_unsplit){.why = TT_UNSPLIT_TOO_FAR, .start_ns = 8000, .end_ns = 24000000};
	spikes_say(fx, &info, "  no split: its counters were read too far inside it (8.000 us after its "
		   "start, 24.000 ms before its end)\n");

	snapshot_unsplit = &unsplit;
	const uint64_t unsplit_at = snapshot_at + sizeof(struct tt_snapshot_info) + 8 +
				    sizeof(struct tt_snapshot_cut) + sizeof(struct tt_snapshot_split) +
				    sizeof(struct tt_snapshot_causes);
	unsplit.why = TT_UNSPLIT_NEVER_READ + 1;
	save(fx->in, &info, "work", true);
	expect_refused_file(fx, unsplit_at, "SNAPSHOT says its spike has no split for reason 6, which is "
			    "none (0 to 5)");
	unsplit.why = TT_UNSPLIT_NOT_INSIDE;
	unsplit.start_ns = -1;
	save(fx->in, &info, "work", true);
	expect_refused_file(fx, unsplit_at + offsetof(struct tt_snapshot_unsplit, start_ns), "SNAPSHOT "
			    "says its spike's nearest counters readings were -1 ns from its start and "
			    "58000000 ns from its end");
	unsplit.start_ns = 13000000;
	struct tt_snapshot_info with_split = spike_info;
	const struct tt_snapshot_causes switches = {.from = TT_CAUSES_SWITCHES};
	snapshot_causes = &switches;
	snapshot_split = &(const struct tt_snapshot_split){.dur_ns = 500000};
	save(fx->in, &with_split, "work", true);
	expect_refused_file(fx, unsplit_at, "SNAPSHOT of a spike with a split says why it has no split "
			    "(reason 3, flags 0x1)");
	/* a section that ends inside it */
	snapshot_causes = &causes;
	snapshot_split = &split;
	struct tt_tw cut;
	build(&cut, &info, "work", true);
	uint64_t size = unsplit_at + sizeof unsplit - snapshot_at - 6;
	memcpy(cut.data + snapshot_at - 8, &size, sizeof size);
	expect_refused(fx, cut.data, cut.size, snapshot_at, "SNAPSHOT section of 210 bytes, but its name "
		       "(4 bytes, padded to 8), 1 cuts and the rest of its split take 216");
	tt_tw_free(&cut);
	snapshot_split = NULL;
	snapshot_causes = NULL;
	snapshot_unsplit = NULL;
}

/* Each field of the section damaged, one at a time, in the good file: refused at
 * the field's offset, by every command that reads the file. */
static void test_malformed_fields(void **state)
{
	struct tt_fixture *fx = *state;
	struct tt_tw good;
	build(&good, &spike_info, "work", true);
	const struct {
		uint64_t at;
		uint64_t value;
		size_t bytes;
		uint64_t offset; /* where the error is said to be (0: at) */
		const char *want;
	} cases[] = {
		{INFO(kind), 7, 4, 0, "SNAPSHOT of kind 7, neither a spike (1) nor a trigger (2)"},
		{INFO(kind), TT_SNAPSHOT_TRIGGER, 4, INFO(threshold_from), "SNAPSHOT of a trigger says its "
		 "threshold came from 1, which a trigger has not"},
		{INFO(number), 0, 8, 0, "SNAPSHOT number 0"},
		{INFO(threshold_from), 9, 4, 0, "threshold came from 9, which is no source of thresholds"},
		{INFO(threshold_from), TT_THRESHOLD_FROM_NONE, 4, 0, "SNAPSHOT of a spike says its "
		 "threshold came from 0, which is none"},
		{INFO(threshold_ns), 0, 8, 0, "SNAPSHOT of a spike with threshold 0 ns"},
		{INFO(has_split), 2, 4, 0, "SNAPSHOT has_split 2, not 0 or 1"},
		{INFO(preempted_ns), (uint64_t)-5, 8, INFO(on_cpu_ns), "SNAPSHOT split into negative times"},
		{INFO(begin_tsc), FROM - 1, 8, 0, "SNAPSHOT begin_tsc 9999 is before its from_tsc 10000"},
		{INFO(end_tsc), BEGIN - 1, 8, 0, "SNAPSHOT end_tsc 29999 is before its begin_tsc 30000"},
		{INFO(to_tsc), END - 1, 8, 0, "SNAPSHOT to_tsc 529999 is before its end_tsc 530000"},
		{INFO(end_tsc), UINT64_MAX / 2, 8, 0, "SNAPSHOT end_tsc 9223372036854775807 is long after the run"},
		{INFO(thread_index), TT_SNAPSHOT_NO_THREAD, 4, 0, "SNAPSHOT of thread index 4294967295, "
		 "which has no THREAD section"},
		{INFO(thread_index), 9, 4, 0, "SNAPSHOT of thread index 9, which has no THREAD section"},
		{INFO(name_len), 9, 4, snapshot_at, "SNAPSHOT section of 136 bytes, but its name (9 bytes, "
		 "padded to 8), 1 cuts and the rest of its split take 224"},
		{INFO(cuts), 2, 4, snapshot_at, "2 cuts and the rest of its split take 248"},
		{CUT(thread_index), 7, 4, 0, "SNAPSHOT cut 0 of thread index 7, which has no THREAD section"},
		{CUT(thread_index), 0, 4, CUT(events), "SNAPSHOT cut 0 lost 1234 events of thread index 0, "
		 "which counts 0 overwritten"},
		{CUT(events), 0, 8, 0, "SNAPSHOT cut 0 lost no events"},
		{CUT(events), 99, 8, 0, "SNAPSHOT cut 0 lost 99 events of thread index 1, which counts 1234 "
		 "overwritten"},
		{CUT(lost_to_tsc), LOST_FROM - 1, 8, CUT(lost_from_tsc), "SNAPSHOT cut 0 lost TSC 8000 to "
		 "7999: backwards"},
		{CUT(lost_to_tsc), UINT64_MAX / 2, 8, 0, "long outside the run"},
		/* the section's own size */
		{snapshot_at - 8, 40, 8, snapshot_at, "SNAPSHOT section of 40 bytes, too small for its header (96)"},
	};
	for (size_t i = 0; i < N(cases); i++) {
		char *copy = malloc(good.size);
		memcpy(copy, good.data, good.size);
		memcpy(copy + cases[i].at, &cases[i].value, cases[i].bytes);
		expect_refused(fx, copy, good.size, cases[i].offset ? cases[i].offset : cases[i].at,
			       cases[i].want);
		free(copy);
	}
	tt_tw_free(&good);

	/* a trigger that lasts */
	struct tt_snapshot_info trigger = {.kind = TT_SNAPSHOT_TRIGGER, .thread_index = 1, .number = 1,
					   .from_tsc = FROM, .to_tsc = TO, .begin_tsc = 60000, .end_tsc = 60001};
	save(fx->in, &trigger, "why", false);
	expect_refused_file(fx, INFO(end_tsc), "SNAPSHOT of a trigger ends at TSC 60001, not where it "
			    "begins (60000)");
	/* one thread cut twice */
	save_with(fx->in, &spike_info, "work", 2, NULL);
	expect_refused_file(fx, CUT(thread_index) + sizeof(struct tt_snapshot_cut), "SNAPSHOT cuts 0 "
			    "and 1 are of one thread (index 1)");
}

/* A file whose header has `flags` besides the default's, with `snapshots` SNAPSHOT
 * sections after PROCESS (the first before it when `early`). */
static void save_shaped(const char *path, uint32_t flags, int snapshots, bool early)
{
	struct tt_file_header h;
	tt_tw_default_header(&h);
	h.flags |= flags;
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, path), 0);
	tt_tw_header(&w, &h);
	if (early)
		tt_tw_snapshot(&w, &spike_info, "work", NULL, 0);
	tt_tw_process(&w, 4242, "demo");
	for (int i = early; i < snapshots; i++)
		tt_tw_snapshot(&w, &spike_info, "work", NULL, 0);
	tt_tw_sites(&w, tt_demo_sites, tt_demo_nsites);
	struct tt_thread_info t0 = {.index = 0, .tid = 101, .events = N(producer), .flags = TT_THREAD_WRAPPED};
	tt_tw_thread_info(&w, &t0, "producer");
	tt_tw_events(&w, 0, 0, producer, N(producer));
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
}

/* The section where it may not be, or missing where the header says it is. */
static void test_malformed_sections(void **state)
{
	struct tt_fixture *fx = *state;
	const uint64_t first = sizeof(struct tt_file_header); /* the first section */
	const uint64_t process = 48;                          /* PROCESS: demo's, padded */
	const uint64_t second = first + process + sizeof(struct tt_section_header) + 16 +
				TT_SECTION_PADDED(sizeof(struct tt_snapshot_info) + 8);
	const struct {
		uint32_t flags;
		int snapshots;
		bool early;
		uint64_t offset;
		const char *want;
	} cases[] = {
		{TT_FILE_SNAPSHOT, 2, false, second, "a second SNAPSHOT section"},
		{TT_FILE_SNAPSHOT, 1, true, first + 16, "a SNAPSHOT section before the PROCESS section"},
		{0, 1, false, first + process + 16, "a SNAPSHOT section in a file whose header does not say "
		 "it is a snapshot"},
		{TT_FILE_SNAPSHOT, 0, false, offsetof(struct tt_file_header, flags), "the header says the "
		 "file is a snapshot, but it has no SNAPSHOT section"},
	};
	for (size_t i = 0; i < N(cases); i++) {
		save_shaped(fx->in, cases[i].flags, cases[i].snapshots, cases[i].early);
		expect_refused_file(fx, cases[i].offset, cases[i].want);
	}

	/* a live file (which a killed run leaves, and whose chunks name threads the
	 * sections may not) is never a snapshot */
	struct tt_file_header h;
	tt_tw_default_header(&h);
	h.flags |= TT_FILE_RING | TT_FILE_LIVE | TT_FILE_SNAPSHOT;
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, fx->in), 0);
	tt_tw_header(&w, &h);
	tt_tw_process(&w, 4242, "demo");
	tt_tw_snapshot(&w, &spike_info, "work", NULL, 0);
	tt_tw_sites(&w, tt_demo_sites, tt_demo_nsites);
	tt_tw_live_chunk(&w, 0, producer, N(producer));
	assert_int_equal(tt_tw_close(&w), 0);
	expect_refused_file(fx, offsetof(struct tt_file_header, flags), "a snapshot (written whole) that "
			    "says it is a live file");
}

static int setup(void **state)
{
	snapshot_split = NULL;
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
		cmocka_unit_test_setup_teardown(test_convert_spike_off, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_convert_unbegun_function, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_convert_ends_inside, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_convert_trigger, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_convert_mark_in_gap, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_convert_threshold, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_edges, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_convert_cut_whole, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_info, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_spikes, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_spikes_unbegun, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_report, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_two_snapshots, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_split_unknown, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_split_causes, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_unsplit_said, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_malformed_fields, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_malformed_sections, setup, tt_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
