/* The long-run tests' shared part (see longrun_support.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt_check.h"
#include "read/read.h"
#include "tt_edges.h"
#include "longrun_support.h"

const char *tt_lr_prog;
const char *tt_lr_static_prog;

/* Starts the program with `settings` (NULL-terminated "NAME=value") added to an
 * environment without any other TICKTRACE variable; its standard error goes to the
 * file `err` if not NULL. */
void tt_lr_spawn(struct tt_lr_child *c, const char *const *settings, const char *const *args,
			const char *err)
{
	assert_int_equal(tt_child_spawn(c, tt_lr_prog, settings, args, err), 0);
}

void tt_lr_start(struct tt_lr_child *c, const char *const *settings, const char *const *args)
{
	tt_lr_spawn(c, settings, args, NULL);
}

/* Waits for the child (at most 4 minutes): its exit status, or 128 + the signal
 * that ended it. */
int tt_lr_wait(struct tt_lr_child *c)
{
	int status = tt_child_wait(c, 240);
	assert_int_not_equal(status, -1);
	return status;
}

/* Runs the program to its end; it must exit with 0. */
void tt_lr_run(const char *const *settings, const char *const *args, char *line, size_t cap)
{
	struct tt_lr_child c;
	tt_lr_start(&c, settings, args);
	if (line && !fgets(line, (int)cap, c.out))
		line[0] = 0;
	assert_int_equal(tt_lr_wait(&c), 0);
}

/* Walks a thread's records: its "seq" events in order, each run of dropped events
 * standing for exactly as many as it counts; scopes around them are counted only.
 * With `window` (mode ring), the first may be any. */
void tt_lr_walk_seq(const struct tt_thread *t, struct tt_lr_seq *s, bool window)
{
	*s = (struct tt_lr_seq){.number = UINT32_MAX};
	for (size_t sec = 0; sec < t->nsections; sec++) {
		const struct tt_events *ev = &t->sections[sec];
		const struct tt_record *records = tt_section_records(t, sec);
		for (size_t i = 0; i < ev->count; i++) {
			unsigned kind = TT_RECORD_KIND(records[i].word);
			if (kind == TT_REC_PAD)
				continue;
			if (kind == TT_REC_BEGIN || kind == TT_REC_END) {
				s->events++;
				continue;
			}
			assert_true(kind == TT_REC_INSTANT_ARG || kind == TT_REC_DROPPED);
			assert_true(i + 1 < ev->count); /* its VALUE is in the same section */
			assert_int_equal(TT_RECORD_KIND(records[i + 1].word), TT_REC_VALUE);
			uint64_t value = records[++i].tsc;
			if (kind == TT_REC_DROPPED) {
				uint64_t count = TT_RECORD_PAYLOAD(records[i - 1].word);
				assert_true(count > 0);
				s->next += count;
				s->lost += count;
				s->gaps++;
				continue;
			}
			if (s->number == UINT32_MAX) {
				s->number = (uint32_t)(value >> 32);
				if (window)
					s->first = s->next = (uint32_t)value;
			}
			assert_int_equal(value >> 32, s->number);
			assert_int_equal((uint32_t)value, s->next);
			s->next++;
			s->kept++;
			s->events++;
		}
	}
}

/* The one thread of a file that recorded (ticktrace's own are left out). */
const struct tt_thread *tt_lr_only_thread(const struct tt_file *f)
{
	const struct tt_thread *found = NULL;
	for (size_t i = 0; i < f->nthreads; i++) {
		if (f->threads[i].flags & TT_THREAD_RUNTIME)
			continue;
		assert_null(found);
		found = &f->threads[i];
	}
	assert_non_null(found);
	return found;
}

void tt_lr_tmpfile(char *dir, size_t cap, char *path, size_t path_cap)
{
	tt_tmpdir(dir, cap);
	snprintf(path, path_cap, "%s/run.ttr", dir);
}

/* Converts `path` to dir/run.json; the conversion must succeed and say `says` on
 * stderr. */
void tt_lr_convert_says(const char *dir, const char *path, const char *says)
{
	char out[192];
	snprintf(out, sizeof out, "%s/run.json", dir);
	struct tt_run r;
	TT_RUN(&r, "convert", path, "-o", out);
	assert_int_equal(r.status, 0);
	if (!strstr(r.err, says))
		fail_msg("the converter did not say \"%s\": %s", says, r.err);
	free(r.out);
}

int tt_lr_main(int argc, char **argv, const char *name, const struct CMUnitTest *tests,
	       size_t count)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s tt_longrun_prog tt_longrun_prog_static\n", name);
		return 2;
	}
	/* Absolute: a test starts the program from a directory of its own. */
	static char prog[PATH_MAX], static_prog[PATH_MAX];
	tt_lr_prog = realpath(argv[1], prog) ? prog : argv[1];
	tt_lr_static_prog = realpath(argv[2], static_prog) ? static_prog : argv[2];
	const char *only = getenv("TT_TEST_ONLY"); /* a pattern: run the tests it names */
	if (only)
		cmocka_set_test_filter(only);
	int failed = _cmocka_run_group_tests("tests", tests, count, NULL, NULL);
	/* A failed case's allocations stay where its assertion jumped out: LeakSanitizer's
	 * check at exit would end the run by SIGABRT (abort_on_error=1, the CI's) and
	 * report those, not the failure. Its count, as cmocka's main returns it. */
	if (failed) {
		fflush(stdout);
		_exit(failed);
	}
	return 0;
}
