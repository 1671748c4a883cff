/* The platform layer on Linux (platform.h): glibc and the kernel, below the runtime's
 * base layer. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <linux/perf_event.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "platform/platform.h"

extern char **environ;

/* ---- threads ---- */

uintptr_t tt_os_thread_key(void)
{
	uintptr_t tp; /* (as asm/record.asm reads it) */
	__asm__("mov %%fs:0x10, %0" : "=r"(tp));
	return tp;
}

uint32_t tt_os_thread_id(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

int tt_os_thread_alive(uint32_t tid)
{
	return syscall(SYS_tgkill, getpid(), (pid_t)tid, 0) == 0;
}

void tt_os_thread_set_name(const char *name)
{
	prctl(PR_SET_NAME, name, 0, 0, 0);
}

/* A name the kernel keeps in a small file (comm): its length, cut to size - 1 and
 * ended with NUL, its newline cut; 0 when it does not read. */
static size_t tt_os_read_name(const char *path, char *name, size_t size)
{
	if (!size)
		return 0;
	size_t len = tt_os_read_file(path, name, size - 1);
	while (len && (name[len - 1] == '\n' || name[len - 1] == 0))
		len--;
	name[len] = 0;
	return len;
}

size_t tt_os_thread_name(char *name, size_t size)
{
	char comm[17] = {0}; /* (TASK_COMM_LEN and a NUL) */
	if (!size)
		return 0;
	prctl(PR_GET_NAME, comm);
	snprintf(name, size, "%s", comm);
	return strlen(name);
}

size_t tt_os_thread_name_of(uint32_t tid, char *name, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
	return tt_os_read_name(path, name, size);
}

_Static_assert(TT_OS_EXIT_ROUNDS == PTHREAD_DESTRUCTOR_ITERATIONS, "glibc's rounds");
_Static_assert(sizeof(pthread_key_t) <= sizeof(uint32_t), "a key in an id");

/* (keys made one at a time: each made once) */
static struct tt_os_lock tt_os_keys_lock;

int tt_os_exit_key_make(struct tt_os_exit_key *key)
{
	if (__atomic_load_n(&key->id, __ATOMIC_ACQUIRE))
		return 0;
	int err = 0;
	tt_os_lock(&tt_os_keys_lock);
	pthread_key_t made;
	if (!key->id && !(err = pthread_key_create(&made, key->exit)))
		__atomic_store_n(&key->id, (uint32_t)made + 1, __ATOMIC_RELEASE);
	tt_os_unlock(&tt_os_keys_lock);
	return -err;
}

int tt_os_exit_set(struct tt_os_exit_key *key, void *value)
{
	/* (not made: no key, EINVAL) */
	return -pthread_setspecific((pthread_key_t)(key->id - 1), value);
}

int tt_os_at_exit(void (*end)(void))
{
	return atexit(end) ? -ENOMEM : 0;
}

_Static_assert(sizeof(pthread_once_t) <= sizeof(struct tt_os_once) && PTHREAD_ONCE_INIT == 0,
	       "a zeroed struct tt_os_once is a pthread_once_t not yet run");

void tt_os_once(struct tt_os_once *once, void (*init)(void))
{
	pthread_once((pthread_once_t *)(void *)once, init);
}

int tt_os_thread_start(struct tt_os_thread *thread, void *(*main)(void *arg), void *arg, size_t stack)
{
	/* (kept loaded: the runtime's library is linked -z nodelete) */
	pthread_attr_t attr;
	int err = pthread_attr_init(&attr);
	if (err)
		return -err;
	if (!thread)
		err = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (!err && stack)
		err = pthread_attr_setstacksize(&attr, stack);
	pthread_t id;
	if (!err) {
		/* The thread inherits a full signal mask: the program's signals are not for it. */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		err = pthread_create(&id, &attr, main, arg);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	pthread_attr_destroy(&attr);
	if (!err && thread)
		thread->handle = (uintptr_t)id;
	return -err;
}

void tt_os_thread_join(struct tt_os_thread *thread)
{
	pthread_join((pthread_t)thread->handle, NULL);
}

int tt_os_others_ended(void)
{
	return 0;
}

int tt_os_thread_join_within(struct tt_os_thread *thread, int64_t timeout_ns)
{
	/* (the wall clock: pthread_timedjoin_np's, which the sanitizers know) */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	int64_t ns = until.tv_nsec + (timeout_ns > 0 ? timeout_ns : 0);
	until.tv_sec += ns / 1000000000;
	until.tv_nsec = ns % 1000000000;
	return -pthread_timedjoin_np((pthread_t)thread->handle, NULL, &until);
}

/* Every signal blocked in the calling thread for good: one of ticktrace's own
 * (tt_os_signals_blocked_for_good). */
static __thread int tt_os_signals_all_blocked __attribute__((tls_model("initial-exec")));

void tt_os_signals_blocked_for_good(void)
{
	sigset_t mask;
	if (pthread_sigmask(SIG_BLOCK, NULL, &mask) != 0)
		return;
	/* (not SIGKILL, SIGSTOP, nor the C library's own below SIGRTMIN: never in a mask) */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && (sig < 32 || sig >= SIGRTMIN) && !sigismember(&mask, sig))
			return;
	tt_os_signals_all_blocked = 1;
}

void tt_os_signals_block(struct tt_os_signals *old)
{
	if (tt_os_signals_all_blocked)
		return;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old->mask);
}

void tt_os_signals_restore(const struct tt_os_signals *old)
{
	if (!tt_os_signals_all_blocked)
		pthread_sigmask(SIG_SETMASK, &old->mask, NULL);
}

/* The signals a write raises in the thread that makes it (platform.h). */
static const int tt_os_write_signals[] = {SIGXFSZ, SIGPIPE};
#define TT_OS_WRITE_SIGNALS (sizeof tt_os_write_signals / sizeof tt_os_write_signals[0])

/* Which of them are pending, a bit each. */
static unsigned tt_os_write_signals_pending(void)
{
	sigset_t pending;
	unsigned bits = 0;
	if (sigpending(&pending) == 0)
		for (size_t i = 0; i < TT_OS_WRITE_SIGNALS; i++)
			bits |= (unsigned)sigismember(&pending, tt_os_write_signals[i]) << i;
	return bits;
}

void tt_os_writing_begin(struct tt_os_writing *w)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < TT_OS_WRITE_SIGNALS; i++)
		sigaddset(&set, tt_os_write_signals[i]);
	if (!tt_os_signals_all_blocked)
		pthread_sigmask(SIG_BLOCK, &set, &w->mask.mask);
	w->pending = tt_os_write_signals_pending();
}

void tt_os_writing_end(struct tt_os_writing *w)
{
	/* Those the writes raised are taken back before the mask is, so that they never
	 * reach the program; one that was pending before is the program's own. */
	unsigned raised = tt_os_write_signals_pending() & ~w->pending;
	for (size_t i = 0; i < TT_OS_WRITE_SIGNALS; i++) {
		if (!(raised & (1u << i)))
			continue;
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, tt_os_write_signals[i]);
		sigtimedwait(&one, NULL, &(struct timespec){0, 0});
	}
	if (!tt_os_signals_all_blocked)
		pthread_sigmask(SIG_SETMASK, &w->mask.mask, NULL);
}

void tt_os_cancel_hold(int *was)
{
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, was);
}

void tt_os_cancel_restore(int was)
{
	pthread_setcancelstate(was, NULL);
}

void tt_os_yield(void)
{
	sched_yield();
}

void tt_os_sleep_ns(int64_t ns)
{
	nanosleep(&(struct timespec){(time_t)(ns / 1000000000), (long)(ns % 1000000000)}, NULL);
}

uint32_t tt_os_cpus(void)
{
	cpu_set_t cpus;
	long n = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (uint32_t)n : 1;
}

uint64_t tt_os_memory_size(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

uint64_t tt_os_processes_limit(void)
{
	struct rlimit nproc;
	return getrlimit(RLIMIT_NPROC, &nproc) == 0 && nproc.rlim_cur != RLIM_INFINITY ? (uint64_t)nproc.rlim_cur
										     : 0;
}

int tt_os_usage(int thread, struct tt_os_usage *usage)
{
	struct rusage ru;
	*usage = (struct tt_os_usage){0};
	if (getrusage(thread ? RUSAGE_THREAD : RUSAGE_SELF, &ru) != 0)
		return -errno;
	usage->faults = (uint64_t)(ru.ru_minflt + ru.ru_majflt);
	usage->involuntary = (uint64_t)ru.ru_nivcsw;
	return 0;
}

/* ---- locks: a futex word, 0 free, 1 taken, 2 taken with waiters (Drepper's) ---- */

void tt_os_lock(struct tt_os_lock *lock)
{
	int *word = (int *)&lock->word;
	int c = 0;
	if (__atomic_compare_exchange_n(word, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	if (c != 2)
		c = __atomic_exchange_n(word, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
		c = __atomic_exchange_n(word, 2, __ATOMIC_ACQUIRE);
	}
}

void tt_os_unlock(struct tt_os_lock *lock)
{
	int *word = (int *)&lock->word;
	if (__atomic_exchange_n(word, 0, __ATOMIC_RELEASE) == 2)
		syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

int tt_os_trylock(struct tt_os_lock *lock)
{
	int free = 0;
	return __atomic_compare_exchange_n((int *)&lock->word, &free, 1, 0, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

void tt_os_wait(uint32_t *word, uint32_t value, int64_t timeout_ns)
{
	struct timespec timeout = {(time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000)};
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, timeout_ns < 0 ? NULL : &timeout, NULL, 0);
}

void tt_os_wake(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void tt_os_wake_all(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* ---- memory ---- */

void *tt_os_reserve(size_t size)
{
	/* (Read and write at once, nothing charged before a page is touched: what the
	 * arena has always mapped; a commit is the faulting in. On a huge page's
	 * boundary, which its MADV_HUGEPAGE wants: 64 KiB's too.) */
	const size_t align = 2u << 20;
	char *map = mmap(NULL, size + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			 -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	char *at = (char *)(((uintptr_t)map + align - 1) & ~(uintptr_t)(align - 1));
	if (at > map)
		munmap(map, (size_t)(at - map));
	munmap(at + size, (size_t)(map + align - at));
	return at;
}

void *tt_os_reserve_growable(size_t size, uint64_t away)
{
	const size_t align = 2u << 20;
	char *probe = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (probe == MAP_FAILED)
		return NULL;
	munmap(probe, size);
	uintptr_t below = (uintptr_t)away + size + align;
	uintptr_t hint = (uintptr_t)probe > below + (1u << 30) ? ((uintptr_t)probe - below) & ~(uintptr_t)(align - 1) : 0;
	/* (a hint: where it is taken, the kernel's own place, which may not grow) */
	char *at = mmap((void *)hint, size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return at == MAP_FAILED ? NULL : at;
}

int tt_os_grow(void *at, size_t size, size_t new_size)
{
	return mremap(at, size, new_size, 0) == MAP_FAILED ? -ENOMEM : 0;
}

int tt_os_commit(void *at, size_t size)
{
	tt_os_fault_in(at, size);
	return 0;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* (Linux 5.14; older kernels refuse it) */
#endif

void tt_os_fault_in(void *at, size_t size)
{
	if (madvise(at, size, MADV_POPULATE_WRITE) == 0)
		return;
	/* Before Linux 5.14: an atomic add of zero faults a page in for writing without
	 * changing a byte that a recording thread may be writing at the same time. */
	for (size_t off = 0; off < size; off += (size_t)sysconf(_SC_PAGESIZE))
		__atomic_fetch_add((char *)at + off, 0, __ATOMIC_RELAXED);
}

void *tt_os_map_view(struct tt_os_file *file, uint64_t offset, size_t size, void *at)
{
	int flags = (file ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS) | MAP_NORESERVE | (at ? MAP_FIXED : 0);
	void *map = mmap(at, size, PROT_READ | PROT_WRITE, flags, file ? (int)file->handle : -1,
			 file ? (off_t)offset : 0);
	return map == MAP_FAILED ? NULL : map;
}

uint64_t tt_os_address_limit(void)
{
	struct rlimit limit;
	if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return (uint64_t)limit.rlim_cur;
}

uint64_t tt_os_address_mapped(void)
{
	char text[64] = {0};
	size_t got = tt_os_read_file("/proc/self/statm", text, sizeof text - 1);
	unsigned long long pages = 0;
	for (size_t i = 0; i < got && text[i] >= '0' && text[i] <= '9'; i++)
		pages = pages * 10 + (unsigned long long)(text[i] - '0');
	return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

void tt_os_huge_pages(void *at, size_t size)
{
	madvise(at, size, MADV_HUGEPAGE);
}

void tt_os_zero(void *at, size_t size)
{
	if (madvise(at, size, MADV_DONTNEED) != 0)
		memset(at, 0, size);
}

void *tt_os_alloc(size_t size)
{
	void *at = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return at == MAP_FAILED ? NULL : at;
}

void tt_os_free(void *at, size_t size)
{
	munmap(at, size);
}

/* ---- files ---- */

/* A file of the user's or the system's (root's, as /dev's nodes are): written
 * through. Another user's, as planted in a shared directory, is a file that exists,
 * and replaced: the rule ticktrace(1) gives the tools. */
static int tt_os_trusted(const struct stat *st)
{
	return st->st_uid == geteuid() || st->st_uid == 0;
}

static int tt_os_trusted_device(const struct stat *st)
{
	return (S_ISCHR(st->st_mode) || S_ISFIFO(st->st_mode)) && tt_os_trusted(st);
}

int tt_os_is_device(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return 0;
	/* A link of our own or the system's to a device (/dev/stdout, /proc/self/fd/1)
	 * is the device; another user's link is replaced, never followed. */
	if (S_ISLNK(st.st_mode) && (!tt_os_trusted(&st) || stat(path, &st) < 0))
		return 0;
	return tt_os_trusted_device(&st);
}

int tt_os_file_is_device(struct tt_os_file *file)
{
	struct stat st;
	return fstat((int)file->handle, &st) == 0 && tt_os_trusted_device(&st);
}

/* A file open for a moment in the caller's table, the program's: which file it is,
 * so that it is closed only while the number still is that file (a thread of the
 * program's may close every descriptor meanwhile and open its own there: base/fds.c's
 * care). tt_os_moment_open: `fd` just opened (-1: none), or -1 where it cannot tell
 * (then closed). */
struct tt_os_moment {
	int fd;
	struct tt_os_file_id id;
};

static int tt_os_moment_open(struct tt_os_moment *m, int fd)
{
	*m = (struct tt_os_moment){.fd = fd};
	if (fd >= 0 && tt_os_file_identify((struct tt_os_file){fd}, &m->id, 0) < 0) {
		close(fd);
		m->fd = -1;
	}
	return m->fd;
}

static void tt_os_moment_close(const struct tt_os_moment *m)
{
	struct tt_os_file_id now = {0};
	if (m->fd >= 0 && tt_os_file_identify((struct tt_os_file){m->fd}, &now, 0) == 0 && now.dev == m->id.dev &&
	    now.ino == m->id.ino)
		close(m->fd);
}

size_t tt_os_read_file(const char *path, char *buf, size_t size)
{
	struct tt_os_moment m;
	if (tt_os_moment_open(&m, open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	size_t len = 0;
	ssize_t n;
	while (len < size && (n = read(m.fd, buf + len, size - len)) > 0)
		len += (size_t)n;
	tt_os_moment_close(&m);
	return len;
}

size_t tt_os_current_dir(char *dir, size_t size)
{
	return getcwd(dir, size) ? strlen(dir) : 0;
}

int tt_os_path_in(const char *dir, const char *path, char *buf, size_t size)
{
	size_t len = path[0] == '/' ? 0 : strlen(dir);
	const char *slash = len && dir[len - 1] != '/' ? "/" : "";
	int n = snprintf(buf, size, "%s%s%s", len ? dir : "", slash, path);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int tt_os_dir_theirs(const char *dir, char *why, size_t cap)
{
	struct stat st;
	if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode) && !tt_os_trusted(&st)) {
		snprintf(why, cap, "a link of another user's (uid %u)", (unsigned)st.st_uid);
		return 1;
	}
	if (stat(dir, &st) == 0 && !tt_os_trusted(&st)) {
		snprintf(why, cap, "another user's (uid %u)", (unsigned)st.st_uid);
		return 1;
	}
	return 0;
}

int tt_os_dir_ours(const char *dir, char *why, size_t cap)
{
	struct stat st;
	if (tt_os_dir_theirs(dir, why, cap))
		return 0;
	if (stat(dir, &st) < 0) {
		snprintf(why, cap, "%s", strerror(errno));
		return 0;
	}
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
		snprintf(why, cap, "writable by every user, without the sticky bit (mode %04o): "
			 "another user could replace its files", (unsigned)(st.st_mode & 07777));
		return 0;
	}
	return 1;
}

int tt_os_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int tt_os_dir_writable(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	/* (the effective ids: a set-uid program's, as the file is made) */
	return faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) == 0 ? 0 : -errno;
}

int tt_os_dir_make(const char *path)
{
	return mkdir(path, 0700) == 0 ? 0 : -errno;
}

uint64_t tt_os_file_room(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (uint64_t)st.st_blocks * 512 : 0;
}

int64_t tt_os_disk_room(const char *dir)
{
	struct statvfs disk;
	if (statvfs(dir, &disk) < 0)
		return -errno;
	return (int64_t)((uint64_t)disk.f_bavail * disk.f_frsize);
}

int tt_os_file_theirs(const char *dir, const char *path, uint32_t *owner, int *link)
{
	struct stat d, there;
	if (lstat(path, &there) < 0)
		return 0;
	if (S_ISDIR(there.st_mode))
		return -EISDIR;
	*owner = (uint32_t)there.st_uid;
	*link = S_ISLNK(there.st_mode);
	/* (the sticky bit lets only the owner of the file, of the directory, or root,
	 * CAP_FOWNER, replace it) */
	uid_t user = geteuid();
	return there.st_uid != user && stat(dir, &d) == 0 && (d.st_mode & S_ISVTX) && d.st_uid != user && user != 0;
}

uint32_t tt_os_user(void)
{
	return (uint32_t)geteuid();
}

int tt_os_rename(const char *from, const char *to)
{
	return rename(from, to) == 0 ? 0 : -errno;
}

int tt_os_remove(const char *path)
{
	return remove(path) == 0 ? 0 : -errno;
}

const char *tt_os_getenv(const char *name, char *value, size_t size)
{
	const char *text = getenv(name);
	if (!text)
		return NULL;
	snprintf(value, size, "%s", text);
	return value;
}

int tt_os_env_set(char *setting)
{
	const char *equals = strchr(setting, '=');
	if (!equals)
		return -EINVAL;
	size_t name = (size_t)(equals - setting) + 1, n = 0;
	for (; environ && environ[n]; n++)
		if (strncmp(environ[n], setting, name) == 0) {
			environ[n] = setting;
			return 0;
		}
	char **env = tt_os_alloc((n + 2) * sizeof(*env));
	if (!env)
		return -ENOMEM;
	if (n)
		memcpy(env, environ, n * sizeof(*env));
	env[n] = setting;
	env[n + 1] = NULL;
	environ = env;
	return 0;
}

/* PATH's directory into dir: 0, or -ENAMETOOLONG. */
static int tt_os_dir_of(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, size, ".");
	else if (snprintf(dir, size, "%.*s", slash == path ? 1 : (int)(slash - path), path) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

/* -errno for a file that could not be made at `path`: a directory that is there but
 * makes no file (the kernel's: /proc answers ENOENT) says so, not that the file is
 * missing (TICKTRACE_SPIKES=/proc/self/status). */
static int tt_os_make_error(const char *path, int err)
{
	char dir[4096];
	struct stat there;
	if (err == ENOENT && tt_os_dir_of(path, dir, sizeof dir) == 0 && stat(dir, &there) == 0 &&
	    S_ISDIR(there.st_mode))
		err = EACCES;
	return -err;
}

/* tt_os_file_create's and tt_os_file_open's: `path` opened with `flags`, made with
 * `mode`. */
static int tt_os_file_opened(const char *path, int flags, mode_t mode, struct tt_os_file *file)
{
	int fd = open(path, flags | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	file->handle = fd;
	return 0;
}

int tt_os_file_create(const char *path, struct tt_os_file *file)
{
	/* (the live file: the user's alone, as every file of the run's that
	 * tt_os_file_new makes) */
	int err = tt_os_file_opened(path, O_RDWR | O_CREAT | O_EXCL, 0600, file);
	return err ? tt_os_make_error(path, -err) : 0;
}

void *tt_os_file_map(struct tt_os_file *file, uint64_t offset, size_t size)
{
	struct stat st;
	int fd = (int)file->handle;
	if (fstat(fd, &st) != 0 || ((uint64_t)st.st_size < offset + size && ftruncate(fd, (off_t)(offset + size)) != 0))
		return NULL;
	void *at = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);
	return at == MAP_FAILED ? NULL : at;
}

int tt_os_file_open(const char *path, struct tt_os_file *file)
{
	return tt_os_file_opened(path, O_WRONLY | O_CREAT | O_TRUNC, 0644, file);
}

int tt_os_device_open(const char *path, struct tt_os_file *file)
{
	int err = tt_os_file_opened(path, O_WRONLY | O_NONBLOCK, 0, file);
	if (err)
		return err == -ENXIO ? -EPIPE : err;
	if (!tt_os_file_is_device(file)) {
		close((int)file->handle);
		return -EPERM;
	}
	return 0;
}

int tt_os_file_append(const char *path, const void *buf, size_t size)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, buf, size);
	int err = n < 0 ? -errno : (size_t)n < size ? -EIO : 0;
	close(fd);
	return err;
}

int tt_os_descriptor_file(int fd, struct tt_os_file *file)
{
	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	file->handle = fd;
	return 0;
}

int tt_os_file_seek(struct tt_os_file *file, uint64_t offset)
{
	return lseek((int)file->handle, (off_t)offset, SEEK_SET) < 0 && errno != ESPIPE ? -errno : 0;
}

int64_t tt_os_file_offset(struct tt_os_file *file)
{
	off_t at = lseek((int)file->handle, 0, SEEK_CUR);
	return at < 0 ? -errno : (int64_t)at;
}

int tt_os_file_close(struct tt_os_file *file)
{
	int rc = close((int)file->handle) < 0 && errno != EINTR ? -errno : 0;
	file->handle = -1;
	return rc;
}

int tt_os_file_reserve(struct tt_os_file *file, uint64_t from, uint64_t to)
{
	if (fallocate((int)file->handle, 0, (off_t)from, (off_t)(to - from)) == 0)
		return 0;
	return errno == ENOSYS ? -EOPNOTSUPP : -errno;
}

int tt_os_file_resize(struct tt_os_file *file, uint64_t size)
{
	return ftruncate((int)file->handle, (off_t)size) == 0 ? 0 : -errno;
}

int tt_os_file_reserve_past(struct tt_os_file *file, uint64_t from, uint64_t to)
{
	if (fallocate((int)file->handle, FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(to - from)) == 0)
		return 0;
	return errno == ENOSYS ? -EOPNOTSUPP : -errno;
}

int64_t tt_os_file_write_at(struct tt_os_file *file, const void *buf, size_t size, uint64_t at)
{
	ssize_t n = pwrite((int)file->handle, buf, size, (off_t)at);
	return n < 0 ? -errno : n;
}

int64_t tt_os_file_read_at(struct tt_os_file *file, void *buf, size_t size, uint64_t at)
{
	ssize_t n = pread((int)file->handle, buf, size, (off_t)at);
	return n < 0 ? -errno : n;
}

void tt_os_file_unmap(void *at, size_t size)
{
	munmap(at, size);
}

/* (A directory at `path`: renaming over it fails with EBUSY, ".", or EPERM, another's
 * in /tmp; a link to one is replaced, as any.) */
int tt_os_file_new(const char *path, int unnamed, struct tt_os_file *file, struct tt_os_new_file *made)
{
	struct stat there;
	char dir[4096];
	made->unnamed = 0;
	made->tmp[0] = 0;
	if (lstat(path, &there) == 0 && S_ISDIR(there.st_mode))
		return -EISDIR;
	if (unnamed && tt_os_dir_of(path, dir, sizeof dir) == 0) {
		int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (fd >= 0) {
			file->handle = fd;
			made->unnamed = 1;
			return 0;
		}
	}
	if (snprintf(made->tmp, sizeof made->tmp, "%s.tmp-XXXXXX", path) >= (int)sizeof made->tmp) {
		made->tmp[0] = 0;
		return -ENAMETOOLONG;
	}
	int fd = mkostemp(made->tmp, O_CLOEXEC);
	if (fd >= 0) {
		file->handle = fd;
		return 0;
	}
	made->tmp[0] = 0;
	return tt_os_make_error(path, errno);
}

int tt_os_file_name(struct tt_os_file *file, const char *path, struct tt_os_new_file *made)
{
	if (!made->unnamed)
		return 0;
	char proc[64];
	/* (the thread's: a writer with a table of its own, base/lines.c) */
	snprintf(proc, sizeof proc, "/proc/thread-self/fd/%d", (int)file->handle);
	/* Nothing at PATH: named there at once (nothing to rename, no moment when a
	 * temporary name exists). */
	if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0) {
		made->unnamed = 0;
		return 0;
	}
	for (unsigned attempt = 0; attempt < 100; attempt++) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (snprintf(made->tmp, sizeof made->tmp, "%s.tmp-%d-%lx", path, (int)getpid(),
			     (unsigned long)now.tv_nsec ^ attempt) >= (int)sizeof made->tmp) {
			made->tmp[0] = 0;
			return -ENAMETOOLONG;
		}
		if (linkat(AT_FDCWD, proc, AT_FDCWD, made->tmp, AT_SYMLINK_FOLLOW) == 0) {
			made->unnamed = 0;
			return 0;
		}
		if (errno != EEXIST) {
			int err = -errno;
			made->tmp[0] = 0;
			return err;
		}
	}
	made->tmp[0] = 0;
	return -EEXIST;
}

int tt_os_file_put(struct tt_os_new_file *made, const char *path)
{
	if (made->tmp[0] && rename(made->tmp, path) < 0)
		return -errno;
	made->tmp[0] = 0;
	return 0;
}

void tt_os_file_discard(struct tt_os_new_file *made)
{
	if (made->tmp[0])
		unlink(made->tmp);
	made->tmp[0] = 0;
}

int tt_os_file_hold(struct tt_os_file *file)
{
	return flock((int)file->handle, LOCK_EX | LOCK_NB) == 0 ? 0 : -errno;
}

static void tt_os_stamp_of(const struct stat *st, struct tt_os_file_stamp *stamp)
{
	stamp->dev = st->st_dev;
	stamp->ino = st->st_ino;
	stamp->written_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

int tt_os_file_stamp(struct tt_os_file *file, struct tt_os_file_stamp *stamp)
{
	struct stat st;
	if (fstat((int)file->handle, &st) < 0)
		return -errno;
	tt_os_stamp_of(&st, stamp);
	return 0;
}

int tt_os_path_regular(const char *path)
{
	struct stat st;
	return lstat(path, &st) != 0 || S_ISREG(st.st_mode);
}

int tt_os_path_stamp(const char *path, struct tt_os_file_stamp *stamp)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return -errno;
	tt_os_stamp_of(&st, stamp);
	return 0;
}

int tt_os_file_open_held(const char *path, struct tt_os_file *file)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	file->handle = fd;
	int err = tt_os_file_hold(file);
	if (err)
		close(fd);
	return err;
}

int tt_os_file_link(struct tt_os_new_file *made, const char *path)
{
	if (link(made->tmp, path) < 0)
		return -errno;
	unlink(made->tmp);
	made->tmp[0] = 0;
	return 0;
}

int tt_os_file_replace(struct tt_os_new_file *made, const char *path, struct tt_os_file *held)
{
	int err = tt_os_file_put(made, path);
	if (held)
		close((int)held->handle);
	return err;
}

int tt_os_file_identify(struct tt_os_file file, struct tt_os_file_id *id, int exact)
{
	int fd = (int)file.handle;
	struct stat st;
	int flags = exact ? fcntl(fd, F_GETFL) : id->flags;
	int fd_flags = exact ? fcntl(fd, F_GETFD) : FD_CLOEXEC;
	if (flags < 0 || fd_flags < 0 || fstat(fd, &st) < 0)
		return errno == EBADF || fd < 0 ? -EBADF : -errno;
	if (!(fd_flags & FD_CLOEXEC))
		return -EBADF;
	*id = (struct tt_os_file_id){.dev = st.st_dev, .ino = st.st_ino, .flags = flags};
	return 0;
}

uint64_t tt_os_files_limit(void)
{
	struct rlimit rl;
	return getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (uint64_t)rl.rlim_cur : 1024;
}

int tt_os_file_copy(struct tt_os_file file, int from, struct tt_os_file *copy)
{
	int fd = fcntl((int)file.handle, F_DUPFD_CLOEXEC, from);
	if (fd < 0)
		return errno == EINVAL ? -EMFILE : -errno;
	copy->handle = fd;
	return 0;
}

int tt_os_file_reopen(const char *path, const struct tt_os_file_id *id, struct tt_os_file *file)
{
	/* (never a link another user put there, never a FIFO to block on) */
	int fd = open(path, (id->flags & O_ACCMODE) | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != id->dev ||
	    st.st_ino != id->ino || fcntl(fd, F_SETFL, id->flags) < 0) {
		if (fd >= 0)
			close(fd);
		return -EBADF;
	}
	file->handle = fd;
	return 0;
}

/* The sink's care: 0, or -errno (its check's), the file then left unwritten. */
static int tt_os_sink_check(struct tt_os_file_sink *s, uint64_t at)
{
	return s->check ? s->check(s, at) : 0;
}

static void tt_os_sink_io(struct tt_os_file_sink *s, int begin)
{
	if (s->io)
		s->io(begin);
}

/* A FIFO or device that took nothing (EAGAIN): its reader waited for. */
static int tt_os_sink_wait(struct tt_os_file_sink *s)
{
	struct pollfd ready = {.fd = (int)s->file.handle, .events = POLLOUT};
	tt_os_sink_io(s, 1);
	int rc = poll(&ready, 1, s->wait_ms);
	int err = rc < 0 ? errno : 0;
	tt_os_sink_io(s, 0);
	return rc > 0 || err == EINTR ? 0 : rc == 0 ? -ETIMEDOUT : -err;
}

static int tt_os_file_sink_put(struct tt_os_sink *sink, const void *a, size_t a_size, const void *b,
			       size_t b_size, uint64_t at)
{
	struct tt_os_file_sink *s = (struct tt_os_file_sink *)sink;
	struct iovec iov[2] = {{(void *)a, a_size}, {(void *)b, b_size}}, *left = iov, *end = iov + 2;
	int rechecked = 0;
	for (size_t done = 0;;) { /* (done: bytes of `left` written) */
		at += done;
		while (left < end && done >= left->iov_len)
			done -= left++->iov_len;
		if (left == end)
			return 0;
		left->iov_base = (char *)left->iov_base + done;
		left->iov_len -= done;
		done = 0;
		/* (checked last before the call: nothing between them) */
		int err = tt_os_sink_check(s, at);
		if (err)
			return err;
		tt_os_sink_io(s, 1);
		ssize_t n = writev((int)s->file.handle, left, (int)(end - left));
		err = n < 0 ? errno : EIO;
		tt_os_sink_io(s, 0);
		if (n > 0) {
			done = (size_t)n;
			rechecked = 0;
		} else if (n < 0 && err == EINTR) {
			continue;
		} else if (n < 0 && err == EBADF && s->check && !rechecked++) {
			continue; /* (closed since it was checked: checked again) */
		} else if (n < 0 && err == EAGAIN && s->wait_ms) {
			if ((err = tt_os_sink_wait(s)) != 0)
				return err;
		} else {
			return -err;
		}
	}
}

void tt_os_file_sink(struct tt_os_file_sink *sink, struct tt_os_file file)
{
	*sink = (struct tt_os_file_sink){.sink = {tt_os_file_sink_put}, .file = file};
}

/* ---- time ---- */

static int64_t tt_os_clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t tt_os_monotonic_ns(void)
{
	return tt_os_clock_ns(CLOCK_MONOTONIC);
}

int64_t tt_os_boottime_ns(void)
{
	return tt_os_clock_ns(CLOCK_BOOTTIME);
}

int64_t tt_os_realtime_ns(void)
{
	return tt_os_clock_ns(CLOCK_REALTIME);
}

int64_t tt_os_file_clock_ns(void)
{
	return tt_os_clock_ns(CLOCK_REALTIME_COARSE);
}

int64_t tt_os_thread_cpu_ns(void)
{
	return tt_os_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

int64_t tt_os_process_cpu_ns(void)
{
	return tt_os_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

/* (the kernel's clock of a thread's CPU time by its tid, MAKE_THREAD_CPUCLOCK's
 * CPUCLOCK_SCHED per thread, which another thread of the process may read; never 0) */
uintptr_t tt_os_thread_open(uint32_t tid)
{
	/* (unsigned: a negative value shifted left is undefined in C) */
	return (uintptr_t)(uint32_t)(~tid << 3 | 2u | 4u);
}

int64_t tt_os_thread_cpu_ns_of(uintptr_t thread)
{
	struct timespec ts;
	if (clock_gettime((clockid_t)(uint32_t)thread, &ts) != 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void tt_os_thread_close(uintptr_t thread)
{
	(void)thread;
}

size_t tt_os_thread_name_at(uintptr_t thread, char *name, size_t size)
{
	/* (the id back from its CPU clock's: the shift arithmetic, as the id's is) */
	return tt_os_thread_name_of((uint32_t)~((int32_t)(uint32_t)thread >> 3), name, size);
}

/* TAI read back to back with CLOCK_MONOTONIC, as the anchor's own clocks are. */
void tt_os_clock_reading(const struct tt_anchor *anchor, struct tt_clock_reading *reading)
{
	int64_t mono = tt_os_monotonic_ns();
	int64_t tai = tt_os_clock_ns(CLOCK_TAI);
	struct timex tx = {0};
	int state = adjtimex(&tx);
	*reading = (struct tt_clock_reading){
		.tsc = anchor->tsc,
		.realtime_ns = anchor->realtime_ns,
		.tai_ns = anchor->monotonic_ns + (tai - mono),
		.state = state < 0 ? -1 : state,
	};
	if (state >= 0) {
		reading->esterror_ns = (int64_t)tx.esterror * 1000;
		reading->maxerror_ns = (int64_t)tx.maxerror * 1000;
		reading->status = (uint32_t)tx.status;
	}
}

int tt_os_clock_by_tsc(void)
{
	char name[32];
	size_t len = tt_os_read_file("/sys/devices/system/clocksource/clocksource0/current_clocksource", name,
				     sizeof name);
	return len >= 3 && strncmp(name, "tsc", 3) == 0;
}

/* The time namespace's offsets ("monotonic SECONDS NANOSECONDS", "boottime ..."):
 * none where the kernel has no time namespaces. */
static void tt_os_read_timens(struct tt_machine_info *machine)
{
	char text[256];
	size_t len = tt_os_read_file("/proc/self/timens_offsets", text, sizeof text - 1);
	if (!len)
		return;
	text[len] = 0;
	machine->flags |= TT_MACHINE_TIMENS;
	for (char *line = text; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char clock[16];
		int64_t sec, nsec;
		if (sscanf(line, "%15s %" SCNd64 " %" SCNd64, clock, &sec, &nsec) != 3)
			continue;
		int64_t ns = sec * 1000000000 + nsec;
		if (strcmp(clock, "monotonic") == 0)
			machine->timens_monotonic_ns = ns;
		else if (strcmp(clock, "boottime") == 0)
			machine->timens_boottime_ns = ns;
	}
}

/* 16 bytes from the 32 hexadecimal digits of a /proc or /etc id (a UUID's dashes
 * skipped); left 0 where the text holds other than that. */
static void tt_os_read_id(const char *path, uint8_t id[16])
{
	char text[64];
	size_t len = tt_os_read_file(path, text, sizeof text);
	uint8_t bytes[16] = {0};
	size_t digits = 0;
	for (size_t i = 0; i < len && text[i] != '\n'; i++) {
		char c = text[i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (c == '-')
			continue;
		if (v < 0 || digits == 32)
			return;
		bytes[digits / 2] |= (uint8_t)(v << (digits % 2 ? 0 : 4));
		digits++;
	}
	if (digits == 32)
		memcpy(id, bytes, 16);
}

void tt_os_machine_ids(struct tt_machine_info *machine)
{
	tt_os_read_timens(machine);
	tt_os_read_id("/proc/sys/kernel/random/boot_id", machine->boot_id);
	tt_os_read_id("/etc/machine-id", machine->machine_id);
}

void tt_os_machine_tick(struct tt_machine_info *machine)
{
	(void)machine; /* (CLOCK_THREAD_CPUTIME_ID: exact) */
}

/* The signals that end the program (moved from lifecycle/signals.c). A crash
 * (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL) calls crashed() on its thread, then the
 * signal goes on to the handler the program had installed before, or, where that was
 * the default action, the default action is restored and the signal raised again.
 *
 * SIGTERM, SIGINT, SIGHUP and SIGPIPE (a `kill`, systemd's stop, Ctrl-C, a closed
 * terminal, a pipe's reader gone: `prog | head`) do the same where the program left
 * their default action, which ends it: crashed(), then the default action ends the
 * program as it would have. Where the program ignores one (nohup, a server ignoring
 * SIGPIPE), ticktrace takes none.
 *
 * A handler the program installs after ticktrace started replaces ticktrace's; and the
 * program asking (sigaction, signal) of one of those four sees the action it
 * had, not ticktrace's: one that installs its handler only over the default does.
 * Where the program sets one back to its default (gzip's and many GNU tools' handlers:
 * clean up, SIG_DFL, raise it again), ticktrace's is installed instead, shown as that
 * default, so the raise that follows has crashed() called. A handler of the program's
 * with SA_RESETHAND, which the kernel would reset to the default unseen, goes through
 * ticktrace's reset: the program's handler runs over ticktrace's, installed as its
 * default. An ignored one is never taken. */
static const int tt_os_fatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
static const int tt_os_end_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGPIPE};

static struct sigaction tt_os_program_actions[NSIG]; /* what the program had installed */
static int tt_os_end_taken; /* (the four are taken back at their default: crashes handled) */
static int tt_os_dump_sig;
static void (*tt_os_crashed)(uint32_t cause);
static void (*tt_os_dump_asked)(void);

typedef int (*tt_os_sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*tt_os_handler_fn)(int);
static tt_os_sigaction_fn tt_os_next_sigaction;
static tt_os_handler_fn (*tt_os_next_signal)(int, tt_os_handler_fn);

/* The C library's own (found before any signal handler may call them: dlsym is not
 * async-signal-safe). */
static void tt_os_find_next_signal_calls(void)
{
	if (!tt_os_next_sigaction)
		tt_os_next_sigaction = (tt_os_sigaction_fn)(uintptr_t)dlsym(RTLD_NEXT, "sigaction");
	if (!tt_os_next_signal)
		tt_os_next_signal = (tt_os_handler_fn(*)(int, tt_os_handler_fn))(uintptr_t)dlsym(RTLD_NEXT, "signal");
}

/* The signal goes where it would have gone without ticktrace. */
static void tt_os_chain(int sig, siginfo_t *info, void *context)
{
	struct sigaction program = tt_os_program_actions[sig];
	/* As the kernel would have done before calling it. */
	if (program.sa_flags & SA_RESETHAND) {
		tt_os_program_actions[sig].sa_handler = SIG_DFL;
		tt_os_program_actions[sig].sa_flags = 0;
	}
	if (program.sa_flags & SA_SIGINFO) {
		program.sa_sigaction(sig, info, context);
		return;
	}
	/* Ignored (inherited so across exec): a signal sent is dropped, but a fault the
	 * kernel raised would come back at its instruction forever; the kernel kills a
	 * program that ignores one, and so does this. */
	if (program.sa_handler == SIG_IGN && (!info || info->si_code <= 0))
		return;
	if (program.sa_handler != SIG_DFL && program.sa_handler != SIG_IGN) {
		program.sa_handler(sig);
		return;
	}
	/* Blocked while this handler runs: it comes again, with the default action, as
	 * soon as the handler returns (a fault would anyway, at its instruction). */
	tt_os_next_signal(sig, SIG_DFL); /* (not signal: that would take it back) */
	raise(sig);
}

static void tt_os_on_fault(int sig, siginfo_t *info, void *context)
{
	int saved_errno = errno;
	tt_os_crashed((uint32_t)sig);
	tt_os_chain(sig, info, context);
	errno = saved_errno;
}

static void tt_os_on_dump_signal(int sig)
{
	(void)sig;
	int saved_errno = errno;
	tt_os_dump_asked();
	errno = saved_errno;
}

static int tt_os_end_signal(int sig)
{
	for (size_t i = 0; i < sizeof tt_os_end_signals / sizeof tt_os_end_signals[0]; i++)
		if (sig == tt_os_end_signals[i])
			return 1;
	return 0;
}

/* Ticktrace's action for a signal that ends the program, installed in its place. */
static int tt_os_take_end(int sig, struct sigaction *was)
{
	struct sigaction action = {.sa_sigaction = tt_os_on_fault, .sa_flags = SA_SIGINFO | SA_ONSTACK};
	sigfillset(&action.sa_mask);
	return tt_os_next_sigaction(sig, &action, was);
}

/* A handler of the program's with SA_RESETHAND, run as the kernel would (reset first),
 * the default it is reset to ticktrace's. */
static void tt_os_on_reset(int sig, siginfo_t *info, void *context)
{
	int saved_errno = errno;
	tt_os_take_end(sig, NULL);
	errno = saved_errno;
	tt_os_chain(sig, info, context);
}

/* Whether `seen` is ticktrace's action for a signal that ends the program, which the
 * program is shown as the action it had (the default, or its own handler under
 * tt_os_on_reset). (A crash signal's is shown as it is: a handler of the program's that
 * chains to the one it found then has crashed() called.) */
static int tt_os_taken_for_program(int sig, const struct sigaction *seen)
{
	return tt_os_end_signal(sig) && (seen->sa_flags & SA_SIGINFO) &&
	       (seen->sa_sigaction == tt_os_on_fault || seen->sa_sigaction == tt_os_on_reset);
}

/* Whether the program's `action` for `sig` is one ticktrace puts its own under: the
 * default of a signal that ends the program, or a handler the kernel resets to it. */
static int tt_os_takes(int sig, const struct sigaction *action)
{
	if (!action || !__atomic_load_n(&tt_os_end_taken, __ATOMIC_ACQUIRE) || !tt_os_end_signal(sig) ||
	    sig == tt_os_dump_sig)
		return 0;
	int handler = (action->sa_flags & SA_SIGINFO) ||
		      (action->sa_handler != SIG_DFL && action->sa_handler != SIG_IGN);
	return handler ? (action->sa_flags & SA_RESETHAND) != 0 : action->sa_handler == SIG_DFL;
}

__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction *action,
							 struct sigaction *old)
{
	tt_os_find_next_signal_calls();
	if (!tt_os_takes(sig, action)) {
		int rc = tt_os_next_sigaction(sig, action, old);
		if (rc == 0 && old && tt_os_taken_for_program(sig, old))
			*old = tt_os_program_actions[sig];
		return rc;
	}
	/* (what the program asks is written before ticktrace's goes in: its handlers read it) */
	struct sigaction had = tt_os_program_actions[sig], was;
	tt_os_program_actions[sig] = *action;
	int rc;
	if (action->sa_flags & SA_RESETHAND) {
		struct sigaction reset = *action;
		reset.sa_flags = (action->sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
		reset.sa_sigaction = tt_os_on_reset;
		rc = tt_os_next_sigaction(sig, &reset, &was);
	} else {
		rc = tt_os_take_end(sig, &was);
	}
	if (rc != 0)
		tt_os_program_actions[sig] = had;
	else if (old)
		*old = tt_os_taken_for_program(sig, &was) ? had : was;
	return rc;
}

__attribute__((visibility("default"))) tt_os_handler_fn signal(int sig, tt_os_handler_fn handler)
{
	tt_os_find_next_signal_calls();
	struct sigaction action = {.sa_handler = handler, .sa_flags = SA_RESTART}, was;
	if (tt_os_takes(sig, &action)) /* (the default: through sigaction, which takes it) */
		return sigaction(sig, &action, &was) == 0 ? was.sa_handler : SIG_ERR;
	tt_os_handler_fn had = tt_os_next_signal(sig, handler);
	/* (the C library returns a handler's sa_handler, which shares sa_sigaction's place) */
	struct sigaction seen = {.sa_sigaction = (void (*)(int, siginfo_t *, void *))(uintptr_t)had,
				 .sa_flags = SA_SIGINFO};
	return had != SIG_ERR && tt_os_taken_for_program(sig, &seen) ? tt_os_program_actions[sig].sa_handler
								      : had;
}

static int tt_os_install(int sig, struct sigaction *action)
{
	sigfillset(&action->sa_mask);
	return sigaction(sig, action, &tt_os_program_actions[sig]);
}

int tt_os_dump_signal(const char *name)
{
	static const struct {
		const char *name;
		int number;
	} names[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP}, {"QUIT", SIGQUIT},
		     {"PWR", SIGPWR}, {"WINCH", SIGWINCH}, {"URG", SIGURG}};
	const char *bare = strncmp(name, "SIG", 3) == 0 ? name + 3 : name;
	int sig = 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0] && !sig; i++)
		if (strcmp(bare, names[i].name) == 0)
			sig = names[i].number;
	if (!sig) {
		char *end;
		long number = strtol(name, &end, 10);
		sig = *name && !*end && number > 0 && number < NSIG ? (int)number : 0;
	}
	/* A crash signal would then loop at its fault; SIGKILL and SIGSTOP take no
	 * handler. */
	for (size_t i = 0; i < sizeof tt_os_fatal / sizeof tt_os_fatal[0]; i++)
		if (sig == tt_os_fatal[i])
			sig = 0;
	return sig == SIGKILL || sig == SIGSTOP ? 0 : sig;
}

int tt_os_on_signal(int sig, void (*asked)(void))
{
	tt_os_find_next_signal_calls();
	tt_os_dump_asked = asked;
	tt_os_dump_sig = sig;
	struct sigaction action = {.sa_handler = tt_os_on_dump_signal, .sa_flags = SA_RESTART};
	return tt_os_install(sig, &action) ? -errno : 0;
}

int tt_os_on_crash(void (*crashed)(uint32_t cause), int ends)
{
	tt_os_crashed = crashed;
	tt_os_find_next_signal_calls();
	struct sigaction action = {.sa_sigaction = tt_os_on_fault, .sa_flags = SA_SIGINFO | SA_ONSTACK};
	for (size_t i = 0; i < sizeof tt_os_fatal / sizeof tt_os_fatal[0]; i++)
		tt_os_install(tt_os_fatal[i], &action);
	if (!ends)
		return 0;
	__atomic_store_n(&tt_os_end_taken, 1, __ATOMIC_RELEASE);
	for (size_t i = 0; i < sizeof tt_os_end_signals / sizeof tt_os_end_signals[0]; i++) {
		struct sigaction now;
		int sig = tt_os_end_signals[i];
		if (sig != tt_os_dump_sig && sigaction(sig, NULL, &now) == 0 &&
		    !(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_DFL)
			tt_os_install(sig, &action);
	}
	return 0;
}

int tt_os_at_fork(void (*before)(void), void (*parent)(void), void (*child)(void))
{
	return -pthread_atfork(before, parent, child);
}

/* ---- a thread's counters ---- */

uint32_t tt_os_counters_flags(void)
{
	return 0; /* (every field) */
}

int tt_os_counters_dir(void)
{
	int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dir < 0 ? -errno : dir;
}

/* TID/NAME in /proc/self/task (`dir`, or by the whole path where -1), opened (in the
 * caller's table); -1 with errno. From the directory kept open, the kernel looks up
 * two names, not four (/proc/self's link, its task directory): a warm open costs a
 * third (0.85 us, not 2.6); a thread's first is mostly the kernel making its /proc
 * entries (some 5 us either way). */
static int tt_os_counters_file(int dir, uint32_t tid, const char *name)
{
	char path[64];
	if (dir >= 0) {
		snprintf(path, sizeof path, "%" PRIu32 "/%s", tid, name);
		return openat(dir, path, O_RDONLY | O_CLOEXEC);
	}
	snprintf(path, sizeof path, "/proc/self/task/%" PRIu32 "/%s", tid, name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int tt_os_counters_open(struct tt_os_counters *c, uint32_t tid, int dir)
{
	/* (stat, for the page faults, once they are first wanted) */
	int fd = tt_os_counters_file(dir, tid, "schedstat");
	*c = (struct tt_os_counters){.handle = fd, .stat = -1, .dir = dir, .tid = fd < 0 ? 0 : tid};
	return fd < 0 ? -errno : 0;
}

void tt_os_counters_close(struct tt_os_counters *c)
{
	if (c->handle >= 0)
		close((int)c->handle);
	if (c->stat >= 0)
		close((int)c->stat);
	c->handle = c->stat = -1;
	c->tid = 0;
}

/* The decimal number at *p (after spaces), *p moved past it; -1: none there. */
static int tt_os_next_u64(const char **p, uint64_t *value)
{
	const char *c = *p;
	while (*c == ' ')
		c++;
	if (*c < '0' || *c > '9')
		return -1;
	uint64_t v = 0;
	for (; *c >= '0' && *c <= '9'; c++)
		v = v * 10 + (uint64_t)(*c - '0');
	*value = v;
	*p = c;
	return 0;
}

/* stat's fields 10 (minflt) and 12 (majflt), counted from the field after the
 * command's closing parenthesis (the command may hold spaces and parentheses):
 * ") S ppid pgrp session tty_nr tpgid flags minflt cminflt majflt", where tpgid may
 * be -1. */
static int tt_os_stat_faults(const char *text, uint64_t *minflt, uint64_t *majflt)
{
	const char *p = strrchr(text, ')');
	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -1;
	p += 3;
	uint64_t field[9];
	for (int i = 0; i < 9; i++) {
		while (*p == ' ')
			p++;
		p += *p == '-'; /* (tpgid -1: no terminal; only its place counts) */
		if (tt_os_next_u64(&p, &field[i]) < 0)
			return -1;
	}
	*minflt = field[6];
	*majflt = field[8];
	return 0;
}

/* A reading of the pread file `fd` into text (NUL-terminated); -1: it exited. */
static int tt_os_counters_pread(int fd, char *text, size_t size)
{
	ssize_t n = pread(fd, text, size - 1, 0);
	if (n <= 0)
		return -1;
	text[n] = 0;
	return 0;
}

/* schedstat's wait on a run queue and timeslices (its run time is the CPU clock's);
 * -1: it exited. */
static int tt_os_schedstat_waits(int fd, struct tt_schedstat_sample *out)
{
	char text[128];
	const char *p = text;
	uint64_t run;
	return tt_os_counters_pread(fd, text, sizeof text) < 0 || tt_os_next_u64(&p, &run) < 0 ||
			       tt_os_next_u64(&p, &out->wait_ns) < 0 || tt_os_next_u64(&p, &out->timeslices) < 0
		       ? -1 : 0;
}

/* The CPU time on `clock`, then the wait (schedstat, `fd`), between two readings of
 * the monotonic clock, the second its time (format.h: TT_SCHEDSTAT_SPAN_NS): read
 * again where they lie further apart. The reader kept off its CPU between them (one
 * reading in some hundred at a load of 30 on 2 cores, up to 4 ms) while the thread
 * read ends a wait and a scope gives a reading stamped after the scope's end that
 * lacks the wait: a split short of it by as much, within an error that said less.
 * The CPU time first: where it grew from one reading to the next, the thread ran
 * before the next one's wait was read. -1: it exited, or never within the span. */
static int tt_os_schedstat_span(clockid_t clock, int fd, struct tt_schedstat_sample *out)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		struct timespec cpu;
		int64_t from = tt_os_monotonic_ns();
		if (clock_gettime(clock, &cpu) != 0 || tt_os_schedstat_waits(fd, out) < 0)
			return -1;
		out->ns = tt_os_monotonic_ns();
		out->run_ns = (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec;
		if (out->ns - from <= TT_SCHEDSTAT_SPAN_NS)
			return 0;
	}
	return -1;
}

int tt_os_counters_read_own(uint32_t tid, struct tt_schedstat_sample *out)
{
	/* (its faults from getrusage: stat, the dearest file, is not opened) */
	struct rusage own;
	if (getrusage(RUSAGE_THREAD, &own) != 0)
		return -1;
	out->minflt = (uint64_t)own.ru_minflt;
	out->majflt = (uint64_t)own.ru_majflt;
	struct tt_os_moment schedstat;
	if (tt_os_moment_open(&schedstat, tt_os_counters_file(-1, tid, "schedstat")) < 0)
		return -1;
	int read = tt_os_schedstat_span(CLOCK_THREAD_CPUTIME_ID, schedstat.fd, out);
	tt_os_moment_close(&schedstat);
	return read;
}

int tt_os_counters_read(struct tt_os_counters *c, struct tt_schedstat_sample *out, int faults, uint64_t ran_ns)
{
	char text[512];
	if (tt_os_schedstat_span((clockid_t)(uint32_t)tt_os_thread_open(c->tid), (int)c->handle, out) < 0)
		return -1;
	/* Its faults after its CPU time: a thread whose CPU time is the last reading's has
	 * not run since that reading's, and takes no fault without running, so its faults
	 * are the ones read after it (stat, three times schedstat, was read at nearly
	 * every reading of the benchmark's 64 threads: the process faulted between them) */
	if (!faults || out->run_ns == ran_ns)
		return 0;
	if (c->stat < 0 && (c->stat = tt_os_counters_file(c->dir, c->tid, "stat")) < 0)
		return -1;
	return tt_os_counters_pread((int)c->stat, text, sizeof text) < 0 ||
			       tt_os_stat_faults(text, &out->minflt, &out->majflt) < 0
		       ? -1 : 0;
}

int tt_os_counters_read_other(uint32_t tid, struct tt_schedstat_sample *out)
{
	struct tt_os_moment schedstat, stat = {.fd = -1};
	struct tt_os_counters c = {.dir = -1, .tid = tid};
	c.handle = tt_os_moment_open(&schedstat, tt_os_counters_file(-1, tid, "schedstat"));
	if (c.handle >= 0)
		c.stat = tt_os_moment_open(&stat, tt_os_counters_file(-1, tid, "stat"));
	else
		c.stat = -1;
	int read = c.stat < 0 ? -1 : tt_os_counters_read(&c, out, 1, 0);
	tt_os_moment_close(&stat);
	tt_os_moment_close(&schedstat);
	return read;
}

/* The child that asks the kernel first, in the memory of the process (CLONE_VM): it
 * exits with 0 once asked, answered or refused; killed by the filter, by its signal. */
__attribute__((no_sanitize("address", "undefined"))) /* (on a stack of its own, in a moment) */
static int tt__perf_probe_child(void *attr)
{
	long fd = syscall(SYS_perf_event_open, attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	(void)fd; /* (its exit closes it) */
	syscall(SYS_exit, 0); /* (the thread alone: exit_group is the parent's process's too) */
	return 0;
}

/* 0 where asking for perf events leaves the process alive; -EPERM where a seccomp
 * filter killed the child that asked (outside recheck r47 F7: a hardened service's
 * filter killed the README's program before main, saying nothing). */
static int tt__perf_survivable(void)
{
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 2) /* (no filter: or one that would say) */
		return 0;
	/* (the child's stack in this thread's frame: two threads asking at once each lend
	 * their own) */
	char stack[8192] __attribute__((aligned(16)));
	struct perf_event_attr attr = {.type = PERF_TYPE_SOFTWARE, .size = sizeof attr,
				       .config = PERF_COUNT_SW_DUMMY, .exclude_kernel = 1};
	int saved = errno;
	/* (no exit signal: the program's SIGCHLD handler never sees it; CLONE_VFORK: this
	 * thread waits for it, so the stack is its alone) */
	pid_t pid = clone(tt__perf_probe_child, stack + sizeof stack, CLONE_VM | CLONE_VFORK, &attr);
	int status = 0, rc = 0;
	if (pid > 0) {
		while (waitpid(pid, &status, __WCLONE) < 0 && errno == EINTR)
			;
		rc = WIFSIGNALED(status) ? -EPERM : 0;
	}
	errno = saved;
	return rc;
}

int tt_os_perf_event_open(void *attr, int tid, int cpu, int group, unsigned long flags)
{
	static int survivable = 1; /* 1: not found yet */
	int known = __atomic_load_n(&survivable, __ATOMIC_ACQUIRE);
	if (known == 1) { /* (two threads at once both ask: the same answer) */
		known = tt__perf_survivable();
		__atomic_store_n(&survivable, known, __ATOMIC_RELEASE);
	}
	if (known < 0) {
		errno = -known;
		return -1;
	}
	return (int)syscall(SYS_perf_event_open, attr, tid, cpu, group, flags);
}

int tt_os_steal_accounted(void)
{
	char text[256];
	size_t len = tt_os_read_file("/proc/stat", text, sizeof text - 1);
	text[len] = 0;
	/* "cpu  user nice system idle iowait irq softirq steal ..." */
	unsigned long long steal;
	return sscanf(text, "cpu %*u %*u %*u %*u %*u %*u %*u %llu", &steal) == 1 && steal > 0;
}

/* ---- the process ---- */

uint32_t tt_os_process_id(void)
{
	return (uint32_t)getpid();
}

size_t tt_os_process_name(char *name, size_t size)
{
	return tt_os_read_name("/proc/self/comm", name, size);
}

uint32_t tt_os_parent_id(void)
{
	return (uint32_t)getppid();
}

size_t tt_os_command_line(char *line, size_t size)
{
	size_t len = tt_os_read_file("/proc/self/cmdline", line, size);
	while (len && line[len - 1] != 0) /* (an argument cut short: left out) */
		len--;
	return len;
}

size_t tt_os_host_name(char *name, size_t size)
{
	struct utsname uts;
	if (!size)
		return 0;
	if (uname(&uts) != 0)
		uts.nodename[0] = 0;
	snprintf(name, size, "%s", uts.nodename);
	return strlen(name);
}

struct tt_os_walk {
	int (*each)(const struct tt_os_module *module, void *arg);
	void *arg;
};

/* The GNU build id among the object's notes, or NULL. */
static const uint8_t *tt_os_build_id(const struct dl_phdr_info *info, uint32_t *len)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const void *)p;
			const char *desc = p + sizeof *n + ((n->n_namesz + 3) & ~3u);
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(p + sizeof *n, "GNU", 4)) {
				*len = n->n_descsz;
				return (const uint8_t *)desc;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	*len = 0;
	return NULL;
}

/* The mapping of this process that holds `at` (/proc/self/maps): its file's device,
 * inode and path (" (deleted)" and all, as the kernel writes it) into `path`; 0, or
 * -1 when none holds it or the list does not read. */
static int tt_os_mapping_at(uintptr_t at, dev_t *dev, ino_t *ino, char *path, size_t cap)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[PATH_MAX + 256];
	size_t len = 0;
	int found = -1;
	for (;;) {
		char *nl = memchr(buf, '\n', len);
		if (!nl) {
			ssize_t n = len < sizeof buf - 1 ? read(fd, buf + len, sizeof buf - 1 - len) : 0;
			if (n <= 0)
				break; /* (a line longer than the buffer: no path that long is read) */
			len += (size_t)n;
			continue;
		}
		*nl = 0;
		unsigned long start, end, major, minor, inode;
		int name_at = 0;
		if (sscanf(buf, "%lx-%lx %*s %*x %lx:%lx %lu %n", &start, &end, &major, &minor, &inode,
			   &name_at) == 5 && at >= start && at < end) {
			*dev = makedev(major, minor);
			*ino = (ino_t)inode;
			snprintf(path, cap, "%s", name_at ? buf + name_at : "");
			found = 0;
			break;
		}
		len -= (size_t)(nl + 1 - buf);
		memmove(buf, nl + 1, len);
	}
	close(fd);
	return found;
}

/* A module the loader found by a relative name (LD_LIBRARY_PATH=., dlopen("./x.so")),
 * from the root, so that a trace read in another directory finds its file: in the
 * working directory, when the file there is the one mapped (the loader's name kept:
 * a link's, as it found it); else the mapped file's own path (the program changed
 * directory since); else the name as it is. `at`: an address of its first segment. */
static const char *tt_os_module_path(const char *name, uintptr_t at, char *buf, size_t cap)
{
	char mapped[PATH_MAX];
	dev_t dev;
	ino_t ino;
	struct stat st;
	if (tt_os_mapping_at(at, &dev, &ino, mapped, sizeof mapped) < 0)
		return name;
	while (name[0] == '.' && name[1] == '/')
		name += 2;
	size_t dir_len = getcwd(buf, cap) ? strlen(buf) : 0;
	if (dir_len && snprintf(buf + dir_len, cap - dir_len, "%s%s", dir_len > 1 ? "/" : "", name) <
			       (int)(cap - dir_len) &&
	    stat(buf, &st) == 0 && st.st_dev == dev && st.st_ino == ino)
		return buf;
	if (mapped[0] != '/')
		return name;
	snprintf(buf, cap, "%s", mapped);
	return buf;
}

static int tt_os_module_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct tt_os_walk *walk = arg;
	char exe[PATH_MAX];
	const char *path = info->dlpi_name;
	if (!path || !*path) { /* the program itself */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[n > 0 ? n : 0] = 0;
		path = exe;
	} else if (path[0] != '/' && strchr(path, '/')) { /* (no slash: the vDSO, no file) */
		for (int i = 0; i < info->dlpi_phnum; i++)
			if (info->dlpi_phdr[i].p_type == PT_LOAD) {
				path = tt_os_module_path(path, info->dlpi_addr + info->dlpi_phdr[i].p_vaddr,
							 exe, sizeof exe);
				break;
			}
	}
	struct tt_os_module m = {.path = path, .loaded_as = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : path,
				 .base = info->dlpi_addr};
	m.build_id = tt_os_build_id(info, &m.build_id_len);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		m.start = info->dlpi_addr + ph->p_vaddr;
		m.end = m.start + ph->p_memsz;
		m.file_offset = ph->p_offset;
		int rc = walk->each(&m, walk->arg);
		if (rc)
			return rc;
	}
	return 0;
}

int tt_os_modules(int (*each)(const struct tt_os_module *module, void *arg), void *arg)
{
	struct tt_os_walk walk = {each, arg};
	return dl_iterate_phdr(tt_os_module_of, &walk);
}

static int tt_os_count_changes(struct dl_phdr_info *info, size_t size, void *data)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
		*(uint64_t *)data = info->dlpi_adds + info->dlpi_subs;
	return 1;
}

int tt_os_on_unload(void (*unloaded)(struct tt_os_module_list *ranges, uint64_t low, uint64_t high,
				      uint64_t tsc))
{
	(void)unloaded;
	return -ENOTSUP;
}

uint64_t tt_os_modules_changes(void)
{
	uint64_t changes = 0;
	dl_iterate_phdr(tt_os_count_changes, &changes);
	return changes;
}

int tt_os_address_loaded(const void *at, const char **symbol)
{
	Dl_info info;
	if (!dladdr(at, &info))
		return 0;
	*symbol = info.dli_sname && info.dli_saddr == at ? info.dli_sname : NULL;
	return 1;
}

int tt_os_address_module(const void *at, struct tt_os_address *where, char *buf, size_t cap)
{
	(void)buf, (void)cap;
	Dl_info info;
	struct link_map *module;
	if (!dladdr1(at, &info, (void **)&module, RTLD_DL_LINKMAP) || !module)
		return 0;
	*where = (struct tt_os_address){.base = module->l_addr, .loaded_as = module->l_name,
					.symbol = info.dli_sname && info.dli_saddr == at ? info.dli_sname : NULL};
	return 1;
}

const char *tt_os_module_file(const char *loaded_as, char *buf, size_t cap)
{
	if (!loaded_as[0]) { /* (the loader names the program "") */
		ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
		buf[n > 0 ? n : 0] = 0;
		loaded_as = buf;
	}
	const char *slash = strrchr(loaded_as, '/');
	return slash ? slash + 1 : loaded_as;
}

FILE *tt_os_memstream_open(struct tt_os_memstream *m)
{
	*m = (struct tt_os_memstream){0};
	m->stream = open_memstream(&m->text, &m->len);
	return m->stream;
}

int tt_os_memstream_close(struct tt_os_memstream *m, char **text, size_t *len)
{
	int err = fclose(m->stream) == 0 ? 0 : -ENOMEM;
	if (err) {
		free(m->text);
		m->text = NULL;
	}
	*text = m->text;
	*len = m->len;
	return err;
}
