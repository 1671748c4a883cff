/* tools/base on Linux (base_internal.h; os_windows.c is Windows'): the input mapped,
 * the output's temporary file made, renamed without replacing and removed by a signal
 * that ends the command, a device or a FIFO written in place. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base_internal.h"

const uint8_t *tt_os_map(int fd, size_t size)
{
	void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return NULL;
	/* Records are read once, front to back. */
	madvise(m, size, MADV_SEQUENTIAL);
	return m;
}

void tt_os_unmap(const uint8_t *p, size_t size)
{
	munmap((void *)p, size);
}

void tt_os_release(const uint8_t *p, size_t n)
{
	madvise((void *)p, n, MADV_DONTNEED);
}

char *tt_os_pages(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void tt_os_pages_free(char *p, size_t size)
{
	if (p)
		munmap(p, size);
}

void tt_os_map_in(const uint8_t *p, size_t n)
{
	/* (a kernel before 5.14 has no MADV_POPULATE_READ: the reads below fault) */
	madvise((void *)p, n, MADV_POPULATE_READ);
	/* Read, too: under shadow paging (a KVM/PVM guest) a page the kernel has mapped
	 * still costs its first reader in this process 2 us (the host's table filled), a
	 * decoding thread's 0.45 s on a 914 MB file; then the reader's. */
	tt_touch_pages(p, n, (size_t)sysconf(_SC_PAGESIZE));
}

/* What a signal that ends the command removes before the command dies of it, the last
 * named first: the output's temporary file, the shards of a split finished so far,
 * `open`'s converted trace and its directory. Changed with those signals blocked; the
 * handler reads it alone. */
static char **tt_doomed;
static size_t tt_doomed_cap;
static volatile sig_atomic_t tt_ndoomed;

static void tt_doomed_on_signal(int sig)
{
	for (int i = tt_ndoomed - 1; i >= 0; i--)
		if (unlink(tt_doomed[i]) < 0 && errno == EISDIR)
			rmdir(tt_doomed[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Every signal whose default ends the process (the real-time ones too), but the faults
 * a crash raises (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS), whose handlers
 * are a debugger's or a sanitizer's. */
static const int tt_doomed_signals[] = {SIGHUP, SIGINT, SIGQUIT, SIGABRT, SIGUSR1, SIGUSR2, SIGPIPE,
					SIGALRM, SIGTERM, SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM,
					SIGPROF, SIGIO, SIGPWR};

static void tt_doomed_set(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < sizeof tt_doomed_signals / sizeof *tt_doomed_signals; i++)
		sigaddset(set, tt_doomed_signals[i]);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(set, sig);
}

/* Blocks those signals; the mask before in `old`. */
static void tt_doomed_block(sigset_t *old)
{
	sigset_t set;
	tt_doomed_set(&set);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

static sigset_t tt_signals_held_from;

void tt_signals_hold(void)
{
	tt_doomed_block(&tt_signals_held_from);
}

void tt_signals_release(void)
{
	pthread_sigmask(SIG_SETMASK, &tt_signals_held_from, NULL);
}

int tt_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	/* (inherited by the thread) but those its own writes raise, which only it can take:
	 * a closed pipe's SIGPIPE ends the command as it should, silently */
	sigset_t set, old;
	tt_doomed_set(&set);
	sigdelset(&set, SIGPIPE);
	sigdelset(&set, SIGXFSZ);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	int err = pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

void tt_remove_on_signal(const char *path)
{
	sigset_t old, set;
	tt_doomed_block(&old);
	char *copy = strdup(path);
	if (copy && tt_grow((void **)&tt_doomed, &tt_doomed_cap, (size_t)tt_ndoomed + 1, sizeof *tt_doomed))
		tt_doomed[tt_ndoomed++] = copy;
	else
		free(copy);
	/* Only where the signal would end the command: one the caller ignores (nohup's
	 * SIGHUP) or handles stays so. */
	tt_doomed_set(&set);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction was;
		if (sigismember(&set, sig) == 1 && sigaction(sig, NULL, &was) == 0 && was.sa_handler == SIG_DFL &&
		    !(was.sa_flags & SA_SIGINFO))
			signal(sig, tt_doomed_on_signal);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void tt_keep_on_signal(const char *path)
{
	sigset_t old;
	tt_doomed_block(&old);
	for (int i = tt_ndoomed - 1; i >= 0; i--)
		if (strcmp(tt_doomed[i], path) == 0) {
			free(tt_doomed[i]);
			memmove(&tt_doomed[i], &tt_doomed[i + 1], (size_t)(tt_ndoomed - 1 - i) * sizeof *tt_doomed);
			tt_ndoomed = tt_ndoomed - 1;
			break;
		}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Whether a file's owner is the user or the system (root, as of /dev's nodes). */
static bool tt_out_trusted(const struct stat *st)
{
	return st->st_uid == geteuid() || st->st_uid == 0;
}

/* Whether `path` is written in place: a device or FIFO of the user's or the
 * system's, or a link of theirs to one (/dev/stdout). Another user's, as planted in
 * a shared directory, is a file that exists there: --force replaces it, and nothing
 * is ever written through it. */
static bool tt_out_in_place(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return false;
	if (S_ISLNK(st.st_mode) && (!tt_out_trusted(&st) || stat(path, &st) < 0))
		return false;
	return (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) && tt_out_trusted(&st);
}

/* Opens a device or FIFO to write in place; a FIFO no one reads fails (ENXIO)
 * rather than hang. -1 and errno. */
static int tt_out_open_in_place(const char *path)
{
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	int flags = fd < 0 ? -1 : fcntl(fd, F_GETFL);
	if (fd >= 0 && (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

void tt_os_utf8_args(int *argc, char ***argv)
{
	(void)argc, (void)argv; /* (Linux's are bytes, UTF-8 in a UTF-8 locale, taken as they are) */
}

void tt_standard_fds(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			/* (the lowest free number: this one) */
			int null = open("/dev/null", fd == STDOUT_FILENO ? O_RDONLY | O_CLOEXEC :
						     fd ? O_WRONLY : O_RDONLY);
			if (null >= 0 && null != fd)
				close(null);
			tt_stdout_closed |= fd == STDOUT_FILENO;
		}
}

bool tt_os_open_in_place(const char *path, int *fd)
{
	if (!tt_out_in_place(path))
		return false;
	*fd = tt_out_open_in_place(path);
	return true;
}

const char *tt_os_file_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int tt_os_create_tmp(char *tmpl)
{
	return mkostemp(tmpl, O_CLOEXEC);
}

bool tt_os_process_gone(long pid)
{
	return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

int tt_os_close_tmp(int fd)
{
	/* mkostemp makes 0600, kept while it is written; the output gets the usual mode. */
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	return close(fd);
}

int tt_os_rename_tmp(const char *tmp, const char *path, bool replace)
{
	/* Without --force, a file that appeared meanwhile is not replaced. */
	int rc = renameat2(AT_FDCWD, tmp, AT_FDCWD, path, replace ? 0 : RENAME_NOREPLACE);
	if (rc < 0 && errno == EINVAL && !replace)
		rc = rename(tmp, path); /* a file system without NOREPLACE */
	return rc;
}

static ssize_t tt_stream_write(void *cookie, const char *buf, size_t n)
{
	tt_out_bytes(cookie, buf, n);
	return (ssize_t)n;
}

FILE *tt_os_out_stream(struct tt_out *o)
{
	return fopencookie(o, "w", (cookie_io_functions_t){.write = tt_stream_write});
}

bool tt_os_same_file(const char *path, const char *input)
{
	struct stat out, in;
	if (strcmp(path, "-") == 0 ? fstat(STDOUT_FILENO, &out) != 0 : stat(path, &out) != 0)
		return false; /* (not there yet: no input) */
	return stat(input, &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino;
}

void tt_os_end_on_closed_pipe(int err)
{
	(void)err; /* (SIGPIPE's: base_internal.h) */
}
