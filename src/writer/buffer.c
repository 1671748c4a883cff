/* A file's bytes, buffered into few system calls (records go from the chunks to the
 * file without a copy), and the headers and padding of its sections. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "writer/writer.h"

/* Writes this large go to the file directly. */
#define TT__OUT_DIRECT 4096
/* A FIFO or device written in place (non-blocking) whose reader takes nothing for this
 * long is given up (ETIMEDOUT): the program never waits on a reader. */
#define TT__OUT_READER_WAIT_MS 10000

/* The descriptor checked, at file position `at` (found again by its path, it is
 * moved there). */
static int tt__out_own_at(struct tt__out *out, uint64_t at)
{
	if (tt__fd_ours(&out->file))
		return 0;
	if (tt__fd_reopen(&out->file, out->path) == 0 && lseek(out->file.fd, (off_t)at, SEEK_SET) >= 0)
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
	const char *p = data;
	while (size && !out->err) {
		tt__background_io(1); /* (a fork need not wait for the write) */
		/* Checked last before the call: nothing between them (fds.c). */
		ssize_t n = tt__out_own_at(out, at) == 0 ? write(out->file.fd, p, size) : 0;
		int err = n < 0 ? errno : EIO;
		tt__background_io(0);
		if (out->err)
			return;
		if (n < 0 && err == EINTR)
			continue;
		/* (closed since it was checked: checked again) */
		if (n < 0 && err == EBADF && !tt__fd_ours(&out->file))
			continue;
		if (n < 0 && err == EAGAIN) {
			struct pollfd ready = {.fd = out->file.fd, .events = POLLOUT};
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

void tt__out_flush(struct tt__out *out)
{
	tt__out_raw(out, out->buf, out->len, out->offset - out->len);
	out->len = 0;
}

/* What is buffered, then `size` bytes at `data`, in one system call where it can. */
static void tt__out_flush_with(struct tt__out *out, const void *data, size_t size)
{
	uint64_t at = out->offset - size - out->len;
	struct iovec iov[2] = {{out->buf, out->len}, {(void *)data, size}};
	tt__background_io(1);
	ssize_t n = out->err || tt__out_own_at(out, at) ? 0 : writev(out->file.fd, iov, 2);
	tt__background_io(0);
	size_t done = n > 0 ? (size_t)n : 0;
	/* What a short or interrupted write left, the slow way (it reports errors). */
	size_t from_buf = done < out->len ? done : out->len;
	tt__out_raw(out, out->buf + from_buf, out->len - from_buf, at + from_buf);
	size_t from_data = done - from_buf;
	tt__out_raw(out, (const char *)data + from_data, size - from_data, at + done);
	out->len = 0;
}

void tt__out(struct tt__out *out, const void *data, size_t size)
{
	if (!size)
		return; /* (data may then be NULL: a section with no states yet) */
	out->offset += size;
	/* Records go from the chunks to the file without a copy into the buffer. */
	if (size >= TT__OUT_DIRECT) {
		tt__out_flush_with(out, data, size);
		return;
	}
	if (size > sizeof out->buf - out->len)
		tt__out_flush(out);
	memcpy(out->buf + out->len, data, size);
	out->len += size;
}

void tt__out_section(struct tt__out *out, uint32_t type, uint64_t size)
{
	struct tt_section_header header = {.type = type, .size = size};
	tt__out(out, &header, sizeof header);
}

void tt__out_pad(struct tt__out *out, uint64_t size)
{
	static const char zeros[16];
	tt__out(out, zeros, TT_SECTION_PADDED(size) - size);
}

/* A section's header: within an UNLOADED section when `until` is not 0 (what it
 * describes held until then). */
void tt__out_section_until(struct tt__out *out, uint32_t type, uint64_t size, uint64_t until)
{
	if (until) {
		struct tt_unloaded_info info = {.until_tsc = until};
		tt__out_section(out, TT_SEC_UNLOADED, sizeof info + sizeof(struct tt_section_header) +
							      TT_SECTION_PADDED(size));
		tt__out(out, &info, sizeof info);
	}
	tt__out_section(out, type, size);
}

