/* A daemon that forks twice (record_cli.sh, case daemon; RECHECK39 F10): `daemon DIR`
 * calls work_leaf, forks and exits; its child starts a session, works 200 ms of its
 * CPU time (a daemon's set-up), forks the daemon and exits; the daemon writes its pid
 * into DIR/pid and waits, asleep but for a work_leaf call each 10 ms, until DIR/go is
 * there (or DIR is gone, or 2 minutes passed: never left behind), then exits. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) int work_leaf(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

static double cpu_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	char pid_file[4096], tmp[4096 + 8], go[4096];
	snprintf(pid_file, sizeof pid_file, "%s/pid", argv[1]);
	snprintf(tmp, sizeof tmp, "%s.tmp", pid_file);
	snprintf(go, sizeof go, "%s/go", argv[1]);
	work_leaf(1);
	pid_t child = fork();
	if (child < 0)
		return 1;
	if (child)
		return 0;
	setsid();
	int x = 0;
	for (double start = cpu_seconds(); cpu_seconds() - start < 0.2;)
		x = work_leaf(x);
	child = fork();
	if (child)
		exit(child < 0);
	FILE *f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0 || rename(tmp, pid_file) != 0)
		return 1;
	struct timespec nap = {0, 10000000};
	for (int naps = 0; access(go, F_OK) != 0 && access(argv[1], F_OK) == 0 && naps < 12000; naps++) {
		work_leaf(x);
		nanosleep(&nap, NULL);
	}
	return 0;
}
