#ifndef TT_REPORT_SUPPORT_H
#define TT_REPORT_SUPPORT_H

/* What the tests of `ticktrace report` and `spikes` (test_report*.c) share: the
 * sites and records of a synthetic raw file, the fixture's setup, and reading what
 * the command printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tt_check.h"
#include "tt_tw.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define US INT64_C(1000)

enum { S_MAIN = 0x1000, S_TICK = 0x1010, S_SCRIPT = 0x1020, S_MESH = 0x1030, S_RENDER = 0x1040,
       S_LOAD = 0x1050, S_SCRIPT_AI = 0x1060, S_IDLE = 0x1070, S_PHYSICS = 0x1080,
       S_LEAF = 0x1090, S_BYTES = 0x10a0, S_NONAME = 0x10b0 };
#define F_WORK 0x401000 /* a function (-finstrument-functions) */

/* (Sized: the profile's labels walk it with N.) */
extern const struct tt_tw_site sites[12];

/* ---- writing records: time t ns after the start (tick 1000 is 5 s, the trace start) ---- */

struct recs {
	struct tt_record r[1 << 16];
	size_t n;
};

/* Two threads' records, for a test at a time to fill. */
extern struct recs t1, t2;

/* Inline: a global `end` would clash with the linker's symbol of that name. */
static inline void rec(struct recs *b, unsigned kind, uint64_t payload, int64_t t)
{
	assert_true(b->n < N(b->r));
	b->r[b->n++] = TT_TW_REC(kind, payload, (uint64_t)(1000 + t));
}

static inline void begin(struct recs *b, uint64_t site, int64_t t) { rec(b, TT_REC_BEGIN, site, t); }
static inline void end(struct recs *b, int64_t t) { rec(b, TT_REC_END, 0, t); }

struct thread_recs {
	uint32_t tid;
	const char *name;
	const struct recs *recs;
};

void write_file(const char *path, const struct thread_recs *t, size_t n);
int setup(void **state);
void run_ok(struct tt_run *r, const char *const *args);
void assert_err_has(const struct tt_run *r, const char *text);
void assert_out_has(const struct tt_run *r, const char *const *texts, size_t n);
int64_t num(const cJSON *obj, const char *key);
const char *str(const cJSON *obj, const char *key);

#define RUN_OK(r, ...) run_ok((r), (const char *const[]){__VA_ARGS__, NULL})

/* Thread 101: main [0, 100 us] holds GameTick [10, 40] (holding ScriptStep [15, 25]
 * holding CreateMeshes [16, 20]), GameTick [50, 60] (holding render [52, 58] via
 * ENDBEGIN from ScriptStep [51, 52]), and the function F_WORK [70, 95] (holding
 * render [71, 81]). Thread 102: GameTick [0, 7], and ScriptStep [10, 13] with a
 * BEGIN_ARG. Times in us. */
void known_workload(const char *path);

#endif
