/* runtime/underscore_exit.sh's program: records 1000 scopes, then leaves by _exit (no
 * exit handler runs) in one of three ways, by its argument:
 *   main     main calls _exit(3)
 *   handler  a SIGALRM handler calls _exit(4) while main records (async-signal-safe)
 *   vfork    a vfork child calls _exit(127) (an exec that failed), then main exit(5)s
 *   fork     main calls _exit(6) while a thread of its own forks as soon as ticktrace's
 *            thread that writes the trace is inside malloc (this program's, which
 *            holds it there until the fork returned, or 1 s): the child says on stderr
 *            whether it found that malloc under way, as an allocator that is not
 *            fork-safe would (it hangs), records 10 scopes "child" and exit(0)s; the
 *            trace's writes wait for the fork (10 s at most), so that the child is
 *            made while the run ends
 *   exit_group  main leaves by the system call itself, past the C library (7)
 * Prints the pid. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ticktrace.h>

static void tt_work(int scopes)
{
	for (int i = 0; i < scopes; i++) {
		TT_SCOPE("work");
	}
}

/* (malloc is the sanitizer's there: the fork case cannot hold it) */

static void tt_say(const char *line)
{
	ssize_t ignored = write(2, line, strlen(line));
	(void)ignored;
}

#ifndef TT_ASAN
/* The fork case: set once main leaves; then the first allocation of ticktrace's
 * thread tt-dump, and whether the fork has begun and returned. */
static int tt_armed, tt_dump_in_malloc, tt_forking, tt_forked;

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *old, size_t size);

static int tt_wait_for(const int *flag, long ms)
{
	for (long i = 0; i < ms * 10 && !__atomic_load_n(flag, __ATOMIC_SEQ_CST); i++)
		nanosleep(&(struct timespec){0, 100000}, NULL);
	return __atomic_load_n(flag, __ATOMIC_SEQ_CST);
}

/* tt-dump's first allocation after main left: held until the fork returned. */
static void tt_allocating(void)
{
	char name[16] = "";
	if (!__atomic_load_n(&tt_armed, __ATOMIC_SEQ_CST) || prctl(PR_GET_NAME, name) != 0 ||
	    strcmp(name, "tt-dump") != 0 || __atomic_exchange_n(&tt_armed, 0, __ATOMIC_SEQ_CST) != 1)
		return;
	tt_say("tt-dump allocates after _exit\n");
	__atomic_store_n(&tt_dump_in_malloc, 1, __ATOMIC_SEQ_CST);
	if (tt_wait_for(&tt_forking, 10000))
		tt_wait_for(&tt_forked, 1000); /* (a fork kept out waits for more than this) */
	__atomic_store_n(&tt_dump_in_malloc, 0, __ATOMIC_SEQ_CST);
}

void *malloc(size_t size)
{
	tt_allocating();
	return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	tt_allocating();
	return __libc_calloc(n, size);
}

void *realloc(void *old, size_t size)
{
	tt_allocating();
	return __libc_realloc(old, size);
}

/* ticktrace's writes (writer/buffer.c's sink) as the run ends: the fork made first. */
ssize_t writev(int fd, const struct iovec *iov, int n)
{
	char name[16] = "";
	if (__atomic_load_n(&tt_forking, __ATOMIC_SEQ_CST) && prctl(PR_GET_NAME, name) == 0 &&
	    strcmp(name, "tt-dump") == 0)
		tt_wait_for(&tt_forked, 10000);
	return syscall(SYS_writev, fd, iov, n);
}

static void *tt_forker(void *unused)
{
	(void)unused;
	if (!tt_wait_for(&tt_dump_in_malloc, 30000))
		return NULL;
	__atomic_store_n(&tt_forking, 1, __ATOMIC_SEQ_CST);
	pid_t child = fork();
	if (child == 0) {
		tt_say(__atomic_load_n(&tt_dump_in_malloc, __ATOMIC_SEQ_CST)
			       ? "child: inherited tt-dump inside malloc\n"
			       : "child: no allocation under way\n");
		for (int i = 0; i < 10; i++) {
			TT_SCOPE("child");
		}
		char line[64];
		snprintf(line, sizeof line, "child: pid %d\n", (int)getpid());
		tt_say(line);
		exit(0);
	}
	__atomic_store_n(&tt_forked, 1, __ATOMIC_SEQ_CST);
	return NULL;
}
#endif

static void tt_leave(int sig)
{
	(void)sig;
	_exit(4);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "main";
	printf("%d\n", (int)getpid());
	fflush(stdout);
	tt_work(1000);
	if (strcmp(how, "handler") == 0) {
		signal(SIGALRM, tt_leave);
		struct itimerval soon = {.it_value = {0, 20000}};
		setitimer(ITIMER_REAL, &soon, NULL);
		for (;;)
			tt_work(1);
	}
	if (strcmp(how, "vfork") == 0) {
		pid_t child = vfork();
		if (child == 0) {
			execl("/nonexistent/program", "program", (char *)NULL);
			_exit(127);
		}
		int status;
		if (child < 0 || waitpid(child, &status, 0) != child || WEXITSTATUS(status) != 127)
			return 2;
		tt_work(1000);
		return 5;
	}
	if (strcmp(how, "exit_group") == 0)
		syscall(SYS_exit_group, 7);
	if (strcmp(how, "fork") == 0) {
#ifdef TT_ASAN
		tt_say("skipped: a sanitizer's malloc is not this program's to hold\n");
#else
		pthread_t forker;
		if (pthread_create(&forker, NULL, tt_forker, NULL) != 0)
			return 2;
		__atomic_store_n(&tt_armed, 1, __ATOMIC_SEQ_CST);
#endif
		_exit(6);
	}
	_exit(3);
}
