#ifndef TT_LONGRUN_SUPPORT_H
#define TT_LONGRUN_SUPPORT_H

/* What the long-run tests (test_longrun*.c) share: starting tt_longrun_prog, reading
 * the "seq" events it records, and the main that runs a part's tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tt_check.h"
#include "read/read.h"

#ifdef TT_ASAN
#define TT_LR_ASAN 1
#else
#define TT_LR_ASAN 0
#endif

#define tt_lr_child tt_child

#define TT_LR_SETTINGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* What a thread holds of its "seq" events. */
struct tt_lr_seq {
	uint32_t number;     /* of the thread that recorded them */
	uint64_t first;      /* the index of the first one in the file */
	uint64_t next;       /* the next expected index */
	uint64_t kept, lost; /* "seq" events in the file, and counted in runs of dropped ones */
	uint64_t gaps;
	uint64_t events;     /* events of any kind in the file */
};

extern const char *tt_lr_prog;
extern const char *tt_lr_static_prog;

void tt_lr_spawn(struct tt_lr_child *c, const char *const *settings, const char *const *args,
		 const char *err);
void tt_lr_start(struct tt_lr_child *c, const char *const *settings, const char *const *args);
int tt_lr_wait(struct tt_lr_child *c);
void tt_lr_run(const char *const *settings, const char *const *args, char *line, size_t cap);
void tt_lr_walk_seq(const struct tt_thread *t, struct tt_lr_seq *s, bool window);
const struct tt_thread *tt_lr_only_thread(const struct tt_file *f);
void tt_lr_tmpfile(char *dir, size_t cap, char *path, size_t path_cap);
void tt_lr_convert_says(const char *dir, const char *path, const char *says);

/* The main of every part: argv[1] is tt_longrun_prog, argv[2] its static build;
 * TT_TEST_ONLY, a pattern, runs only the tests it names. */
int tt_lr_main(int argc, char **argv, const char *name, const struct CMUnitTest *tests,
	       size_t count);

#endif
