/* snapshot_worst.py's program: a long ring run with 200 planted spikes, scopes named
 * "planted-NNN" that sleep 1.5 ms + NNN * 0.1 ms (NNN from 0 to 199: the larger NNN,
 * the longer), each after 2000 short scopes "filler" (the ring wraps). `grow` plants
 * them in the order of their size; `shuffle` in an order shuffled the same way every
 * run. `move K` (after either) moves the snapshots' folder (TICKTRACE_SNAPSHOTS) to
 * DIR.old before the K-th spike, once the snapshots of those before it had time to be
 * written, and puts a file at DIR: every snapshot after it fails to be written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ticktrace.h>

#define PLANTED 200

static void sleep_ns(long ns)
{
	struct timespec left = {ns / 1000000000, ns % 1000000000};
	while (nanosleep(&left, &left) != 0)
		;
}

/* The snapshots' folder moved away, a file where it was. */
static void move_snapshots(void)
{
	const char *dir = getenv("TICKTRACE_SNAPSHOTS");
	char old[4096];
	snprintf(old, sizeof old, "%s.old", dir ? dir : "");
	sleep_ns(400000000); /* (tt-spikes writes each within some 20 ms of its window's end) */
	FILE *f = NULL;
	if (!dir || rename(dir, old) != 0 || !(f = fopen(dir, "w"))) {
		perror("snapshot_worst_prog: moving TICKTRACE_SNAPSHOTS");
		exit(1);
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	int order[PLANTED], move_at = -1;
	for (int i = 0; i < PLANTED; i++)
		order[i] = i;
	if (argc < 2 || (strcmp(argv[1], "grow") != 0 && strcmp(argv[1], "shuffle") != 0)) {
		fprintf(stderr, "usage: snapshot_worst_prog grow|shuffle [move K]\n");
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
	if (argc == 4 && strcmp(argv[2], "move") == 0)
		move_at = atoi(argv[3]);
	for (int i = 0; i < PLANTED; i++) {
		for (int k = 0; k < 2000; k++) {
			TT_SCOPE("filler");
		}
		if (i == move_at)
			move_snapshots();
		char name[32];
		snprintf(name, sizeof name, "planted-%03d", order[i]);
		TT_BEGIN_DYN(name);
		sleep_ns(1500000 + 100000L * order[i]);
		TT_END();
	}
	return 0;
}
