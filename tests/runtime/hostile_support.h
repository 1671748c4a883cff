#ifndef TT_HOSTILE_SUPPORT_H
#define TT_HOSTILE_SUPPORT_H

/* What the hostile-use tests (test_hostile*.c) share: running tt_longrun_prog and
 * reading what it said. */
#include <stddef.h>

extern const char *tt_h_prog;

#define TT_H(...) ((const char *const[]){__VA_ARGS__, NULL})

/* A test's directory: dir/run.ttr as TICKTRACE_OUT (in `out`), dir/stderr for what
 * the program says. */
struct tt_h_dir {
	char dir[64], path[128], out[160], err[160];
};

int tt_h_run(const char *const *settings, const char *const *args, const char *err,
	     char *line, size_t cap, int seconds);
const char *tt_h_read(const char *path);
void tt_h_expect_text(const char *path, const char *want);
void tt_h_dir_make(struct tt_h_dir *d);

#endif
