/* A program that shares its process with ticktrace and minds what is its own: its
 * signal handlers, the files of its run (runtime/shared_process.py).
 *
 *   shared_process_prog xfsz ROUNDS   a thread records scopes all along; the main
 *                                     thread, ROUNDS times: SIGXFSZ at its default
 *                                     action, tt_trigger("round"), then watches that
 *                                     action for up to 0.3 s (a snapshot is written
 *                                     meanwhile: until 20 ms after its file is in
 *                                     TICKTRACE_SNAPSHOTS) and installs a handler of its own the
 *                                     moment it sees the action changed by someone
 *                                     else (or at the end), then checks 50 ms later
 *                                     that the handler is still there. Prints
 *                                     "changed C lost L" (rounds where the action was
 *                                     not the program's, rounds where its handler was
 *                                     gone); the handler, if ever called, writes
 *                                     "SIGXFSZ handler called" on stdout. The handler
 *                                     stays installed through the exit.
 *   shared_process_prog wait          prints its pid, reads a line from stdin, then
 *                                     records 100,000 instants "seq", a scope "slow"
 *                                     of 5 ms (a spike), calls tt_trigger("planted")
 *                                     and waits 50 ms: a trace, a spike and a snapshot
 *   shared_process_prog spikes N      N scopes "slow" of 1 ms each, 1 ms apart
 *   shared_process_prog flatout MS    a thread "flat-out" records instants as fast as
 *                                     it can for MS milliseconds; the main thread calls
 *                                     tt_trigger("flat") after a third of them
 *   shared_process_prog drop UID GID  a scope "as_root", then drops to user UID and
 *                                     group GID, as a daemon does, and a scope
 *                                     "as_user"
 */
#include <grp.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ticktrace.h"

static double tt_now(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void tt_sleep_ms(double ms)
{
	double until = tt_now() + ms / 1000;
	while (tt_now() < until)
		nanosleep(&(struct timespec){0, 100000}, NULL);
}

static volatile sig_atomic_t tt_stop;

static void *tt_busy(void *unused)
{
	(void)unused;
	tt_thread_name("busy");
	while (!tt_stop) {
		TT_SCOPE("busy");
		nanosleep(&(struct timespec){0, 10000}, NULL);
	}
	return NULL;
}

static void tt_own_xfsz(int sig)
{
	(void)sig;
	static const char said[] = "SIGXFSZ handler called\n";
	(void)!write(1, said, sizeof said - 1);
}

static bool tt_xfsz_is(void (*handler)(int))
{
	struct sigaction now;
	return sigaction(SIGXFSZ, NULL, &now) == 0 && !(now.sa_flags & SA_SIGINFO) &&
	       now.sa_handler == handler;
}

static void tt_xfsz_set(void (*handler)(int))
{
	struct sigaction action = {.sa_handler = handler};
	sigemptyset(&action.sa_mask);
	sigaction(SIGXFSZ, &action, NULL);
}

/* The files in `dir` (none where there is no such directory). */
static int tt_files_in(const char *dir)
{
	DIR *d = dir ? opendir(dir) : NULL;
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static int tt_xfsz(int rounds)
{
	const char *snapshots = getenv("TICKTRACE_SNAPSHOTS");
	pthread_t busy;
	if (pthread_create(&busy, NULL, tt_busy, NULL))
		return 1;
	int changed = 0, lost = 0;
	for (int round = 0; round < rounds; round++) {
		tt_xfsz_set(SIG_DFL);
		TT_SCOPE("round");
		tt_trigger("round");
		double until = tt_now() + 0.3;
		bool seen = false, written = false;
		/* (once the snapshot is there, ticktrace's writing is over: the rest of the
		 * 0.3 s, spent spinning each round, was most of the test's CPU time) */
		for (unsigned polls = 1; !seen && tt_now() < until; polls++) {
			seen = !tt_xfsz_is(SIG_DFL);
			if (!written && polls % 4096 == 0 && tt_files_in(snapshots) > round) {
				written = true;
				until = tt_now() + 0.02;
			}
		}
		changed += seen;
		tt_xfsz_set(tt_own_xfsz);
		tt_sleep_ms(50);
		lost += !tt_xfsz_is(tt_own_xfsz);
	}
	tt_stop = 1;
	pthread_join(busy, NULL);
	tt_xfsz_set(tt_own_xfsz);
	printf("changed %d lost %d\n", changed, lost);
	return 0;
}

static int tt_wait(void)
{
	printf("%d\n", (int)getpid());
	fflush(stdout);
	char line[64];
	if (!fgets(line, sizeof line, stdin))
		return 1;
	for (int i = 0; i < 100000; i++)
		TT_INSTANT_ARG("seq", (uint64_t)i);
	{
		TT_SCOPE("slow");
		tt_sleep_ms(5);
	}
	tt_trigger("planted");
	tt_sleep_ms(50);
	return 0;
}

static int tt_spikes(int n)
{
	for (int i = 0; i < n; i++) {
		{
			TT_SCOPE("slow");
			tt_sleep_ms(1);
		}
		tt_sleep_ms(1);
	}
	return 0;
}

static double tt_flat_ms;

static void *tt_flat_out(void *unused)
{
	(void)unused;
	tt_thread_name("flat-out");
	double until = tt_now() + tt_flat_ms / 1000;
	for (uint64_t i = 0;; i++) {
		TT_INSTANT_ARG("flat", i);
		if ((i & 1023) == 0 && tt_now() > until)
			break;
	}
	return NULL;
}

static int tt_flatout(double ms)
{
	tt_flat_ms = ms;
	pthread_t flat;
	if (pthread_create(&flat, NULL, tt_flat_out, NULL))
		return 1;
	tt_sleep_ms(ms / 3);
	{
		TT_SCOPE("trigger");
		tt_trigger("flat");
	}
	pthread_join(flat, NULL);
	return 0;
}

static int tt_drop(int uid, int gid)
{
	{
		TT_SCOPE("as_root");
	}
	if (setgroups(0, NULL) || setgid((gid_t)gid) || setuid((uid_t)uid)) {
		perror("shared_process_prog: setuid");
		return 1;
	}
	TT_SCOPE("as_user");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "xfsz") == 0)
		return tt_xfsz(atoi(argv[2]));
	if (argc == 2 && strcmp(argv[1], "wait") == 0)
		return tt_wait();
	if (argc == 3 && strcmp(argv[1], "spikes") == 0)
		return tt_spikes(atoi(argv[2]));
	if (argc == 3 && strcmp(argv[1], "flatout") == 0)
		return tt_flatout(atof(argv[2]));
	if (argc == 4 && strcmp(argv[1], "drop") == 0)
		return tt_drop(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: shared_process_prog xfsz ROUNDS | wait | spikes N | flatout MS | drop UID GID\n");
	return 2;
}
