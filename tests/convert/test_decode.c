/* Unit tests of the decoder (tools/decode/): raw files built in memory (tt_tw), one
 * behaviour each, fed to tt_decode with a sink that writes down every event it gets,
 * one line each; the test compares the lines with what the behaviour must give.
 *   nesting, ENDBEGIN, an END with nothing open, a scope begun before a ring's window,
 *   a scope left open, a flow passed on over several hops, a FLOW_IN without its
 *   FLOW_OUT, the merge of threads by time (and by id at the same time), a function no
 *   FUNCS section lists named once by the decoder. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decode/decode.h"
#include "tt_tw.h"

/* Times: tsc 1 tick = 1 ns from the default header's start anchor (TSC 1000). */
#define AT(ns) (1000 + (ns))
#define REC(kind, payload, ns) TT_TW_REC(TT_REC_##kind, (payload), AT(ns))
#define VALUE(v) ((struct tt_record){(v), TT_RECORD_WORD(TT_REC_VALUE, 0)})

enum { SITE_A = 0x1000, SITE_B = 0x2000, SITE_C = 0x3000 };
static const struct tt_tw_site tt_sites[] = {
	{SITE_A, "a", "t.c", "f", 1}, {SITE_B, "b", "t.c", "f", 2}, {SITE_C, "c", "t.c", "f", 3},
};

/* What the sink saw, a line an event. */
struct tt_log {
	struct tt_sink sink;
	char text[8192];
	size_t len;
	struct tt_summary sum;
	uint64_t warnings;
};

TT_PRINTF(2, 3) static void tt_log_line(struct tt_log *l, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(l->text + l->len, sizeof(l->text) - l->len, fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(l->text) - l->len);
	l->len += (size_t)n;
}

static int tt_log_name(const struct tt_event *e, const char **name)
{
	if (e->site) {
		*name = e->site->name.ptr;
		return (int)e->site->name.len;
	}
	*name = e->func_name.ptr ? e->func_name.ptr : "?";
	return e->func_name.ptr ? (int)e->func_name.len : 1;
}

static int tt_log_begin(struct tt_sink *s, const struct tt_event *e)
{
	const char *name;
	int n = tt_log_name(e, &name);
	tt_log_line((struct tt_log *)s, "B %.*s tid %" PRIu32 " depth %" PRIu32 " at %" PRId64 "\n", n,
		    name, e->thread->tid, e->depth, e->ts);
	return 0;
}

static int tt_log_end(struct tt_sink *s, const struct tt_event *e)
{
	const char *name;
	int n = tt_log_name(e, &name);
	tt_log_line((struct tt_log *)s, "E %.*s tid %" PRIu32 " depth %" PRIu32 " %" PRId64 "..%" PRId64
		    "%s%s\n", n, name, e->thread->tid, e->depth, e->ts, e->ts + e->dur,
		    e->flags & TT_EV_UNTERMINATED ? " unterminated" : "",
		    e->flags & TT_EV_UNBEGUN ? " unbegun" : "");
	return 0;
}

static int tt_log_flow(struct tt_sink *s, const struct tt_event *e)
{
	tt_log_line((struct tt_log *)s, "F %s tid %" PRIu32 " id %" PRIu64 " link %" PRIu64 " at %" PRId64 "\n",
		    e->flags & TT_EV_FLOW_OUT ? "out" : "in", e->thread->tid, e->value, e->link, e->ts);
	return 0;
}

static void tt_log_warning(struct tt_sink *s, const char *message)
{
	(void)message;
	((struct tt_log *)s)->warnings++;
}

static int tt_log_finish(struct tt_sink *s, const struct tt_summary *sum)
{
	((struct tt_log *)s)->sum = *sum;
	return 0;
}

static const struct tt_sink_ops tt_log_ops = {
	.slice_begin = tt_log_begin,
	.slice_end = tt_log_end,
	.flow = tt_log_flow,
	.warning = tt_log_warning,
	.finish = tt_log_finish,
};

struct tt_test_thread {
	uint32_t tid;
	uint32_t flags; /* enum tt_thread_flags */
	const struct tt_record *records;
	size_t n;
};

/* A file of the given threads (each with one EVENTS section), decoded into *log. */
static void tt_decode_threads(const struct tt_test_thread *threads, size_t n, struct tt_log *log)
{
	struct tt_tw w;
	assert_int_equal(tt_tw_open_memory(&w), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "test");
	tt_tw_sites(&w, tt_sites, sizeof(tt_sites) / sizeof(tt_sites[0]));
	for (uint32_t i = 0; i < n; i++) {
		struct tt_thread_info ti = {.index = i, .tid = threads[i].tid, .events = threads[i].n,
					    .flags = threads[i].flags};
		tt_tw_thread_info(&w, &ti, "worker");
		tt_tw_events(&w, i, 0, threads[i].records, threads[i].n);
	}
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
	/* 8-byte aligned, as tt_trace_load wants */
	uint64_t *data = malloc(w.size + 8);
	assert_non_null(data);
	memcpy(data, w.data, w.size);
	struct tt_trace t;
	*log = (struct tt_log){.sink.ops = &tt_log_ops};
	assert_int_equal(tt_trace_load(&t, "test.ttr", (const uint8_t *)data, w.size), 0);
	struct tt_sink *sinks[] = {&log->sink};
	assert_int_equal(tt_decode(&t, sinks, 1), 0);
	tt_trace_close(&t);
	free(data);
	tt_tw_free(&w);
}

static void tt_decode_one(const struct tt_record *records, size_t n, uint32_t flags, struct tt_log *log)
{
	const struct tt_test_thread thread = {4243, flags, records, n};
	tt_decode_threads(&thread, 1, log);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_nesting(void **state)
{
	(void)state;
	const struct tt_record r[] = {
		REC(BEGIN, SITE_A, 10), REC(BEGIN, SITE_B, 20), REC(BEGIN, SITE_C, 25),
		REC(END, 0, 26), REC(END, 0, 30), REC(END, 0, 40),
	};
	struct tt_log log;
	tt_decode_one(r, N(r), 0, &log);
	assert_string_equal(log.text, "B a tid 4243 depth 0 at 10\n"
				      "B b tid 4243 depth 1 at 20\n"
				      "B c tid 4243 depth 2 at 25\n"
				      "E c tid 4243 depth 2 25..26\n"
				      "E b tid 4243 depth 1 20..30\n"
				      "E a tid 4243 depth 0 10..40\n");
	assert_int_equal(log.sum.events, 6);
	assert_int_equal(log.sum.unmatched + log.sum.unterminated + log.warnings, 0);
}

/* ENDBEGIN closes the innermost scope and opens the next at the same time. */
static void test_endbegin(void **state)
{
	(void)state;
	const struct tt_record r[] = {
		REC(BEGIN, SITE_A, 10), REC(BEGIN, SITE_B, 20), REC(ENDBEGIN, SITE_C, 30),
		REC(END, 0, 35), REC(END, 0, 40),
	};
	struct tt_log log;
	tt_decode_one(r, N(r), 0, &log);
	assert_string_equal(log.text, "B a tid 4243 depth 0 at 10\n"
				      "B b tid 4243 depth 1 at 20\n"
				      "E b tid 4243 depth 1 20..30\n"
				      "B c tid 4243 depth 1 at 30\n"
				      "E c tid 4243 depth 1 30..35\n"
				      "E a tid 4243 depth 0 10..40\n");
}

/* An END with nothing open is counted, warned about and ignored; what follows decodes. */
static void test_unmatched_end(void **state)
{
	(void)state;
	const struct tt_record r[] = {
		REC(END, 0, 5), REC(BEGIN, SITE_A, 10), REC(END, 0, 20), REC(END, 0, 30),
	};
	struct tt_log log;
	tt_decode_one(r, N(r), 0, &log);
	assert_string_equal(log.text, "B a tid 4243 depth 0 at 10\n"
				      "E a tid 4243 depth 0 10..20\n");
	assert_int_equal(log.sum.unmatched, 2);
	assert_int_equal(log.warnings, 1);
}

/* A ring's thread (wrapped) whose records end scopes they never began: those open at
 * its first record, flagged unbegun; a scope left open closes at its last event. */
static void test_unbegun_and_unterminated(void **state)
{
	(void)state;
	const struct tt_record r[] = {
		REC(BEGIN, SITE_A, 10), REC(END, 0, 20), REC(END, 0, 30), REC(BEGIN, SITE_B, 40),
		REC(INSTANT, SITE_C, 50),
	};
	struct tt_log log;
	tt_decode_one(r, N(r), TT_THREAD_WRAPPED, &log);
	assert_string_equal(log.text, "B (begun before it was recorded) tid 4243 depth 0 at 10\n"
				      "B a tid 4243 depth 1 at 10\n"
				      "E a tid 4243 depth 1 10..20\n"
				      "E (begun before it was recorded) tid 4243 depth 0 10..30 unbegun\n"
				      "B b tid 4243 depth 0 at 40\n"
				      "E b tid 4243 depth 0 40..50 unterminated\n");
	assert_int_equal(log.sum.unterminated, 1);
	assert_int_equal(log.sum.unmatched, 0);
}

/* One id passed on from thread to thread: each hop is an arrow of its own, drawn
 * from the latest FLOW_OUT of that id; FLOW_OUTs come before their FLOW_INs even
 * when a later thread's FLOW_IN is decoded first; a FLOW_IN with no FLOW_OUT before
 * it gets an arrow no FLOW_OUT has. */
static void test_flows_over_hops(void **state)
{
	(void)state;
	const struct tt_record first[] = {REC(FLOW_OUT, 0, 10), VALUE(7)};
	const struct tt_record second[] = {REC(FLOW_IN, 0, 20), VALUE(7), REC(FLOW_OUT, 0, 30), VALUE(7)};
	const struct tt_record third[] = {REC(FLOW_IN, 0, 5), VALUE(9), REC(FLOW_IN, 0, 40), VALUE(7)};
	const struct tt_test_thread threads[] = {
		{101, 0, third, N(third)}, {102, 0, second, N(second)}, {103, 0, first, N(first)},
	};
	struct tt_log log;
	tt_decode_threads(threads, N(threads), &log);
	assert_string_equal(log.text, "F in tid 101 id 9 link 1 at 5\n"
				      "F out tid 103 id 7 link 2 at 10\n"
				      "F in tid 102 id 7 link 2 at 20\n"
				      "F out tid 102 id 7 link 3 at 30\n"
				      "F in tid 101 id 7 link 3 at 40\n");
}

/* Threads merge by time in 100 us windows: within one, each thread runs to the
 * window's end (the earliest first, by id at the same time); the next window
 * begins at the earliest event left. */
static void test_merge_order(void **state)
{
	(void)state;
	const struct tt_record x[] = {
		REC(BEGIN, SITE_A, 10), REC(END, 0, 20), REC(BEGIN, SITE_A, 300000), REC(END, 0, 300010),
	};
	const struct tt_record y[] = {
		REC(BEGIN, SITE_B, 10), REC(END, 0, 90000), REC(BEGIN, SITE_B, 150000), REC(END, 0, 150010),
	};
	const struct tt_test_thread threads[] = {{201, 0, x, N(x)}, {202, 0, y, N(y)}};
	struct tt_log log;
	tt_decode_threads(threads, N(threads), &log);
	assert_string_equal(log.text, "B a tid 201 depth 0 at 10\n"
				      "E a tid 201 depth 0 10..20\n"
				      "B b tid 202 depth 0 at 10\n"
				      "E b tid 202 depth 0 10..90000\n"
				      "B b tid 202 depth 0 at 150000\n"
				      "E b tid 202 depth 0 150000..150010\n"
				      "B a tid 201 depth 0 at 300000\n"
				      "E a tid 201 depth 0 300000..300010\n");
}

/* A function no FUNCS section lists (a file from before there were any) is named by
 * the decoder in its events, "0x..." with no symbols: no sink asks the input. */
static void test_function_named_once(void **state)
{
	(void)state;
	const struct tt_record r[] = {
		REC(FUNC_ENTER, 0x401234, 10), REC(FUNC_ENTER, 0x401300, 15), REC(FUNC_EXIT, 0x401300, 18),
		REC(FUNC_EXIT, 0x401234, 20),
	};
	struct tt_log log;
	tt_decode_one(r, N(r), 0, &log);
	assert_string_equal(log.text, "B 0x401234 tid 4243 depth 0 at 10\n"
				      "B 0x401300 tid 4243 depth 1 at 15\n"
				      "E 0x401300 tid 4243 depth 1 15..18\n"
				      "E 0x401234 tid 4243 depth 0 10..20\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nesting),
		cmocka_unit_test(test_endbegin),
		cmocka_unit_test(test_unmatched_end),
		cmocka_unit_test(test_unbegun_and_unterminated),
		cmocka_unit_test(test_flows_over_hops),
		cmocka_unit_test(test_merge_order),
		cmocka_unit_test(test_function_named_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
