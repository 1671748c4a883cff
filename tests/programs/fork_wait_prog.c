/* test_fork_wait's program: forks over and over from one thread while snapshots are
 * written, and says how long its longest fork() took and how long the snapshots'
 * writes took. Run with TICKTRACE_SNAPSHOTS=DIR (a directory of its own): each
 * snapshot goes to a FIFO made at its name beforehand, which a thread here reads
 * slowly (a page every few milliseconds, through a pipe of one page), so that its
 * write lasts a known while. Prints one line:
 * "snapshots N write_ms_max W forks F fork_ms_max M" (the longest write: in mode stop a
 * window past the buffer's end holds little, and its write is short). Usage:
 * fork_wait_prog SNAPSHOTS */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ticktrace.h>

#define PAGE 4096
#define READ_PAUSE_NS 8000000 /* a page every 8 ms: about 500 KB/s */

static double tt_ms(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

struct tt_reader {
	char path[4200];
	int fd;
	double first_ms, eof_ms; /* the writer's first byte, and its close */
	size_t bytes;
};

/* Reads the FIFO a page at a time until its writer closes it. */
static void *tt_read_slowly(void *arg)
{
	struct tt_reader *r = arg;
	char page[PAGE];
	for (;;) {
		ssize_t n = read(r->fd, page, sizeof page);
		if (n > 0) {
			if (!r->bytes) {
				r->first_ms = tt_ms();
				fcntl(r->fd, F_SETFL, fcntl(r->fd, F_GETFL) & ~O_NONBLOCK);
			}
			r->bytes += (size_t)n;
			nanosleep(&(struct timespec){0, READ_PAUSE_NS}, NULL);
		} else if (n == 0 && r->bytes) {
			r->eof_ms = tt_ms();
			return NULL;
		} else {
			/* no writer yet (0), or no data yet (EAGAIN) */
			nanosleep(&(struct timespec){0, 1000000}, NULL);
		}
	}
}

static volatile int tt_forking = 1;
static double tt_fork_max_ms;
static unsigned tt_forks;

static void *tt_fork_over_and_over(void *unused)
{
	(void)unused;
	while (tt_forking) {
		double before = tt_ms();
		pid_t pid = fork();
		double took = tt_ms() - before;
		if (pid == 0)
			syscall(SYS_exit_group, 0); /* (no exit handler: the child writes nothing) */
		if (pid < 0) {
			perror("fork");
			exit(2);
		}
		waitpid(pid, NULL, 0);
		if (took > tt_fork_max_ms)
			tt_fork_max_ms = took;
		tt_forks++;
	}
	return NULL;
}

/* Records 100 scopes a millisecond for `ms`: the snapshot's window holds some
 * 20000 events (320 KB), in mode ring with that buffer, or in mode stop with room
 * for every snapshot's. */
static void tt_record_for(double ms)
{
	double until = tt_ms() + ms;
	while (tt_ms() < until) {
		for (int k = 0; k < 100; k++) {
			TT_SCOPE("paced");
		}
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fork_wait_prog SNAPSHOTS\n");
		return 2;
	}
	int snapshots = atoi(argv[1]);
	const char *dir = getenv("TICKTRACE_SNAPSHOTS");
	if (!dir)
		return 2;
	tt_record_for(1); /* (the runtime started, its threads running) */
	pthread_t forker;
	pthread_create(&forker, NULL, tt_fork_over_and_over, NULL);
	double write_max_ms = 0;
	for (int n = 1; n <= snapshots; n++) {
		struct tt_reader r = {0};
		snprintf(r.path, sizeof r.path, "%s/trigger-%d-%d-slow.ttr", dir, (int)getpid(), n);
		if (mkfifo(r.path, 0600) < 0 || (r.fd = open(r.path, O_RDONLY | O_NONBLOCK)) < 0) {
			perror(r.path);
			return 2;
		}
		fcntl(r.fd, F_SETPIPE_SZ, PAGE);
		pthread_t reader;
		pthread_create(&reader, NULL, tt_read_slowly, &r);
		tt_record_for(150);
		int rc = tt_trigger("slow");
		/* (recording on would overwrite the ring's window before it is copied) */
		pthread_join(reader, NULL);
		close(r.fd);
		if (rc != 0 || !r.bytes) {
			fprintf(stderr, "snapshot %d: tt_trigger %d, %zu bytes\n", n, rc, r.bytes);
			return 2;
		}
		if (r.eof_ms - r.first_ms > write_max_ms)
			write_max_ms = r.eof_ms - r.first_ms;
	}
	tt_forking = 0;
	pthread_join(forker, NULL);
	printf("snapshots %d write_ms_max %.1f forks %u fork_ms_max %.1f\n", snapshots, write_max_ms,
	       tt_forks, tt_fork_max_ms);
	return 0;
}
