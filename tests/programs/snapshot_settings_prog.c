/* snapshot_settings.py's program: calls tt_trigger(why) for each argument and prints
 * what each returned, a line each ("WHY RESULT"); an argument "fork" forks there, the
 * child going on with the rest (its lines prefixed "child "); "many" calls
 * tt_trigger("many") 200 times, a millisecond apart, and prints how many times each
 * result came ("many RESULT COUNT"). Records a scope around each call, so that the
 * snapshot's window holds records. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ticktrace.h>

int main(int argc, char **argv)
{
	const char *who = "";
	pid_t child = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "many") == 0) {
			int zero = 0, busy = 0, other = 0;
			for (int k = 0; k < 200; k++) {
				TT_SCOPE("around the trigger");
				int rc = tt_trigger("many");
				zero += rc == 0, busy += rc == -EBUSY, other += rc && rc != -EBUSY;
				nanosleep(&(struct timespec){0, 1000000}, NULL);
			}
			printf("many 0 %d\nmany %d %d\nmany other %d\n", zero, -EBUSY, busy, other);
			continue;
		}
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
