/* runtime/exec_children.sh's program: a run whose children exec, with no %p in
 * TICKTRACE_OUT, each image recording TT_COUNTER("image", its number):
 *   image 0   forks three children one after another, each of which execs this
 *             program as image 1, 2, 3; then vfork and exec as image 4; then execs
 *             itself as image 5
 * Ten files are due: image 0's, the three forked children's before their exec
 * (image 0's command line), and one for each of images 1 to 5.
 *   image s   starts image 6 by posix_spawn three times in turn (execs the runtime
 *             does not see), then image 8 by system(), then execs itself as image
 *             5; image 6 execs itself as image 7
 * Nine files are due, each image's: the spawned ones know from TICKTRACE_PROGRAM_PID,
 * which image s sets, that they are the run's children (run.ttr.PID,
 * run.exec1.ttr.PID), and none replaces another's. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ticktrace.h>

extern char **environ;

static int tt_exec_self(const char *image)
{
	execl("/proc/self/exe", "exec_children_prog", image, (char *)NULL);
	return 127;
}

static int tt_waited(pid_t child)
{
	int status;
	return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
	int image = argc > 1 ? atoi(argv[1]) : 0;
	TT_COUNTER("image", image);
	if (image == 6)
		return tt_exec_self("7");
	if (argc > 1 && strcmp(argv[1], "s") == 0) {
		char *spawn_argv[] = {"exec_children_prog", "6", NULL};
		for (int k = 0; k < 3; k++) {
			pid_t spawned;
			if (posix_spawn(&spawned, "/proc/self/exe", NULL, NULL, spawn_argv, environ) != 0 ||
			    !tt_waited(spawned))
				return 2;
		}
		char self[4096], command[4200];
		ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
		if (len < 0)
			return 2;
		self[len] = 0;
		snprintf(command, sizeof command, "'%s' 8", self);
		if (system(command) != 0)
			return 2;
		return tt_exec_self("5");
	}
	if (argc > 1 && strcmp(argv[1], "0") != 0)
		return 0;
	static const char *const forked[] = {"1", "2", "3"};
	for (int k = 0; k < 3; k++) {
		pid_t child = fork();
		if (child == 0)
			_exit(tt_exec_self(forked[k]));
		if (!tt_waited(child))
			return 2;
	}
	pid_t child = vfork();
	if (child == 0)
		_exit(tt_exec_self("4"));
	if (!tt_waited(child))
		return 2;
	return tt_exec_self("5");
}
