/* ticktrace's own descriptors, in a process that is the program's. A program may
 * close every descriptor it did not open (daemons close 3..1023, or call closefrom
 * or close_range) and open its own files at the same numbers, or dup2 over them; so
 * ticktrace keeps each of its descriptors at a high number, out of the way of the
 * numbers a program takes first, remembers which file it is, checks before each use
 * that the number still is that file, and never closes a number it cannot prove its
 * own. Its descriptors take a quarter of the soft RLIMIT_NOFILE at most (the numbers
 * from three quarters up): the rest is the program's, as without ticktrace.
 *
 * What a check cannot close: it and the call it allows are two system calls, and a
 * thread of the program's that puts a file of its own at ticktrace's number between
 * them (dup2 over it, or a close and an open that reach that high) has that one call
 * act on its file. So each check is the last thing before its call (no lock let go,
 * nothing allocated, nothing said between them): the window is one system call's
 * return and the next one's entry, at a number the program reaches only by naming it
 * or by holding three quarters of its limit; the next check finds the number taken.
 *
 * Below a small limit (TT__FD_FEW) a quarter is a handful of descriptors, which a
 * program sized to its limit needs (xz -T2 takes 3 of ulimit -n 6's, and fails for
 * want of the one ticktrace would keep): ticktrace then keeps none in the program's
 * table while it runs (no copy of stderr, no log, live file, spike log, perf
 * events: each says what it gave up), and a file written and closed at once (the
 * trace at exit, a dump: tt__fd_keep_brief) takes one for that moment alone, past
 * the share (the program is ending), or in a table of a thread of ticktrace's own
 * where the program holds them all (writer/output.c).
 * Closing it takes a descriptor table of ticktrace's own (tt__fd_private_table,
 * lines.c: unshare(CLONE_FILES)): tt-sched's and tt-drain's (the stream's file, made
 * there), and the writers' at the descriptor limit; the program's stderr and its
 * descriptors by name (/dev/stdout) reach them as copies (tt__fd_of_program).
 *
 * The platform's files (tt_os_file_*): the same policy holds Windows' handles, where
 * it costs little and asks nothing (no share, any handle: a handle is no small number
 * a program closes or takes by range). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"

/* Numbers past this would grow the program's table of descriptors for nothing: with
 * a soft limit above it, ticktrace's numbers start at three quarters of it. */
#define TT__FD_TABLE_MAX 4096

/* Below this soft RLIMIT_NOFILE, ticktrace keeps no descriptor in the program's table
 * while it runs (a quarter of it: 7 at most). */
#define TT__FD_FEW 32

static int tt__fds_kept; /* how many descriptors ticktrace holds now */

int tt__fd_few(void)
{
	return tt_os_files_limit() < TT__FD_FEW;
}

/* tt__fd_few_lately's limit is found again at most this often: a system call
 * (getrlimit) at each thread's own reading at its exit and each look of tt-sched's
 * that reads, where a program changes it seldom, if ever */
#define TT__FD_FEW_AGAIN_NS 100000000

int tt__fd_few_lately(void)
{
	/* (when it was found, times two, plus whether it was small: one word, read and
	 * written whole by any thread; 0: never) */
	static int64_t found;
	int64_t now_ns = tt_os_monotonic_ns(), last = __atomic_load_n(&found, __ATOMIC_RELAXED);
	if (last && now_ns - last / 2 < TT__FD_FEW_AGAIN_NS)
		return (int)(last % 2);
	int few = tt__fd_few();
	__atomic_store_n(&found, now_ns * 2 + few, __ATOMIC_RELAXED);
	return few;
}

static int tt__fd_room_if(int few)
{
	return few && !tt__fd_own_table() ? -EMFILE : 0;
}

int tt__fd_room(void)
{
	return tt__fd_room_if(tt__fd_few());
}

int tt__fd_room_lately(void)
{
	return tt__fd_room_if(tt__fd_few_lately());
}

const char *tt__fd_why(int err, char *buf, size_t size)
{
	uint64_t soft = tt_os_files_limit();
	if (err == -EMFILE && soft < TT__FD_FEW)
		snprintf(buf, size, "ulimit -n is %d: below %d, ticktrace keeps no descriptor in the "
			 "program's table while it runs", (int)soft, TT__FD_FEW);
	else
		snprintf(buf, size, "%s", strerror(-err));
	return buf;
}

void tt__fd_share(int *floor, int *share)
{
	uint64_t soft = tt_os_files_limit();
	uint64_t table = soft < TT__FD_TABLE_MAX ? soft : TT__FD_TABLE_MAX;
	*floor = (int)(table - table / 4);
	*share = soft / 4 < 1 << 30 ? (int)(soft / 4) : 1 << 30;
}

/* What tells the file `file` is: its inode; with `exact`, also its open flags and the
 * close-on-exec flag ticktrace sets (dup2, and a program's open without O_CLOEXEC,
 * leave it clear), which tell ticktrace's descriptor from the program's of the same
 * file (a device: /dev/null, a terminal). */
static int tt__fd_identity(struct tt_os_file file, struct tt__fd *id, int exact)
{
	struct tt_os_file_id now = {.flags = id->id.flags};
	int err = tt_os_file_identify(file, &now, exact);
	if (!err)
		*id = (struct tt__fd){.file = file, .id = now};
	return err;
}

/* Whether f->file is the file kept there: the inode (one system call, before each
 * use), or `exact`ly (before closing it). */
static int tt__fd_is(const struct tt__fd *f, int exact)
{
	struct tt__fd now = {.id.flags = f->id.flags};
	return f->file.handle >= 0 && tt__fd_identity(f->file, &now, exact) == 0 && now.id.dev == f->id.dev &&
	       now.id.ino == f->id.ino && now.id.flags == f->id.flags;
}

void tt__fd_opened(struct tt_os_file file, struct tt__fd *id)
{
	*id = (struct tt__fd){.file = file};
	if (file.handle >= 0 && tt__fd_identity(file, id, 0) < 0) {
		tt_os_file_close(&file);
		id->file.handle = -1;
	}
}

void tt__fd_close_opened(const struct tt__fd *id)
{
	struct tt__fd now = {.id.flags = id->id.flags};
	struct tt_os_file file = id->file;
	if (file.handle >= 0 && tt__fd_identity(file, &now, 0) == 0 && now.id.dev == id->id.dev &&
	    now.id.ino == id->id.ino)
		tt_os_file_close(&file);
}

/* tt__fd_keep; `brief`: tt__fd_keep_brief. */
static int tt__fd_keep_as(struct tt__fd *f, struct tt_os_file file, int brief)
{
	struct tt__fd opened;
	tt__fd_opened(file, &opened);
	f->file.handle = -1;
	if (file.handle < 0)
		return (int)file.handle;
	int floor, share, err = brief ? 0 : tt__fd_room();
	tt__fd_share(&floor, &share);
	struct tt_os_file high = {-1};
	if (__atomic_add_fetch(&tt__fds_kept, 1, __ATOMIC_RELAXED) > share && !brief)
		err = -EMFILE;
	if (!err)
		err = tt_os_file_copy(file, floor, &high);
	tt__fd_close_opened(&opened);
	if (!err && (err = tt__fd_identity(high, f, 1)) < 0)
		tt_os_file_close(&high);
	if (err)
		__atomic_sub_fetch(&tt__fds_kept, 1, __ATOMIC_RELAXED);
	return err;
}

int tt__fd_keep(struct tt__fd *f, struct tt_os_file file)
{
	return tt__fd_keep_as(f, file, 0);
}

int tt__fd_keep_brief(struct tt__fd *f, struct tt_os_file file)
{
	return tt__fd_keep_as(f, file, 1);
}

int tt__fd_ours(const struct tt__fd *f)
{
	return tt__fd_is(f, 0);
}

int tt__fd_ours_exactly(const struct tt__fd *f)
{
	return tt__fd_is(f, 1);
}

int tt__fd_reopen(struct tt__fd *f, const char *path)
{
	if (f->file.handle < 0)
		return -EBADF;
	if (tt__fd_ours(f))
		return 0;
	struct tt__fd was = *f;
	tt__fd_forget(f); /* the number is the program's now: never closed */
	/* The same file, found by its name, or nothing (the platform's: never a link
	 * another user put there, never a FIFO to block on). */
	struct tt_os_file found;
	if (!path || tt_os_file_reopen(path, &was.id, &found) < 0 || tt__fd_keep(f, found) < 0)
		return -EBADF;
	/* What is kept is what was at the number as it was copied: the program may have
	 * put its own file there after the checks above (a dup2 over every number): then
	 * not the file, and the copy let go. */
	if (f->id.dev != was.id.dev || f->id.ino != was.id.ino) {
		tt__fd_close(f);
		return -EBADF;
	}
	return 0;
}

void tt__fd_forget(struct tt__fd *f)
{
	if (f->file.handle >= 0)
		__atomic_sub_fetch(&tt__fds_kept, 1, __ATOMIC_RELAXED);
	f->file.handle = -1;
}

int tt__fd_close(struct tt__fd *f)
{
	if (f->file.handle < 0)
		return 0;
	int ours = tt__fd_is(f, 1);
	struct tt_os_file file = f->file;
	int err = ours ? tt_os_file_close(&file) : 0;
	tt__fd_forget(f);
	return ours ? err : -EBADF;
}
