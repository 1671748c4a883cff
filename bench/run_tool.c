#include "run_tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ticktrace.h"

int tt_run_tool(const char *tool, char *const argv[])
{
	tt_disable();
	setenv("TICKTRACE_OUT", "/dev/null", 1);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execv(tool, argv);
		perror(tool);
		_exit(127);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "%s %s failed\n", tool, argv[1]);
		return -1;
	}
	return 0;
}
