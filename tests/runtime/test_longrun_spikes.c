/* Long runs' live spikes (tt-spikes) in modes stream, stop and ring.
 * Each test starts tt_longrun_prog (path in argv[1]) with the mode in its
 * environment, then reads the raw file it left with the tools' reader and
 * converts it with the ticktrace command ($TICKTRACE); see test_longrun.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt_check.h"
#include "read/read.h"
#include "tt_edges.h"
#include "longrun_support.h"

/* ---- live spikes ---- */

/* Live spike `a` and the tools' `b` are the same spike: same name, threshold and
 * where it came from, stack, and duration (the runtime converts with the rate
 * measured so far, the tools with the run's). */
static void tt_lr_same_spike(const cJSON *a, const cJSON *b)
{
	assert_string_equal(cJSON_GetObjectItem(a, "name")->valuestring,
			    cJSON_GetObjectItem(b, "name")->valuestring);
	/* (The global threshold is TICKTRACE_SPIKE_THRESHOLD's live, --threshold's here.) */
	const char *from = cJSON_GetObjectItem(b, "threshold_from")->valuestring;
	assert_string_equal(cJSON_GetObjectItem(a, "threshold_from")->valuestring,
			    strcmp(from, "--threshold") == 0 ? "TICKTRACE_SPIKE_THRESHOLD" : from);
	assert_true(cJSON_GetObjectItem(a, "threshold_ns")->valuedouble ==
		    cJSON_GetObjectItem(b, "threshold_ns")->valuedouble);
	double dur_a = cJSON_GetObjectItem(a, "dur_ns")->valuedouble;
	double dur_b = cJSON_GetObjectItem(b, "dur_ns")->valuedouble;
	assert_true(dur_a - dur_b < 1e-3 * dur_b && dur_b - dur_a < 1e-3 * dur_b);
	cJSON *stack_a = cJSON_GetObjectItem(a, "stack"), *stack_b = cJSON_GetObjectItem(b, "stack");
	assert_int_equal(cJSON_GetArraySize(stack_a), cJSON_GetArraySize(stack_b));
	for (int i = 0; i < cJSON_GetArraySize(stack_a); i++)
		assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(stack_a, i), "name")->valuestring,
				    cJSON_GetObjectItem(cJSON_GetArrayItem(stack_b, i), "name")->valuestring);
	/* The same split from the same thread states, where the file has them, each
	 * making up its spike's duration. */
	static const char *const split[] = {"on_cpu_ns", "preempted_ns", "blocked_ns", "unknown_ns"};
	const cJSON *spikes[] = {a, b};
	for (size_t k = 0; k < 2; k++) {
		if (!cJSON_GetObjectItem(spikes[k], split[0]))
			continue;
		double sum = 0;
		for (size_t i = 0; i < sizeof split / sizeof split[0]; i++)
			sum += cJSON_GetObjectItem(spikes[k], split[i])->valuedouble;
		if (sum != cJSON_GetObjectItem(spikes[k], "dur_ns")->valuedouble)
			fail_msg("a split (%.0f ns) does not make up its spike: %s", sum,
				 cJSON_PrintUnformatted(spikes[k]));
	}
	/* (preempted and blocked within their errors: waits for a CPU after wake-ups, moved
	 * as each one's counters' readings bound them, the live detector's fewer) */
	const cJSON *err_a = cJSON_GetObjectItem(a, "causes_error_ns"), *err_b = cJSON_GetObjectItem(b, "causes_error_ns");
	double errs = (err_a ? err_a->valuedouble : 0) + (err_b ? err_b->valuedouble : 0);
	for (size_t i = 0; i < sizeof split / sizeof split[0]; i++) {
		const cJSON *in_b = cJSON_GetObjectItem(b, split[i]), *in_a = cJSON_GetObjectItem(a, split[i]);
		if (!in_b)
			continue;
		if (!in_a)
			fail_msg("the live log has no %s, the file has %.0f", split[i], in_b->valuedouble);
		double diff = in_a->valuedouble - in_b->valuedouble;
		assert_true(diff < 1e-3 * dur_b + 1000 + errs && -diff < 1e-3 * dur_b + 1000 + errs);
	}
}

/* Whether a line of the live log is a spike: a note (events a ring overwrote before
 * the detector read them) has no duration (ticktrace(7), LIVE SPIKES). */
static bool tt_lr_is_spike(const cJSON *line)
{
	return cJSON_GetObjectItem(line, "dur_ns") != NULL;
}

/* The live log `spikes` holds the spikes that `ticktrace spikes PATH --json` with
 * `options` (the same thresholds) finds in the file, one for one, in the same order.
 * The program makes one, its 30 ms scope; a busy machine that holds a thread longer
 * than the threshold makes another in both. Returns the longest live one. */
static cJSON *tt_lr_one_live_spike(const char *spikes, const char *path, const char *const *options)
{
	const char *args[16] = {"spikes", path, "--json", "-q"};
	for (size_t i = 0; options[i]; i++)
		args[4 + i] = options[i];
	struct tt_run r;
	tt_run(&r, args);
	assert_int_equal(r.status, 0);
	FILE *f = fopen(spikes, "re");
	assert_non_null(f);
	cJSON *longest = NULL;
	char live[4096];
	const char *tools = r.out;
	int n = 0; /* (spikes; the notes passed over) */
	while (fgets(live, sizeof live, f)) {
		cJSON *a = cJSON_Parse(live);
		assert_non_null(a);
		if (!tt_lr_is_spike(a)) {
			cJSON_Delete(a);
			continue;
		}
		n++;
		const char *newline = memchr(tools, '\n', (size_t)(r.out + r.out_len - tools));
		assert_non_null(newline); /* the tools found it too */
		cJSON *b = cJSON_ParseWithLength(tools, (size_t)(newline - tools));
		assert_non_null(b);
		tt_lr_same_spike(a, b);
		cJSON_Delete(b);
		tools = newline + 1;
		if (!longest || cJSON_GetObjectItem(a, "dur_ns")->valuedouble >
				       cJSON_GetObjectItem(longest, "dur_ns")->valuedouble) {
			cJSON_Delete(longest);
			longest = a;
		} else {
			cJSON_Delete(a);
		}
	}
	fclose(f);
	assert_true(n >= 1);
	assert_true(tools == r.out + r.out_len); /* and no more */
	if (n > 1)
		print_message("%d spikes, the machine held the program up\n", n);
	free(r.out);
	return longest;
}

/* TICKTRACE_SPIKES in mode `mode`: the spike is in the log while the program runs,
 * and the log says what `ticktrace spikes` finds in the file afterwards. */
static void tt_lr_check_live_spikes(const char *mode)
{
	char dir[64], path[128], spikes[160], setting[192], spikes_setting[192], mode_setting[64];
	char line[128];
	tt_lr_tmpfile(dir, sizeof dir, path, sizeof path);
	snprintf(setting, sizeof setting, "TICKTRACE_OUT=%s", path);
	snprintf(spikes, sizeof spikes, "%s/spikes.jsonl", dir);
	snprintf(spikes_setting, sizeof spikes_setting, "TICKTRACE_SPIKES=%s", spikes);
	snprintf(mode_setting, sizeof mode_setting, "TICKTRACE_MODE=%s", mode);
	tt_lr_run(TT_LR_SETTINGS(mode_setting, setting, spikes_setting, "TICKTRACE_SPIKE_THRESHOLD=10ms"),
		  TT_LR_SETTINGS("spiky", spikes), line, sizeof line);
	long ms;
	if (sscanf(line, "spike logged after %ld ms", &ms) != 1)
		fail_msg("mode %s: the spike was not in the log while the program ran (\"%s\")", mode, line);
	print_message("mode %s: the spike was in the log %ld ms after it ended\n", mode, ms);
	/* The drain writes every 0.2 s, tt-spikes reads every 20 ms: a second is their
	 * promise; the bound here is for a machine as loaded as it may be. */
	assert_true(ms < 10000);

	cJSON *a = tt_lr_one_live_spike(spikes, path, TT_LR_SETTINGS("--threshold", "10ms"));
	assert_string_equal(cJSON_GetObjectItem(a, "name")->valuestring, "slow");
	assert_true(cJSON_GetObjectItem(a, "dur_ns")->valuedouble >= 30e6);
	cJSON *stack = cJSON_GetObjectItem(a, "stack");
	assert_int_equal(cJSON_GetArraySize(stack), 1);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(stack, 0), "name")->valuestring, "frame");
	cJSON_Delete(a);
	tt_rmdir(dir);
}

static void test_stream_live_spikes(void **state)
{
	(void)state;
	tt_lr_check_live_spikes("stream");
}

/* Modes stop and ring keep their records in memory: tt-spikes reads them there. */
static void test_stop_live_spikes(void **state)
{
	(void)state;
	tt_lr_check_live_spikes("stop");
}

static void test_ring_live_spikes(void **state)
{
	(void)state;
	tt_lr_check_live_spikes("ring");
}

/* A ring that wraps many times before tt-spikes reads it: the log says how many events
 * it lost that way (never more than were recorded), and goes on: the spike after
 * them is logged. Nor does the ring drop its newest events while tt-spikes holds its
 * chunks (a race: three runs). */
static void test_ring_live_spikes_says_overwritten(void **state)
{
	(void)state;
	enum { EVENTS = 2000000 }; /* each an instant and its argument: 4,000,000 records */
	char dir[64], path[128], spikes[160], setting[192], spikes_setting[192], line[128], events[16];
	char err[160];
	tt_lr_tmpfile(dir, sizeof dir, path, sizeof path);
	snprintf(setting, sizeof setting, "TICKTRACE_OUT=%s", path);
	snprintf(spikes, sizeof spikes, "%s/spikes.jsonl", dir);
	snprintf(spikes_setting, sizeof spikes_setting, "TICKTRACE_SPIKES=%s", spikes);
	snprintf(err, sizeof err, "%s/stderr", dir);
	snprintf(events, sizeof events, "%d", EVENTS);
	for (int run = 0; run < 3; run++) {
		struct tt_lr_child c;
		tt_lr_spawn(&c, TT_LR_SETTINGS("TICKTRACE_MODE=ring", "TICKTRACE_BUFFER=8192", setting,
					       spikes_setting, "TICKTRACE_SPIKE_THRESHOLD=10ms"),
			    TT_LR_SETTINGS("burst", spikes, events), err);
		if (!fgets(line, sizeof line, c.out))
			line[0] = 0;
		int status = tt_lr_wait(&c);
		char *said = tt_read_text(err);
		assert_non_null(said);
		if (strstr(said, "dropped"))
			fail_msg("run %d: the ring dropped events: %s", run, said);
		free(said);
		assert_int_equal(status, 0);
		assert_non_null(strstr(line, "spike logged after"));
		FILE *f = fopen(spikes, "re");
		assert_non_null(f);
		char text[4096];
		double overwritten = 0;
		int lines = 0, logged = 0;
		while (fgets(text, sizeof text, f)) {
			cJSON *o = cJSON_Parse(text);
			assert_non_null(o); /* every line JSON, that one too */
			const cJSON *n = cJSON_GetObjectItem(o, "overwritten_events");
			if (!tt_lr_is_spike(o)) { /* a note: no name either */
				assert_null(cJSON_GetObjectItem(o, "name"));
				overwritten += n ? n->valuedouble : 0;
				lines += n != NULL;
			} else {
				assert_string_equal(cJSON_GetObjectItem(o, "name")->valuestring, "slow");
				logged++;
			}
			cJSON_Delete(o);
		}
		fclose(f);
		print_message("%d lines said %.0f of %d events overwritten before they were read\n",
			      lines, overwritten, EVENTS);
		assert_true(lines >= 1);
		assert_true(overwritten > 0 && overwritten <= EVENTS);
		assert_int_equal(logged, 1);
	}
	tt_rmdir(dir);
}

/* Runs "spiky" in mode stream with the global threshold 10 ms and
 * TICKTRACE_SPIKE_THRESHOLDS=`table`, until `name` is in its live log dir/spikes.jsonl;
 * its trace goes to dir/run.ttr, its stderr to dir/stderr. */
static void tt_lr_run_spiky(const char *dir, const char *table, const char *name)
{
	char path[128], spikes[160], err[160], line[128];
	char setting[192], spikes_setting[192], table_setting[192];
	snprintf(path, sizeof path, "%s/run.ttr", dir);
	snprintf(setting, sizeof setting, "TICKTRACE_OUT=%s", path);
	snprintf(spikes, sizeof spikes, "%s/spikes.jsonl", dir);
	snprintf(spikes_setting, sizeof spikes_setting, "TICKTRACE_SPIKES=%s", spikes);
	snprintf(table_setting, sizeof table_setting, "TICKTRACE_SPIKE_THRESHOLDS=%s", table);
	snprintf(err, sizeof err, "%s/stderr", dir);
	struct tt_lr_child c;
	tt_lr_spawn(&c, TT_LR_SETTINGS("TICKTRACE_MODE=stream", setting, spikes_setting,
				       "TICKTRACE_SPIKE_THRESHOLD=10ms", table_setting),
		    TT_LR_SETTINGS("spiky", spikes, name), err);
	if (!fgets(line, sizeof line, c.out))
		line[0] = 0;
	assert_int_equal(tt_lr_wait(&c), 0);
	assert_non_null(strstr(line, "spike logged after"));
}

/* Writes `text` to dir/thresholds, the path of which it leaves in `table`. */
static void tt_lr_thresholds_file(const char *dir, const char *text, char *table, size_t cap)
{
	snprintf(table, cap, "%s/thresholds", dir);
	FILE *f = fopen(table, "we");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* TICKTRACE_SPIKE_THRESHOLDS: the file of `ticktrace spikes --thresholds`, with the
 * same precedence. "slow" (30 ms) gets 100 ms from it, so only its frame is left, over
 * the file's 20 ms for frames; without the file the global 10 ms would report "slow"
 * and not its frame. The tools find the same in the file with the same thresholds. */
static void test_stream_live_spikes_thresholds_file(void **state)
{
	(void)state;
	char dir[64], path[128], spikes[160], table[128];
	tt_lr_tmpfile(dir, sizeof dir, path, sizeof path);
	snprintf(spikes, sizeof spikes, "%s/spikes.jsonl", dir);
	tt_lr_thresholds_file(dir, "# live and offline alike\nsl?w  100ms  # longer than it takes\n\n"
			      "fr*   20ms\n", table, sizeof table);
	tt_lr_run_spiky(dir, table, "frame");

	cJSON *a = tt_lr_one_live_spike(spikes, path,
					TT_LR_SETTINGS("--threshold", "10ms", "--thresholds", table));
	assert_string_equal(cJSON_GetObjectItem(a, "name")->valuestring, "frame");
	assert_string_equal(cJSON_GetObjectItem(a, "threshold_from")->valuestring, "thresholds file");
	assert_true(cJSON_GetObjectItem(a, "threshold_ns")->valuedouble == 20e6);
	assert_true(cJSON_GetObjectItem(a, "dur_ns")->valuedouble >= 30e6);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(a, "stack")), 0);
	cJSON_Delete(a);
	tt_rmdir(dir);
}

/* With TICKTRACE_SPIKE_THRESHOLDS=`table`, a file that cannot be used: the program
 * runs and logs "slow" by the global threshold alone (a file is used whole or not at
 * all), and says `says` on stderr. */
static void tt_lr_check_bad_thresholds(const char *dir, const char *table, const char *says)
{
	char path[128], spikes[160], err[160];
	tt_lr_run_spiky(dir, table, "slow");
	snprintf(path, sizeof path, "%s/run.ttr", dir);
	snprintf(spikes, sizeof spikes, "%s/spikes.jsonl", dir);
	snprintf(err, sizeof err, "%s/stderr", dir);
	char *said = tt_read_text(err);
	assert_non_null(said);
	if (!strstr(said, says))
		fail_msg("the program did not say \"%s\": %s", says, said);
	free(said);

	cJSON *a = tt_lr_one_live_spike(spikes, path, TT_LR_SETTINGS("--threshold", "10ms"));
	assert_string_equal(cJSON_GetObjectItem(a, "name")->valuestring, "slow");
	assert_string_equal(cJSON_GetObjectItem(a, "threshold_from")->valuestring,
			    "TICKTRACE_SPIKE_THRESHOLD");
	cJSON_Delete(a);
}

/* A thresholds file that is wrong or missing: said, with the file and the line, and
 * the program runs on without it. */
static void test_stream_live_spikes_bad_thresholds_file(void **state)
{
	(void)state;
	char dir[64], table[128], says[512];
	tt_tmpdir(dir, sizeof dir);
	tt_lr_thresholds_file(dir, "fr* 20ms\nslow 100 parsecs\n", table, sizeof table);
	snprintf(says, sizeof says, "ticktrace: TICKTRACE_SPIKE_THRESHOLDS=%s: line 2: \"parsecs\" is "
		 "not a duration", table);
	tt_lr_check_bad_thresholds(dir, table, says);

	snprintf(table, sizeof table, "%s/missing", dir);
	snprintf(says, sizeof says, "ticktrace: TICKTRACE_SPIKE_THRESHOLDS=%s: cannot read: ", table);
	tt_lr_check_bad_thresholds(dir, table, says);
	tt_rmdir(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_live_spikes),
		cmocka_unit_test(test_stop_live_spikes),
		cmocka_unit_test(test_ring_live_spikes),
		cmocka_unit_test(test_ring_live_spikes_says_overwritten),
		cmocka_unit_test(test_stream_live_spikes_thresholds_file),
		cmocka_unit_test(test_stream_live_spikes_bad_thresholds_file),
	};
	return tt_lr_main(argc, argv, "test_longrun_spikes", tests, sizeof tests / sizeof tests[0]);
}
