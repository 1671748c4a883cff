/* Windows' lines and tables (base.h: lines.c is Linux's): ticktrace's lines go to the
 * process's stderr, as the Windows runtime has said them (TICKTRACE_LOG is Linux's;
 * no copy of it is kept: a handle is no number a program closes by range), and no
 * thread has a table of handles of its own. */
#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdlib.h>

#include "base/base.h"

FILE *tt__err_stream(void)
{
	return stderr;
}

int tt__err_say(const char *line)
{
	return fputs(line, stderr) >= 0 && fflush(stderr) == 0;
}

void tt__err_start(void)
{
}

void tt__err_to(int where, int (*name_of)(char *buf, size_t size))
{
	(void)name_of;
	/* (the lines stay on stderr: a TICKTRACE_LOG asked for more, said once) */
	const char *log = getenv("TICKTRACE_LOG");
	if (where != TT__LOG_STDERR && log && *log)
		fprintf(stderr, "ticktrace: TICKTRACE_LOG=%s: not on Windows (ticktrace's lines go to "
			"stderr); ignored\n", log);
}

void tt__err_keep(void)
{
}

void tt__err_flush(void)
{
	fflush(stderr);
}

void tt__err_after_fork_in_child(void)
{
}

int tt__fd_private_table(struct tt__fd *const *keep, size_t count)
{
	(void)keep;
	(void)count;
	return -ENOSYS;
}

int tt__fd_own_table(void)
{
	return 0;
}

FILE *tt__fd_stdio(struct tt__fd *f)
{
	/* The C runtime's descriptor takes the handle, which f still names (seeks, its
	 * identity, the cut): fclose closes it, and f is not used after. */
	int fd = _open_osfhandle(f->file.handle, _O_WRONLY | _O_BINARY);
	FILE *stream = fd < 0 ? NULL : _fdopen(fd, "wb");
	if (fd >= 0 && !stream) {
		_close(fd);
		*f = (struct tt__fd)TT__FD_NONE; /* (closed with it) */
	}
	return stream;
}

void tt__stdio_drop(FILE *stream)
{
	/* (the C runtime empties its buffer as a flush fails, written or not) */
	clearerr(stream);
}

int tt__fd_of_program(int fd)
{
	struct tt_os_file file, copy;
	int err = tt_os_descriptor_file(fd, &file);
	if (!err)
		err = tt_os_file_copy(file, 0, &copy);
	if (err) {
		errno = -err;
		return -1;
	}
	/* (a handle's value fits 32 bits, sign-extended back: Windows keeps them so for
	 * 32-bit processes) */
	return (int)copy.handle;
}
