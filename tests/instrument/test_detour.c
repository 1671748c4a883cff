/* Detours end to end: tests/programs/detour/work.c built plainly at -O2, and with
 * -fpatchable-function-entry=5, traced with `ticktrace record -f 'work_*' -f 'odd_*'`,
 * must give the same call trees on each thread (so the same slices and call counts)
 * and the same output as its -finstrument-functions build run with `ticktrace record`
 * alone; the odd_* functions, which cannot be patched safely, are listed with their
 * reasons and the program runs on. With gcc and clang. And unwinders walking through
 * patched functions (the unwinders are watched wherever they are linked, and left
 * alone): pthread_exit and pthread_cancel in C and C++, exceptions in a program with
 * its own static unwinder, `-f '*'`, which matches the unwinders themselves; each
 * program's output and exit status under `record` are those of its plain run.
 *
 *   test_detour SRC_DIR LIB_DIR SANITIZE   (SRC_DIR: tests/programs/detour)
 *
 * In an AddressSanitizer build the programs traced get the sanitizer's runtime
 * preloaded (preload_sanitizer). */
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tt_check.h"

static const char *src_dir, *lib_dir;
/* Before a compiler's command: in an AddressSanitizer build, the runtime preloaded into
 * every command (preload_sanitizer) left out of the compilers, which load none of
 * ticktrace's code (with it each compile took 4 times the CPU time: 1.0 s against 0.23). */
static const char *unpreloaded = "";
static char work_c[4096];

/* The text of the file dir/name. */
static char *slurp(const char *dir, const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	char *text = tt_read_text(path);
	assert_non_null(text);
	return text;
}

/* dir/got must hold what dir/want holds. */
static void assert_same_text(const char *dir, const char *got_name, const char *want_name)
{
	char *got = slurp(dir, got_name), *want = slurp(dir, want_name);
	assert_string_equal(got, want);
	free(got);
	free(want);
}

/* Every thread's listing, the main thread's first (its tid is the pid); the calls
 * alone, not the states tracks. */
static char *listings(const char *json)
{
	cJSON *root = tt_json_load(json);
	assert_non_null(root);
	char *all = calloc(1, 1);
	for (int main_pass = 1; main_pass >= 0; main_pass--) {
		const cJSON *ev;
		cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
		{
			const char *name = cJSON_GetObjectItemCaseSensitive(ev, "name")->valuestring;
			uint32_t pid = (uint32_t)cJSON_GetObjectItemCaseSensitive(ev, "pid")->valuedouble;
			uint32_t tid = (uint32_t)cJSON_GetObjectItemCaseSensitive(ev, "tid")->valuedouble;
			if (strcmp(name, "thread_name") != 0 || (tid == pid) != main_pass ||
			    tt_json_is_states_track(ev))
				continue;
			/* A thread's states track (ticktrace(7), THREAD STATES) holds what the
			 * machine did to it, which differs from run to run. */
			const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
			const cJSON *track = cJSON_GetObjectItemCaseSensitive(args, "name");
			const char *states = cJSON_IsString(track) ? strstr(track->valuestring, " (states)") : NULL;
			if (states && states[strlen(" (states)")] == 0)
				continue;
			char *one = tt_json_listing(root, tid);
			assert_non_null(one);
			char *joined;
			assert_true(asprintf(&joined, "%sthread\n%s", all, one) > 0);
			free(all);
			free(one);
			all = joined;
		}
	}
	cJSON_Delete(root);
	return all;
}

/* Builds work.c as dir/KIND/work with `flags`; runs it under `ticktrace record` with
 * `patterns` (a shell fragment of -f options); converts. 0 or the failing status. */
static int build_and_record(const char *cc, const char *dir, const char *kind, const char *flags,
			    const char *patterns)
{
	const char *tool = getenv("TT_TEST_TOOL");
	if (tt_sh("mkdir -p '%s/%s' && %s%s -O2 -g '%s' -o '%s/%s/work' %s -pthread", dir, kind,
		  unpreloaded, cc, work_c, dir, kind, flags))
		return -1;
	if (tt_sh("'%s' record %s -o '%s/%s/run.ttr' -- '%s/%s/work' >'%s/%s/out' 2>'%s/%s/err'", tool,
	       patterns, dir, kind, dir, kind, dir, kind, dir, kind))
		return -1;
	return tt_sh("'%s' convert -q '%s/%s/run.ttr' -o '%s/%s/run.json'", tool, dir, kind, dir, kind);
}

static const char *compiler(const char *cc)
{
	if (tt_sh("command -v %s >/dev/null", cc) != 0) {
		print_message("skipped: no %s here\n", cc);
		return NULL;
	}
	return cc;
}

static void check_against_instrumented(const char *cc, const char *flags, const char *how)
{
	if (!compiler(cc))
		skip();
	char dir[64], instr_flags[1024], path[256];
	tt_tmpdir(dir, sizeof(dir));
	snprintf(instr_flags, sizeof(instr_flags),
		 "-finstrument-functions -L'%s' -lticktrace -Wl,-rpath,'%s'", lib_dir, lib_dir);
	assert_int_equal(build_and_record(cc, dir, "instr", instr_flags, ""), 0);
	assert_int_equal(build_and_record(cc, dir, "detour", flags, "-f 'work_*' -f 'odd_*'"), 0);

	snprintf(path, sizeof(path), "%s/instr/run.json", dir);
	char *want = listings(path);
	snprintf(path, sizeof(path), "%s/detour/run.json", dir);
	char *got = listings(path);
	if (!strstr(want, "X work_recurse 3\n")) /* the tree is a real one */
		fail_msg("not the expected tree:\n%s", want);
	assert_string_equal(got, want);
	free(want);
	free(got);

	assert_same_text(dir, "detour/out", "instr/out"); /* no argument or result register lost */

	char *err = slurp(dir, "detour/err");
	print_message("%s", err);
	assert_non_null(strstr(err, "not patched: odd_tiny (work): 3 bytes long"));
	assert_non_null(strstr(err, "not patched: odd_spin (work): the jump at +5 goes back into "
				    "the first 5 bytes (to +2)"));
	assert_non_null(strstr(err, "not patched: odd_jrcxz (work): its jrcxz at +3"));
	assert_non_null(strstr(err, "not patched: odd_alt (work): the symbol odd_alt_inner is at +3, "
				    "inside the 7 bytes the patch overwrites"));
	assert_non_null(strstr(err, "not patched: odd_alt_inner (work): it lies at +3 inside odd_alt"));
	assert_non_null(strstr(err, "not patched: odd_hot (work): the jump at +0 of odd_hot.cold goes "
				    "into the first 7 bytes (to +2), which the patch overwrites"));
	assert_non_null(strstr(err, how));
	assert_non_null(strstr(err, "; 6 could not be\n"));
	free(err);
	tt_rmdir(dir);
}

static void gcc_plain(void **state)
{
	(void)state;
	check_against_instrumented("gcc", "", "patched 8 functions (8 by moving their first instructions, 0 ");
}

static void gcc_patchable(void **state)
{
	(void)state;
	check_against_instrumented("gcc", "-fpatchable-function-entry=5",
				   "patched 8 functions (1 by moving their first instructions, 7 ");
}

/* NOPs partly before the entry: the five after it take the jump. */
static void gcc_patchable_before(void **state)
{
	(void)state;
	check_against_instrumented("gcc", "-fpatchable-function-entry=7,2",
				   "patched 8 functions (1 by moving their first instructions, 7 ");
}

/* Too few NOPs for a jump: they move with the instructions after them. */
static void gcc_few_nops(void **state)
{
	(void)state;
	check_against_instrumented("gcc", "-fpatchable-function-entry=3",
				   "patched 8 functions (8 by moving their first instructions, 0 ");
}

static void clang_plain(void **state)
{
	(void)state;
	check_against_instrumented("clang", "", "patched 8 functions (8 by moving their first instructions, 0 ");
}

static void clang_patchable(void **state)
{
	(void)state;
	check_against_instrumented("clang", "-fpatchable-function-entry=5",
				   "patched 8 functions (1 by moving their first instructions, 7 ");
}

static int count_slices(cJSON *root, const char *name)
{
	int n = 0;
	const cJSON *ev;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
	{
		if (strcmp(cJSON_GetObjectItemCaseSensitive(ev, "ph")->valuestring, "X") == 0 &&
		    strcmp(cJSON_GetObjectItemCaseSensitive(ev, "name")->valuestring, name) == 0)
			n++;
	}
	return n;
}

/* An exception through patched functions is caught where the program catches it,
 * and longjmp leaves them; each call is still one slice. */
static void unwinding(void **state)
{
	(void)state;
	if (!compiler("g++"))
		skip();
	char dir[64], path[256];
	tt_tmpdir(dir, sizeof(dir));
	const char *tool = getenv("TT_TEST_TOOL");
	assert_int_equal(tt_sh("%sg++ -O2 -g '%s/unwind.cc' -o '%s/unwind'", unpreloaded, src_dir, dir), 0);
	assert_int_equal(tt_sh("'%s' record -f 'work_*' -o '%s/run.ttr' -c '%s/run.json' -- '%s/unwind' "
			    ">'%s/out' 2>'%s/err'", tool, dir, dir, dir, dir, dir), 0);
	char *out = slurp(dir, "out");
	assert_string_equal(out, "10\n");
	free(out);
	snprintf(path, sizeof(path), "%s/run.json", dir);
	cJSON *root = tt_json_load(path);
	assert_non_null(root);
	assert_int_equal(count_slices(root, "work_catch(int)"), 5);
	assert_int_equal(count_slices(root, "work_mid(int)"), 5);
	assert_int_equal(count_slices(root, "work_throw(int)"), 5);
	assert_int_equal(count_slices(root, "work_jmid(int)"), 2);
	assert_int_equal(count_slices(root, "work_jump(int)"), 2);
	cJSON_Delete(root);
	tt_rmdir(dir);
}

/* A stripped program's function, named by its address as nm printed it before. */
static void by_address(void **state)
{
	(void)state;
	char dir[64], path[256], addr[64] = "";
	tt_tmpdir(dir, sizeof(dir));
	const char *tool = getenv("TT_TEST_TOOL");
	assert_int_equal(tt_sh("%sgcc -O2 '%s' -o '%s/full' -pthread && nm '%s/full' | "
			       "sed -n 's/^0*\\([0-9a-f]*\\) T work_leaf$/0x\\1/p' >'%s/addr' && "
			       "strip -o '%s/work' '%s/full'", unpreloaded, work_c, dir, dir, dir, dir, dir), 0);
	char *text = slurp(dir, "addr");
	sscanf(text, "%63s", addr);
	free(text);
	assert_true(strncmp(addr, "0x", 2) == 0);
	assert_int_equal(tt_sh("'%s' record -f %s -f 0x3 -o '%s/run.ttr' -c '%s/run.json' -- '%s/work' "
			       ">/dev/null 2>'%s/err'", tool, addr, dir, dir, dir, dir), 0);
	char *err = slurp(dir, "err");
	assert_non_null(strstr(err, "-f 0x3 is where no function of the program starts"));
	assert_non_null(strstr(err, "patched 1 function ("));
	free(err);
	char name[96];
	snprintf(name, sizeof(name), "work+%s", addr); /* the converter's name for it */
	snprintf(path, sizeof(path), "%s/run.json", dir);
	cJSON *root = tt_json_load(path);
	assert_non_null(root);
	assert_int_equal(count_slices(root, name), 5); /* work_leaf's calls */
	cJSON_Delete(root);
	/* An address that matches no function, with no other pattern that does: said, and
	 * record exits 1 though the program exits 0 (it exited 0 with an empty trace). */
	unsigned long inside = strtoul(addr, NULL, 16) + 1;
	assert_int_equal(tt_sh("'%s' record -f 0x%lx -o '%s/none.ttr' -- '%s/work' >/dev/null 2>'%s/err'",
			       tool, inside, dir, dir, dir), 1);
	err = slurp(dir, "err");
	assert_non_null(strstr(err, "is inside work+"));
	assert_non_null(strstr(err, "no -f pattern matched a function of"));
	free(err);
	tt_rmdir(dir);
}

/* Every register a patched function leaves alone is as it was after its call: with
 * the buffer holding every event, and with one so small that most are dropped; called
 * with the stack aligned, and with rsp 8 bytes off (every path into C aligns it). */
static void registers(void **state)
{
	(void)state;
	char dir[64];
	tt_tmpdir(dir, sizeof(dir));
	const char *tool = getenv("TT_TEST_TOOL");
	assert_int_equal(tt_sh("%sgcc -O2 '%s/registers.c' -o '%s/registers' && '%s/registers' >'%s/want'",
			       unpreloaded, src_dir, dir, dir, dir), 0);
	const char *buffers[] = {"1000000", "100"}, *alignments[] = {"", "misaligned"};
	for (size_t a = 0; a < sizeof alignments / sizeof alignments[0]; a++)
		for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++) {
			assert_int_equal(tt_sh("TICKTRACE_BUFFER=%s '%s' record -f work_callee -o "
					       "'%s/run.ttr' -- '%s/registers' %s >'%s/got' 2>/dev/null",
					       buffers[i], tool, dir, dir, alignments[a], dir), 0);
			assert_same_text(dir, "got", "want");
		}
	tt_rmdir(dir);
}

/* Runs dir/PROG (built from tests/programs/detour) plainly and under `ticktrace record` with
 * `patterns`: it must exit 0 and print the same both times. The trace, converted
 * (free it with cJSON_Delete); `run` names its files. */
static cJSON *record_as_plain(const char *dir, const char *prog, const char *patterns, int run)
{
	char path[256];
	const char *tool = getenv("TT_TEST_TOOL");
	assert_int_equal(tt_sh("'%s/%s' >'%s/want'", dir, prog, dir), 0);
	assert_int_equal(tt_sh("'%s' record %s -o '%s/run%d.ttr' -c '%s/run%d.json' -- '%s/%s' "
			       ">'%s/got' 2>'%s/err'", tool, patterns, dir, run, dir, run, dir, prog, dir,
			       dir), 0);
	assert_same_text(dir, "got", "want");
	snprintf(path, sizeof(path), "%s/run%d.json", dir, run);
	cJSON *root = tt_json_load(path);
	assert_non_null(root);
	return root;
}

/* A 6-byte leaf (`lea; ret`) called with rsp 8 bytes off by its caller's loop:
 * patched alone (its first call grows the shadow stack, in C) and with its caller
 * and a 5-byte function moved whole, the program prints the same and every call is a
 * slice. */
static void short_leaf(void **state)
{
	(void)state;
	const char *compilers[] = {"gcc", "clang"}, *patterns[] = {"-f work_a", "-f 'work_*'"};
	for (size_t c = 0; c < sizeof compilers / sizeof compilers[0]; c++) {
		if (!compiler(compilers[c]))
			continue;
		char dir[64];
		tt_tmpdir(dir, sizeof(dir));
		assert_int_equal(tt_sh("%s%s -O2 '%s/leaf.c' -o '%s/leaf'", unpreloaded, compilers[c], src_dir, dir), 0);
		for (int p = 0; p < (int)(sizeof patterns / sizeof patterns[0]); p++) {
			cJSON *root = record_as_plain(dir, "leaf", patterns[p], p);
			assert_int_equal(count_slices(root, "work_a"), 1000);
			assert_int_equal(count_slices(root, "work_whole"), p);
			cJSON_Delete(root);
		}
		tt_rmdir(dir);
	}
}

/* Patched calls on stacks other than the thread's own, where each call must still be
 * one slice and the program run as without:
 *   altstack: handlers on an alternate signal stack, above the thread's stack and
 *     below it, call a patched function while the thread is inside others; once a
 *     handler leaves by siglongjmp (in the first thread and another);
 *   coroutines: coroutines (swapcontext) yield from inside patched functions, so that
 *     each returns with the other's frames above its own on the shadow stack. */
static void other_stacks(void **state)
{
	(void)state;
	static const struct {
		const char *prog, *flags;
		struct {
			const char *name;
			int slices;
		} calls[4];
	} programs[] = {
		{"altstack", "-pthread",
		 {{"work_outer", 330}, {"work_inner", 333}, {"work_in_handler", 333}, {"work_escape", 3}}},
		{"coroutines", "", {{"work_yield", 100}, {"work_step", 100}, {"work_drive", 1}}},
	};
	for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++) {
		char dir[64];
		tt_tmpdir(dir, sizeof(dir));
		assert_int_equal(tt_sh("%sgcc -O2 %s '%s/%s.c' -o '%s/%s'", unpreloaded, programs[i].flags,
				       src_dir, programs[i].prog, dir, programs[i].prog), 0);
		cJSON *root = record_as_plain(dir, programs[i].prog, "-f 'work_*'", 0);
		for (size_t c = 0; c < 4 && programs[i].calls[c].name; c++)
			assert_int_equal(count_slices(root, programs[i].calls[c].name),
					 programs[i].calls[c].slices);
		cJSON_Delete(root);
		tt_rmdir(dir);
	}
}

/* Calls made while recording is off (tt_disable) are not recorded, the others are. */
static void disabled(void **state)
{
	(void)state;
	char dir[64], path[256];
	tt_tmpdir(dir, sizeof(dir));
	const char *tool = getenv("TT_TEST_TOOL");
	assert_int_equal(tt_sh("%sgcc -O2 -I'%s/../../../include' '%s/disable.c' -o '%s/disable' -L'%s' "
			       "-lticktrace -Wl,-rpath,'%s'", unpreloaded, src_dir, src_dir, dir, lib_dir, lib_dir), 0);
	assert_int_equal(tt_sh("'%s' record -f work_callee -o '%s/run.ttr' -c '%s/run.json' -- "
			       "'%s/disable' >/dev/null 2>&1", tool, dir, dir, dir), 0);
	snprintf(path, sizeof(path), "%s/run.json", dir);
	cJSON *root = tt_json_load(path);
	assert_non_null(root);
	assert_int_equal(count_slices(root, "work_callee"), 5);
	cJSON_Delete(root);
	tt_rmdir(dir);
}

/* A library's constructor starts a thread that runs a function to patch while the
 * patching would happen: nothing is patched, said so, and the program runs as without
 * (ten runs: patching it crashed most of them). */
static void thread_before_patching(void **state)
{
	(void)state;
	char dir[64];
	tt_tmpdir(dir, sizeof(dir));
	const char *tool = getenv("TT_TEST_TOOL");
	assert_int_equal(tt_sh("%sgcc -O2 -shared -fPIC -DCTOR_LIB '%s/ctor_thread.c' -o "
			       "'%s/libctorthread.so' -pthread && %sgcc -O2 '%s/ctor_thread.c' -o '%s/ctor' "
			       "-L'%s' -lctorthread -Wl,-rpath,'%s' -pthread",
			       unpreloaded, src_dir, dir, unpreloaded, src_dir, dir, dir, dir), 0);
	for (int run = 0; run < 10; run++) {
		assert_int_equal(tt_sh("'%s' record -f 'work_*' -o '%s/run.ttr' -- '%s/ctor' >'%s/out' "
				       "2>'%s/err'", tool, dir, dir, dir, dir), 0);
		char *out = slurp(dir, "out");
		assert_string_equal(out, "spinner ran\n");
		free(out);
	}
	char *err = slurp(dir, "err");
	assert_non_null(strstr(err, "nothing patched: the program already runs 1 other thread "
				    "(a library's constructor started them)"));
	free(err);
	tt_rmdir(dir);
}

/* -f '*': every function of the program and its libraries that may be patched is, and
 * the program runs as without (_start, entered with no return address, and the vDSO
 * are left alone). */
static void everything(void **state)
{
	(void)state;
	char dir[64];
	tt_tmpdir(dir, sizeof(dir));
	const char *tool = getenv("TT_TEST_TOOL");
	assert_int_equal(tt_sh("%sgcc -O2 '%s' -o '%s/work' -pthread && '%s/work' >'%s/want'",
			       unpreloaded, work_c, dir, dir, dir), 0);
	assert_int_equal(tt_sh("'%s' record -f '*' -o '%s/run.ttr' -- '%s/work' >'%s/got' 2>'%s/err'",
			       tool, dir, dir, dir, dir), 0);
	assert_same_text(dir, "got", "want");
	char *err = slurp(dir, "err");
	assert_null(strstr(err, "vdso"));
	assert_non_null(strstr(err, "left alone"));
	free(err);
	tt_rmdir(dir);
}

/* The program's exit status comes back; a program that cannot run is said so. */
static void exit_status(void **state)
{
	(void)state;
	char dir[64];
	tt_tmpdir(dir, sizeof(dir));
	const char *tool = getenv("TT_TEST_TOOL");
	assert_int_equal(tt_sh("'%s' record -o '%s/run.ttr' -- sh -c 'exit 3' 2>/dev/null", tool, dir), 3);
	assert_int_equal(tt_sh("'%s' record -o '%s/run.ttr' -- '%s/none' 2>'%s/err'", tool, dir, dir, dir), 127);
	char *err = slurp(dir, "err");
	assert_non_null(strstr(err, "cannot run"));
	free(err);
	assert_int_equal(tt_sh("'%s' record 2>/dev/null", tool), 2);
	/* A program that writes no trace, where a file is already (a link, planted by
	 * another user in a shared directory): it is not read as the run's trace. */
	assert_int_equal(tt_sh("ln -s '%s/err' '%s/planted.ttr'", dir, dir), 0);
	assert_int_equal(tt_sh("TICKTRACE=0 '%s' record -o '%s/planted.ttr' -c '%s/out.json' -- true "
			       "2>'%s/err2'", tool, dir, dir, dir), 1);
	err = slurp(dir, "err2");
	assert_non_null(strstr(err, "the file there is not one it wrote"));
	free(err);
	tt_rmdir(dir);
}

/* Seconds a program may take under `record` on a loaded machine: one that hangs
 * (a lock never released) fails instead of stopping the suite. */
#define RUN_LIMIT 60

/* Builds SRC_DIR/source as dir/prog with `cc` and `flags` (then runs the shell
 * fragment `then`, in dir, if not NULL), runs it plainly and under `ticktrace record`
 * with `patterns` (a shell fragment of -f options), and checks that both print the
 * same and exit alike; the plain run's output must hold `want` (so the program does
 * what the test is about). record's stderr is left in dir/err, its trace in
 * dir/run.json. */
static void same_as_plain(const char *dir, const char *cc, const char *source, const char *flags,
			  const char *then, const char *patterns, const char *want)
{
	const char *tool = getenv("TT_TEST_TOOL");
	assert_int_equal(tt_sh("rm -f '%s/run.json' && %s%s -O2 -g '%s/%s' -o '%s/prog' -pthread %s", dir,
			       unpreloaded, cc, src_dir, source, dir, flags), 0);
	if (then)
		assert_int_equal(tt_sh("cd '%s' && %s", dir, then), 0);
	int plain = tt_sh("timeout %d '%s/prog' >'%s/want'", RUN_LIMIT, dir, dir);
	int traced = tt_sh("timeout %d '%s' record %s -o '%s/run.ttr' -c '%s/run.json' -- '%s/prog' "
			   ">'%s/got' 2>'%s/err'", RUN_LIMIT, tool, patterns, dir, dir, dir, dir, dir);
	char *expected = slurp(dir, "want"), *got = slurp(dir, "got"), *err = slurp(dir, "err");
	print_message("%s %s %s, -f %s:\n%s", cc, source, flags, patterns, err);
	assert_non_null(strstr(expected, want));
	assert_string_equal(got, expected);
	assert_int_equal(traced, plain);
	free(expected);
	free(got);
	free(err);
}

/* count_slices of dir/run.json */
static int slices_in(const char *dir, const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/run.json", dir);
	cJSON *root = tt_json_load(path);
	assert_non_null(root);
	int n = count_slices(root, name);
	cJSON_Delete(root);
	return n;
}

static const char cancel_want[] = "exit: exited, lock released, 1 destructors run\n"
				  "cancel: cancelled, lock released, 2 destructors run\n"
				  "caught: thrown\nthrow: exited, lock released, 4 destructors run\n";

/* pthread_exit, pthread_cancel and an exception through patched C++ functions: the
 * destructors below them run (the lock_guard is released; before, the second thread
 * deadlocked), and the calls they leave end (none is left unterminated). */
static void forced_unwind_cxx(void **state)
{
	(void)state;
	const char *compilers[] = {"g++", "clang++"};
	for (size_t i = 0; i < 2; i++) {
		if (!compiler(compilers[i]))
			continue;
		char dir[64];
		tt_tmpdir(dir, sizeof(dir));
		same_as_plain(dir, compilers[i], "cancel.cc", "", NULL, "-f 'work_*'", cancel_want);
		char *err = slurp(dir, "err");
		assert_non_null(strstr(err, "patched 2 functions"));
		assert_non_null(strstr(err, " 0 unterminated"));
		free(err);
		assert_int_equal(slices_in(dir, "work_hold(int)"), 4);
		assert_int_equal(slices_in(dir, "work_leave(int)"), 4);
		tt_rmdir(dir);
	}
}

/* The same in C: pthread_cleanup_push's handlers below patched functions run, with
 * and without -fexceptions (with it, only the unwinder runs them); backtrace(3) from
 * patched functions counts the frames the plain run counts (before: 2 of 8). */
static void forced_unwind_c(void **state)
{
	(void)state;
	const char *compilers[] = {"gcc", "clang"};
	const char *flags[] = {"", "-fexceptions"};
	for (size_t i = 0; i < 2; i++)
		for (size_t f = 0; f < 2 && compiler(compilers[i]); f++) {
			char dir[64];
			tt_tmpdir(dir, sizeof(dir));
			same_as_plain(dir, compilers[i], "cleanup.c", flags[f], NULL, "-f 'work_*'",
				      "cleanup: exit\nexit: exited, 1 cleanups run\n"
				      "cleanup: cancel\ncancel: cancelled, 2 cleanups run\n");
			assert_int_equal(slices_in(dir, "work_push"), 2);
			tt_rmdir(dir);
		}
}

/* A program with its own unwinder and demangler (-static-libstdc++ -static-libgcc):
 * its C++ functions match by their demangled names, an exception through them is
 * caught where the program catches it. Stripped, its unwinder cannot be found, so
 * nothing is patched (before: work_mid patched by address, the exception through it
 * ended the program). */
static void static_runtime(void **state)
{
	(void)state;
	if (!compiler("g++"))
		skip();
	char dir[64], by_address[128];
	const char *own = "-static-libstdc++ -static-libgcc";
	tt_tmpdir(dir, sizeof(dir));
	same_as_plain(dir, "g++", "unwind.cc", own, NULL, "-f 'work_*'", "10\n");
	assert_int_equal(slices_in(dir, "work_catch(int)"), 5);
	assert_int_equal(slices_in(dir, "work_mid(int)"), 5);
	assert_int_equal(slices_in(dir, "work_throw(int)"), 5);
	/* stripped, its unwinder cannot be found: nothing is patched, and said so */
	snprintf(by_address, sizeof(by_address), "-f $(cat '%s/addr')", dir);
	same_as_plain(dir, "g++", "unwind.cc", own,
		      "nm prog | sed -n 's/^0*\\([0-9a-f]*\\) T _Z8work_midi$/0x\\1/p' >addr && "
		      "grep -q 0x addr && strip prog",
		      by_address, "10\n");
	char *err = slurp(dir, "err");
	assert_non_null(strstr(err, "carries its own unwinder, which cannot be found with its symbols "
				    "stripped"));
	assert_non_null(strstr(err, "patched 0 functions"));
	free(err);
	tt_rmdir(dir);
}

/* -f '*' matches the unwinder's own functions (libgcc_s's, or the program's static
 * copy): they are left alone, and exceptions and forced unwinds go through the rest,
 * the C++ runtime's __cxa_throw and personality routine included, as without
 * ticktrace. */
static void everything_unwinds(void **state)
{
	(void)state;
	if (!compiler("g++"))
		skip();
	const char *flags[] = {"", "-static-libstdc++ -static-libgcc"};
	for (size_t f = 0; f < 2; f++) {
		char dir[64];
		tt_tmpdir(dir, sizeof(dir));
		same_as_plain(dir, "g++", "unwind.cc", flags[f], NULL, "-f '*'", "10\n");
		char *err = slurp(dir, "err");
		assert_non_null(strstr(err, "left alone"));
		free(err);
		if (f == 0) /* (with a static unwinder, pthread_exit aborts without ticktrace) */
			same_as_plain(dir, "g++", "cancel.cc", flags[f], NULL, "-f '*'", cancel_want);
		tt_rmdir(dir);
	}
}

/* -f '*' in a program built with the sanitizers: their runtime, which intercepts
 * malloc and the like for the patcher and the recording too, is left alone (before:
 * SIGSEGV). ASan wants its runtime first, not the detour library, unless told. */
static void everything_sanitized(void **state)
{
	(void)state;
	/* (in a sanitizer build, the program built as the build's libraries are: one runtime) */
	const char *built = getenv("TT_SANITIZE_FLAGS");
	bool in_sanitizer_build = built && *built;
	const char *cxx = in_sanitizer_build ? getenv("TT_SANITIZE_CXX") : "g++";
	const char *sanitize_flags = in_sanitizer_build ? built : "-fsanitize=address,undefined";
	if (!cxx || !compiler(cxx) || tt_sh("echo 'int main(){}' | %s%s -x c++ %s - -o /dev/null 2>/dev/null",
					   unpreloaded, cxx, sanitize_flags) != 0) {
		print_message("skipped: no sanitizer runtime for %s here\n", cxx ? cxx : "C++");
		skip();
	}
	char dir[64];
	tt_tmpdir(dir, sizeof(dir));
	const char *kept = getenv("ASAN_OPTIONS"); /* (set in a sanitizer build: preload_sanitizer) */
	char *options = kept ? strdup(kept) : NULL;
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=0", 1);
	same_as_plain(dir, cxx, "unwind.cc", sanitize_flags, NULL, "-f '*'", "10\n");
	if (options)
		setenv("ASAN_OPTIONS", options, 1);
	else
		unsetenv("ASAN_OPTIONS");
	free(options);
	tt_rmdir(dir);
}

/* As by_address, a function that saves registers (its first CFA row is one push
 * long; its FDE gives its size): patched, its calls recorded as by name. */
static void by_address_saving(void **state)
{
	(void)state;
	char dir[64], addr[64] = "", name[96];
	tt_tmpdir(dir, sizeof(dir));
	const char *tool = getenv("TT_TEST_TOOL");
	assert_int_equal(tt_sh("%sgcc -O2 '%s/work.c' -o '%s/full' -pthread && nm '%s/full' | "
			       "sed -n 's/^0*\\([0-9a-f]*\\) T work_recurse$/0x\\1/p' >'%s/addr' && "
			       "strip -o '%s/work' '%s/full'", unpreloaded, src_dir, dir, dir, dir, dir, dir), 0);
	assert_int_equal(tt_sh("objdump -d '%s/full' | grep -A1 '<work_recurse>:' | grep -q push", dir),
			 0); /* what the test is about */
	char *text = slurp(dir, "addr");
	sscanf(text, "%63s", addr);
	free(text);
	assert_true(strncmp(addr, "0x", 2) == 0);
	assert_int_equal(tt_sh("'%s' record -f work_recurse -o '%s/run.ttr' -c '%s/run.json' -- '%s/full' "
			       ">/dev/null 2>&1", tool, dir, dir, dir), 0);
	int by_name = slices_in(dir, "work_recurse");
	assert_true(by_name > 0);
	assert_int_equal(tt_sh("rm '%s/run.json' && '%s' record -f %s -o '%s/run.ttr' -c '%s/run.json' "
			       "-- '%s/work' >/dev/null 2>'%s/err'", dir, tool, addr, dir, dir, dir, dir), 0);
	char *err = slurp(dir, "err");
	print_message("%s", err);
	assert_non_null(strstr(err, "patched 1 function ("));
	free(err);
	snprintf(name, sizeof(name), "work+%s", addr); /* the converter's name for it */
	assert_int_equal(slices_in(dir, name), by_name);
	tt_rmdir(dir);
}

/* In an AddressSanitizer build the detour library needs the sanitizer's runtime loaded
 * before it, which a plain program does not do: it is preloaded into every command the
 * test runs, allowed to come after the detour library (which `record` preloads first),
 * and without leak checks (the compilers the test runs leak on purpose). 0 or -1. */
static int preload_sanitizer(void)
{
	const char *runtime = getenv("TT_ASAN_RUNTIME"); /* (tests/meson.build) */
	if (!runtime || !*runtime)
		return -1;
	const char *options = getenv("ASAN_OPTIONS");
	char merged[2048];
	snprintf(merged, sizeof(merged), "%s%sverify_asan_link_order=0:detect_leaks=0",
		 options ? options : "", options && *options ? ":" : "");
	setenv("LD_PRELOAD", runtime, 1);
	setenv("ASAN_OPTIONS", merged, 1);
	unpreloaded = "env -u LD_PRELOAD ";
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: test_detour SRC_DIR LIB_DIR SANITIZE\n");
		return 2;
	}
	/* What record's processes say (the patch report, the calls not recorded) is read
	 * from record's stderr, a file here: asked there, as before logs beside the traces
	 * took it where stderr is no terminal (record_cli.sh's stderr_pipe tests those). */
	setenv("TICKTRACE_LOG", "stderr", 1);
	src_dir = argv[1];
	snprintf(work_c, sizeof(work_c), "%s/work.c", src_dir);
	lib_dir = argv[2];
	if (strstr(argv[3], "address") && preload_sanitizer() < 0) {
		printf("skipped: the detour library is built with -fsanitize=%s, whose runtime a "
		       "plain program does not load, and it is not found to preload\n", argv[3]);
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gcc_plain),   cmocka_unit_test(gcc_patchable),
		cmocka_unit_test(gcc_patchable_before), cmocka_unit_test(gcc_few_nops),
		cmocka_unit_test(clang_plain), cmocka_unit_test(clang_patchable),
		cmocka_unit_test(unwinding),   cmocka_unit_test(by_address),
		cmocka_unit_test(registers),   cmocka_unit_test(short_leaf),
		cmocka_unit_test(other_stacks), cmocka_unit_test(thread_before_patching),
		cmocka_unit_test(everything),
		cmocka_unit_test(disabled),    cmocka_unit_test(exit_status),
		cmocka_unit_test(forced_unwind_cxx), cmocka_unit_test(forced_unwind_c),
		cmocka_unit_test(static_runtime), cmocka_unit_test(everything_unwinds),
		cmocka_unit_test(everything_sanitized), cmocka_unit_test(by_address_saving),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
