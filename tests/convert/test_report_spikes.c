/* `ticktrace spikes` on synthetic raw files with a clock of one tick per nanosecond,
 * so that every time is exact:
 *  - planted slow calls at known depths: every one is found with its stack, nothing
 *    else, with thresholds from each source combined as documented;
 *  - a spike's split: switches lost are unknown, a thread without states has none;
 *  - convert's spike marks; malformed notes and thresholds files are errors that name
 *    the file and the place. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/analysis.h"
#include "tt_check.h"
#include "tt_tw.h"
#include "report_support.h"

#define MS INT64_C(1000000)

static void note(struct recs *b, unsigned kind, uint64_t v, int64_t t) { rec(b, kind, v, t); }

static void describe(struct recs *b, const char *text, int64_t t)
{
	size_t len = strlen(text);
	rec(b, TT_REC_DESCRIBE, len, t);
	for (size_t at = 0; at < len; at += TT_TEXT_BYTES) {
		char bytes[16] = {0};
		memcpy(bytes, text + at, len - at < TT_TEXT_BYTES ? len - at : TT_TEXT_BYTES);
		struct tt_record r;
		uint64_t rest = 0;
		memcpy(&r.tsc, bytes, 8);
		memcpy(&rest, bytes + 8, 7);
		r.word = TT_RECORD_WORD(TT_REC_TEXT, rest);
		b->r[b->n++] = r;
	}
}

/* ---- spikes ---- */

static const char thresholds_file[] =
	"# frame budget, and the parts of it\n"
	"GameTick 16ms\n"
	"ScriptStep   5ms   # inline comment\n"
	"CreateMeshes 1ms\n"
	"render 6ms\n"
	"script_* 1ms\n"
	"\n";

/* Planted: what must be found, outermost first in `stack` ("|"-separated). */
struct planted {
	const char *name;
	int64_t tid, start, dur, threshold;
	const char *from;
	int64_t explained;
	const char *stack;
	const char *description;
};

static void game_workload(const char *path)
{
	t1.n = t2.n = 0;
	begin(&t1, S_MAIN, 0);
	/* frame 0: nothing over */
	begin(&t1, S_TICK, 1 * MS);
	begin(&t1, S_SCRIPT, 2 * MS);
	end(&t1, 4 * MS);
	begin(&t1, S_RENDER, 5 * MS);
	end(&t1, 9 * MS);
	end(&t1, 11 * MS);
	/* frame 1: CreateMeshes 13 ms at depth 3; ScriptStep 19 ms, 6 of them its own */
	begin(&t1, S_TICK, 20 * MS);
	begin(&t1, S_SCRIPT, 21 * MS);
	begin(&t1, S_MESH, 22 * MS);
	describe(&t1, "mesh rock.obj, 12000 triangles", 22 * MS);
	end(&t1, 35 * MS);
	end(&t1, 40 * MS);
	end(&t1, 50 * MS); /* GameTick 30 ms, 11 unexplained: not over 16 */
	/* frame 2: render 9 ms */
	begin(&t1, S_TICK, 60 * MS);
	begin(&t1, S_RENDER, 61 * MS);
	end(&t1, 70 * MS);
	end(&t1, 75 * MS);
	/* frame 3: GameTick 20 ms of its own */
	begin(&t1, S_TICK, 80 * MS);
	begin(&t1, S_SCRIPT, 81 * MS);
	end(&t1, 83 * MS);
	end(&t1, 100 * MS);
	/* frame 4: TT_THRESHOLD_NS 5 ms beats the file's 16; ScriptStep 8 ms ignored */
	begin(&t1, S_TICK, 110 * MS);
	note(&t1, TT_REC_THRESHOLD, 5 * MS, 110 * MS);
	begin(&t1, S_SCRIPT, 111 * MS);
	note(&t1, TT_REC_IGNORE, 0, 111 * MS);
	end(&t1, 119 * MS);
	end(&t1, 120 * MS);
	/* load_level: children 20 ms; script_ai's file line (1 ms) beats it */
	begin(&t1, S_LOAD, 130 * MS);
	note(&t1, TT_REC_CHILDREN_THRESHOLD, 20 * MS, 130 * MS);
	begin(&t1, S_PHYSICS, 131 * MS);
	begin(&t1, S_LEAF, 132 * MS); /* 13 ms, under the inherited 20 */
	end(&t1, 145 * MS);
	end(&t1, 146 * MS);
	begin(&t1, S_SCRIPT_AI, 147 * MS);
	end(&t1, 149 * MS);
	begin(&t1, S_PHYSICS, 150 * MS);
	end(&t1, 171 * MS); /* 21 ms: over the inherited 20 */
	end(&t1, 172 * MS);
	/* idle: nothing inside it spikes, at any depth */
	begin(&t1, S_IDLE, 175 * MS);
	note(&t1, TT_REC_IGNORE_CHILDREN, 0, 175 * MS);
	begin(&t1, S_SCRIPT, 176 * MS);
	begin(&t1, S_MESH, 177 * MS);
	end(&t1, 180 * MS);
	end(&t1, 186 * MS);
	end(&t1, 195 * MS);
	end(&t1, 200 * MS);
	/* a worker: a function with TT_THRESHOLD_NS, inside a scope with none */
	begin(&t2, S_LEAF, 0);
	rec(&t2, TT_REC_FUNC_ENTER, F_WORK, 1 * MS);
	note(&t2, TT_REC_THRESHOLD, 2 * MS, 1 * MS);
	rec(&t2, TT_REC_FUNC_EXIT, F_WORK, 4 * MS);
	rec(&t2, TT_REC_FUNC_ENTER, F_WORK, 5 * MS);
	note(&t2, TT_REC_THRESHOLD, 2 * MS, 5 * MS);
	rec(&t2, TT_REC_FUNC_EXIT, F_WORK, 6 * MS);
	end(&t2, 7 * MS);
	const struct thread_recs threads[] = {{101, "MainThread", &t1}, {102, "worker", &t2}};
	write_file(path, threads, N(threads));
}

static const struct planted game_spikes[] = {
	{"0x401000", 102, 1 * MS, 3 * MS, 2 * MS, "TT_THRESHOLD_NS", 0, "leaf \"q\",x", NULL},
	{"CreateMeshes", 101, 22 * MS, 13 * MS, 1 * MS, "thresholds file", 0, "main|GameTick|ScriptStep",
	 "mesh rock.obj, 12000 triangles"},
	{"ScriptStep", 101, 21 * MS, 19 * MS, 5 * MS, "thresholds file", 13 * MS, "main|GameTick", NULL},
	{"render", 101, 61 * MS, 9 * MS, 6 * MS, "thresholds file", 0, "main|GameTick", NULL},
	{"GameTick", 101, 80 * MS, 20 * MS, 16 * MS, "thresholds file", 0, "main", NULL},
	{"GameTick", 101, 110 * MS, 10 * MS, 5 * MS, "TT_THRESHOLD_NS", 0, "main", NULL},
	{"script_ai", 101, 147 * MS, 2 * MS, 1 * MS, "thresholds file", 0, "main|load_level", NULL},
	{"physics", 101, 150 * MS, 21 * MS, 20 * MS, "TT_CHILDREN_THRESHOLD_NS", 0, "main|load_level",
	 NULL},
};

/* Runs spikes --json and compares every line with `want`, in any order. */
static void check_spikes(const char *const *args, const struct planted *want, size_t n)
{
	struct tt_run r;
	run_ok(&r, args);
	bool found[32] = {false};
	size_t lines = 0;
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n"), lines++) {
		cJSON *s = cJSON_Parse(line);
		if (!s)
			fail_msg("not JSON: %s", line);
		size_t i = 0;
		while (i < n && !(strcmp(str(s, "name"), want[i].name) == 0 && num(s, "tid") == want[i].tid &&
				  num(s, "start_ns") == want[i].start))
			i++;
		if (i == n)
			fail_msg("a spike that was not planted: %s", line);
		assert_false(found[i]);
		found[i] = true;
		const struct planted *p = &want[i];
		assert_int_equal(num(s, "dur_ns"), p->dur);
		assert_int_equal(num(s, "threshold_ns"), p->threshold);
		assert_string_equal(str(s, "threshold_from"), p->from);
		assert_int_equal(num(s, "explained_ns"), p->explained);
		char stack[256] = "";
		const cJSON *frame;
		cJSON_ArrayForEach(frame, cJSON_GetObjectItemCaseSensitive(s, "stack"))
		{
			if (*stack)
				strcat(stack, "|");
			strcat(stack, str(frame, "name"));
			/* how long it had been open when the spike ended */
			assert_int_equal(num(frame, "open_ns"), p->start + p->dur - num(frame, "start_ns"));
		}
		assert_string_equal(stack, p->stack);
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(s, "description");
		if (p->description)
			assert_string_equal(d->valuestring, p->description);
		else
			assert_null(d);
		cJSON_Delete(s);
	}
	assert_int_equal(lines, n);
	free(r.out);
}

static void test_planted_spikes_found_with_their_stacks(void **state)
{
	struct tt_fixture *fx = *state;
	game_workload(fx->in);
	assert_int_equal(tt_tw_save(fx->aux, thresholds_file, strlen(thresholds_file)), 0);
	check_spikes((const char *const[]){"spikes", fx->in, "--thresholds", fx->aux, "--json", NULL},
		     game_spikes, N(game_spikes));
	/* with a global threshold as well: main, 200 ms, of which 19 + 9 + 20 + 10 + 2 + 21
	 * are spikes inside it, has 119 ms of its own: a spike over 100 ms, not over 120 */
	struct planted more[N(game_spikes) + 1];
	memcpy(more, game_spikes, sizeof(game_spikes));
	more[N(game_spikes)] = (struct planted){"main", 101, 0, 200 * MS, 100 * MS, "--threshold",
						81 * MS, "", NULL};
	check_spikes((const char *const[]){"spikes", fx->in, "--thresholds", fx->aux, "--threshold",
					   "100ms", "--json", NULL},
		     more, N(more));
	check_spikes((const char *const[]){"spikes", fx->in, "--thresholds", fx->aux, "--threshold",
					   "120ms", "--json", NULL},
		     game_spikes, N(game_spikes));
	/* code thresholds alone: the worker's function, frame 4, and the physics under
	 * load_level's TT_CHILDREN_THRESHOLD_NS */
	const struct planted code_only[] = {game_spikes[0], game_spikes[5], game_spikes[7]};
	check_spikes((const char *const[]){"spikes", fx->in, "--json", NULL}, code_only, N(code_only));

	/* the text form, as the issue shows it */
	struct tt_run r;
	RUN_OK(&r, "spikes", fx->in, "--thresholds", fx->aux);
	const char *text[] = {
		("spike: CreateMeshes took 13.000 ms (threshold 1.000 ms, thresholds file) thread "
		 "MainThread (tid 101) at 22.000 ms\n"
		 "  no split: the file does not say why its thread has no states (written before "
		 "ticktrace said)\n"
		 "  0) main 35.000 ms\n  1) GameTick 15.000 ms\n  2) ScriptStep 14.000 ms\n"
		 "  3) CreateMeshes 13.000 ms\n"
		 "  description: mesh rock.obj, 12000 triangles\n"),
		("spike: ScriptStep took 19.000 ms (threshold 5.000 ms, thresholds file) thread "
		 "MainThread (tid 101) at 21.000 ms; 13.000 ms of it in spikes above\n"),
		"\n8 spikes\n",
	};
	assert_out_has(&r, text, N(text));
	free(r.out);
	/* --depth: the innermost scopes only */
	RUN_OK(&r, "spikes", fx->in, "--thresholds", fx->aux, "--depth", "2");
	const char *shallow[] = {
		("MainThread (tid 101) at 22.000 ms\n"
		 "  no split: the file does not say why its thread has no states (written before "
		 "ticktrace said)\n"
		 "  ... 2 scopes around them\n"
		 "  2) ScriptStep 14.000 ms\n"
		 "  3) CreateMeshes 13.000 ms\n"
		 "  description: mesh rock.obj, 12000 triangles\n"),
	};
	assert_out_has(&r, shallow, N(shallow));
	free(r.out);

	/* no thresholds anywhere: said so */
	known_workload(fx->in);
	RUN_OK(&r, "spikes", fx->in);
	assert_string_equal(r.out, "0 spikes\n");
	assert_err_has(&r, "no thresholds: none in the trace");
	free(r.out);
}

/* An empty description (TT_DESCRIBE("%s", "")) is none, and replaces the one before,
 * whether or not any text came before it on the thread. */
static void test_empty_description(void **state)
{
	struct tt_fixture *fx = *state;
	const struct thread_recs one[] = {{101, "MainThread", &t1}};
	t1.n = 0;
	begin(&t1, S_MAIN, 0);
	describe(&t1, "", 1);
	note(&t1, TT_REC_THRESHOLD, 5 * US, 2);
	end(&t1, 10 * US);
	begin(&t1, S_TICK, 20 * US);
	describe(&t1, "level 1", 21 * US);
	describe(&t1, "", 22 * US);
	note(&t1, TT_REC_THRESHOLD, 5 * US, 23 * US);
	end(&t1, 30 * US);
	write_file(fx->in, one, 1);
	const struct planted want[] = {
		{"main", 101, 0, 10 * US, 5 * US, "TT_THRESHOLD_NS", 0, "", NULL},
		{"GameTick", 101, 20 * US, 10 * US, 5 * US, "TT_THRESHOLD_NS", 0, "", NULL},
	};
	check_spikes((const char *const[]){"spikes", fx->in, "--json", NULL}, want, N(want));
}

/* Strict UTF-8 (RFC 3629): no overlong forms, surrogates or code points past U+10FFFF. */
static bool valid_utf8(const char *text, size_t n)
{
	const unsigned char *s = (const unsigned char *)text;
	for (size_t i = 0; i < n;) {
		unsigned c = s[i], len = c < 0x80 ? 1 : c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 :
					 c >= 0xf0 && c < 0xf5 ? 4 : 0;
		if (!len || i + len > n)
			return false;
		for (unsigned k = 1; k < len; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
		if ((c == 0xe0 && s[i + 1] < 0xa0) || (c == 0xed && s[i + 1] >= 0xa0) ||
		    (c == 0xf0 && s[i + 1] < 0x90) || (c == 0xf4 && s[i + 1] >= 0x90))
			return false;
		i += len;
	}
	return true;
}

/* Names, thread names and descriptions with bytes that are not UTF-8 come out of
 * --json as JSON text, those bytes as U+FFFD; an empty name is "(no name)", as in
 * both trace formats. */
static void test_json_output_is_utf8(void **state)
{
	struct tt_fixture *fx = *state;
	const struct thread_recs one[] = {{101, "T\xfe", &t1}};
	t1.n = 0;
	begin(&t1, S_BYTES, 0);
	describe(&t1, "d\xff", 1);
	note(&t1, TT_REC_THRESHOLD, 5 * US, 2);
	end(&t1, 10 * US);
	begin(&t1, S_NONAME, 20 * US);
	end(&t1, 30 * US);
	write_file(fx->in, one, 1);
	static const char *const commands[][6] = {
		{"report", "--json", "--by-thread", NULL},
		{"spikes", "--json", NULL},
	};
	for (size_t i = 0; i < N(commands); i++) {
		const char *args[8] = {commands[i][0], fx->in};
		for (size_t k = 1; commands[i][k]; k++)
			args[k + 1] = commands[i][k];
		struct tt_run r;
		run_ok(&r, args);
		if (!valid_utf8(r.out, r.out_len))
			fail_msg("ticktrace %s --json wrote bytes that are not UTF-8:\n%s", args[0], r.out);
		const char *want[] = {"\"bytes\xEF\xBF\xBD\xEF\xBF\xBD\"", "\"thread\":\"T\xEF\xBF\xBD\"",
				      i == 0 ? "\"name\":\"(no name)\"" : "\"description\":\"d\xEF\xBF\xBD\""};
		assert_out_has(&r, want, N(want));
		free(r.out);
	}
}

/* ---- convert's marks ---- */

static void test_convert_marks_spikes(void **state)
{
	struct tt_fixture *fx = *state;
	game_workload(fx->in);
	assert_int_equal(tt_tw_save(fx->aux, thresholds_file, strlen(thresholds_file)), 0);
	struct tt_run r;
	RUN_OK(&r, "convert", fx->in, "-o", fx->out, "--thresholds", fx->aux);
	free(r.out);
	cJSON *root = tt_json_load(fx->out);
	assert_non_null(root);
	size_t marks = 0;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		if (strcmp(str(ev, "ph"), "i") || strncmp(str(ev, "name"), "spike: ", 7))
			continue;
		marks++;
		if (strcmp(str(ev, "name"), "spike: CreateMeshes took 13.000 ms") == 0) {
			assert_int_equal(tt_json_ns(ev, "ts"), 35 * MS); /* at its end */
			assert_int_equal(num(ev, "tid"), 101);
		}
	}
	assert_int_equal(marks, N(game_spikes));
	assert_non_null(tt_json_find(root, "i", "spike: CreateMeshes took 13.000 ms"));
	cJSON_Delete(root);
	/* Perfetto too; and no marks without a threshold option */
	char pf[160];
	snprintf(pf, sizeof(pf), "%s/run.pftrace", fx->dir);
	RUN_OK(&r, "convert", fx->in, "-o", pf, "--threshold", "1ms");
	free(r.out);
	RUN_OK(&r, "convert", fx->in, "-o", fx->out, "--force");
	free(r.out);
	root = tt_json_load(fx->out);
	assert_null(tt_json_find(root, "i", "spike: CreateMeshes took 13.000 ms"));
	cJSON_Delete(root);
}

/* ---- scopes whose beginning was not recorded ---- */

/* Thread 101 "ring" (a ring's, wrapped): its records begin inside the function F_WORK
 * and a scope (the ring overwrote where they began): GameTick [1, 3 ms], the scope's
 * END at 10 ms, F_WORK's exit at 30 ms. Thread 102 "lossy": main [0, 9 ms]; 5 events
 * lost from 1 to 2 ms, one of them the BEGIN of a scope that ends at 8 ms. */
static void unbegun_workload(const char *path)
{
	t1.n = t2.n = 0;
	begin(&t1, S_TICK, 1 * MS);
	end(&t1, 3 * MS);
	end(&t1, 10 * MS);
	rec(&t1, TT_REC_FUNC_EXIT, F_WORK, 30 * MS);
	begin(&t2, S_MAIN, 0);
	rec(&t2, TT_REC_DROPPED, 5, 1 * MS);
	rec(&t2, TT_REC_VALUE, TT_GAP_DEPTHS(0, 1), 2 * MS);
	end(&t2, 8 * MS);
	end(&t2, 9 * MS);
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, path), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "game");
	tt_tw_sites(&w, sites, N(sites));
	const struct tt_thread_info ring = {.index = 0, .tid = 101, .events = t1.n, .flags = TT_THREAD_WRAPPED};
	tt_tw_thread_info(&w, &ring, "ring");
	tt_tw_thread(&w, 1, 102, "lossy", t2.n, 5);
	tt_tw_events(&w, 0, 0, t1.r, t1.n);
	tt_tw_events(&w, 1, 0, t2.r, t2.n);
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
}

/* A spike whose scope's beginning was not recorded lasted at least what it shows
 * (outside test ot30 F3: a ring's cut scopes shown as measured, a global warning
 * alone said it): spikes says "at least" and why, per spike and per scope of its
 * stack; --json start_early_ns (-1: how much earlier not known; among lost events,
 * how much earlier at most), on the stack's scopes too; convert's marks alike. A
 * scope whose beginning was recorded says nothing of it. */
static void test_unbegun_marked(void **state)
{
	struct tt_fixture *fx = *state;
	unbegun_workload(fx->in);
	struct tt_run r;
	RUN_OK(&r, "spikes", fx->in, "-q", "--threshold", "1ms");
	static const char *const said[] = {
		"spike: GameTick took 2.000 ms (threshold 1.000 ms, --threshold) thread ring (tid 101) at "
		"1.000 ms\n",
		"  0) 0x401000 at least 2.000 ms\n  1) (begun before it was recorded) at least 2.000 ms\n"
		"  2) GameTick 2.000 ms\n",
		"spike: (begun before it was recorded) took at least 9.000 ms (threshold 1.000 ms, "
		"--threshold) thread ring (tid 101) at 1.000 ms; 2.000 ms of it in spikes above; its "
		"beginning was not recorded (before the oldest record its thread kept: a ring overwrote "
		"it, or a fork's parent began it): it began earlier, how much not known\n",
		"  0) 0x401000 at least 9.000 ms\n  1) (begun before it was recorded) at least 9.000 ms\n",
		"spike: 0x401000 took at least 29.000 ms",
		"spike: (begun before it was recorded) took at least 6.000 ms (threshold 1.000 ms, "
		"--threshold) thread lossy (tid 102) at 2.000 ms; its beginning was among dropped events: "
		"it began up to 1.000 ms earlier (its split covers the time after)\n",
		"spike: main took 9.000 ms (threshold 1.000 ms, --threshold) thread lossy (tid 102) at 0 ns;",
	};
	assert_out_has(&r, said, N(said));
	free(r.out);
	RUN_OK(&r, "spikes", fx->in, "-q", "--threshold", "1ms", "--json");
	size_t found = 0;
	for (char *line = r.out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		cJSON *spike = cJSON_Parse(line);
		assert_non_null(spike);
		const char *name = str(spike, "name");
		const cJSON *early = cJSON_GetObjectItemCaseSensitive(spike, "start_early_ns");
		int64_t want = strcmp(name, "(begun before it was recorded)") ? 0 : num(spike, "tid") == 101 ? -1 : 1 * MS;
		if (strcmp(name, "0x401000") == 0)
			want = -1;
		if (want ? !early || (int64_t)early->valuedouble != want : early != NULL)
			fail_msg("%s: start_early_ns not %" PRId64 ": %s", name, want, line);
		const cJSON *frame;
		cJSON_ArrayForEach(frame, cJSON_GetObjectItemCaseSensitive(spike, "stack"))
		{
			const cJSON *fe = cJSON_GetObjectItemCaseSensitive(frame, "start_early_ns");
			if (num(spike, "tid") == 101 ? !fe || fe->valuedouble != -1 : fe != NULL)
				fail_msg("%s: its stack's start_early_ns: %s", name, line);
		}
		found++;
		cJSON_Delete(spike);
	}
	free(r.out);
	assert_int_equal(found, 5);
	RUN_OK(&r, "convert", fx->in, "-o", fx->out, "--threshold", "1ms");
	free(r.out);
	cJSON *root = tt_json_load(fx->out);
	assert_non_null(root);
	const cJSON *ev;
	size_t marks = 0, at_least = 0;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		if (strcmp(str(ev, "ph"), "i") || strncmp(str(ev, "name"), "spike: ", 7))
			continue;
		marks++;
		const cJSON *early = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "args"),
								      "start_early_ns");
		bool cut = strstr(str(ev, "name"), " took at least ") != NULL;
		if (cut != (early != NULL))
			fail_msg("mark %s: start_early_ns %s", str(ev, "name"), early ? "said" : "not said");
		at_least += cut;
	}
	cJSON_Delete(root);
	assert_int_equal(marks, 5);
	assert_int_equal(at_least, 3);
}

/* ---- the split ---- */

/* CLOCK_MONOTONIC of t ns after the start (tick 1000 is 5 s). */
#define MONO(t) (INT64_C(5000000000) + (t))

/* Thread 101 ("worker", with states) and 102 ("plain", none: the kernel refused) each
 * in load_level for
 * [0, 10 ms]. 101's switches: on CPU, blocked [1, 2 ms], then 7 lost (its kernel ring
 * full) until it was preempted at 6 ms, on CPU again from 7 ms. */
static void split_workload(const char *path)
{
	t1.n = t2.n = 0;
	begin(&t1, S_LOAD, 0);
	end(&t1, 10 * MS);
	begin(&t2, S_LOAD, 0);
	end(&t2, 10 * MS);
	static const struct tt_sched_state before[] = {
		{MONO(0), 0, TT_SCHED_RUNNING}, {MONO(1 * MS), 0, TT_SCHED_BLOCKED},
		{MONO(2 * MS), 1, TT_SCHED_RUNNING},
	};
	static const struct tt_sched_state after[] = {
		{MONO(6 * MS), 1, TT_SCHED_PREEMPTED}, {MONO(7 * MS), 1, TT_SCHED_RUNNING},
	};
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, path), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "game");
	tt_tw_sites(&w, sites, N(sites));
	const struct tt_thread_info worker = {.index = 0, .tid = 101, .events = t1.n,
					      .flags = TT_THREAD_SCHED};
	tt_tw_thread_info(&w, &worker, "worker");
	tt_tw_events(&w, 0, 0, t1.r, t1.n);
	tt_tw_sched(&w, 0, 0, MONO(0), before, N(before));
	tt_tw_sched(&w, 0, 7, MONO(6 * MS), after, N(after)); /* (lost: since its first) */
	const struct tt_thread_info plain = {.index = 1, .tid = 102, .events = t2.n,
					     .flags = TT_THREAD_NO_STATES_FLAGS(TT_NO_STATES_REFUSED, EACCES)};
	tt_tw_thread_info(&w, &plain, "plain");
	tt_tw_events(&w, 1, 0, t2.r, t2.n);
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
}

/* A run of one thread "quiet" (tid 101) whose states were asked for (TT_THREAD_SCHED),
 * one "load_level" scope from `from` to `to`; with `ran_section`, the SCHED section that
 * says it never left its CPU from 1 ms on (no state, nothing lost), else none (files
 * written before the runtime said it). */
static void asked_thread_file(const char *path, int64_t from, int64_t to, bool ran_section)
{
	t1.n = 0;
	begin(&t1, S_LOAD, from);
	end(&t1, to);
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, path), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "app");
	tt_tw_sites(&w, sites, N(sites));
	const struct tt_thread_info quiet = {.index = 0, .tid = 101, .events = t1.n,
					     .flags = TT_THREAD_SCHED};
	tt_tw_thread_info(&w, &quiet, "quiet");
	tt_tw_events(&w, 0, 0, t1.r, t1.n);
	if (ran_section)
		tt_tw_sched(&w, 0, 0, MONO(1 * MS), NULL, 0);
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
}

/* A thread that never left its CPU after the kernel was asked has no state; its one
 * SCHED section, without states and with nothing lost, says it ran all along (a short
 * run on an idle CPU: its spikes had no split, and no word why). */
static void test_never_switched(void **state)
{
	struct tt_fixture *fx = *state;
	asked_thread_file(fx->in, 2 * MS, 12 * MS, true);
	struct tt_run r;
	RUN_OK(&r, "spikes", fx->in, "-q", "--threshold", "1ms", "--json");
	cJSON *spike = cJSON_Parse(r.out);
	free(r.out);
	assert_non_null(spike);
	assert_int_equal(num(spike, "dur_ns"), 10 * MS);
	assert_int_equal(num(spike, "on_cpu_ns"), 10 * MS);
	assert_int_equal(num(spike, "preempted_ns"), 0);
	assert_int_equal(num(spike, "blocked_ns"), 0);
	assert_int_equal(num(spike, "unknown_ns"), 0);
	cJSON_Delete(spike);
}

#define UNKNOWN_WHY "4.000 ms of it without switches (the kernel lost 7 of them in a stretch that " \
	"reaches into it: its buffer for the thread full), not covered: none read"
/* The span of switches the kernel lost is unknown, not made up: the split makes up
 * the spike's duration; a thread without states has no split, and its spikes and
 * info say why; report's columns count only the time states cover and say the rest. */
static void test_split_unknown(void **state)
{
	struct tt_fixture *fx = *state;
	split_workload(fx->in);
	struct tt_run r;
	RUN_OK(&r, "spikes", fx->in, "-q", "--threshold", "1ms", "--json");
	cJSON *worker = NULL, *plain = NULL;
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
		cJSON *spike = cJSON_Parse(line);
		assert_non_null(spike);
		if (num(spike, "tid") == 101 && !worker)
			worker = spike;
		else if (num(spike, "tid") == 102 && !plain)
			plain = spike;
		else
			fail_msg("a spike more: %s", line);
	}
	free(r.out);
	assert_non_null(worker);
	assert_non_null(plain);
	assert_int_equal(num(worker, "dur_ns"), 10 * MS);
	assert_int_equal(num(worker, "on_cpu_ns"), 4 * MS);
	assert_int_equal(num(worker, "blocked_ns"), 1 * MS);
	assert_int_equal(num(worker, "preempted_ns"), 1 * MS);
	assert_int_equal(num(worker, "unknown_ns"), 4 * MS);
	/* (why: the switches the kernel lost there, and no counters read) */
	assert_int_equal(num(worker, "without_switches_ns"), 4 * MS);
	assert_int_equal(num(worker, "switches_lost"), 7);
	assert_string_equal(str(worker, "unknown_why"), UNKNOWN_WHY);
	assert_null(cJSON_GetObjectItemCaseSensitive(plain, "on_cpu_ns"));
	assert_null(cJSON_GetObjectItemCaseSensitive(plain, "unknown_ns"));
	assert_string_equal(str(plain, "no_split"),
			    "the kernel refused its thread states (perf_event_open: Permission denied)");
	cJSON_Delete(worker);
	cJSON_Delete(plain);
	/* convert --threshold's marks: the split, or why there is none */
	RUN_OK(&r, "convert", fx->in, "-o", fx->out, "--threshold", "1ms");
	free(r.out);
	cJSON *root = tt_json_load(fx->out);
	const cJSON *ev;
	size_t marks = 0;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		if (strcmp(str(ev, "ph"), "i") || strcmp(str(ev, "name"), "spike: load_level took 10.000 ms"))
			continue;
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
		marks++;
		if (num(ev, "tid") == 101) {
			assert_int_equal(num(args, "unknown_ns"), 4 * MS);
			assert_string_equal(str(args, "unknown_why"), UNKNOWN_WHY);
			assert_null(cJSON_GetObjectItemCaseSensitive(args, "no_split"));
		} else {
			assert_string_equal(str(args, "no_split"), "the kernel refused its thread states "
				       "(perf_event_open: Permission denied)");
			assert_null(cJSON_GetObjectItemCaseSensitive(args, "on_cpu_ns"));
		}
	}
	assert_int_equal(marks, 2);
	cJSON_Delete(root);

	RUN_OK(&r, "spikes", fx->in, "-q", "--threshold", "1ms");
	/* (blocked from the switches, no counters read: it may hold waits for a CPU after
	 * wake-ups, never said as exact; nor on CPU, the kernel's CPU time ahead of it at
	 * switches in) */
	const char *text[] = {"  on CPU ~4.000 ms, preempted ~1.000 ms, blocked ~1.000 ms, unknown 4.000 ms\n"
			      "  unknown: " UNKNOWN_WHY "; (blocked may hold waits for a CPU after wake-ups, "
			      "which the switches count as blocked: no counters reading bounds them); the "
			      "kernel's own CPU time may count up to 2.020 ms more than on CPU (it charges a "
			      "thread from when it picks it, before the switch in its record comes after, at "
			      "switches in that no two readings measured): each part within 3.020 ms of its "
			      "figures\n",
			      "  no split: the kernel refused its thread states (perf_event_open: "
			      "Permission denied)\n"};
	assert_out_has(&r, text, N(text));
	free(r.out);
	RUN_OK(&r, "info", fx->in);
	const char *info[] = {"  1 thread without states: the kernel refused its thread states "
			      "(perf_event_open: Permission denied)\n"};
	assert_out_has(&r, info, N(info));
	free(r.out);

	/* of 20 ms: 4 on CPU, 2 off it, 14 unknown (4 lost, 10 on the thread without states) */
	RUN_OK(&r, "report", fx->in, "-q", "--json");
	root = cJSON_Parse(r.out);
	free(r.out);
	const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "rows"), 0);
	assert_string_equal(str(row, "name"), "load_level");
	assert_int_equal(num(row, "total_ns"), 20 * MS);
	assert_int_equal(num(row, "on_cpu_ns"), 4 * MS);
	assert_int_equal(num(row, "off_cpu_ns"), 2 * MS);
	assert_int_equal(num(row, "unknown_ns"), 14 * MS);
	cJSON_Delete(root);
	RUN_OK(&r, "report", fx->in, "-q");
	const char *table[] = {"on cpu   off cpu    unknown\n",
			       "4.000 ms  2.000 ms  14.000 ms\n", "unknown: the rest"};
	assert_out_has(&r, table, N(table));
	free(r.out);
}

/* A thread whose switches were asked for but that never switched before the file was
 * written (a run of a few ms: TT_THREAD_SCHED, no SCHED section) is one with states,
 * none of them, as spikes and report read it: info said "without states: the file
 * does not say why (written before ticktrace said)", of a file that said. */
static void test_asked_no_switch(void **state)
{
	struct tt_fixture *fx = *state;
	asked_thread_file(fx->in, 0, 3 * MS, false);
	struct tt_run r;
	RUN_OK(&r, "info", fx->in);
	const char *info[] = {"  thread states (their switches, from the kernel):\n",
			      "       101  quiet                           0          0  none\n"};
	assert_out_has(&r, info, N(info));
	if (strstr(r.out, "without states"))
		fail_msg("a thread whose states were asked for said without them:\n%s", r.out);
	free(r.out);
}

/* A Windows run of t1's records: thread main without states (Windows'), its counters'
 * readings with `flags`. */
static void windows_run(struct tt_fixture *fx, uint32_t flags, const struct tt_schedstat_sample *readings,
			size_t n)
{
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, fx->in), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "app.exe");
	tt_tw_sites(&w, sites, N(sites));
	const struct tt_thread_info windows = {.index = 0, .tid = 101, .events = t1.n,
					       .flags = TT_THREAD_NO_STATES_FLAGS(TT_NO_STATES_WINDOWS, 0)};
	tt_tw_thread_info(&w, &windows, "main");
	tt_tw_events(&w, 0, 0, t1.r, t1.n);
	tt_tw_schedstat(&w, 0, flags, readings, n);
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
}

/* A Windows run (src/core/counters.c): no switches, its thread's CPU time alone,
 * in steps of the system's tick. A spike of 40 ms, 20 of them on CPU by the readings at
 * its edges, splits into on CPU and the rest unknown, preempted and blocked not told
 * apart, within the readings' error and a tick; said so in the JSON, the text and
 * info. (Before, the readings' zero wait split the rest as blocked.) */
static void test_windows_cpu_time(void **state)
{
	struct tt_fixture *fx = *state;
	t1.n = 0;
	begin(&t1, S_LOAD, 10 * MS);
	end(&t1, 50 * MS);
	/* (a reading's span, TT_SCHEDSTAT_SPAN_NS, from each edge: one at an edge may have
	 * read its CPU time before it) */
	const struct tt_schedstat_sample readings[] = {
		{MONO(5 * MS), 0, 0, 0, 0, 0},
		{MONO(10 * MS - TT_SCHEDSTAT_SPAN_NS), 2 * MS, 0, 0, 0, 0},
		{MONO(10 * MS + TT_SCHEDSTAT_SPAN_NS), 2 * MS, 0, 0, 0, 0},
		{MONO(50 * MS - TT_SCHEDSTAT_SPAN_NS), 22 * MS, 0, 0, 0, 0},
		{MONO(50 * MS + TT_SCHEDSTAT_SPAN_NS), 22 * MS, 0, 0, 0, 0},
		{MONO(55 * MS), 22 * MS, 0, 0, 0, 0},
	};
	windows_run(fx, TT_SCHEDSTAT_RUN_ONLY | TT_SCHEDSTAT_TICK_STEPS, readings, N(readings));

	struct tt_run r;
	RUN_OK(&r, "spikes", fx->in, "-q", "--threshold", "1ms", "--json");
	cJSON *spike = cJSON_Parse(r.out);
	free(r.out);
	assert_non_null(spike);
	assert_string_equal(str(spike, "causes_from"), "thread-times");
	int64_t err = num(spike, "causes_error_ns");
	assert_true(err >= TT_SCHEDSTAT_TICK_NS && err < 40 * MS);
	assert_int_equal(num(spike, "on_cpu_ns"), 20 * MS);
	assert_int_equal(num(spike, "preempted_ns"), 0);
	assert_int_equal(num(spike, "blocked_ns"), 0);
	assert_int_equal(num(spike, "unknown_ns"), 20 * MS);
	cJSON_Delete(spike);
	RUN_OK(&r, "spikes", fx->in, "-q", "--threshold", "1ms");
	const char *text[] = {"  on CPU ~20.000 ms, off CPU or unknown 20.000 ms\n",
			      "preempted or blocked not told apart"};
	assert_out_has(&r, text, N(text));
	free(r.out);
	RUN_OK(&r, "info", fx->in);
	const char *info[] = {"(Windows: CPU time alone, its thread times, in steps of the system's tick)",
			      "a Windows thread's switches come from the kernel's events (ETW) alone"};
	assert_out_has(&r, info, N(info));
	free(r.out);
}

/* A Windows run whose ntdll counts its threads' switches (TT_SCHEDSTAT_SWITCH_COUNT,
 * src/core/counters.c): the same 40 ms spike, 20 ms of CPU time. With no switch
 * from the reading before it to the one after, it was on CPU throughout and the CPU
 * time it lacks is stolen; with switches, the rest stays off CPU or unknown, their
 * number said. (Before, both split as the CPU time alone.) */
static void windows_switches_run(struct tt_fixture *fx, uint64_t switches_inside, uint64_t switches_after)
{
	t1.n = 0;
	begin(&t1, S_LOAD, 10 * MS);
	end(&t1, 50 * MS);
	const struct tt_schedstat_sample readings[] = {
		{MONO(5 * MS), 0, 0, 7, 0, 0},
		{MONO(10 * MS - TT_SCHEDSTAT_SPAN_NS), 2 * MS, 0, 7, 0, 0},
		{MONO(10 * MS + TT_SCHEDSTAT_SPAN_NS), 2 * MS, 0, 7, 0, 0},
		{MONO(30 * MS), 12 * MS, 0, 7 + switches_inside, 0, 0},
		{MONO(50 * MS - TT_SCHEDSTAT_SPAN_NS), 22 * MS, 0, 7 + switches_inside, 0, 0},
		{MONO(50 * MS + TT_SCHEDSTAT_SPAN_NS), 22 * MS, 0, 7 + switches_inside + switches_after, 0, 0},
		{MONO(55 * MS), 22 * MS, 0, 7 + switches_inside + switches_after, 0, 0},
	};
	windows_run(fx, TT_SCHEDSTAT_RUN_ONLY | TT_SCHEDSTAT_SWITCH_COUNT, readings, N(readings));
}

static void test_windows_switch_count(void **state)
{
	struct tt_fixture *fx = *state;
	windows_switches_run(fx, 0, 0);
	struct tt_run r;
	RUN_OK(&r, "spikes", fx->in, "-q", "--threshold", "1ms", "--json");
	cJSON *spike = cJSON_Parse(r.out);
	free(r.out);
	assert_non_null(spike);
	assert_string_equal(str(spike, "causes_from"), "thread-times");
	assert_int_equal(num(spike, "on_cpu_ns"), 40 * MS);
	assert_int_equal(num(spike, "unknown_ns"), 0);
	assert_int_equal(num(spike, "stolen_ns"), 20 * MS);
	/* (on CPU throughout: what the CPU time lacks is stolen, within the CPU time's
	 * resolution, its parts' too) */
	assert_int_equal(num(spike, "stolen_error_ns"), num(spike, "causes_error_ns"));
	cJSON_Delete(spike);
	RUN_OK(&r, "spikes", fx->in, "-q", "--threshold", "1ms");
	const char *still[] = {"(on CPU throughout: the thread's switch count did not move"};
	assert_out_has(&r, still, N(still));
	free(r.out);
	RUN_OK(&r, "info", fx->in);
	const char *info[] = {"(Windows: CPU time and the count of switches)"};
	assert_out_has(&r, info, N(info));
	free(r.out);

	/* 2 switches between the readings inside it, 1 more before the one at its end */
	windows_switches_run(fx, 2, 1);
	RUN_OK(&r, "spikes", fx->in, "-q", "--threshold", "1ms", "--json");
	spike = cJSON_Parse(r.out);
	free(r.out);
	assert_non_null(spike);
	assert_int_equal(num(spike, "on_cpu_ns"), 20 * MS);
	assert_int_equal(num(spike, "unknown_ns"), 20 * MS);
	assert_null(cJSON_GetObjectItem(spike, "stolen_ns"));
	cJSON_Delete(spike);
	RUN_OK(&r, "spikes", fx->in, "-q", "--threshold", "1ms");
	const char *moved[] = {"switched out 2 to 3 times"};
	assert_out_has(&r, moved, N(moved));
	free(r.out);
}

/* ---- bad input ---- */

static void expect_error(struct tt_fixture *fx, const char *const *args, const char *msg)
{
	struct tt_run r;
	tt_run(&r, args);
	free(r.out);
	if (r.status != 1)
		fail_msg("exit status %d, not 1:\n%s", r.status, r.err);
	assert_err_has(&r, msg);
	struct stat st;
	assert_int_not_equal(stat(fx->out, &st), 0); /* no partial output */
}

static void test_bad_notes_and_thresholds(void **state)
{
	struct tt_fixture *fx = *state;
	char where[320];
	const char *report[] = {"report", fx->in, "-o", fx->out, NULL};
	const char *spikes[] = {"spikes", fx->in, "-o", fx->out, "--thresholds", fx->aux, NULL};
	const struct thread_recs one[] = {{101, "MainThread", &t1}};
	/* records start at byte 144 + process + sites + thread: find them from the writer */
	t1.n = 0;
	begin(&t1, S_MAIN, 0);
	rec(&t1, TT_REC_DESCRIBE, 20, 10); /* two TEXT records should follow */
	end(&t1, 20);
	write_file(fx->in, one, 1);
	expect_error(fx, report, "DESCRIBE record without its TEXT records");
	t1.n = 1;
	rec(&t1, TT_REC_TEXT, 0, 10);
	write_file(fx->in, one, 1);
	expect_error(fx, report, "TEXT record with no record before it that takes one");
	t1.n = 1;
	rec(&t1, TT_REC_DESCRIBE, 241, 10);
	write_file(fx->in, one, 1);
	expect_error(fx, report, "DESCRIBE of 241 bytes: more than 240");
	t1.n = 1;
	rec(&t1, 26, 0, 10);
	write_file(fx->in, one, 1);
	expect_error(fx, report, "unknown record kind 26");
	/* each error names the file and the offset */
	snprintf(where, sizeof(where), "%s: offset ", fx->in);
	struct tt_run r;
	tt_run(&r, report);
	free(r.out);
	assert_err_has(&r, where);
	/* a thread whose records end inside an event (a dump that read it while it wrote
	 * it): that event is left out and counted, the rest reported */
	t1.n = 1;
	rec(&t1, TT_REC_DESCRIBE, 20, 10);
	write_file(fx->in, one, 1);
	tt_run(&r, report);
	free(r.out);
	if (r.status != 0)
		fail_msg("exit status %d, not 0:\n%s", r.status, r.err);
	assert_err_has(&r, "has only part of its records");
	unlink(fx->out);

	t1.n = 0;
	begin(&t1, S_MAIN, 0);
	end(&t1, 20);
	write_file(fx->in, one, 1);
	static const char bad_time[] = "GameTick 16.6ms\nScriptStep fast\n";
	assert_int_equal(tt_tw_save(fx->aux, bad_time, strlen(bad_time)), 0);
	snprintf(where, sizeof(where), "%s: line 2: \"fast\" is not a duration", fx->aux);
	expect_error(fx, spikes, where);
	static const char no_time[] = "\n\n  GameTick\n";
	assert_int_equal(tt_tw_save(fx->aux, no_time, strlen(no_time)), 0);
	snprintf(where, sizeof(where), "%s: line 3: \"GameTick\" is not \"NAME-PATTERN DURATION\"",
		 fx->aux);
	expect_error(fx, spikes, where);
	unlink(fx->aux);
	expect_error(fx, spikes, "cannot read");

	/* usage errors: status 2 */
	const char *const usage[][6] = {
		{"report", fx->in, "--sort", "speed", NULL},
		{"spikes", fx->in, "--threshold", "soon", NULL},
		{"report", NULL},
		{"report", fx->in, "--threshold", "1ms", NULL}, /* a spikes option */
	};
	for (size_t i = 0; i < N(usage); i++) {
		tt_run(&r, usage[i]);
		free(r.out);
		assert_int_equal(r.status, 2);
	}
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_planted_spikes_found_with_their_stacks, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_empty_description, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_json_output_is_utf8, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_convert_marks_spikes, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_unbegun_marked, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_split_unknown, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_never_switched, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_asked_no_switch, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_windows_cpu_time, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_windows_switch_count, setup, tt_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_bad_notes_and_thresholds, setup, tt_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
