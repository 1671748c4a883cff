/* base/fds.c: ticktrace's own files, the same policy on each system (Linux in the
 * suite, Windows under Wine: tests/windows/): a file kept is a copy in ticktrace's
 * share (Linux: from three quarters of the soft RLIMIT_NOFILE up), the one opened
 * closed; checked before each use; found again by its path once the program took it;
 * closed only while still ticktrace's, the program's file at the number left alone. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"

#ifdef _WIN32
#include <windows.h>
static void tt_temp_path(char *path, size_t size, const char *name)
{
	char dir[MAX_PATH];
	GetTempPathA(sizeof dir, dir);
	snprintf(path, size, "%stt-fds-%lu-%s", dir, GetCurrentProcessId(), name);
}
/* The program takes ticktrace's file: Windows' closes the handle (nothing of its own
 * goes at a handle by number). */
static void tt_take(struct tt_os_file file)
{
	assert_true(CloseHandle((HANDLE)file.handle));
}
#else
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
static void tt_temp_path(char *path, size_t size, const char *name)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(path, size, "%s/tt-fds-%d-%s", tmp && *tmp ? tmp : "/tmp", (int)getpid(), name);
}
/* The program takes ticktrace's number: its own file put there (a daemon's dup2 over
 * every number), which it still holds after ticktrace let the number go. */
static int tt_program_file = -1;
static void tt_take(struct tt_os_file file)
{
	if (tt_program_file < 0)
		tt_program_file = open("/dev/null", O_RDONLY);
	assert_int_equal(dup2(tt_program_file, (int)file.handle), (int)file.handle);
}
/* (lines.c's, which this test does not link: its threads share the program's table) */
int tt__fd_own_table(void)
{
	return 0;
}
static int tt_still_programs(int fd)
{
	struct stat mine, there;
	return fstat(tt_program_file, &mine) == 0 && fstat(fd, &there) == 0 && mine.st_dev == there.st_dev &&
	       mine.st_ino == there.st_ino;
}
#endif

/* What `path` holds, NUL-ended, in `text`. */
static const char *tt_text(const char *path, char *text, size_t size)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t got = fread(text, 1, size - 1, f);
	fclose(f);
	text[got] = 0;
	return text;
}

static void tt_put(struct tt__fd *f, const char *text)
{
	struct tt_os_file_sink sink;
	tt_os_file_sink(&sink, f->file);
	assert_int_equal(sink.sink.put(&sink.sink, text, strlen(text), NULL, 0, 0), 0);
}

/* Kept: a copy, the one opened closed; ours; written and closed whole. */
static void test_keep(void **state)
{
	(void)state;
	char path[600], text[64];
	tt_temp_path(path, sizeof path, "kept");
	struct tt_os_file opened;
	struct tt__fd f = TT__FD_NONE;
	assert_int_equal(tt_os_file_open(path, &opened), 0);
	assert_int_equal(tt__fd_keep(&f, opened), 0);
	assert_true(f.file.handle >= 0 && f.file.handle != opened.handle);
	struct tt_os_file_id id = {0};
	assert_int_equal(tt_os_file_identify(opened, &id, 0), -EBADF);
#ifndef _WIN32
	int floor, share;
	tt__fd_share(&floor, &share);
	assert_true(f.file.handle >= floor);
#endif
	assert_true(tt__fd_ours(&f) && tt__fd_ours_exactly(&f));
	tt_put(&f, "kept");
	assert_int_equal(tt__fd_close(&f), 0);
	assert_true(f.file.handle < 0);
	assert_false(tt__fd_ours(&f));
	assert_int_equal(tt__fd_close(&f), 0); /* (none: nothing to close) */
	assert_string_equal(tt_text(path, text, sizeof text), "kept");
	/* (a failed open's -errno, passed on) */
	assert_int_equal(tt__fd_keep(&f, (struct tt_os_file){-ENOENT}), -ENOENT);
	assert_true(f.file.handle < 0);
	remove(path);
}

/* `path` opened and kept in *f, then taken by the program: what was taken. */
static struct tt_os_file tt_kept_taken(const char *path, struct tt__fd *f)
{
	struct tt_os_file opened;
	assert_int_equal(tt_os_file_open(path, &opened), 0);
	assert_int_equal(tt__fd_keep(f, opened), 0);
	struct tt_os_file taken = f->file;
	tt_take(taken);
	assert_false(tt__fd_ours(f));
	return taken;
}

/* The program's file put at a number taken is still there (Linux), then let go. */
static void tt_left_alone(struct tt_os_file taken)
{
#ifndef _WIN32
	assert_true(tt_still_programs((int)taken.handle));
	close((int)taken.handle);
#else
	(void)taken;
#endif
}

/* Taken by the program: no longer ours; found again by its path (the same file, never
 * another put at the name), or closed as the program's, which is left alone. */
static void test_taken(void **state)
{
	(void)state;
	char path[600], other[600], text[64];
	tt_temp_path(path, sizeof path, "taken");
	tt_temp_path(other, sizeof other, "other");
	struct tt__fd f = TT__FD_NONE;
	struct tt_os_file taken = tt_kept_taken(path, &f);
	assert_int_equal(tt__fd_reopen(&f, path), 0);
	assert_true(tt__fd_ours(&f));
	tt_put(&f, "again");
	assert_string_equal(tt_text(path, text, sizeof text), "again");
#ifndef _WIN32
	assert_true(f.file.handle != taken.handle);
#endif
	tt_left_alone(taken);
	/* Taken again: closed as not ours, the program's file left open. */
	taken = f.file;
	tt_take(taken);
	assert_int_equal(tt__fd_close(&f), -EBADF);
	assert_true(f.file.handle < 0);
	tt_left_alone(taken);
	/* Not found again without its path, nor where another file took its name. */
	taken = tt_kept_taken(path, &f);
	assert_int_equal(tt__fd_reopen(&f, NULL), -EBADF);
	assert_true(f.file.handle < 0);
	tt_left_alone(taken);
	taken = tt_kept_taken(path, &f);
	FILE *planted = fopen(other, "wb");
	assert_non_null(planted);
	fputs("planted", planted);
	fclose(planted);
	remove(path);
	assert_int_equal(rename(other, path), 0);
	assert_int_equal(tt__fd_reopen(&f, path), -EBADF);
	assert_true(f.file.handle < 0);
	assert_string_equal(tt_text(path, text, sizeof text), "planted");
	tt_left_alone(taken);
	remove(path);
}

#ifndef _WIN32
/* Linux's share: numbers from three quarters of the soft limit up, a quarter of it at
 * most (then -EMFILE, the file opened closed), room again once one is closed. */
static void test_share(void **state)
{
	(void)state;
	struct rlimit was, low;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
	low = (struct rlimit){.rlim_cur = 64, .rlim_max = was.rlim_max};
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	int floor, share;
	tt__fd_share(&floor, &share);
	assert_int_equal(floor, 48);
	assert_int_equal(share, 16);
	struct tt__fd kept[17];
	for (int i = 0; i < 16; i++) {
		kept[i] = (struct tt__fd)TT__FD_NONE;
		assert_int_equal(tt__fd_keep(&kept[i], (struct tt_os_file){open("/dev/null", O_WRONLY | O_CLOEXEC)}), 0);
		assert_true(kept[i].file.handle >= 48 && kept[i].file.handle < 64);
	}
	int opened = open("/dev/null", O_WRONLY | O_CLOEXEC);
	assert_true(opened >= 0);
	assert_int_equal(tt__fd_keep(&kept[16], (struct tt_os_file){opened}), -EMFILE);
	assert_int_equal(fcntl(opened, F_GETFD), -1); /* (consumed: closed) */
	assert_int_equal(tt__fd_close(&kept[0]), 0);
	assert_int_equal(tt__fd_keep(&kept[0], (struct tt_os_file){open("/dev/null", O_WRONLY | O_CLOEXEC)}), 0);
	for (int i = 0; i < 16; i++)
		assert_int_equal(tt__fd_close(&kept[i]), 0);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
}

/* Below a small limit (fds.c: TT__FD_FEW, 32) no file is kept while the program runs
 * (-EMFILE, the file opened closed, the limit said as why), where one written and
 * closed at once is (tt__fd_keep_brief): r43's xz at ulimit -n 6
 * failed traced for want of the copy of stderr ticktrace kept at 5, and at 7 to 15
 * the trace at exit found the share taken. */
static void test_few(void **state)
{
	(void)state;
	struct rlimit was, low;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
	static const int limits[] = {6, 7, 8, 12, 16, 31, 32, 64};
	/* (a table as a program's at start: 0..2; the tests before left numbers taken) */
	tt_program_file = -1;
	assert_int_equal(syscall(SYS_close_range, 3u, ~0u, 0u), 0);
	for (size_t k = 0; k < sizeof limits / sizeof limits[0]; k++) {
		low = (struct rlimit){.rlim_cur = (rlim_t)limits[k], .rlim_max = was.rlim_max};
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
		int few = limits[k] < 32, floor, share;
		tt__fd_share(&floor, &share);
		assert_int_equal(tt__fd_room(), few ? -EMFILE : 0);
		/* (the counters' readings heed it within 100 ms: polled, 5 s at most) */
		int64_t until_ns = tt_os_monotonic_ns() + 5000000000;
		while (tt__fd_room_lately() != (few ? -EMFILE : 0) && tt_os_monotonic_ns() < until_ns)
			tt_os_sleep_ns(1000000);
		assert_int_equal(tt__fd_room_lately(), few ? -EMFILE : 0);
		char why[160];
		tt__fd_why(-EMFILE, why, sizeof why);
		if (few) {
			char said[160];
			snprintf(said, sizeof said, "ulimit -n is %d: below 32,", limits[k]);
			assert_non_null(strstr(why, said));
		} else {
			assert_string_equal(why, strerror(EMFILE));
		}
		struct tt__fd kept = TT__FD_NONE;
		int opened = open("/dev/null", O_WRONLY | O_CLOEXEC);
		assert_true(opened >= 0);
		assert_int_equal(tt__fd_keep(&kept, (struct tt_os_file){opened}), few ? -EMFILE : 0);
		if (few)
			assert_int_equal(fcntl(opened, F_GETFD), -1); /* (consumed: closed) */
		/* (brief: every number of the share, below a small limit too) */
		struct tt__fd brief[16];
		int n = share - !few;
		for (int i = 0; i < n; i++) {
			brief[i] = (struct tt__fd)TT__FD_NONE;
			assert_int_equal(tt__fd_keep_brief(&brief[i], (struct tt_os_file){open("/dev/null", O_WRONLY | O_CLOEXEC)}), 0);
			assert_true(brief[i].file.handle >= floor && brief[i].file.handle < limits[k]);
		}
		for (int i = 0; i < n; i++)
			assert_int_equal(tt__fd_close(&brief[i]), 0);
		assert_int_equal(tt__fd_close(&kept), 0);
	}
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
}
#else
/* Windows: no share (a handle is no number a program takes by range), no table of a
 * thread's own; lines go to stderr. */
static void test_windows(void **state)
{
	(void)state;
	int floor, share;
	tt__fd_share(&floor, &share);
	assert_int_equal(share, 1 << 30);
	assert_int_equal(tt__fd_private_table(NULL, 0), -ENOSYS);
	assert_ptr_equal(tt__err, stderr);
	assert_int_equal(tt__err_say("test_fds: a line of ticktrace's\n"), 1);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_keep), cmocka_unit_test(test_taken),
#ifndef _WIN32
					   cmocka_unit_test(test_share), cmocka_unit_test(test_few),
#else
					   cmocka_unit_test(test_windows),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
