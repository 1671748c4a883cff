/* A program that starts others (record_cli.sh): run as `spawn`, it calls work_leaf,
 * runs itself twice through the shell (`spawn child A; spawn child B`), twice, so
 * that the shell and the program are each started more than once, and forks a child
 * that calls work_leaf and exits. Each process prints one line; the exit status is 3. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int work_leaf(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

int main(int argc, char **argv)
{
	if (argc == 3) {
		printf("child %s: %d\n", argv[2], work_leaf(argc));
		return 0;
	}
	printf("top: %d\n", work_leaf(argc));
	fflush(stdout);
	char command[4096];
	snprintf(command, sizeof command, "'%s' child A; '%s' child B", argv[0], argv[0]);
	for (int i = 0; i < 2; i++)
		if (system(command) != 0)
			return 1;
	pid_t pid = fork();
	if (pid == 0) {
		printf("forked: %d\n", work_leaf(2));
		exit(0);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
		return 1;
	return 3;
}
