/* libticktrace-wrap: wrap_program (wrap_steps.h) runs with the malloc wrappers, linked
 * to the shared runtime and to the static one, and wrap_cxx_program (wrap_cxx_steps.h)
 * with every operator new and delete; each trace must hold exactly the program's heap
 * operations with their sizes, and "heap_live_bytes" must equal the program's own
 * bookkeeping after every step.
 *
 *   test_wrap SHARED_PROGRAM STATIC_PROGRAM CXX_PROGRAM */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "tt_check.h"
#include "wrap_cxx_steps.h"
#include "wrap_steps.h"

#define NSTEPS (sizeof(wrap_steps) / sizeof(wrap_steps[0]))

static const char *shared_program, *static_program, *cxx_program;

/* What the trace says, in time order (one thread). */
struct heap_trace {
	const char *op[64];
	int64_t arg[64];
	size_t nops;
	int64_t heap[64];     /* heap_live_bytes samples */
	size_t nheap;
	size_t heap_at[64]; /* the last heap sample before each expected one */
	int64_t expected[64];
	size_t nexpected;
};

static void read_trace(cJSON *root, struct heap_trace *h)
{
	memset(h, 0, sizeof(*h));
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		const char *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph")->valuestring;
		const char *name = cJSON_GetObjectItemCaseSensitive(ev, "name")->valuestring;
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
		if (strcmp(ph, "i") == 0) {
			assert_true(h->nops < 64);
			h->op[h->nops] = name;
			h->arg[h->nops++] = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(args, "size"));
		} else if (strcmp(ph, "C") == 0) {
			int64_t v = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(args, "value"));
			if (strcmp(name, "heap_live_bytes") == 0) {
				assert_true(h->nheap < 64);
				h->heap[h->nheap++] = v;
			} else if (strcmp(name, "expected_live_bytes") == 0) {
				assert_true(h->nexpected < 64 && h->nheap > 0);
				h->heap_at[h->nexpected] = h->nheap - 1;
				h->expected[h->nexpected++] = v;
			}
		}
	}
}

static const char *op_name(enum wrap_op op)
{
	return op == WRAP_MALLOC ? "malloc" : op == WRAP_CALLOC ? "calloc" : op == WRAP_REALLOC ? "realloc" : "free";
}

/* After each of the nsteps steps the wrappers' counter is the program's own count. */
static void assert_live_matches(const struct heap_trace *h, size_t nsteps)
{
	assert_int_equal(h->nexpected, nsteps);
	for (size_t i = 0; i < nsteps; i++) {
		if (h->heap[h->heap_at[i]] != h->expected[i])
			fail_msg("step %zu: heap_live_bytes %" PRId64 ", the program counts %" PRId64, i,
				 h->heap[h->heap_at[i]], h->expected[i]);
	}
	assert_int_equal(h->expected[nsteps - 1], 0);
}

static cJSON *run_and_convert(const char *program, const char *dir, const char *extra)
{
	char cmd[2048], json[256];
	snprintf(cmd, sizeof(cmd), "TICKTRACE_OUT='%s/run.ttr' '%s'%s", dir, program, extra);
	int st = system(cmd);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	snprintf(json, sizeof(json), "%s/run.json", dir);
	char ttr[256];
	snprintf(ttr, sizeof(ttr), "%s/run.ttr", dir);
	struct tt_run r;
	TT_RUN(&r, "convert", ttr, "-o", json, "-q");
	if (r.status)
		print_message("%s", r.err);
	assert_int_equal(r.status, 0);
	free(r.out);
	cJSON *root = tt_json_load(json);
	assert_non_null(root);
	return root;
}

/* Runs the program, converts its trace and reads it into h, whose names are the
 * returned JSON's (cJSON_Delete it after). */
static cJSON *run_and_read(const char *program, const char *dir, const char *extra,
			  struct heap_trace *h)
{
	cJSON *root = run_and_convert(program, dir, extra);
	read_trace(root, h);
	return root;
}

/* Linked to the shared runtime: every call the program makes, and nothing else. */
static void test_shared(void **state)
{
	(void)state;
	char dir[64];
	tt_tmpdir(dir, sizeof(dir));
	struct heap_trace h;
	cJSON *root = run_and_read(shared_program, dir, "", &h);
	/* the constructor's malloc(10) and free, before the recorder started; then the steps
	 * (free(NULL) is not a free) */
	assert_int_equal(h.nops, 2 + NSTEPS);
	assert_string_equal(h.op[0], "malloc");
	assert_int_equal(h.arg[0], 10);
	assert_string_equal(h.op[1], "free");
	for (size_t i = 0; i < NSTEPS; i++) {
		const struct wrap_step *s = &wrap_steps[i];
		assert_string_equal(h.op[2 + i], op_name(s->op));
		if (s->op != WRAP_FREE)
			assert_int_equal(h.arg[2 + i], s->op == WRAP_CALLOC ? s->count * s->size : s->size);
		else /* the freed block's size: what the counter lost */
			assert_int_equal(h.arg[2 + i], h.heap[h.heap_at[i] - 1] - h.heap[h.heap_at[i]]);
	}
	assert_live_matches(&h, NSTEPS);
	cJSON_Delete(root);
	tt_rmdir(dir);
}

/* Linked statically, the runtime's own allocations go through the wrappers too: a
 * dump in the middle of the steps records them, and neither deadlocks nor upsets the
 * counter, which is back where it was when the dump is done. */
static void test_static_dump_midway(void **state)
{
	(void)state;
	char dir[64], extra[128];
	tt_tmpdir(dir, sizeof(dir));
	snprintf(extra, sizeof(extra), " --dump-midway '%s/midway.ttr'", dir);
	struct heap_trace h;
	cJSON *root = run_and_read(static_program, dir, extra, &h);
	assert_live_matches(&h, NSTEPS);
	assert_true(h.nops > 2 + NSTEPS); /* the dump's own allocations */
	cJSON_Delete(root);
	tt_rmdir(dir);
}

/* C++: each global operator new and delete is recorded with its size, on the same
 * counter; then a vector and a new expression as a program makes them, and a new
 * that throws std::bad_alloc through the wrapper (recording nothing). */
static void test_cxx(void **state)
{
	(void)state;
	char dir[64];
	tt_tmpdir(dir, sizeof(dir));
	struct heap_trace h;
	cJSON *root = run_and_read(cxx_program, dir, "", &h);
	const size_t nsteps = sizeof(wrap_cxx_steps) / sizeof(wrap_cxx_steps[0]);
	assert_int_equal(h.nops, nsteps + 4);
	for (size_t i = 0; i < nsteps; i++) {
		const struct wrap_cxx_step *s = &wrap_cxx_steps[i];
		assert_string_equal(h.op[i], s->name);
		if (s->op < CXX_DELETE)
			assert_int_equal(h.arg[i], s->size);
		else /* the block's usable size: what the counter lost */
			assert_int_equal(h.arg[i], h.heap[h.heap_at[i] - 1] - h.heap[h.heap_at[i]]);
	}
	assert_live_matches(&h, nsteps);
	static const char *const ordinary[] = {"operator new", "operator new", "operator delete",
					       "operator delete"};
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(h.op[nsteps + i], ordinary[i]);
	assert_int_equal(h.arg[nsteps], 1000 * sizeof(int)); /* the vector */
	assert_int_equal(h.arg[nsteps + 1], sizeof(int));
	assert_int_equal(h.heap[h.nheap - 1], 0);
	cJSON_Delete(root);
	tt_rmdir(dir);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: test_wrap SHARED_PROGRAM STATIC_PROGRAM CXX_PROGRAM\n");
		return 2;
	}
	shared_program = argv[1];
	static_program = argv[2];
	cxx_program = argv[3];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_static_dump_midway),
		cmocka_unit_test(test_cxx),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
