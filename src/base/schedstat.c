/* A thread's own counters, as the kernel gives them to any thread of its process
 * without privilege (where perf_event_open is refused too): its CPU time (the
 * thread's CPU clock, exact: /proc's run time lags a tick while it runs), its time
 * waiting on a run queue and its timeslices (/proc/self/task/TID/schedstat), its page
 * faults (/proc/self/task/TID/stat). Read by tt-sched, whose descriptors are its own
 * (tt__fd_private_table): the two files are kept open, each reading a pread. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
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

int tt__schedstat_open(struct tt__schedstat *s, uint32_t tid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%" PRIu32 "/schedstat", tid);
	s->schedstat_fd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof path, "/proc/self/task/%" PRIu32 "/stat", tid);
	s->stat_fd = s->schedstat_fd < 0 ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	s->tid = tid;
	if (s->stat_fd < 0) {
		int err = -errno;
		tt__schedstat_close(s);
		return err;
	}
	return 0;
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

/* stat's fields 10 (minflt) and 12 (majflt), counted from the field after the
 * command's closing parenthesis (the command may hold spaces and parentheses). */
static int tt__stat_faults(const char *text, uint64_t *minflt, uint64_t *majflt)
{
	const char *p = strrchr(text, ')');
	if (!p)
		return -1;
	/* ") S ppid pgrp session tty tpgid flags minflt cminflt majflt": the state is
	 * field 3 */
	unsigned long long mi, ma;
	if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %llu %*u %llu", &mi, &ma) != 2)
		return -1;
	*minflt = mi;
	*majflt = ma;
	return 0;
}

int tt__schedstat_read(struct tt__schedstat *s, struct tt_schedstat_sample *out, int faults)
{
	char text[512];
	struct timespec cpu, now;
	unsigned long long run, wait, slices;
	ssize_t n = pread(s->schedstat_fd, text, sizeof text - 1, 0);
	if (n <= 0)
		return -1; /* (the thread exited) */
	text[n] = 0;
	if (sscanf(text, "%llu %llu %llu", &run, &wait, &slices) != 3)
		return -1;
	out->wait_ns = wait;
	out->timeslices = slices;
	if (faults) {
		n = pread(s->stat_fd, text, sizeof text - 1, 0);
		if (n <= 0)
			return -1;
		text[n] = 0;
		if (tt__stat_faults(text, &out->minflt, &out->majflt) < 0)
			return -1;
	}
	/* The CPU time and the clock last, together: the file reads above lie before them. */
	if (clock_gettime(tt__thread_cpu_clock(s->tid), &cpu) != 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	out->run_ns = (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec;
	out->ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	return 0;
}

int tt__schedstat_steal_accounted(void)
{
	char text[256];
	size_t len = tt__read_file("/proc/stat", text, sizeof text - 1);
	text[len] = 0;
	/* "cpu  user nice system idle iowait irq softirq steal ..." */
	unsigned long long steal;
	return sscanf(text, "cpu %*u %*u %*u %*u %*u %*u %*u %llu", &steal) == 1 && steal > 0;
}
