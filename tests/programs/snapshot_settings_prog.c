/* snapshot_settings.py's program: calls tt_trigger(why) for each argument and prints
 * what each returned, a line each ("WHY RESULT"); an argument "fork" forks there, the
 * child going on with the rest (its lines prefixed "child "). Records a scope
 * around each call, so that the snapshot's window holds records. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ticktrace.h>

int main(int argc, char **argv)
{
	const char *who = "";
	pid_t child = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "fork") == 0) {
			fflush(stdout);
			child = fork();
			if (child == 0)
				who = "child ";
			continue;
		}
		TT_SCOPE("around the trigger");
		printf("%s%s %d\n", who, argv[i], tt_trigger(argv[i]));
	}
	fflush(stdout);
	if (child > 0)
		waitpid(child, NULL, 0);
	return 0;
}
