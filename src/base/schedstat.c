/* A thread's own counters, as the kernel gives them to any thread of its process
 * without privilege (where perf_event_open is refused too): its CPU time (the
 * thread's CPU clock, exact: /proc's run time lags a tick while it runs), its time
 * waiting on a run queue and its timeslices (/proc/self/task/TID/schedstat), its page
 * faults (/proc/self/task/TID/stat: the dearest, three times schedstat, opened once
 * first wanted). Read by tt-sched, whose descriptors are its own
 * (tt__fd_private_table): the files are kept open, each reading a pread, parsed by
 * hand (sscanf was a tenth of tt-sched's time). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"

/* The kernel's clock id of a thread's CPU time by its tid (MAKE_THREAD_CPUCLOCK:
 * CPUCLOCK_SCHED, per thread), which another thread of the process may read. */
static clockid_t tt__thread_cpu_clock(uint32_t tid)
{
	/* (unsigned: a negative value shifted left is undefined in C) */
	return (clockid_t)(~tid << 3 | 2u | 4u);
}

int tt__schedstat_task_dir(void)
{
	return open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* TID/NAME in /proc/self/task (`dir`, or by the whole path where -1), opened (in the
 * caller's table); -1 with errno. From the directory kept open, the kernel looks up
 * two names, not four (/proc/self's link, its task directory): a warm open costs a
 * third (0.85 us, not 2.6); a thread's first is mostly the kernel making its /proc
 * entries (some 5 us either way). */
static int tt__schedstat_file(int dir, uint32_t tid, const char *name)
{
	char path[64];
	if (dir >= 0) {
		snprintf(path, sizeof path, "%" PRIu32 "/%s", tid, name);
		return openat(dir, path, O_RDONLY | O_CLOEXEC);
	}
	snprintf(path, sizeof path, "/proc/self/task/%" PRIu32 "/%s", tid, name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int tt__schedstat_open(struct tt__schedstat *s, uint32_t tid, int dir)
{
	/* (stat, for the page faults, once they are first wanted) */
	s->stat_fd = -1;
	s->dir = dir;
	s->schedstat_fd = tt__schedstat_file(dir, tid, "schedstat");
	s->tid = s->schedstat_fd < 0 ? 0 : tid;
	return s->schedstat_fd < 0 ? -errno : 0;
}

void tt__schedstat_close(struct tt__schedstat *s)
{
	if (s->schedstat_fd >= 0)
		close(s->schedstat_fd);
	if (s->stat_fd >= 0)
		close(s->stat_fd);
	s->schedstat_fd = s->stat_fd = -1;
	s->tid = 0;
}

/* The decimal number at *p (after spaces), *p moved past it; -1: none there. */
static int tt__next_u64(const char **p, uint64_t *value)
{
	const char *c = *p;
	while (*c == ' ')
		c++;
	if (*c < '0' || *c > '9')
		return -1;
	uint64_t v = 0;
	for (; *c >= '0' && *c <= '9'; c++)
		v = v * 10 + (uint64_t)(*c - '0');
	*value = v;
	*p = c;
	return 0;
}

/* stat's fields 10 (minflt) and 12 (majflt), counted from the field after the
 * command's closing parenthesis (the command may hold spaces and parentheses):
 * ") S ppid pgrp session tty_nr tpgid flags minflt cminflt majflt", where tpgid may
 * be -1. */
static int tt__stat_faults(const char *text, uint64_t *minflt, uint64_t *majflt)
{
	const char *p = strrchr(text, ')');
	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -1;
	p += 3;
	uint64_t field[9];
	for (int i = 0; i < 9; i++) {
		while (*p == ' ')
			p++;
		p += *p == '-'; /* (tpgid -1: no terminal; only its place counts) */
		if (tt__next_u64(&p, &field[i]) < 0)
			return -1;
	}
	*minflt = field[6];
	*majflt = field[8];
	return 0;
}

/* A reading of the pread file `fd` into text (NUL-terminated); -1: it exited. */
static int tt__schedstat_pread(int fd, char *text, size_t size)
{
	ssize_t n = pread(fd, text, size - 1, 0);
	if (n <= 0)
		return -1;
	text[n] = 0;
	return 0;
}

/* schedstat's wait on a run queue and timeslices (its run time is the CPU clock's);
 * -1: it exited. */
static int tt__schedstat_waits(int fd, struct tt_schedstat_sample *out)
{
	char text[128];
	const char *p = text;
	uint64_t run;
	return tt__schedstat_pread(fd, text, sizeof text) < 0 || tt__next_u64(&p, &run) < 0 ||
			       tt__next_u64(&p, &out->wait_ns) < 0 || tt__next_u64(&p, &out->timeslices) < 0
		       ? -1 : 0;
}

static int64_t tt__monotonic_ns(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* The CPU time on `clock`, then the wait (schedstat, `fd`), between two readings of
 * the monotonic clock, the second its time (format.h: TT_SCHEDSTAT_SPAN_NS): read
 * again where they lie further apart. The reader kept off its CPU between them (one
 * reading in some hundred at a load of 30 on 2 cores, up to 4 ms) while the thread
 * read ends a wait and a scope gives a reading stamped after the scope's end that
 * lacks the wait: a split short of it by as much, within an error that said less.
 * The CPU time first: where it grew from one reading to the next, the thread ran
 * before the next one's wait was read. -1: it exited, or never within the span. */
static int tt__schedstat_span(clockid_t clock, int fd, struct tt_schedstat_sample *out)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		struct timespec cpu;
		int64_t from = tt__monotonic_ns();
		if (clock_gettime(clock, &cpu) != 0 || tt__schedstat_waits(fd, out) < 0)
			return -1;
		out->ns = tt__monotonic_ns();
		out->run_ns = (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec;
		if (out->ns - from <= TT_SCHEDSTAT_SPAN_NS)
			return 0;
	}
	return -1;
}

int tt__schedstat_read_own(uint32_t tid, struct tt_schedstat_sample *out)
{
	/* (its faults from getrusage: stat, the dearest file, is not opened) */
	struct rusage own;
	if (getrusage(RUSAGE_THREAD, &own) != 0)
		return -1;
	out->minflt = (uint64_t)own.ru_minflt;
	out->majflt = (uint64_t)own.ru_majflt;
	/* (in the program's table: closed only while still that file) */
	struct tt__fd opened;
	tt__fd_opened((struct tt_os_file){tt__schedstat_file(-1, tid, "schedstat")}, &opened);
	if (opened.file.handle < 0)
		return -1;
	int read = tt__schedstat_span(CLOCK_THREAD_CPUTIME_ID, (int)opened.file.handle, out);
	tt__fd_close_opened(&opened);
	return read;
}

int tt__schedstat_read(struct tt__schedstat *s, struct tt_schedstat_sample *out, int faults, uint64_t ran_ns)
{
	char text[512];
	if (tt__schedstat_span(tt__thread_cpu_clock(s->tid), s->schedstat_fd, out) < 0)
		return -1;
	/* Its faults after its CPU time: a thread whose CPU time is the last reading's has
	 * not run since that reading's, and takes no fault without running, so its faults
	 * are the ones read after it (stat, three times schedstat, was read at nearly
	 * every reading of the benchmark's 64 threads: the process faulted between them) */
	if (!faults || out->run_ns == ran_ns)
		return 0;
	if (s->stat_fd < 0 && (s->stat_fd = tt__schedstat_file(s->dir, s->tid, "stat")) < 0)
		return -1;
	return tt__schedstat_pread(s->stat_fd, text, sizeof text) < 0 ||
			       tt__stat_faults(text, &out->minflt, &out->majflt) < 0
		       ? -1 : 0;
}

int tt__schedstat_read_other(uint32_t tid, struct tt_schedstat_sample *out)
{
	/* (in the caller's table, the program's: each closed only while still that file) */
	struct tt__fd schedstat, stat;
	struct tt__schedstat s = {.dir = -1, .tid = tid};
	tt__fd_opened((struct tt_os_file){tt__schedstat_file(-1, tid, "schedstat")}, &schedstat);
	s.schedstat_fd = (int)schedstat.file.handle;
	if (s.schedstat_fd >= 0)
		tt__fd_opened((struct tt_os_file){tt__schedstat_file(-1, tid, "stat")}, &stat);
	s.stat_fd = s.schedstat_fd < 0 ? -1 : (int)stat.file.handle;
	int read = s.stat_fd < 0 ? -1 : tt__schedstat_read(&s, out, 1, 0);
	if (s.stat_fd >= 0)
		tt__fd_close_opened(&stat);
	if (s.schedstat_fd >= 0)
		tt__fd_close_opened(&schedstat);
	return read;
}

int tt__schedstat_steal_accounted(void)
{
	char text[256];
	size_t len = tt_os_read_file("/proc/stat", text, sizeof text - 1);
	text[len] = 0;
	/* "cpu  user nice system idle iowait irq softirq steal ..." */
	unsigned long long steal;
	return sscanf(text, "cpu %*u %*u %*u %*u %*u %*u %*u %llu", &steal) == 1 && steal > 0;
}
