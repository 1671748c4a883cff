/* Linux's lines and tables (base.h: lines.c): where ticktrace's lines go (tt__err,
 * exported to the patcher as tt__log: the program's stderr, checked as base/fds.c
 * checks its own descriptors, a copy of it kept from the start, or a log, held with a
 * shared flock; a stdio stream on a descriptor of ticktrace's, fopencookie's), and a
 * thread's table of descriptors of its own (unshare), which the program's stderr and
 * descriptors by name reach as copies (pidfd_getfd). Windows' are lines_windows.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <sched.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/base.h"

/* A stdio stream's writes go through these: each checks the descriptor first. */
static ssize_t tt__fd_stdio_write(void *cookie, const char *buf, size_t size)
{
	struct tt__fd *f = cookie;
	if (!tt__fd_ours(f)) {
		errno = EBADF;
		return -1;
	}
	/* All of it, as a stream on the descriptor itself would: a short count is an
	 * error to stdio, with the errno of the write that failed (EFBIG, ENOSPC). */
	size_t done = 0;
	while (done < size) {
		ssize_t n = write((int)f->file.handle, buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return done ? (ssize_t)done : -1;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int tt__fd_stdio_close(void *cookie)
{
	return tt__fd_close(cookie) < 0 ? -1 : 0;
}

FILE *tt__fd_stdio(struct tt__fd *f)
{
	return fopencookie(f, "w", (cookie_io_functions_t){.write = tt__fd_stdio_write,
							  .close = tt__fd_stdio_close});
}

void tt__stdio_drop(FILE *stream)
{
	__fpurge(stream);
	clearerr(stream);
}

static struct tt__fd tt__err_was = TT__FD_NONE; /* number 2 when ticktrace started */
static FILE *tt__err_file;
/* The calling thread has a table of descriptors of its own (tt__fd_private_table). */
static __thread int tt__own_table __attribute__((tls_model("initial-exec")));

/* Whether `fd` is where ticktrace's lines go (base.h), the program's number 2. */
static int tt__err_fits(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return 0;
	if (tt__err_was.file.handle == 2 && st.st_dev == tt__err_was.id.dev && st.st_ino == tt__err_was.id.ino)
		return 1;
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
		return 1;
	int flags = fcntl(fd, F_GETFL);
	return flags >= 0 && (flags & O_APPEND);
}

int tt__fd_of_program(int fd)
{
	if (!tt__own_table)
		return fcntl(fd, F_DUPFD_CLOEXEC, 0);
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (pidfd < 0)
		return -1;
	int copy = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	int err = errno;
	close(pidfd);
	errno = err;
	return copy;
}

/* All of `size` bytes to `fd`: 1, or 0 (a write failed: the line is let go, as
 * stderr lets it go). */
static int tt__write_all(int fd, const char *buf, size_t size)
{
	for (size_t done = 0; done < size;) {
		ssize_t n = write(fd, buf + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		done += (size_t)n;
	}
	return 1;
}

/* The log (TT__LOG_FILE): named by tt__log_name_of as its first line is said, kept at
 * a high number of the program's table (a thread with a table of its own opens it by
 * its name for each line), given up for stderr where it cannot be written. */
static int tt__log_where = TT__LOG_STDERR;
static int (*tt__log_name_of)(char *buf, size_t size);
static char tt__log_name[4096];
static struct tt__fd tt__log_fd = TT__FD_NONE;
static int tt__log_named;    /* tt__log_name set: 1; being set: 2; could not be: -1 */
static int tt__log_to_empty; /* the run's first process empties its log as it opens it */

/* The log just opened, `empty` in the run's first process: emptied unless another run
 * writes it now (independent runs given one TICKTRACE_LOG, or one TICKTRACE_OUT and
 * the log beside it), whose lines stay and this run's follow; each process holds its
 * log (a shared flock on its descriptor) to say so. 0, or -1 where it cannot be emptied. */
static int tt__log_claim(int fd, int empty)
{
	if (empty && flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK)
		empty = 0;
	int err = empty ? ftruncate(fd, 0) : 0;
	flock(fd, LOCK_SH | LOCK_NB);
	return err;
}

/* The log's descriptor, open now; -1 with errno, or -2: no log for this run (its
 * trace goes to a device). `own`: in the calling thread's own table (the caller
 * closes it). */
static int tt__log_open(int *own)
{
	*own = 0;
	if (tt__log_fd.file.handle >= 0 && tt__fd_ours(&tt__log_fd))
		return (int)tt__log_fd.file.handle;
	tt__fd_forget(&tt__log_fd); /* (a program that closed it: opened again by its name) */
	/* Named by the first thread with a line to say; the others wait the moment it takes. */
	int unnamed = 0;
	if (__atomic_compare_exchange_n(&tt__log_named, &unnamed, 2, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		int named = tt__log_name_of(tt__log_name, sizeof tt__log_name);
		__atomic_store_n(&tt__log_to_empty, named > 0, __ATOMIC_RELEASE);
		__atomic_store_n(&tt__log_named, named < 0 ? -1 : 1, __ATOMIC_RELEASE);
	}
	while (__atomic_load_n(&tt__log_named, __ATOMIC_ACQUIRE) == 2)
		sched_yield();
	if (tt__log_named < 0)
		return -2;
	/* Never through a link, never into a FIFO, a device or another user's file. */
	int fd = open(tt__log_name, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK |
				      O_NOCTTY | O_CLOEXEC, 0644);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
			tt__log_claim(fd, __atomic_exchange_n(&tt__log_to_empty, 0, __ATOMIC_ACQ_REL)) < 0)) {
		close(fd);
		errno = EPERM;
		fd = -1;
	}
	if (fd < 0)
		return -1;
	/* Kept by one thread (another at it meanwhile, one with a table of its own, or
	 * below a small limit, where ticktrace keeps none of the program's descriptors:
	 * for this line only); tt__fd_keep closes `fd` (no high number free: -EMFILE). */
	static int keeping;
	if (tt__fd_room() < 0 || tt__own_table || __atomic_exchange_n(&keeping, 1, __ATOMIC_ACQ_REL)) {
		*own = 1;
		return fd;
	}
	int err = tt__fd_keep(&tt__log_fd, (struct tt_os_file){fd});
	int kept = (int)tt__log_fd.file.handle;
	__atomic_store_n(&keeping, 0, __ATOMIC_RELEASE);
	errno = -err;
	return err ? -1 : kept;
}

static int tt__err_put(const char *buf, size_t size);
static int tt__stderr_put(const char *buf, size_t size);

/* Lines said while no descriptor could be had for the log (EMFILE): below a small
 * limit it is opened for each line alone, and the patcher's modules' files (one held
 * each) fill the table as the program starts. Held here, in order, and written before
 * the next line that finds one, or at exit (tt__err_flush), rather than into the
 * program's stderr. tt__log_holding guards both (a thread that finds it taken writes
 * its line as if none were held). */
static char tt__log_held[8192];
static size_t tt__log_held_len;
static int tt__log_holding;

/* Whether `size` bytes were held for later (no room: not). */
static int tt__log_hold(const char *buf, size_t size)
{
	if (__atomic_exchange_n(&tt__log_holding, 1, __ATOMIC_ACQUIRE))
		return 0;
	int held = tt__log_held_len + size <= sizeof tt__log_held;
	if (held) {
		memcpy(tt__log_held + tt__log_held_len, buf, size);
		tt__log_held_len += size;
	}
	__atomic_store_n(&tt__log_holding, 0, __ATOMIC_RELEASE);
	return held;
}

/* The lines held, written by `put` (into the log, or stderr), first. */
static void tt__log_put_held(int fd, int (*put)(const char *buf, size_t size))
{
	if (!__atomic_load_n(&tt__log_held_len, __ATOMIC_RELAXED) ||
	    __atomic_exchange_n(&tt__log_holding, 1, __ATOMIC_ACQUIRE))
		return;
	if (fd >= 0)
		tt__write_all(fd, tt__log_held, tt__log_held_len);
	else
		put(tt__log_held, tt__log_held_len);
	tt__log_held_len = 0;
	__atomic_store_n(&tt__log_holding, 0, __ATOMIC_RELEASE);
}

/* A line into the log: 1 said (or held, `may_hold`), 0 let go, -1 no log to be had
 * (said on stderr instead, with why, once). */
static int tt__log_put_as(const char *buf, size_t size, int may_hold)
{
	static int given_up;
	int own, fd = given_up ? -1 : tt__log_open(&own);
	if (fd == -1 && errno == EMFILE && may_hold && tt__log_hold(buf, size))
		return 1;
	if (fd < 0) {
		if (!__atomic_exchange_n(&given_up, 1, __ATOMIC_ACQ_REL) && fd == -1) {
			char why[4600];
			snprintf(why, sizeof why, "ticktrace: cannot write its log %s (%s): its lines "
				 "go to stderr (TICKTRACE_LOG)\n",
				 tt__log_name, strerror(errno));
			tt__err_put(why, strlen(why));
		}
		tt__log_put_held(-1, tt__stderr_put);
		return -1;
	}
	tt__log_put_held(fd, NULL);
	int said = tt__write_all(fd, buf, size);
	if (own)
		close(fd);
	return said;
}

static int tt__log_put(const char *buf, size_t size)
{
	return tt__log_put_as(buf, size, 1);
}

void tt__err_flush(void)
{
	if (__atomic_load_n(&tt__log_held_len, __ATOMIC_RELAXED))
		tt__log_put_as("", 0, 0);
}

/* The program's stderr as it was at start, where number 2 is no longer a place for
 * lines (closed: gnulib's close_stdout at exit, before ticktrace's last lines; or a
 * file of the program's there): a copy kept high from the start, only where nothing
 * waits for its end (a terminal, a file), never a pipe or a socket: a daemon closes
 * those to let its reader (`$(daemon)`) go on. In the calling thread's table (`own`:
 * a copy the caller closes), or -1. */
static struct tt__fd tt__err_copy = TT__FD_NONE;

static int tt__err_copy_fd(int *own)
{
	*own = tt__own_table;
	if (!tt__own_table)
		return tt__fd_ours(&tt__err_copy) ? (int)tt__err_copy.file.handle : -1;
	struct stat st;
	int fd = tt__err_copy.file.handle >= 0 ? tt__fd_of_program((int)tt__err_copy.file.handle) : -1;
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_dev != tt__err_copy.id.dev ||
			st.st_ino != tt__err_copy.id.ino)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A line to the program's stderr (number 2, or the copy of it kept at start): 1 said,
 * 0 let go (a write failed), -1 no stderr to say it on. */
static int tt__stderr_put(const char *buf, size_t size)
{
	/* (a thread with a table of its own: a copy for this line; kept, it would hold a
	 * pipe the program let go open, a daemon's starter waiting for its end) */
	int fd = tt__own_table ? tt__fd_of_program(2) : 2;
	int own = fd >= 0 && fd != 2;
	if (fd < 0 || !tt__err_fits(fd)) {
		if (own)
			close(fd);
		fd = tt__err_copy_fd(&own);
		if (fd < 0)
			return -1;
	}
	int said = tt__write_all(fd, buf, size);
	if (own)
		close(fd);
	return said;
}

/* Where the program let its stderr go and none of it is kept (a pipe): its lines into
 * the log beside the trace (info names it), the first of them saying why. */
static int tt__moved_said;

static int tt__log_instead(const char *buf, size_t size)
{
	if (!tt__log_name_of)
		return -1;
	static const char why[] = "ticktrace: the program closed its stderr (or put a file of its "
				  "own at number 2), which ticktrace does not hold open (a pipe's "
				  "reader waits for its end): its lines are here\n";
	if (!__atomic_exchange_n(&tt__moved_said, 1, __ATOMIC_ACQ_REL) &&
	    tt__log_put(why, sizeof why - 1) < 0)
		return -1;
	return tt__log_put(buf, size);
}

/* Writes `size` bytes where ticktrace's lines go: 1, or 0 (not there to be said). */
static int tt__err_put(const char *buf, size_t size)
{
	int saved_errno = errno;
	int where = __atomic_load_n(&tt__log_where, __ATOMIC_ACQUIRE);
	if (where == TT__LOG_OFF)
		return 0;
	if (where == TT__LOG_FILE) {
		int said = tt__log_put(buf, size); /* (-1: stderr's after all) */
		errno = saved_errno;
		if (said >= 0)
			return said;
	}
	int said = tt__stderr_put(buf, size);
	if (said < 0 && where == TT__LOG_STDERR)
		said = tt__log_instead(buf, size);
	errno = saved_errno;
	return said > 0;
}

static ssize_t tt__err_write(void *cookie, const char *buf, size_t size)
{
	(void)cookie;
	tt__err_put(buf, size);
	return (ssize_t)size;
}

int tt__err_say(const char *line)
{
	return tt__err_put(line, strlen(line));
}

void tt__err_start(void)
{
	if (tt__err_file)
		return;
	struct stat st;
	if (fstat(2, &st) == 0)
		tt__err_was = (struct tt__fd){.file = {2}, .id = {.dev = st.st_dev, .ino = st.st_ino}};
	tt__err_file = fopencookie(NULL, "w", (cookie_io_functions_t){.write = tt__err_write});
	if (tt__err_file)
		setvbuf(tt__err_file, NULL, _IOLBF, 1024);
}

FILE *tt__err_stream(void)
{
	return tt__err_file ? tt__err_file : stderr;
}

FILE *tt__log(void)
{
	return tt__err_stream();
}

void tt__err_to(int where, int (*name_of)(char *buf, size_t size))
{
	tt__log_name_of = name_of;
	__atomic_store_n(&tt__log_where, where, __ATOMIC_RELEASE);
}

void tt__err_keep(void)
{
	struct stat st;
	if (tt__err_copy.file.handle >= 0 || tt__log_where == TT__LOG_OFF || tt__err_was.file.handle != 2 ||
	    fstat(2, &st) < 0 || st.st_dev != tt__err_was.id.dev || st.st_ino != tt__err_was.id.ino ||
	    !(S_ISCHR(st.st_mode) || S_ISREG(st.st_mode)))
		return;
	int err = tt__fd_room();
	if (!err)
		err = tt__fd_keep(&tt__err_copy, (struct tt_os_file){fcntl(2, F_DUPFD_CLOEXEC, 0)});
	/* (said where the lines go now: number 2, or the log, opened for the line alone) */
	char why[160], line[480];
	if (err && tt__fd_room() < 0) {
		snprintf(line, sizeof line, "ticktrace: no copy of stderr kept (%s): what it says after "
			 "the program closes its stderr goes to the log beside the trace\n",
			 tt__fd_why(err, why, sizeof why));
		tt__err_say(line);
	}
}

int tt__fd_own_table(void)
{
	return tt__own_table;
}

void tt__err_after_fork_in_child(void)
{
	/* (the parent's log, inherited: the child names and opens its own) */
	tt__fd_close(&tt__log_fd);
	tt__log_held_len = 0; /* (the parent's to write) */
	tt__log_named = 0;
	tt__moved_said = 0;
}

/* Closes the calling thread's descriptors first to last. (Before Linux 5.9, one by one.) */
static void tt__close_range(unsigned first, unsigned last)
{
	if (syscall(SYS_close_range, first, last, 0u) == 0)
		return;
	int floor, share;
	tt__fd_share(&floor, &share);
	for (int fd = (int)first; fd < floor + share && (unsigned)fd <= last; fd++)
		close(fd);
}

int tt__fd_private_table(struct tt__fd *const *keep, size_t count)
{
	if (unshare(CLONE_FILES) < 0)
		return -errno;
	tt__own_table = 1;
	/* The copy holds the program's files open (a pipe's reader would wait on it for
	 * its end): let every one go but those kept, each still the file it was (else the
	 * program's by now: let go with the rest, and forgotten). A sanitizer build
	 * keeps number 2, where the sanitizers write their reports (raw writes, not
	 * tt__err's): the program's stderr as it was, held open by this thread. */
	unsigned from = 0;
#ifdef TT_SANITIZED
	tt__close_range(0, 1);
	from = 3;
#endif
	for (size_t i = 0; i < count; i++)
		if (keep[i]->file.handle >= 0 && !tt__fd_ours_exactly(keep[i]))
			tt__fd_forget(keep[i]);
	for (;;) {
		/* (the lowest kept number from `from` on: a few, looked over again each time) */
		unsigned next = ~0u;
		for (size_t i = 0; i < count; i++)
			if (keep[i]->file.handle >= (int)from && (unsigned)keep[i]->file.handle < next)
				next = (unsigned)keep[i]->file.handle;
		if (next == ~0u)
			break;
		if (next > from)
			tt__close_range(from, next - 1);
		from = next + 1;
	}
	tt__close_range(from, ~0u);
	return 0;
}

