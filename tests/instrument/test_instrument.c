/* Zero-markup tracing end to end: small programs (tests/programs/instrument/) built with gcc
 * and clang, C and C++, at -O0 and -O2 with -finstrument-functions, run, converted;
 * each thread's call tree, as (name, depth) lines, must be the expected one, with
 * real (demangled) names, in the JSON and in the Perfetto output alike.
 *
 *   test_instrument SRC_DIR LIB_DIR INCLUDE_DIR SANITIZE CC_ID CHECK_PERFETTO.py SCHEMA
 *
 * In a sanitizer build the programs must link the sanitizer runtime the library was
 * built with: only the compiler that built it is used (the normal build runs all). */
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt_check.h"

static const char *src_dir, *lib_dir, *include_dir, *sanitize, *build_cc, *check_py, *schema;

/* The compiler, or NULL (the test is then skipped) when it cannot be used here. */
static const char *compiler(const char *cc)
{
	bool gnu = strcmp(cc, "gcc") == 0 || strcmp(cc, "g++") == 0;
	if (strcmp(sanitize, "none") != 0 && gnu != (strcmp(build_cc, "gcc") == 0)) {
		print_message("skipped: the library is built with -fsanitize=%s by %s, whose runtime "
			      "%s programs cannot load\n", sanitize, build_cc, cc);
		return NULL;
	}
	if (tt_sh("command -v %s >/dev/null", cc) != 0) {
		print_message("skipped: no %s here\n", cc);
		return NULL;
	}
	return cc;
}

/* Flags for every instrumented object: debug info, the tested level, the sanitizers
 * as the library was built with them (TT_SANITIZE_FLAGS, tests/meson.build). */
static void cflags(char *buf, size_t cap, const char *opt)
{
	const char *sanitize_flags = getenv("TT_SANITIZE_FLAGS");
	snprintf(buf, cap, "-g %s -finstrument-functions -Wall -Werror -I'%s' %s", opt, include_dir,
		 sanitize_flags ? sanitize_flags : "");
}

/* The listing of the thread named `thread` (NULL: the process's main thread). */
static void assert_listing(cJSON *root, const char *thread, const char *expected)
{
	char *got = tt_json_thread_listing(root, thread);
	assert_non_null(got);
	assert_string_equal(got, expected);
	free(got);
}

/* Converts dir/run.ttr to JSON (returned) and to Perfetto's format, which must hold
 * the same slices (check-perfetto.py; skipped without protoc). `extra`: one more
 * convert option, or NULL. */
static cJSON *convert(const char *dir, const char *extra, const char *extra_value)
{
	char ttr[512], json[512], pf[512];
	snprintf(ttr, sizeof(ttr), "%s/run.ttr", dir);
	snprintf(json, sizeof(json), "%s/run.json", dir);
	snprintf(pf, sizeof(pf), "%s/run.pftrace", dir);
	struct tt_run r;
	if (extra) /* --source: file and line in the args */
		TT_RUN(&r, "convert", ttr, "-o", json, "-f", "-q", "--source", extra, extra_value);
	else
		TT_RUN(&r, "convert", ttr, "-o", json, "-f", "-q", "--source");
	if (r.status)
		print_message("%s", r.err);
	assert_int_equal(r.status, 0);
	free(r.out);
	if (extra)
		TT_RUN(&r, "convert", ttr, "-o", pf, "-f", "-q", extra, extra_value);
	else
		TT_RUN(&r, "convert", ttr, "-o", pf, "-f", "-q");
	assert_int_equal(r.status, 0);
	free(r.out);
	cJSON *root = tt_json_load_checked(check_py, schema, pf, json, dir);
	assert_non_null(root);
	return root;
}

static const char calls_main[] =
	"X main 0\n"
	"X fact 1\n"
	"X fact 2\n"
	"X fact 3\n"
	"X mixed 1\n"
	"X manual_scope 2\n"
	"X inner 3\n"
	"X manual_pair 3\n"
	"X inner 4\n"
	"X shared_add 1\n"
	"X plugin_entry 1\n"
	"X plugin_scope 2\n"
	"X plugin_square 3\n";
static const char calls_worker[] = "X worker 0\nX crunch 1\n";

/* The line where calls.c defines `fact`: the symbols' line is its first. */
static int fact_line(void)
{
	char path[1024], line[256];
	snprintf(path, sizeof(path), "%s/calls.c", src_dir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	int n = 0, found = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, "static int fact("))
			found = n;
	}
	fclose(f);
	return found;
}

/* Builds calls.c with its two libraries into `dir`; 0, or the failing status. */
static int build_calls(const char *cc, const char *opt, const char *dir)
{
	char flags[1024];
	cflags(flags, sizeof(flags), opt);
	if (tt_sh("%s %s -fPIC -shared '%s/shared.c' -o '%s/libshared.so'", cc, flags, src_dir, dir) ||
	    tt_sh("%s %s -fPIC -shared '%s/plugin.c' -o '%s/libplugin.so'", cc, flags, src_dir, dir))
		return -1;
	return tt_sh("%s %s '%s/calls.c' -o '%s/calls' -L'%s' -lshared -L'%s' -lticktrace "
		  "-Wl,-rpath,'%s':'%s' -pthread -ldl",
		  cc, flags, src_dir, dir, dir, lib_dir, dir, lib_dir);
}

static int run_calls(const char *dir)
{
	return tt_sh("TICKTRACE_OUT='%s/run.ttr' '%s/calls' '%s/libplugin.so'", dir, dir, dir);
}

static void check_calls(const char *cc, const char *opt)
{
	if (!compiler(cc))
		skip();
	char dir[64];
	tt_tmpdir(dir, sizeof(dir));
	assert_int_equal(build_calls(cc, opt, dir), 0);
	assert_int_equal(run_calls(dir), 0);
	cJSON *root = convert(dir, NULL, NULL);
	assert_listing(root, NULL, calls_main);
	assert_listing(root, "worker-a", calls_worker);
	assert_listing(root, "worker-b", calls_worker);
	/* debug info gives each function its file and line */
	const cJSON *fact = tt_json_find(root, "X", "fact");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(fact, "args");
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(args, "src"); /* "file:line" */
	assert_true(cJSON_IsString(src));
	const char *at = strstr(src->valuestring, "/calls.c:");
	assert_non_null(at);
	int line = atoi(at + strlen("/calls.c:"));
	int defined = fact_line();
	assert_true(line == defined || line == defined + 1); /* the signature or its brace */
	cJSON_Delete(root);
	tt_rmdir(dir);
}

static void test_gcc_O0(void **state) { (void)state; check_calls("gcc", "-O0"); }
static void test_gcc_O2(void **state) { (void)state; check_calls("gcc", "-O2"); }
static void test_clang_O0(void **state) { (void)state; check_calls("clang", "-O0"); }
static void test_clang_O2(void **state) { (void)state; check_calls("clang", "-O2"); }

static void check_cxx(const char *cxx, const char *opt)
{
	if (!compiler(cxx))
		skip();
	char dir[64], flags[1024];
	tt_tmpdir(dir, sizeof(dir));
	cflags(flags, sizeof(flags), opt);
	assert_int_equal(tt_sh("%s %s '%s/shapes.cc' -o '%s/shapes' -L'%s' -lticktrace -Wl,-rpath,'%s'",
			    cxx, flags, src_dir, dir, lib_dir, lib_dir), 0);
	assert_int_equal(tt_sh("TICKTRACE_OUT='%s/run.ttr' '%s/shapes'", dir, dir), 0);
	cJSON *root = convert(dir, NULL, NULL);
	assert_listing(root, NULL,
		       "X main 0\n"
		       "X shapes::total(shapes::Circle const&) 1\n"
		       "X shapes::Circle::area() const 2\n"
		       "X double shapes::twice<double>(double) 2\n");
	cJSON_Delete(root);
	tt_rmdir(dir);
}

static void test_gxx_O0(void **state) { (void)state; check_cxx("g++", "-O0"); }
static void test_gxx_O2(void **state) { (void)state; check_cxx("g++", "-O2"); }
static void test_clangxx_O0(void **state) { (void)state; check_cxx("clang++", "-O0"); }
static void test_clangxx_O2(void **state) { (void)state; check_cxx("clang++", "-O2"); }

/* A stripped program: its static functions have no symbol left, so they are named
 * module+0xoffset; with its debug info under DIR/.build-id, by build-id, they have
 * their names again. */
static void test_stripped(void **state)
{
	(void)state;
	const char *cc = compiler(strcmp(build_cc, "clang") == 0 ? "clang" : "gcc");
	if (!cc)
		skip();
	char dir[64];
	tt_tmpdir(dir, sizeof(dir));
	assert_int_equal(build_calls(cc, "-O2", dir), 0);
	assert_int_equal(tt_sh("cd '%s' && id=$(readelf -n calls | sed -n 's/.*Build ID: *//p') && "
			    "test -n \"$id\" && mkdir -p debug/.build-id/${id%%${id#??}} && "
			    "objcopy --only-keep-debug calls debug/.build-id/${id%%${id#??}}/${id#??}.debug && "
			    "strip calls", dir), 0);
	assert_int_equal(run_calls(dir), 0);

	cJSON *root = convert(dir, NULL, NULL);
	assert_null(tt_json_find(root, "X", "fact"));
	char *listing = tt_json_thread_listing(root, NULL);
	assert_non_null(strstr(listing, "X calls+0x")); /* module+0xoffset */
	assert_non_null(strstr(listing, "X shared_add 1\n")); /* the library is not stripped */
	free(listing);
	cJSON_Delete(root);

	char debug[128];
	snprintf(debug, sizeof(debug), "%s/debug", dir);
	root = convert(dir, "--debug-dir", debug);
	assert_listing(root, NULL, calls_main);
	cJSON_Delete(root);

	/* and so does every other command that reads the run */
	char ttr[512];
	snprintf(ttr, sizeof(ttr), "%s/run.ttr", dir);
	const char *commands[][4] = {
		{"info", "--sites", "0", NULL}, {"report", "-q", NULL}, {"spikes", "-q", "--threshold=1ns", NULL},
		{"flame", "-q", "-o-", NULL}, {"diff", ttr, "-q", NULL}, /* the run against itself */
	};
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		for (int with_debug = 0; with_debug < 2; with_debug++) {
			const char *args[8] = {commands[i][0], ttr};
			size_t n = 2;
			for (size_t k = 1; commands[i][k]; k++)
				args[n++] = commands[i][k];
			if (with_debug) {
				args[n++] = "--debug-dir";
				args[n++] = debug;
			}
			struct tt_run r;
			tt_run(&r, args);
			if (r.status || !strstr(r.out, "fact") != !with_debug)
				print_message("%s%s: status %d, %s\n%s", args[0], with_debug ? " --debug-dir" : "",
					      r.status, r.err, r.out);
			assert_int_equal(r.status, 0);
			/* stripped, "fact" is named by its debug info only */
			assert_true(!strstr(r.out, "fact") == !with_debug);
			free(r.out);
		}
	}
	tt_rmdir(dir);
}

/* An instrumented malloc of the program's own, which ticktrace's start-up reaches
 * through the C library before it can record: the events from there are dropped and
 * counted, and the program runs (without the guard it waited on itself forever). */
static void test_own_malloc(void **state)
{
	(void)state;
	if (strcmp(sanitize, "none") != 0) {
		print_message("skipped: the sanitizers' malloc cannot be replaced by the program's\n");
		skip();
	}
	const char *cc = compiler(strcmp(build_cc, "clang") == 0 ? "clang" : "gcc");
	if (!cc)
		skip();
	char dir[64], flags[1024];
	tt_tmpdir(dir, sizeof(dir));
	cflags(flags, sizeof(flags), "-O2");
	assert_int_equal(tt_sh("%s %s '%s/own_malloc.c' -o '%s/own_malloc' -L'%s' -lticktrace "
			    "-Wl,-rpath,'%s'", cc, flags, src_dir, dir, lib_dir, lib_dir), 0);
	assert_int_equal(tt_sh("TICKTRACE_OUT='%s/run.ttr' timeout -s KILL 60 '%s/own_malloc'", dir, dir), 0);
	cJSON *root = convert(dir, NULL, NULL);
	char *listing = tt_json_thread_listing(root, NULL);
	assert_non_null(listing);
	assert_memory_equal(listing, "X main 0\nX malloc 1\nX free 1\n", 28);
	free(listing);
	cJSON_Delete(root);
	tt_rmdir(dir);
}

int main(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr, "usage: test_instrument SRC_DIR LIB_DIR INCLUDE_DIR SANITIZE CC_ID "
				"CHECK_PERFETTO.py SCHEMA\n");
		return 2;
	}
	src_dir = argv[1];
	lib_dir = argv[2];
	include_dir = argv[3];
	sanitize = argv[4];
	build_cc = argv[5];
	check_py = argv[6];
	schema = argv[7];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gcc_O0),     cmocka_unit_test(test_gcc_O2),
		cmocka_unit_test(test_clang_O0),   cmocka_unit_test(test_clang_O2),
		cmocka_unit_test(test_gxx_O0),     cmocka_unit_test(test_gxx_O2),
		cmocka_unit_test(test_clangxx_O0), cmocka_unit_test(test_clangxx_O2),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_own_malloc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
