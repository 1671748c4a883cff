/* Linux's counters (platform/linux.c, tt_os_counters_*): a thread's counters read by
 * another thread (its /proc files kept open) and by the thread itself at its exit
 * (tt_os_counters_read_own: its faults from getrusage, not stat) say the same thing of
 * it; its faults are read only where it ran since the last reading; the thread's own
 * reading, in the
 * program's table of descriptors, never closes a file of the program's. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"

#define PAGES 64

static pthread_barrier_t step;
static uint32_t helper_tid;
static struct tt_schedstat_sample own_before, own_after;

/* Reads its own counters, faults PAGES fresh pages in, reads them again, then waits
 * (faulting nothing) while the main thread reads them from outside. */
static void *helper(void *unused)
{
	(void)unused;
	helper_tid = (uint32_t)gettid();
	char *pages = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(pages != MAP_FAILED);
	assert_int_equal(tt_os_counters_read_own(helper_tid, &own_before), 0);
	for (int i = 0; i < PAGES; i++)
		pages[i * 4096] = 1;
	assert_int_equal(tt_os_counters_read_own(helper_tid, &own_after), 0);
	pthread_barrier_wait(&step); /* read from outside now */
	pthread_barrier_wait(&step);
	munmap(pages, PAGES * 4096);
	return NULL;
}

static void test_own_reading_agrees_with_stat(void **state)
{
	(void)state;
	pthread_t t;
	pthread_barrier_init(&step, NULL, 2);
	assert_int_equal(pthread_create(&t, NULL, helper, NULL), 0);
	pthread_barrier_wait(&step);
	struct tt_os_counters files, in_dir;
	struct tt_schedstat_sample outside, outside_in_dir;
	assert_int_equal(tt_os_counters_open(&files, helper_tid, -1), 0);
	assert_int_equal(tt_os_counters_read(&files, &outside, 1, 0), 0);
	tt_os_counters_close(&files);
	/* opened in /proc/self/task's descriptor: the same files (the helper waits) */
	int dir = tt_os_counters_dir();
	assert_true(dir >= 0);
	assert_int_equal(tt_os_counters_open(&in_dir, helper_tid, dir), 0);
	assert_int_equal(tt_os_counters_read(&in_dir, &outside_in_dir, 1, 0), 0);
	tt_os_counters_close(&in_dir);
	close(dir);
	assert_true(outside_in_dir.minflt == outside.minflt && outside_in_dir.majflt == outside.majflt);
	assert_true(outside_in_dir.wait_ns == outside.wait_ns && outside_in_dir.timeslices == outside.timeslices);
	assert_true(outside_in_dir.run_ns >= outside.run_ns && outside_in_dir.ns > outside.ns);
	pthread_barrier_wait(&step);
	pthread_join(t, NULL);
	/* Its own faults count the pages it faulted in, as stat counts them: the
	 * helper faulted nothing between its reading and ours (it waited). */
	assert_true(own_after.minflt - own_before.minflt >= PAGES);
	assert_true(own_after.minflt + own_after.majflt <= outside.minflt + outside.majflt);
	assert_true(outside.minflt + outside.majflt - own_after.minflt - own_after.majflt < PAGES / 4);
	assert_int_equal(own_after.majflt, outside.majflt);
	/* The same CPU clock and run-queue wait, each only grown since */
	assert_true(own_after.run_ns > own_before.run_ns && own_after.run_ns <= outside.run_ns);
	assert_true(own_after.wait_ns <= outside.wait_ns && own_after.timeslices <= outside.timeslices);
	assert_true(own_after.ns > own_before.ns && own_after.ns < outside.ns);
}

/* A thread that has not run since the last reading (its CPU time the same) took no
 * fault: its faults are left as the caller has them, stat not read (nor opened); one
 * that ran has them read. Before, stat was read whatever the CPU time said. */
static void test_faults_read_only_where_it_ran(void **state)
{
	(void)state;
	pthread_t t;
	pthread_barrier_init(&step, NULL, 2);
	assert_int_equal(pthread_create(&t, NULL, helper, NULL), 0);
	pthread_barrier_wait(&step); /* (it waits on the barrier now, running nothing) */
	struct tt_os_counters files;
	struct tt_schedstat_sample first, still = {.minflt = UINT64_MAX, .majflt = UINT64_MAX}, ran = still;
	assert_int_equal(tt_os_counters_open(&files, helper_tid, -1), 0);
	assert_int_equal(tt_os_counters_read(&files, &first, 0, 0), 0);
	assert_true(files.stat < 0); /* (no faults asked) */
	assert_int_equal(tt_os_counters_read(&files, &still, 1, first.run_ns), 0);
	assert_true(still.run_ns == first.run_ns && still.ns > first.ns);
	assert_true(still.minflt == UINT64_MAX && still.majflt == UINT64_MAX && files.stat < 0);
	/* (as if the last reading's CPU time were another: read) */
	assert_int_equal(tt_os_counters_read(&files, &ran, 1, first.run_ns - 1), 0);
	assert_true(files.stat >= 0);
	assert_true(ran.minflt >= PAGES && ran.minflt != UINT64_MAX && ran.majflt != UINT64_MAX);
	tt_os_counters_close(&files);
	pthread_barrier_wait(&step);
	pthread_join(t, NULL);
}

/* A thread of the program's that closes every descriptor and opens its own file at the
 * number just as a thread reads its own counters (a daemon's closefrom): once `swap`
 * is set, the next pread() first puts a copy of it at the descriptor read (noted in
 * `swapped`). (The runtime's pread() calls come here: it is linked in statically.) */
static int swap = -1, swapped = -1;
ssize_t pread(int fd, void *buf, size_t count, off_t offset)
{
	if (swap >= 0 && dup2(swap, fd) == fd) {
		swapped = fd;
		swap = -1;
	}
	return syscall(SYS_pread64, fd, buf, count, (int64_t)offset);
}

/* Whether the program's file put at a descriptor by a pread (`swap`) is still open
 * there, the same file: then closed, by the test. */
static int swap_kept(int program)
{
	struct stat mine, there;
	int fd = swapped;
	swapped = -1;
	assert_true(fd >= 0);
	int kept = fstat(program, &mine) == 0 && fstat(fd, &there) == 0 && mine.st_dev == there.st_dev &&
		   mine.st_ino == there.st_ino; /* (closed under the program: EBADF) */
	if (kept)
		close(fd);
	return kept;
}

/* A thread's own reading, and one of another thread by a thread of the program's (a
 * dump's), open their files in the program's table for a moment: they never close the
 * program's file found at that number afterwards. */
static void test_own_reading_leaves_the_programs_file(void **state)
{
	(void)state;
	int program = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(program >= 0);
	struct tt_schedstat_sample reading;
	swap = program;
	tt_os_counters_read_own((uint32_t)gettid(), &reading);
	assert_true(swap_kept(program));
	/* (by its path: the files any thread of the program's opens for it) */
	swap = program;
	tt_os_counters_read_other((uint32_t)gettid(), &reading);
	assert_true(swap_kept(program));
	close(program);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_own_reading_agrees_with_stat),
					   cmocka_unit_test(test_faults_read_only_where_it_ran),
					   cmocka_unit_test(test_own_reading_leaves_the_programs_file)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
