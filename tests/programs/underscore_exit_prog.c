/* runtime/underscore_exit.sh's program: records 1000 scopes, then leaves by _exit (no
 * exit handler runs) in one of three ways, by its argument:
 *   main     main calls _exit(3)
 *   handler  a SIGALRM handler calls _exit(4) while main records (async-signal-safe)
 *   vfork    a vfork child calls _exit(127) (an exec that failed), then main exit(5)s
 * Prints the pid. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ticktrace.h>

static void tt_work(int scopes)
{
	for (int i = 0; i < scopes; i++) {
		TT_SCOPE("work");
	}
}

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
	_exit(3);
}
