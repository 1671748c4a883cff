/* A program that starts others every way a process can (record_cli.sh, case starts).
 * Run as `starts`, it calls work_leaf, then starts itself as `starts child HOW` by
 * fork (no exec), fork and exec, posix_spawn, vfork and exec, and through a shell
 * that runs two in turn (`sh -c 'A; B'`: the shell forks for the first and execs the
 * last), waiting for each, then execs itself as `starts last` (an exec chain: the
 * same pid, a new image). Each process calls work_leaf and prints one line; `last`
 * exits 3. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

__attribute__((noinline)) int work_leaf(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

static int waited(pid_t pid)
{
	int status;
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

/* In a child of fork or vfork: `self child HOW`. */
static _Noreturn void child(const char *self, const char *how)
{
	execl(self, self, "child", how, (char *)NULL);
	_exit(127);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "child") == 0) {
		printf("child %s: %d\n", argv[2], work_leaf(argc));
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "last") == 0) {
		printf("last: %d\n", work_leaf(argc));
		return 3;
	}
	printf("top: %d\n", work_leaf(argc));
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		printf("forked: %d\n", work_leaf(2));
		exit(0);
	}
	if (!waited(pid))
		return 1;
	pid = fork();
	if (pid == 0)
		child(argv[0], "fork-exec");
	if (!waited(pid))
		return 1;
	char *spawned[] = {argv[0], "child", "posix_spawn", NULL};
	if (posix_spawn(&pid, argv[0], NULL, NULL, spawned, environ) != 0 || !waited(pid))
		return 1;
	pid = vfork();
	if (pid == 0)
		child(argv[0], "vfork");
	if (!waited(pid))
		return 1;
	char command[4096];
	snprintf(command, sizeof command, "'%s' child first; '%s' child second", argv[0], argv[0]);
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", command, (char *)NULL);
		_exit(127);
	}
	if (!waited(pid))
		return 1;
	execl(argv[0], argv[0], "last", (char *)NULL);
	return 1;
}
