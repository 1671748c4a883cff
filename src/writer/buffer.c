/* Linux's sink for a file of ticktrace's (struct tt__fd_out): its descriptor, checked
 * before each write and found again by its path when the program took it; a device or
 * FIFO's reader waited for, a while. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

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
	    lseek(f->file.fd, (off_t)at, SEEK_SET) >= 0 && tt__fd_ours(&f->file))
		return 0;
	if (!out->err)
		out->err = -EBADF;
	return -EBADF;
}

int tt__out_own(struct tt__out *out)
{
	return tt__out_own_at(out, out->offset - out->len);
}

/* `size` bytes at file position `at`. */
static void tt__out_raw(struct tt__out *out, const void *data, size_t size, uint64_t at)
{
	int fd = -1;
	const char *p = data;
	while (size && !out->err) {
		tt__background_io(1); /* (a fork need not wait for the write) */
		/* Checked last before the call: nothing between them (fds.c). */
		ssize_t n = tt__out_own_at(out, at) == 0 ? write(fd = tt__fd_out(out)->file.fd, p, size) : 0;
		int err = n < 0 ? errno : EIO;
		tt__background_io(0);
		if (out->err)
			return;
		if (n < 0 && err == EINTR)
			continue;
		/* (closed since it was checked: checked again) */
		if (n < 0 && err == EBADF && !tt__fd_ours(&tt__fd_out(out)->file))
			continue;
		if (n < 0 && err == EAGAIN) {
			struct pollfd ready = {.fd = fd, .events = POLLOUT};
			tt__background_io(1); /* (nor for the reader) */
			int rc = poll(&ready, 1, TT__OUT_READER_WAIT_MS);
			int poll_err = rc < 0 ? errno : 0;
			tt__background_io(0);
			if (rc == 0)
				out->err = -ETIMEDOUT;
			else if (rc < 0 && poll_err != EINTR)
				out->err = -poll_err;
			continue;
		}
		if (n <= 0) {
			out->err = -err;
			return;
		}
		p += n;
		size -= (size_t)n;
		at += (uint64_t)n;
	}
}

/* The sink's put: both parts in one system call where it can. */
static int tt__fd_put(struct tt_os_sink *sink, const void *a, size_t a_size, const void *b, size_t b_size,
		      uint64_t at)
{
	struct tt__fd_out *f = (struct tt__fd_out *)((char *)sink - offsetof(struct tt__fd_out, sink));
	struct tt__out *out = &f->out;
	struct iovec iov[2] = {{(void *)a, a_size}, {(void *)b, b_size}};
	tt__background_io(1);
	ssize_t n = out->err || tt__out_own_at(out, at) ? 0 :
		    b_size ? writev(f->file.fd, iov, 2) : write(f->file.fd, a, a_size);
	tt__background_io(0);
	size_t done = n > 0 ? (size_t)n : 0;
	/* What a short or interrupted write left, the slow way (it reports errors). */
	size_t from_a = done < a_size ? done : a_size;
	tt__out_raw(out, (const char *)a + from_a, a_size - from_a, at + from_a);
	size_t from_b = done - from_a;
	tt__out_raw(out, (const char *)b + from_b, b_size - from_b, at + done);
	return out->err;
}

void tt__fd_out_init(struct tt__fd_out *f)
{
	*f = (struct tt__fd_out){.sink = {tt__fd_put}};
	tt__out_to(&f->out, &f->sink);
}
