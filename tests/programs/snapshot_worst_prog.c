/* snapshot_worst.py's program: a long ring run with 200 planted spikes, scopes named
 * "planted-NNN" that sleep 1.5 ms + NNN * 0.1 ms (NNN from 0 to 199: the larger NNN,
 * the longer), each after 1000 short scopes "filler" (a ring of 131072 events wraps
 * thrice). `grow` plants
 * them in the order of their size; `shuffle` in an order shuffled the same way every
 * run. `fillers N` (after either): N short scopes before each, not 1000. `limit K` (after either) sets RLIMIT_FSIZE to 16 KiB before the K-th spike, once
 * the snapshots of those before it had time to be written: every snapshot after it
 * fails to be written (EFBIG), while the folder and its files are as they were (the
 * live log had better be a FIFO). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <ticktrace.h>

#define PLANTED 200

static void sleep_ns(long ns)
{
	struct timespec left = {ns / 1000000000, ns % 1000000000};
	while (nanosleep(&left, &left) != 0)
		;
}

/* No file may grow past 16 KiB from now on: every snapshot fails to be written (its
 * files are larger), while its folder is as it was. */
static void limit_files(void)
{
	sleep_ns(400000000); /* (tt-spikes writes each within some 20 ms of its window's end) */
	signal(SIGXFSZ, SIG_IGN); /* (a write past it fails, EFBIG, rather than ending us) */
	if (setrlimit(RLIMIT_FSIZE, &(struct rlimit){16384, 16384}) != 0) {
		perror("snapshot_worst_prog: RLIMIT_FSIZE");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int order[PLANTED], limit_at = -1;
	for (int i = 0; i < PLANTED; i++)
		order[i] = i;
	if (argc < 2 || (strcmp(argv[1], "grow") != 0 && strcmp(argv[1], "shuffle") != 0)) {
		fprintf(stderr, "usage: snapshot_worst_prog grow|shuffle [limit K | fillers N]\n");
		return 2;
	}
	if (strcmp(argv[1], "shuffle") == 0) {
		unsigned seed = 35;
		for (int i = PLANTED - 1; i > 0; i--) {
			seed = seed * 1103515245u + 12345u;
			int j = (int)((seed >> 8) % (unsigned)(i + 1)), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
	}
	int fillers = 1000;
	if (argc == 4 && strcmp(argv[2], "limit") == 0)
		limit_at = atoi(argv[3]);
	else if (argc == 4 && strcmp(argv[2], "fillers") == 0)
		fillers = atoi(argv[3]);
	for (int i = 0; i < PLANTED; i++) {
		for (int k = 0; k < fillers; k++) {
			TT_SCOPE("filler");
		}
		if (i == limit_at)
			limit_files();
		char name[32];
		snprintf(name, sizeof name, "planted-%03d", order[i]);
		TT_BEGIN_DYN(name);
		sleep_ns(1500000 + 100000L * order[i]);
		TT_END();
	}
	return 0;
}
