/* The care of a file of ticktrace's (struct tt__fd_out: base/fds.c's file), written
 * through the platform's sink: its descriptor, checked before each write and found
 * again by its path when the program took it; a device or FIFO's reader waited for, a
 * while (Linux's; Windows' handle under the same care). */
#include <errno.h>
#include <stddef.h>

#include "writer/writer.h"

/* A FIFO or device written in place (non-blocking) whose reader takes nothing for this
 * long is given up (ETIMEDOUT): the program never waits on a reader. */
#define TT__OUT_READER_WAIT_MS 10000

struct tt__fd_out *tt__fd_out(struct tt__out *out)
{
	return (struct tt__fd_out *)out; /* (its first member) */
}

/* The descriptor checked, at file position `at` (found again by its path, it is
 * moved there). */
static int tt__out_own_at(struct tt__out *out, uint64_t at)
{
	struct tt__fd_out *f = tt__fd_out(out);
	if (tt__fd_ours(&f->file))
		return 0;
	/* (each call checked last before it, as fds.c holds: found again at a number the
	 * program then dup2'd over, the seek and the write went into its file) */
	if (tt__fd_reopen(&f->file, f->path) == 0 && tt__fd_ours(&f->file) &&
	    tt_os_file_seek(&f->file.file, at) == 0 && tt__fd_ours(&f->file))
		return 0;
	if (!out->err)
		out->err = -EBADF;
	return -EBADF;
}

int tt__out_own(struct tt__out *out)
{
	return tt__out_own_at(out, out->offset - out->len);
}

/* The platform's sink's care: the descriptor checked just before each write. */
static int tt__fd_check(struct tt_os_file_sink *sink, uint64_t at)
{
	struct tt__fd_out *f = (struct tt__fd_out *)((char *)sink - offsetof(struct tt__fd_out, sink));
	int err = tt__out_own_at(&f->out, at);
	sink->file = f->file.file;
	return err;
}

void tt__fd_out_init(struct tt__fd_out *f)
{
	*f = (struct tt__fd_out){0};
	tt_os_file_sink(&f->sink, (struct tt_os_file){-1}); /* (its descriptor: the check's) */
	f->sink.check = tt__fd_check;
	f->sink.io = tt__background_io; /* (a fork need not wait for a write, nor a reader) */
	f->sink.wait_ms = TT__OUT_READER_WAIT_MS;
	tt__out_to(&f->out, &f->sink.sink);
}
