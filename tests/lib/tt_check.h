/* Test support: runs the ticktrace command, reads its JSON back with cJSON, and turns
 * a thread's events into a (phase, name, depth) listing to compare with an expected
 * one. */
#ifndef TT_CHECK_H
#define TT_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

struct tt_run {
	int status;     /* exit status, or 128 + signal */
	char err[16384]; /* what it printed on stderr */
	char *out;      /* what it printed on stdout (free it) */
	size_t out_len;
};

/* Runs `ticktrace` (path in $TT_TEST_TOOL, else "ticktrace") with a NULL-terminated
 * argument list. */
void tt_run(struct tt_run *r, const char *const *args);
#define TT_RUN(r, ...) tt_run((r), (const char *const[]){__VA_ARGS__, NULL})

/* Runs a shell command made with printf's format; its exit status (128 after a
 * signal), and the command on stderr when it is not 0. */
int tt_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A program started with ticktrace settings of the test's choosing. */
struct tt_child {
	pid_t pid;
	FILE *out; /* its standard output */
};
/* Starts `prog` with `args` (NULL-terminated, argv[0] excluded) and `settings`
 * (NULL-terminated "NAME=value") added to an environment without any other TICKTRACE
 * variable; its standard error goes to the file `err` if not NULL. 0 or -1. */
int tt_child_spawn(struct tt_child *c, const char *prog, const char *const *settings,
		   const char *const *args, const char *err);
/* Waits at most `seconds` for the child: its exit status, or 128 + the signal that
 * ended it; -1 when it was still running (it is then killed). */
int tt_child_wait(struct tt_child *c, int seconds);

/* A fresh directory for a test's files ("/tmp/tt-test-XXXXXX"); removed with all
 * it holds by tt_rmdir. */
void tt_tmpdir(char *dir, size_t cap);
/* The same under `base` (a memory file system, /dev/shm, for a test whose figures a
 * busy disk would move), removed alike. */
void tt_tmpdir_in(const char *base, char *dir, size_t cap);
void tt_rmdir(const char *dir);
/* A cmocka fixture: a fresh directory and the paths of a test's input, output and
 * one more file in it. */
struct tt_fixture {
	char dir[64];
	char in[128];
	char out[128];
	char aux[128];
};
/* Allocates *state as a struct tt_fixture whose in and out are named `in` and `out`
 * (aux: "aux"); 0. */
int tt_fixture_setup(void **state, const char *in, const char *out);
/* Removes the directory with its files and frees the fixture; 0. */
int tt_fixture_teardown(void **state);

/* Entries in `dir` (besides . and ..). */
int tt_dir_entries(const char *dir);

/* The whole of a file as a string (free it); NULL when it cannot be opened. */
char *tt_read_text(const char *path);

/* Parses a whole file; NULL when it is not JSON. */
cJSON *tt_json_load(const char *path);

/* The events of one thread (tid; 0: every thread) as lines "ph name depth\n", in
 * time order, with depth from the nesting of X events; also checks that the X events
 * nest (returns NULL and prints why when one overlaps its parent). Metadata,
 * counters and flow events (s, t, f) are left out. Free the result. */
char *tt_json_listing(cJSON *root, uint32_t tid);

/* Whether a thread_name metadata event names a thread's states track ("NAME (states)"
 * or "states", beside the thread: its Running, Preempted and Blocked slices), which
 * is no thread of the program's and whose slices depend on the machine's load. */
bool tt_json_is_states_track(const cJSON *thread_name);

/* tt_json_listing of the thread named `thread` (NULL: the process's main thread,
 * whose tid is its pid); fails the test when there is none. */
char *tt_json_thread_listing(cJSON *root, const char *thread);

/* check-perfetto.py CHECK_PY on `pftrace` against `json` with the schema, its output
 * in dir/perfetto.out, shown when it fails: 0 same content, 77 no protoc, else a
 * difference. */
int tt_check_perfetto(const char *check_py, const char *schema, const char *pftrace,
		      const char *json, const char *dir);
/* tt_check_perfetto, then the JSON parsed: NULL (said why) when the two differ or the
 * JSON is not JSON. */
cJSON *tt_json_load_checked(const char *check_py, const char *schema, const char *pftrace,
			    const char *json, const char *dir);

/* The first event with this phase and name, or NULL. */
cJSON *tt_json_find(cJSON *root, const char *ph, const char *name);

/* A timestamp field in integer nanoseconds. */
int64_t tt_json_ns(const cJSON *ev, const char *field);

#endif
