/* The converter's commands and options end to end on synthetic raw files: warnings,
 * libraries loaded where another was, processes merged, the output file rules
 * (--force, stdout, planted files), filters and --split (the thread states they cut), info,
 * progress and usage. */
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

/* Flows between processes: a FLOW_IN ends the latest FLOW_OUT of its id in its own
 * process, and where its process has none waiting, the latest of another's (a message
 * that carried its id): one arrow across the two, where each end had an arrow of its
 * own before. Process 6363 ends its own 1 though 5353 sent a 1 later, and 5353's 7. */
static void test_flows_between_processes(void **state)
{
	struct tt_fixture *fx = *state;
	static const struct tt_record sender[] = {
		R(TT_REC_FLOW_OUT, 0, 12000), R(TT_REC_VALUE, 0, 1),
		R(TT_REC_FLOW_OUT, 0, 13000), R(TT_REC_VALUE, 0, 7),
		R(TT_REC_FLOW_OUT, 0, 15000), R(TT_REC_VALUE, 0, 1),
	};
	static const struct tt_record receiver[] = {
		R(TT_REC_FLOW_OUT, 0, 14000), R(TT_REC_VALUE, 0, 1),
		R(TT_REC_FLOW_IN, 0, 16000), R(TT_REC_VALUE, 0, 1),
		R(TT_REC_FLOW_IN, 0, 17000), R(TT_REC_VALUE, 0, 7),
	};
	char path[2][160];
	for (int k = 0; k < 2; k++) {
		snprintf(path[k], sizeof(path[k]), "%s/p%d.ttr", fx->dir, k);
		struct tt_file_header h;
		tt_tw_default_header(&h);
		h.pid = k ? 6363 : 5353;
		h.tsc_hz = 2000000000;
		h.start = (struct tt_anchor){.tsc = 10000, .monotonic_ns = 5000003000};
		h.end = (struct tt_anchor){.tsc = 10000 + 2000000000, .monotonic_ns = 6000003000};
		struct tt_tw w;
		assert_int_equal(tt_tw_open_file(&w, path[k]), 0);
		tt_tw_header(&w, &h);
		tt_tw_process(&w, k ? 6363 : 5353, k ? "receiver" : "sender");
		tt_tw_sites(&w, tt_demo_sites, tt_demo_nsites);
		tt_tw_thread(&w, 0, k ? 6364 : 5354, "main", 6, 0);
		tt_tw_events(&w, 0, 0, k ? receiver : sender, 6);
		tt_tw_end(&w);
		assert_int_equal(tt_tw_close(&w), 0);
	}
	struct tt_run r;
	TT_RUN(&r, "convert", path[0], path[1], "-o", fx->out);
	if (r.status != 0)
		fail_msg("convert: status %d: %s", r.status, r.err);
	free(r.out);
	cJSON *root = tt_json_load(fx->out);
	/* the arrows' ends in time order: 4 starts, 2 ends */
	const char *start_id[4] = {0}, *end_id[2] = {0};
	int start_pid[4] = {0}, starts = 0, ends = 0;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, field(root, "traceEvents"))
	{
		const char *ph = field(ev, "ph")->valuestring;
		if (!strcmp(ph, "s") && starts < 4) {
			start_pid[starts] = (int)field(ev, "pid")->valuedouble;
			start_id[starts++] = field(ev, "id")->valuestring;
		} else if (!strcmp(ph, "f") && ends < 2) {
			end_id[ends++] = field(ev, "id")->valuestring;
		}
	}
	assert_int_equal(starts, 4);
	assert_int_equal(ends, 2);
	assert_int_equal(start_pid[2], 6363);
	assert_string_equal(end_id[0], start_id[2]); /* its own 1 */
	assert_int_equal(start_pid[1], 5353);
	assert_string_equal(end_id[1], start_id[1]); /* the sender's 7 */
	cJSON_Delete(root);
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
	rec[0] = R(TT_REC_DROPPED, OPEN, 5000); /* (a scope begun in each lost event) */
	rec[1] = R(TT_REC_VALUE, TT_GAP_DEPTHS(0, OPEN), 6000);
	for (size_t i = 0; i < PAIRS; i++) {
		rec[2 + 2 * i] = R(TT_REC_BEGIN, S_WORK, 7000 + 2 * i);
		rec[3 + 2 * i] = R(TT_REC_END, 0, 7001 + 2 * i);
	}
	struct tt_tw w;
	open_demo(&w, fx->in, NULL);
	tt_tw_thread(&w, 0, 101, "deep", 2 + 2 * PAIRS, OPEN);
	tt_tw_events(&w, 0, 0, rec, 2 + 2 * PAIRS);
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
	free(rec);
	struct tt_run r;
	/* every slice is shorter than 10 ms: the unbegun ones end at the last event */
	TT_RUN(&r, "convert", fx->in, "-o", fx->out, "--from", "1us", "--min-dur", "10ms");
	assert_int_equal(r.status, 0);
	assert_err_has(&r, "262142 scopes whose beginning was not recorded");
	assert_err_has(&r, "1000000 events"); /* (the run of lost ones is among the dropped) */
	cJSON *root = tt_json_load(fx->out);
	char *p = tt_json_listing(root, 101);
	assert_string_equal(p, "");
	free(p);
	cJSON_Delete(root);
	free(r.out);
}

/* The ns a JSON trace's thread states named `name` last in all (cat "sched"). */
static int64_t states_ns(const char *path, const char *name)
{
	cJSON *root = tt_json_load(path);
	int64_t ns = 0;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, field(root, "traceEvents"))
	{
		const cJSON *cat = cJSON_GetObjectItemCaseSensitive(ev, "cat");
		if (cJSON_IsString(cat) && strcmp(cat->valuestring, "sched") == 0 &&
		    strcmp(field(ev, "name")->valuestring, name) == 0)
			ns += tt_json_ns(ev, "dur");
	}
	cJSON_Delete(root);
	return ns;
}

/* A thread whose last state, a run, its exit ends (2 us to 9 us), crossed by every
 * shard's edge of a --split and by --to's: each shard holds its piece of the run, and
 * the shards add up to the whole run's 7 us, as split_shards.py checks of a recorded
 * run; --to's window holds the run up to its end. The run was shown only in the shard
 * that holds the exit (from that shard's start: CI's ASan run lost 16.75 us of it),
 * and not at all in a window that ends before the exit. */
static void test_split_states_up_to_the_exit(void **state)
{
	struct tt_fixture *fx = *state;
#define NS(x) (5000000000 + (x))
	static const struct tt_sched_state states[] = {
		{NS(1000), 0, TT_SCHED_BLOCKED}, {NS(2000), 0, TT_SCHED_RUNNING},
	};
	static const struct tt_record rec[] = {
		R(TT_REC_BEGIN, S_WORK, 4000), R(TT_REC_END, 0, 4500),
		R(TT_REC_BEGIN, S_WORK, 5000), R(TT_REC_END, 0, 5500),
		R(TT_REC_BEGIN, S_WORK, 6000), R(TT_REC_END, 0, 6500),
		R(TT_REC_BEGIN, S_WORK, 7000), R(TT_REC_END, 0, 7500),
	};
	struct tt_tw w;
	open_demo(&w, fx->in, NULL);
	struct tt_thread_info ti = {.index = 0, .tid = 101, .events = N(rec),
				    .flags = TT_THREAD_SCHED | TT_THREAD_EXITED};
	tt_tw_thread_info(&w, &ti, "worker");
	tt_tw_events(&w, 0, 0, rec, N(rec));
	tt_tw_sched_exited(&w, 0, 0, NS(500), states, N(states), NS(9000));
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
#undef NS
	struct tt_run r;
	TT_RUN(&r, "convert", "-q", fx->in, "-o", fx->out);
	assert_int_equal(r.status, 0);
	free(r.out);
	assert_int_equal(states_ns(fx->out, "Running"), 7500);
	assert_int_equal(states_ns(fx->out, "Blocked"), 1000);

	TT_RUN(&r, "convert", "-q", fx->in, "--split", "1", "-o", fx->out, "--force");
	assert_int_equal(r.status, 0);
	free(r.out);
	int64_t running = 0, blocked = 0;
	unsigned shards = 0;
	for (;; shards++) {
		char shard[160];
		snprintf(shard, sizeof(shard), "%s/run.%04u.json", fx->dir, shards + 1);
		if (access(shard, F_OK) != 0)
			break;
		running += states_ns(shard, "Running");
		blocked += states_ns(shard, "Blocked");
	}
	if (shards < 3 || running != 7500 || blocked != 1000)
		fail_msg("%u shards: Running %" PRId64 " ns, Blocked %" PRId64 " ns in all, not 7500 and 1000",
			 shards, running, blocked);

	TT_RUN(&r, "convert", "-q", fx->in, "--to", "5us", "-o", fx->out, "--force");
	assert_int_equal(r.status, 0);
	free(r.out);
	/* (the window ends after its last ns: at 5.001 us) */
	assert_int_equal(states_ns(fx->out, "Running"), 500 + 3001);
	assert_int_equal(states_ns(fx->out, "Blocked"), 1000);
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
		cmocka_unit_test_setup_teardown(test_merge_processes, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_flows_between_processes, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_library_loaded_where_another_was, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_library_named_by_time, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_warnings_escape_names, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_force_and_stdout, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_output_planted, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_filters, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_filter_deep_nesting, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_filter_keeps_nothing, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_split_states_up_to_the_exit, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_info, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_progress, setup, tt_fixture_teardown),
		cmocka_unit_test(test_usage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
