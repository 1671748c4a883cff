/* The report tests' shared part (see report_support.h). */
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

const struct tt_tw_site sites[] = {
	{S_MAIN, "main", "game.c", "main", 1},           {S_TICK, "GameTick", "game.c", "tick", 2},
	{S_SCRIPT, "ScriptStep", "game.c", "tick", 3},   {S_MESH, "CreateMeshes", "mesh.c", "mk", 4},
	{S_RENDER, "render", "game.c", "tick", 5},       {S_LOAD, "load_level", "game.c", "load", 6},
	{S_SCRIPT_AI, "script_ai", "ai.c", "ai", 7},     {S_IDLE, "idle", "game.c", "idle", 8},
	{S_PHYSICS, "physics", "phys.c", "step", 9},     {S_LEAF, "leaf \"q\",x", "x.c", "f", 10},
	/* bytes that are not UTF-8, and no name at all */
	{S_BYTES, "bytes\xff\xc3", "x.c", "f", 11},        {S_NONAME, "", "x.c", "f", 12},
};

struct recs t1, t2;

void write_file(const char *path, const struct thread_recs *t, size_t n)
{
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, path), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "game");
	tt_tw_sites(&w, sites, N(sites));
	for (size_t i = 0; i < n; i++)
		tt_tw_thread(&w, (uint32_t)i, t[i].tid, t[i].name, t[i].recs->n, 0);
	for (size_t i = 0; i < n; i++)
		tt_tw_events(&w, (uint32_t)i, 0, t[i].recs->r, t[i].recs->n);
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
}

int setup(void **state)
{
	return tt_fixture_setup(state, "run.ttr", "out");
}

void run_ok(struct tt_run *r, const char *const *args)
{
	tt_run(r, args);
	if (r->status != 0)
		fail_msg("ticktrace %s failed (%d):\n%s", args[0], r->status, r->err);
}


void assert_err_has(const struct tt_run *r, const char *text)
{
	if (!strstr(r->err, text))
		fail_msg("expected \"%s\" on stderr, got:\n%s", text, r->err);
}

/* Every one of `texts` is somewhere in what the command printed. */
void assert_out_has(const struct tt_run *r, const char *const *texts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strstr(r->out, texts[i]))
			fail_msg("no \"%s\" in:\n%s", texts[i], r->out);
}

int64_t num(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsNumber(v))
		fail_msg("no number %s in %s", key, cJSON_PrintUnformatted(obj));
	return (int64_t)v->valuedouble;
}

const char *str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!cJSON_IsString(v))
		fail_msg("no string %s in %s", key, cJSON_PrintUnformatted(obj));
	return v->valuestring;
}

/* Thread 101: main [0, 100 us] holds GameTick [10, 40] (holding ScriptStep [15, 25]
 * holding CreateMeshes [16, 20]), GameTick [50, 60] (holding render [52, 58] via
 * ENDBEGIN from ScriptStep [51, 52]), and the function F_WORK [70, 95] (holding
 * render [71, 81]). Thread 102: GameTick [0, 7], and ScriptStep [10, 13] with a
 * BEGIN_ARG. Times in us. */
void known_workload(const char *path)
{
	t1.n = t2.n = 0;
	begin(&t1, S_MAIN, 0);
	begin(&t1, S_TICK, 10 * US);
	begin(&t1, S_SCRIPT, 15 * US);
	begin(&t1, S_MESH, 16 * US);
	end(&t1, 20 * US);
	end(&t1, 25 * US);
	end(&t1, 40 * US);
	begin(&t1, S_TICK, 50 * US);
	begin(&t1, S_SCRIPT, 51 * US);
	rec(&t1, TT_REC_ENDBEGIN, S_RENDER, 52 * US);
	end(&t1, 58 * US);
	end(&t1, 60 * US);
	rec(&t1, TT_REC_FUNC_ENTER, F_WORK, 70 * US);
	begin(&t1, S_RENDER, 71 * US);
	end(&t1, 81 * US);
	rec(&t1, TT_REC_FUNC_EXIT, F_WORK, 95 * US);
	end(&t1, 100 * US);
	begin(&t2, S_TICK, 0);
	end(&t2, 7 * US);
	rec(&t2, TT_REC_BEGIN_ARG, S_SCRIPT, 10 * US);
	t2.r[t2.n++] = TT_TW_REC(TT_REC_VALUE, 0, 99);
	end(&t2, 13 * US);
	const struct thread_recs threads[] = {{101, "MainThread", &t1}, {102, "worker", &t2}};
	write_file(path, threads, N(threads));
}
