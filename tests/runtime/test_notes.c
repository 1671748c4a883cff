/* The spike detector's notes as the runtime records them: TT_THRESHOLD_NS and the
 * other one-record notes after the scope they describe, TT_DESCRIBE's text copied
 * whole (or cut at 240 bytes, between characters), and tt_pause/tt_resume leaving out
 * the calling thread's events, and only its, without counting them as dropped. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ticktrace.h"
#include "tt_test_trace.h"

/* Lines of what a thread recorded. */
struct seen {
	char line[64][300];
	size_t n;
};

static void add_line(struct seen *s, const char *fmt, ...)
{
	assert_true(s->n < 64);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->line[s->n++], sizeof s->line[0], fmt, ap);
	va_end(ap);
}

/* The records of one thread as lines "kind name-or-value", DESCRIBE with its text. */
static void list_thread(const struct tt_test_trace *trace, const struct tt_thread *t,
			struct seen *s)
{
	for (size_t sec = 0; sec < t->nsections; sec++) {
		const struct tt_events *ev = &t->sections[sec];
		const struct tt_record *held = tt_section_records(t, sec);
		for (size_t i = 0; i < ev->count; i++) {
			const struct tt_record *r = &held[i];
			unsigned kind = TT_RECORD_KIND(r->word);
			uint64_t payload = TT_RECORD_PAYLOAD(r->word);
			const struct tt_site *site = TT_RECORD_HAS_SITE(kind) ?
							     tt_file_site(&trace->file, payload, r->tsc) : NULL;
			if (site) {
				add_line(s, "%u %.*s", kind, (int)site->name.len, site->name.ptr);
			} else if (kind == TT_REC_DESCRIBE) {
				char text[TT_DESCRIBE_MAX + TT_TEXT_BYTES] = {0};
				size_t records = TT_TEXT_RECORDS(payload);
				assert_true(i + records < ev->count);
				for (size_t k = 0; k < records; k++) {
					const struct tt_record *t = &held[i + 1 + k];
					assert_int_equal(TT_RECORD_KIND(t->word), TT_REC_TEXT);
					uint64_t rest = TT_RECORD_PAYLOAD(t->word);
					memcpy(text + k * TT_TEXT_BYTES, &t->tsc, 8);
					memcpy(text + k * TT_TEXT_BYTES + 8, &rest, 7);
				}
				/* zeros after the text, to the end of its last record */
				for (size_t k = payload; k < records * TT_TEXT_BYTES; k++)
					assert_int_equal(text[k], 0);
				add_line(s, "%u %zu %.*s", kind, (size_t)payload, (int)payload, text);
				i += records;
			} else if (TT_RECORD_HAS_TIME(kind)) {
				add_line(s, "%u %llu", kind, (unsigned long long)payload);
			}
		}
	}
}

static const struct tt_thread *thread_named(const struct tt_test_trace *trace, const char *name)
{
	for (size_t i = 0; i < trace->file.nthreads; i++) {
		const struct tt_thread *t = &trace->file.threads[i];
		if (t->name.len == strlen(name) && memcmp(t->name.ptr, name, t->name.len) == 0)
			return t;
	}
	fail_msg("no thread named %s", name);
	return NULL;
}

static void *notes_thread(void *arg)
{
	(void)arg;
	tt_thread_name("notes");
	TT_BEGIN("outer");
	TT_THRESHOLD_NS(1500);
	TT_CHILDREN_THRESHOLD_NS(UINT64_MAX); /* saturated to 56 bits */
	TT_BEGIN("inner");
	TT_IGNORE();
	TT_IGNORE_CHILDREN();
	TT_DESCRIBE("script %s #%d", "intro", 7);
	TT_DESCRIBE("%s", "");
	/* 130 two-byte characters: cut to 240 bytes, 120 whole characters */
	char long_text[261];
	for (int i = 0; i < 130; i++)
		memcpy(long_text + 2 * i, "\xc3\xa9", 2);
	long_text[260] = 0;
	TT_DESCRIBE("%s", long_text);
	/* one byte more than 240 in all: the cut may not split the last character */
	TT_DESCRIBE("x%s", long_text);
	TT_END();
	TT_END();
	return NULL;
}

static void test_notes_are_recorded_after_their_scope(void **state)
{
	(void)state;
	pthread_t t;
	pthread_create(&t, NULL, notes_thread, NULL);
	pthread_join(t, NULL);
	struct tt_test_trace trace;
	tt_test_dump(&trace);
	struct seen s = {0};
	list_thread(&trace, thread_named(&trace, "notes"), &s);
	char cut[300] = "", cut_odd[300] = "x";
	for (int i = 0; i < 120; i++)
		strcat(cut, "\xc3\xa9");
	for (int i = 0; i < 119; i++)
		strcat(cut_odd, "\xc3\xa9");
	char want_cut[320], want_odd[320];
	snprintf(want_cut, sizeof want_cut, "20 240 %s", cut);
	snprintf(want_odd, sizeof want_odd, "20 239 %s", cut_odd);
	const char *want[] = {
		"1 outer", "16 1500", "17 72057594037927935", "1 inner", "18 0", "19 0",
		"20 15 script intro #7", "20 0 ", want_cut, want_odd, "2 0", "2 0",
	};
	assert_int_equal(s.n, sizeof want / sizeof want[0]);
	for (size_t i = 0; i < s.n; i++)
		assert_string_equal(s.line[i], want[i]);
	assert_int_equal(trace.file.dropped, 0);
	tt_test_close(&trace);
}

static pthread_barrier_t both_paused_or_not;

static void *other_thread(void *arg)
{
	(void)arg;
	tt_thread_name("other");
	pthread_barrier_wait(&both_paused_or_not); /* the main thread has paused */
	TT_INSTANT("other while main paused");
	pthread_barrier_wait(&both_paused_or_not);
	return NULL;
}

static void test_pause_leaves_out_only_the_calling_thread(void **state)
{
	(void)state;
	tt_thread_name("pausing");
	pthread_barrier_init(&both_paused_or_not, NULL, 2);
	pthread_t t;
	pthread_create(&t, NULL, other_thread, NULL);
	TT_INSTANT("before");
	tt_pause();
	tt_pause(); /* not nested: one resume undoes both */
	pthread_barrier_wait(&both_paused_or_not);
	for (int i = 0; i < 1000; i++)
		TT_INSTANT_ARG("while paused", i);
	TT_DESCRIBE("while paused %d", 1);
	pthread_barrier_wait(&both_paused_or_not);
	tt_resume();
	TT_INSTANT("after");
	pthread_join(t, NULL);

	struct tt_test_trace trace;
	tt_test_dump(&trace);
	struct seen s = {0};
	list_thread(&trace, thread_named(&trace, "pausing"), &s);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.line[0], "4 before");
	assert_string_equal(s.line[1], "4 after");
	struct seen o = {0};
	list_thread(&trace, thread_named(&trace, "other"), &o);
	assert_int_equal(o.n, 1);
	assert_string_equal(o.line[0], "4 other while main paused");
	assert_int_equal(trace.file.dropped, 0);
	tt_test_close(&trace);
}

/* A name longer than the slot's 63 bytes is cut where a character begins: 61 bytes
 * and 日 (bytes 62 to 64) keep the 61 (the cut kept 日's first two bytes). */
static void *long_named_thread(void *arg)
{
	tt_thread_name(arg);
	TT_INSTANT("named");
	return NULL;
}

static void test_thread_name_cut_where_a_character_begins(void **state)
{
	(void)state;
	char name[80], kept[62];
	memset(name, 'x', 61);
	strcpy(name + 61, "\xe6\x97\xa5\xe6\x9c\xac");
	memcpy(kept, name, 61);
	kept[61] = 0;
	pthread_t t;
	pthread_create(&t, NULL, long_named_thread, name);
	pthread_join(t, NULL);
	struct tt_test_trace trace;
	tt_test_dump(&trace);
	thread_named(&trace, kept);
	tt_test_close(&trace);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_name_cut_where_a_character_begins),
		cmocka_unit_test(test_notes_are_recorded_after_their_scope),
		cmocka_unit_test(test_pause_leaves_out_only_the_calling_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
