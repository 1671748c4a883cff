/* ticktrace-bench's children: the program started again with settings the runtime
 * reads when it starts (environment variables), each to print a figure or a few. */
#ifndef TT_BENCH_CHILD_H
#define TT_BENCH_CHILD_H

/* Runs `/proc/PID/exe ARGS` (this program; ARGS may end with redirections) with
 * TICKTRACE_OUT=/dev/null, then `env` ("VAR=value ...", which may set it again), and
 * reads the `n` numbers it prints into `figures`: 0, or -1 when it failed or printed
 * fewer (said on stderr). */
int tt_bench_child(const char *env, const char *args, int n, double *figures);

/* Linux's: the benchmark's line on stderr ("ticktrace-bench: " and the text), kept as
 * why the part running failed (tt_bench_child says its child's last line so); the
 * text kept, "" when nothing was said since tt_bench_why_clear. */
void tt_bench_say(const char *format, ...) __attribute__((format(printf, 1, 2)));
const char *tt_bench_why(void);
void tt_bench_why_clear(void);

/* Where children write files: $TICKTRACE_BENCH_DIR, or /var/tmp (on disk, where /tmp
 * may be memory). */
const char *tt_bench_dir(void);

#ifdef _WIN32
/* How many children this process has started (ticktrace-bench.exe measures none of
 * its own figures after one: bench/windows/bench.c says why). */
int tt_bench_children_started(void);
#endif

#endif
