/* writer/buffer.c's care of a file of ticktrace's (struct tt__fd_out) alone (no runtime
 * started): written, then taken by the program (a file of its own put at the number,
 * as a daemon's dup2 over every number does), found again by its path and written on
 * at the place it had, the program's file left as it was. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "writer/writer.h"

static void test_taken_then_found_again(void **state)
{
	(void)state;
	const char *tmp = getenv("TMPDIR");
	char path[512], mine[600], text[64] = {0};
	snprintf(path, sizeof path, "%s/tt-fd-out-%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	snprintf(mine, sizeof mine, "%s.program", path);
	struct tt__fd_out *f = malloc(sizeof *f);
	assert_non_null(f);
	tt__fd_out_init(f);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_int_equal(tt__fd_keep(&f->file, (struct tt_os_file){fd}), 0);
	f->path = path;
	tt__out(&f->out, "first-", 6);
	tt__out_flush(&f->out);
	int program = open(mine, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(program >= 0);
	int taken = (int)f->file.file.handle;
	assert_int_equal(dup2(program, taken), taken);
	tt__out(&f->out, "second", 6);
	tt__out_flush(&f->out);
	assert_int_equal(f->out.err, 0);
	FILE *in = fopen(path, "rb");
	assert_non_null(in);
	assert_int_equal(fread(text, 1, sizeof text - 1, in), 12);
	fclose(in);
	assert_string_equal(text, "first-second");
	struct stat st, there;
	assert_int_equal(fstat(program, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(fstat(taken, &there), 0);
	assert_true(there.st_dev == st.st_dev && there.st_ino == st.st_ino);
	assert_int_equal(tt__fd_close(&f->file), 0);
	close(taken);
	close(program);
	free(f);
	unlink(path);
	unlink(mine);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_taken_then_found_again)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
