/* runtime/fork_scope.sh's program: a scope is open as main forks; the child records
 * one inside it, leaves it (its end in the child's file) and exits; the parent waits
 * for the child, then leaves it too. Prints the child's pid. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ticktrace.h>

int main(void)
{
	pid_t child;
	{
		TT_SCOPE("open_across_fork");
		child = fork();
		if (child == 0) {
			TT_SCOPE("in_child");
			return 0; /* (both scopes end first, in the child's file) */
		}
	}
	int status;
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return 2;
	printf("%d\n", (int)child);
	return 0;
}
