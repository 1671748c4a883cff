/* exec, interposed: the new program replaces this one's memory, and with it every
 * event recorded and not yet in the file, and no exit handler runs. The run ends as at
 * exit first (start.c: tt__finish), then the C library's exec runs. The execl forms
 * are interposed too: the C library's call its execve from the inside. An exec that
 * fails returns to a program that records no more, and says so.
 *
 * _exit and _Exit, interposed, in a forked child: what a child calls to leave without
 * running the parent's exit handlers; its run, of its own file, ends first as before
 * an exec. So too in a process `ticktrace record` started that is not its program: a
 * shell (dash) leaves by _exit, and each of make's recipe shells left only its live
 * buffers, said as a run killed. And in the process that started the run, which
 * skips its own exit handlers on purpose, maybe from a signal handler, and wrote no
 * trace and said nothing: its run ends by the service thread (async-signal-safe).
 * And daemon(), whose parent leaves by _exit. (Linux's alone: Windows has no exec
 * to interpose, nor fork.) */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lifecycle/lifecycle.h"

TT_API int execve(const char *path, char *const argv[], char *const envp[]);
TT_API int execv(const char *path, char *const argv[]);
TT_API int execvp(const char *file, char *const argv[]);
TT_API int execvpe(const char *file, char *const argv[], char *const envp[]);
TT_API int fexecve(int fd, char *const argv[], char *const envp[]);
TT_API int execl(const char *path, const char *arg, ...);
TT_API int execlp(const char *file, const char *arg, ...);
TT_API int execle(const char *path, const char *arg, ...);
TT_API void _exit(int status);
TT_API void _Exit(int status);

/* The C library's function `name`, once the run has ended; NULL with errno set. */
static void *tt__before_exec(const char *name)
{
	void *next = dlsym(RTLD_NEXT, name);
	if (!next) {
		errno = ENOSYS;
		return NULL;
	}
	tt__finish();
	return next;
}

/* After an exec that failed: its errno kept. */
static int tt__exec_failed(const char *name)
{
	int err = errno;
	fprintf(tt__err, "ticktrace: %s failed: the trace was written before it, and nothing more "
		"is recorded\n", name);
	errno = err;
	return -1;
}

/* The environment of the next image: `envp` with TICKTRACE_EXEC_IMAGE (in `image`),
 * this pid, the image it will be, whose files then do not replace this one's, and
 * whether it is a child's, named apart as a forked child's files are (writer/output.c;
 * a vfork child's: its process's first image, a child's). NULL, with no memory for it
 * (the next image then takes this one's names). */
static char **tt__exec_env(char *const envp[], char *image, size_t cap)
{
	static const char name[] = TT_ENV_EXEC_IMAGE "=";
	size_t n = 0;
	while (envp && envp[n])
		n++;
	char **env = malloc((n + 2) * sizeof(*env));
	if (!env)
		return NULL;
	size_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(envp[i], name, sizeof name - 1) != 0)
			env[kept++] = envp[i];
	if (tt__exec_image_setting(image, cap, tt__in_vfork_child()) == 0)
		env[kept++] = image;
	env[kept] = NULL;
	return env;
}

typedef int tt__execve_fn(const char *, char *const[], char *const[]);

/* exec `name`, through the C library's `next` (execve or execvpe, which the forms
 * without an environment are with environ's). */
static int tt__exec(const char *name, const char *next_name, const char *file, char *const argv[],
		    char *const envp[])
{
	tt__execve_fn *next = (tt__execve_fn *)tt__before_exec(next_name);
	char image[96];
	char **env = tt__exec_env(envp, image, sizeof image);
	if (next)
		next(file, argv, env ? env : envp);
	int err = errno;
	free(env);
	errno = err;
	return tt__exec_failed(name);
}

int execve(const char *path, char *const argv[], char *const envp[])
{
	return tt__exec("execve", "execve", path, argv, envp);
}

int execv(const char *path, char *const argv[])
{
	return tt__exec("execv", "execve", path, argv, environ);
}

int execvp(const char *file, char *const argv[])
{
	return tt__exec("execvp", "execvpe", file, argv, environ);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return tt__exec("execvpe", "execvpe", file, argv, envp);
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
	int (*next)(int, char *const[], char *const[]) =
		(int (*)(int, char *const[], char *const[]))tt__before_exec("fexecve");
	char image[96];
	char **env = tt__exec_env(envp, image, sizeof image);
	if (next)
		next(fd, argv, env ? env : envp);
	int err = errno;
	free(env);
	errno = err;
	return tt__exec_failed("fexecve");
}

/* The arguments of an execl form, up to its NULL, as an array; 0 (errno E2BIG) for
 * more than TT__EXECL_MAX, which no exec takes whole anyway. */
#define TT__EXECL_MAX 4096
static int tt__execl_argv(const char *first, va_list *ap, char **argv)
{
	argv[0] = (char *)first;
	for (size_t n = 0; argv[n]; n++) {
		if (n + 1 == TT__EXECL_MAX) {
			errno = E2BIG;
			return 0;
		}
		argv[n + 1] = va_arg(*ap, char *);
	}
	return 1;
}

int execl(const char *path, const char *arg, ...)
{
	char *argv[TT__EXECL_MAX];
	va_list ap;
	va_start(ap, arg);
	int ok = tt__execl_argv(arg, &ap, argv);
	va_end(ap);
	return ok ? execv(path, argv) : -1;
}

int execlp(const char *file, const char *arg, ...)
{
	char *argv[TT__EXECL_MAX];
	va_list ap;
	va_start(ap, arg);
	int ok = tt__execl_argv(arg, &ap, argv);
	va_end(ap);
	return ok ? execvp(file, argv) : -1;
}

int execle(const char *path, const char *arg, ...)
{
	char *argv[TT__EXECL_MAX];
	va_list ap;
	va_start(ap, arg);
	int ok = tt__execl_argv(arg, &ap, argv);
	char *const *envp = ok ? va_arg(ap, char *const *) : NULL;
	va_end(ap);
	return ok ? execve(path, argv, envp) : -1;
}

/* The C library's `name` (_exit or _Exit), once a forked child's run (or one of
 * record's processes') has ended. */
__attribute__((noreturn)) static void tt__leave(const char *name, int status)
{
	/* (with no service thread, by this one, as a forked child's: a trace kept) */
	if (__atomic_load_n(&tt__forked, __ATOMIC_ACQUIRE) || tt__out_is_apart())
		tt__finish();
	else if (!tt__config.off && !tt__in_vfork_child() && !tt__finish_from_anywhere(tt__finish))
		tt__finish();
	void (*next)(int) = (void (*)(int))dlsym(RTLD_NEXT, name);
	if (next)
		next(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

void _exit(int status)
{
	tt__leave("_exit", status);
}

void _Exit(int status)
{
	tt__leave("_Exit", status);
}

/* daemon(), interposed: the C library's forks, and its parent leaves by _exit, which
 * runs no exit handler (tt__after_fork_in_parent ends the parent's run). A daemon()
 * that fails in the parent returns to a program that records no more, and says so. */
TT_API int daemon(int nochdir, int noclose);

int daemon(int nochdir, int noclose)
{
	int (*next)(int, int) = (int (*)(int, int))dlsym(RTLD_NEXT, "daemon");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	tt__init();
	pid_t parent = getpid();
	tt__in_daemon = 1;
	int ret = next(nochdir, noclose);
	tt__in_daemon = 0;
	if (ret < 0 && getpid() == parent && !tt__config.off) {
		int err = errno;
		fprintf(tt__err, "ticktrace: daemon failed: the trace was written before it, and "
			"nothing more is recorded\n");
		errno = err;
	}
	return ret;
}
