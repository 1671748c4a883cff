/* descriptors.py's program: a program that takes ticktrace's descriptors, as daemons
 * do, and one that needs all of its own.
 *
 *   descriptors_prog HOW DIR   HOW: closefrom, close_range, loop (close 3..1023), dup2,
 *                              dup2_at_write
 *
 * 4 threads named "worker" record TT__WORKER_FIRST scopes each and wait; then the
 * program takes every descriptor but 0..2 (HOW), opens 8 files DIR/own-N (dup2:
 * opens them first, then dup2s own-0 over every other number below its limit);
 * the workers record TT__WORKER_MORE scopes more each (a quarter of them where
 * TT_TEST_FEWER is set: under the sanitizers, whose runs and `ticktrace info` took most
 * of CI's time for this test, not in dup2_at_write's runs, whose checks need the
 * workers to outrun the live file's growth) and exit, while the program
 * writes 4 rounds of 72 bytes into each file (dup2: then closes the numbers it
 * dup2'd). Prints "written" and exits 0 when every write and close of its own
 * succeeded; otherwise says which failed and exits 1.
 *
 * dup2_at_write: as dup2, with its own file also put, by a thread of its own, at the
 * trace's number each time ticktrace's drain thread (tt-drain) writes, seeks or
 * truncates it, and at the live file's (TICKTRACE_LIVE=1) each time any thread writes,
 * grows or truncates that (tt-live's descriptions, the growth ahead of the writers):
 * after ticktrace's last check of the number and before its call, the one system
 * call's window a dup2 over every number hit by chance (1 run in 30 to 60; the live
 * file's in a CI run at load 12). The program's calls of write, writev, pwrite64,
 * lseek64, fallocate64 and ftruncate64 are its own, below: the runtime's calls reach
 * them first. The live file's growth (fallocate64) takes 300 ms more: the workers,
 * which fill 16 MiB in about 250 ms, overtake the thread that grows it ahead of them,
 * and wait for it.
 *
 *   descriptors_prog profile DIR
 *
 * The same with a self-profile (tt_profile_*, every thread) started before the
 * descriptors are taken (closefrom) and stopped and closed after the program opened
 * its files; prints "profile perf" or "profile timer" (its mechanism) first.
 *
 *   descriptors_prog limit DIR
 *
 * More threads than perf rings fit in the locked memory a user may give them without
 * RLIMIT_MEMLOCK (perf_event_mlock_kb a CPU; a ring takes two pages at least) record
 * a scope each and stay; then the program opens DIR/f-N for N up to 57, as many as it
 * can, and prints "opened N".
 *
 *   descriptors_prog closes DIR
 *
 * Naps 3 ms in a scope "before", closes every descriptor from 3 up (close_range, as
 * daemons do), naps 3 ms in a scope "after" and exits.
 *
 *   descriptors_prog closes_dup2 DIR
 *
 * The same, but after close_range it opens DIR/data and dup2s it over every number
 * above it below its limit (a daemon that takes every number), and after "after"
 * waits (20 s at most) until the log (TICKTRACE_SPIKES) holds both.
 *
 *   descriptors_prog full DIR
 *
 * Naps 3 ms in a scope "before", opens /dev/null until its limit refuses one more (a
 * program that leaks descriptors), naps 3 ms in a scope "after", prints "held N" and
 * returns from main holding them all. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <ticktrace.h>
#include <ticktrace/format.h>
#include <ticktrace/profile.h>

#define TT__WORKERS 4
#define TT__WORKER_FIRST 20000
#define TT__WORKER_MORE 300000
#define TT__OWN_FILES 8
#define TT__ROUNDS 4
#define TT__LIMIT_FILES 57

static pthread_barrier_t tt_recorded, tt_taken;
static int tt_worker_more = TT__WORKER_MORE;

static void tt_pause_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

static void *tt_worker(void *unused)
{
	(void)unused;
	tt_thread_name("worker");
	for (int k = 0; k < TT__WORKER_FIRST; k++) {
		TT_SCOPE("before");
	}
	pthread_barrier_wait(&tt_recorded);
	pthread_barrier_wait(&tt_taken);
	for (int k = 0; k < tt_worker_more; k++) {
		TT_SCOPE("after");
	}
	return NULL;
}

static void *tt_stay(void *release)
{
	{
		TT_SCOPE("registered");
	}
	pthread_barrier_wait(&tt_recorded);
	pthread_barrier_wait(release);
	return NULL;
}

/* dup2_at_write: the taker's file (-1: none), the number it is asked to put it at, and
 * the asking. */
static int tt_taker_file = -1;
static int tt_taker_at;
static sem_t tt_taker_ask, tt_taker_done;

/* A thread of the program's: puts its file at the number asked, in the program's table. */
static void *tt_taker(void *unused)
{
	(void)unused;
	for (;;) {
		while (sem_wait(&tt_taker_ask) < 0)
			;
		dup2(tt_taker_file, tt_taker_at);
		sem_post(&tt_taker_done);
	}
	return NULL;
}

/* Before a call of ticktrace's on `fd`, the number in the calling thread's table of
 * the trace tt-drain streams or of the live file: the program's file put there first,
 * as a program's dup2 that came just after ticktrace's check. (Not the trace written
 * at exit: a file of ticktrace's that the program could take all the same, but not
 * this test's.) */
static int tt_take_before(int fd)
{
	char name[16] = "";
	struct tt_file_header head;
	if (tt_taker_file < 0 || fd < 3 || prctl(PR_GET_NAME, name) < 0)
		return 0;
	/* (a trace begins with its header; the live file's says so) */
	if (pread(fd, &head, sizeof head, 0) != sizeof head || memcmp(head.magic, TT_FILE_MAGIC, 8) != 0 ||
	    (strcmp(name, "tt-drain") != 0 && !(head.flags & TT_FILE_LIVE)))
		return 0;
	tt_taker_at = fd;
	sem_post(&tt_taker_ask);
	while (sem_wait(&tt_taker_done) < 0)
		;
	return head.flags & TT_FILE_LIVE;
}

ssize_t write(int fd, const void *buf, size_t size)
{
	tt_take_before(fd);
	return syscall(SYS_write, fd, buf, size);
}

ssize_t writev(int fd, const struct iovec *iov, int count)
{
	tt_take_before(fd);
	return syscall(SYS_writev, fd, iov, count);
}

ssize_t pwrite64(int fd, const void *buf, size_t size, off64_t at)
{
	tt_take_before(fd);
	return syscall(SYS_pwrite64, fd, buf, size, at);
}

off64_t lseek64(int fd, off64_t at, int whence)
{
	tt_take_before(fd);
	return syscall(SYS_lseek, fd, at, whence);
}

int fallocate64(int fd, int mode, off64_t at, off64_t len)
{
	if (tt_take_before(fd))
		tt_pause_ms(300);
	return (int)syscall(SYS_fallocate, fd, mode, at, len);
}

int ftruncate64(int fd, off64_t len)
{
	tt_take_before(fd);
	return (int)syscall(SYS_ftruncate, fd, len);
}

static long tt_open_limit(void)
{
	long max = sysconf(_SC_OPEN_MAX);
	return max > 0 && max < 65536 ? max : 65536;
}

static int tt_take(const char *how, const int *own)
{
	if (strcmp(how, "closefrom") == 0) {
		closefrom(3);
	} else if (strcmp(how, "close_range") == 0) {
		if (syscall(SYS_close_range, 3u, ~0u, 0u) < 0) {
			perror("close_range");
			return -1;
		}
	} else if (strcmp(how, "loop") == 0) {
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	} else if (strcmp(how, "dup2_at_write") == 0) {
		pthread_t taker;
		sem_init(&tt_taker_ask, 0, 0);
		sem_init(&tt_taker_done, 0, 0);
		tt_taker_file = own[0];
		if (pthread_create(&taker, NULL, tt_taker, NULL) != 0) {
			perror("descriptors_prog: taker");
			return -1;
		}
	} else if (strcmp(how, "dup2") == 0) {
		for (long fd = 3; fd < tt_open_limit(); fd++) {
			int mine = 0;
			for (int i = 0; i < TT__OWN_FILES; i++)
				mine |= own[i] == fd;
			if (!mine)
				dup2(own[0], (int)fd);
		}
	} else {
		fprintf(stderr, "descriptors_prog: no way %s\n", how);
		return -1;
	}
	return 0;
}

static int tt_open_own(const char *dir, int *own)
{
	for (int i = 0; i < TT__OWN_FILES; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/own-%d", dir, i);
		own[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (own[i] < 0) {
			fprintf(stderr, "descriptors_prog: %s: %s\n", path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* descriptors_prog profile: the profile made at start, stopped and closed once the
 * program's files are open (NULL: none). */
static struct tt_profile *tt_profile;

static int tt_daemon_like(const char *how, const char *dir)
{
	pthread_t workers[TT__WORKERS];
	pthread_barrier_init(&tt_recorded, NULL, TT__WORKERS + 1);
	pthread_barrier_init(&tt_taken, NULL, TT__WORKERS + 1);
	for (int i = 0; i < TT__WORKERS; i++)
		pthread_create(&workers[i], NULL, tt_worker, NULL);
	pthread_barrier_wait(&tt_recorded);
	tt_pause_ms(100); /* tt-sched asks for the workers' switches meanwhile */
	int own[TT__OWN_FILES];
	int dup2ed = strncmp(how, "dup2", 4) == 0;
	if ((dup2ed && tt_open_own(dir, own) < 0) || tt_take(how, own) < 0 ||
	    (!dup2ed && tt_open_own(dir, own) < 0))
		return 1;
	if (tt_profile) {
		int stopped = tt_profile_stop(tt_profile);
		tt_profile_close(tt_profile);
		printf("profile stopped: %d\n", stopped);
	}
	pthread_barrier_wait(&tt_taken);
	int failed = 0;
	for (int round = 0; round < TT__ROUNDS; round++) {
		for (int i = 0; i < TT__OWN_FILES; i++) {
			char line[73] = {0}; /* (its 72 bytes the same in every run: no stack bytes past the text) */
			snprintf(line, sizeof line, "round %d of file %d: the program's own bytes, 72 of them....%05d\n",
				 round, i, round * 100 + i);
			ssize_t n = write(own[i], line, 72);
			if (n != 72) {
				fprintf(stderr, "descriptors_prog: write %d to own-%d (fd %d): %s\n", round, i,
					own[i], n < 0 ? strerror(errno) : "short");
				failed = 1;
			}
		}
		for (int k = 0; k < 1000; k++) {
			TT_SCOPE("main");
		}
		tt_pause_ms(40); /* the drain, the live file's tick run meanwhile */
	}
	for (int i = 0; i < TT__WORKERS; i++)
		pthread_join(workers[i], NULL);
	tt_pause_ms(40); /* tt-sched sees the workers gone */
	if (dup2ed)
		for (long fd = 3; fd < tt_open_limit(); fd++) {
			int mine = 0;
			for (int i = 0; i < TT__OWN_FILES; i++)
				mine |= own[i] == fd;
			if (!mine)
				close((int)fd);
		}
	for (int i = 0; i < TT__OWN_FILES; i++) {
		if (close(own[i]) < 0) {
			fprintf(stderr, "descriptors_prog: close own-%d (fd %d): %s\n", i, own[i],
				strerror(errno));
			failed = 1;
		}
	}
	if (!failed)
		printf("written\n");
	fflush(stdout);
	return failed;
}

/* More threads than perf rings of two pages fit in a user's locked memory (16 more,
 * 4,096 at most). */
static int tt_limit_threads(void)
{
	long kb = 516; /* (the kernel's default) */
	FILE *f = fopen("/proc/sys/kernel/perf_event_mlock_kb", "r");
	if (f) {
		if (fscanf(f, "%ld", &kb) != 1)
			kb = 516;
		fclose(f);
	}
	long rings = kb * sysconf(_SC_NPROCESSORS_ONLN) / (2 * sysconf(_SC_PAGESIZE) / 1024);
	return rings + 16 < 4096 ? (int)rings + 16 : 4096;
}

static int tt_needs_all(const char *dir)
{
	int n = tt_limit_threads();
	pthread_t *threads = calloc((size_t)n, sizeof *threads);
	pthread_barrier_t release;
	pthread_barrier_init(&tt_recorded, NULL, (unsigned)n + 1);
	pthread_barrier_init(&release, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		if (!threads || pthread_create(&threads[i], NULL, tt_stay, &release) != 0) {
			perror("descriptors_prog: limit");
			return 1;
		}
	pthread_barrier_wait(&tt_recorded);
	tt_pause_ms(200); /* tt-sched asks for every thread's switches meanwhile */
	int opened = 0;
	for (; opened < TT__LIMIT_FILES; opened++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/f-%d", dir, opened);
		if (open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644) < 0)
			break;
	}
	printf("opened %d\n", opened);
	fflush(stdout);
	pthread_barrier_wait(&release);
	for (int i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	return 0;
}

/* The entries ("dur_ns") of the spike log at `path`, read through number `at`, freed
 * for it and given back to the data file at number 3. */
static int tt_entries(const char *path, int at)
{
	static char text[1 << 16];
	close(at);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? 0 : read(fd, text, sizeof text - 1);
	if (fd >= 0)
		close(fd);
	dup2(3, at);
	int entries = 0;
	text[n > 0 ? n : 0] = 0;
	for (const char *p = text; (p = strstr(p, "dur_ns")); p++)
		entries++;
	return entries;
}

static int tt_closes_all(const char *dup2_dir)
{
	{
		TT_SCOPE("before");
		tt_pause_ms(3);
	}
	if (syscall(SYS_close_range, 3u, ~0u, 0u) < 0) {
		perror("close_range");
		return 1;
	}
	if (dup2_dir) {
		char path[4096];
		snprintf(path, sizeof path, "%s/data", dup2_dir);
		int data = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (data < 0) {
			perror(path);
			return 1;
		}
		for (long fd = data + 1; fd < tt_open_limit(); fd++) /* (data: 3) */
			dup2(data, (int)fd);
	}
	{
		TT_SCOPE("after");
		tt_pause_ms(3);
	}
	/* (tt-spikes' look, 20 ms apart, before the exit's: until the log, read through
	 * the last number freed a moment, holds both, for 20 s at most) */
	const char *log = getenv("TICKTRACE_SPIKES");
	for (int i = 0; dup2_dir && log && i < 1000 && tt_entries(log, (int)tt_open_limit() - 1) < 2; i++)
		tt_pause_ms(20);
	return 0;
}

static int tt_holds_all(void)
{
	{
		TT_SCOPE("before");
		tt_pause_ms(3);
	}
	int held = 0;
	while (open("/dev/null", O_RDONLY) >= 0)
		held++;
	{
		TT_SCOPE("after");
		tt_pause_ms(3);
	}
	printf("held %d\n", held);
	return errno == EMFILE ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: descriptors_prog closefrom|close_range|loop|dup2|dup2_at_write|limit|full|closes|closes_dup2 DIR\n");
		return 2;
	}
	if (getenv("TT_TEST_FEWER"))
		tt_worker_more = TT__WORKER_MORE / 4;
	if (strcmp(argv[1], "limit") == 0)
		return tt_needs_all(argv[2]);
	if (strcmp(argv[1], "full") == 0)
		return tt_holds_all();
	if (strcmp(argv[1], "closes") == 0 || strcmp(argv[1], "closes_dup2") == 0)
		return tt_closes_all(strcmp(argv[1], "closes") == 0 ? NULL : argv[2]);
	if (strcmp(argv[1], "profile") != 0)
		return tt_daemon_like(argv[1], argv[2]);
	struct tt_profile_config cfg = {.start = (const void *)tt_worker, .size = 4096,
					.flags = TT_PROFILE_ALL_THREADS};
	struct tt_profile_stats stats;
	if (tt_profile_create(&tt_profile, &cfg) < 0 || tt_profile_start(tt_profile) < 0 ||
	    tt_profile_read(tt_profile, NULL, 0, &stats) < 0) {
		fprintf(stderr, "descriptors_prog: no profile\n");
		return 1;
	}
	printf("profile %s\n", stats.mechanism == TT_PROFILE_PERF ? "perf" : "timer");
	return tt_daemon_like("closefrom", argv[2]);
}
