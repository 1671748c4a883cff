/* The hostile-use tests' shared part (see hostile_support.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tt_check.h"
#include "read/read.h"
#include "hostile_support.h"

const char *tt_h_prog;

/* Runs the program to its end, at most `seconds`; its status (-1: it hung and was
 * killed). Its standard error goes to `err` if not NULL, its first output line to
 * `line` if not NULL. */
int tt_h_run(const char *const *settings, const char *const *args, const char *err,
	     char *line, size_t cap, int seconds)
{
	struct tt_child c;
	assert_int_equal(tt_child_spawn(&c, tt_h_prog, settings, args, err), 0);
	if (line && !fgets(line, (int)cap, c.out))
		line[0] = 0;
	return tt_child_wait(&c, seconds);
}

/* The whole of a file, or "" (valid until the next call). */
const char *tt_h_read(const char *path)
{
	static char *text;
	free(text);
	text = tt_read_text(path);
	return text ? text : "";
}

void tt_h_expect_text(const char *path, const char *want)
{
	const char *text = tt_h_read(path);
	if (!strstr(text, want))
		fail_msg("%s does not say \"%s\":\n%s", path, want, text);
}


void tt_h_dir_make(struct tt_h_dir *d)
{
	tt_tmpdir(d->dir, sizeof d->dir);
	snprintf(d->path, sizeof d->path, "%s/run.ttr", d->dir);
	snprintf(d->out, sizeof d->out, "TICKTRACE_OUT=%s", d->path);
	snprintf(d->err, sizeof d->err, "%s/stderr", d->dir);
}

