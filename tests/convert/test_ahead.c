/* The reader's thread (tools/read/ahead.c): the pages of a mapped input are mapped in
 * the process by it, given back by it, and never mapped again after they were given
 * back, however far behind it is; a conversion of a large file through it decodes
 * every event and keeps little of the file resident. Residency is the process's own
 * (/proc/self/status: RssFile and RssShmem). */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmd/cmd.h"
#include "tt_check.h"
#include "tt_tw.h"

#define MIB (1u << 20)

/* The file pages the process has mapped, in KiB. */
static long tt_resident_file_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	assert_non_null(f);
	char line[256];
	long kib = 0, n;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "RssFile: %ld", &n) == 1 || sscanf(line, "RssShmem: %ld", &n) == 1)
			kib += n;
	fclose(f);
	return kib;
}

/* A directory in memory where there is one: the pages are the page cache's at once. */
static void tt_test_dir(char *dir, size_t cap)
{
	if (access("/dev/shm", W_OK) == 0)
		tt_tmpdir_in("/dev/shm", dir, cap);
	else
		tt_tmpdir(dir, cap);
}

static void ahead_maps_gives_back_in_order(void **state)
{
	(void)state;
	char dir[256], path[512];
	tt_test_dir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/pages", dir);
	const size_t size = 16 * MIB;
	char *bytes = malloc(size);
	assert_non_null(bytes);
	memset(bytes, 0x5a, size);
	assert_int_equal(tt_tw_save(path, bytes, size), 0);
	free(bytes);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	/* Placed half of the kernel's 64 KiB fault-around window off: a fault maps the
	 * cached pages of its window, and a release that ended inside one was mapped again
	 * by the next read (where the kernel put it, one run in 50 failed so). */
	const size_t window = 64 << 10;
	uint8_t *room = mmap(NULL, size + 2 * window, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(room != MAP_FAILED);
	uint8_t *at = (uint8_t *)(((uintptr_t)room + window - 1) & ~(uintptr_t)(window - 1)) +
		      window / 2;
	const uint8_t *m = mmap(at, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
	assert_true(m == at);
	close(fd);
	struct tt_file f = {.path = path, .data = m, .size = size, .mapped = true};
	long before = tt_resident_file_kib();

	/* mapped by its thread: stopping waits for its jobs */
	struct tt_ahead *a = tt_ahead_start();
	assert_non_null(a);
	tt_file_read_ahead(a, &f, 0, size);
	tt_ahead_stop(a);
	long mapped = tt_resident_file_kib();
	if (mapped - before < 15 * 1024)
		fail_msg("16 MiB read ahead: %ld KiB mapped more, not 15 MiB", mapped - before);

	a = tt_ahead_start();
	assert_non_null(a);
	tt_file_release(a, &f, 0, size);
	tt_ahead_stop(a);
	long released = tt_resident_file_kib();
	if (released - before > 1024)
		fail_msg("16 MiB given back: %ld KiB still mapped more than before", released - before);

	/* 64 releases at once, of pages mapped here: the queue fills, and they wait for
	 * room, none left out */
	uint8_t sum = 0;
	for (size_t at = 0; at < size; at += 4096)
		sum += *(const volatile uint8_t *)(m + at);
	assert_int_equal(sum, (uint8_t)(0x5a * (size / 4096)));
	a = tt_ahead_start();
	assert_non_null(a);
	for (size_t at = 0; at < size; at += size / 64)
		tt_file_release(a, &f, at, at + size / 64);
	tt_ahead_stop(a);
	released = tt_resident_file_kib();
	if (released - before > 1024)
		fail_msg("64 releases at once: %ld KiB still mapped more than before", released - before);

	/* A step asked for, then given back, 64 times at once: the queue fills (ranges to
	 * map in are left out, releases wait); none is mapped after its release. */
	a = tt_ahead_start();
	assert_non_null(a);
	for (size_t at = 0; at < size; at += size / 64) {
		tt_file_read_ahead(a, &f, at, at + size / 64);
		tt_file_release(a, &f, at, at + size / 64);
	}
	tt_ahead_stop(a);
	long after = tt_resident_file_kib();
	if (after - before > 1024)
		fail_msg("steps read ahead and given back: %ld KiB still mapped more than before",
			 after - before);

	/* A step given back, then the next one's first record read (another thread's
	 * chunk, or a step whose read-ahead was left out): the fault's window maps the end
	 * of the step given back, which the next release gives back. */
	for (size_t at = 0; at < size; at += size / 64) {
		tt_file_release(NULL, &f, at, at + size / 64);
		if (at + size / 64 < size)
			sum += *(const volatile uint8_t *)(m + at + size / 64);
	}
	after = tt_resident_file_kib();
	if (after - before > 1024)
		fail_msg("steps given back, then the next read: %ld KiB still mapped more than before",
			 after - before);
	munmap(room, size + 2 * window);
	tt_rmdir(dir);
}

/* What a decoding saw. */
struct tt_counted {
	struct tt_sink sink;
	struct tt_summary sum;
};

static int tt_counted_finish(struct tt_sink *s, const struct tt_summary *sum)
{
	((struct tt_counted *)s)->sum = *sum;
	return 0;
}

/* Four threads' chunks of 65,536 records (a MiB) in turns, as mode stream writes them:
 * scopes two deep and an instant, `chunks` chunks a thread. */
static uint64_t tt_write_streamed(const char *path, uint32_t chunks)
{
	enum { THREADS = 4, CHUNK = 65536 };
	static const struct tt_tw_site sites[] = {{0x1000, "outer", "a.c", "f", 1},
						  {0x1010, "inner", "a.c", "f", 2},
						  {0x1020, "mark", "a.c", "f", 3}};
	static const unsigned kinds[8] = {TT_REC_BEGIN, TT_REC_BEGIN, TT_REC_END, TT_REC_INSTANT,
					  TT_REC_BEGIN, TT_REC_END, TT_REC_END, TT_REC_INSTANT};
	static const uint64_t payloads[8] = {0x1000, 0x1010, 0, 0x1020, 0x1010, 0, 0, 0x1020};
	struct tt_tw w;
	assert_int_equal(tt_tw_open_file(&w, path), 0);
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "ahead");
	tt_tw_sites(&w, sites, 3);
	for (uint32_t t = 0; t < THREADS; t++) {
		char name[16];
		snprintf(name, sizeof name, "w%u", t);
		tt_tw_thread(&w, t, 100 + t, name, (uint64_t)chunks * CHUNK, 0);
	}
	struct tt_record *r = malloc(CHUNK * sizeof(*r));
	assert_non_null(r);
	for (uint64_t first = 0; first < (uint64_t)chunks * CHUNK; first += CHUNK)
		for (uint32_t t = 0; t < THREADS; t++) {
			for (size_t i = 0; i < CHUNK; i++) {
				uint64_t k = first + i;
				r[i] = TT_TW_REC(kinds[k % 8], payloads[k % 8], 1000 + k * 40 + t * 7);
			}
			tt_tw_events(&w, t, first, r, CHUNK);
		}
	free(r);
	tt_tw_end(&w);
	assert_int_equal(tt_tw_close(&w), 0);
	return (uint64_t)chunks * CHUNK * THREADS;
}

static void convert_large_file_through_it(void **state)
{
	(void)state;
	char dir[256], in[512], out[512];
	tt_test_dir(dir, sizeof dir);
	snprintf(in, sizeof in, "%s/big.ttr", dir);
	snprintf(out, sizeof out, "%s/big.pftrace", dir);
	uint64_t records = tt_write_streamed(in, 16); /* 64 MiB */

	/* every record decoded, through the reader's thread (the input is past 8 MiB) */
	struct tt_trace t;
	char *inputs[] = {in};
	assert_int_equal(tt_trace_open(&t, inputs, 1), 0);
	static const struct tt_sink_ops ops = {.finish = tt_counted_finish};
	struct tt_counted counted = {.sink.ops = &ops};
	struct tt_sink *sinks[] = {&counted.sink};
	assert_int_equal(tt_decode(&t, sinks, 1), 0);
	tt_trace_close(&t);
	assert_int_equal(counted.sum.events, records);
	assert_int_equal(counted.sum.slices, records / 8 * 3);

	/* converted in a child, whose peak memory is its own: far below the file's */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct tt_convert_opts opts = {.inputs = inputs, .ninputs = 1, .output = out,
					       .quiet = true, .compress = TT_PACK_LARGE};
		_exit(tt_convert(&opts, NULL) == 0 ? 0 : 1);
	}
	int status;
	struct rusage ru;
	assert_int_equal(wait4(pid, &status, 0, &ru), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
#ifndef TT_ASAN /* (its shadow memory is resident too) */
	if (ru.ru_maxrss > 40 * 1024)
		fail_msg("converting a 64 MiB file: peak %ld KiB resident, not below 40 MiB",
			 ru.ru_maxrss);
#endif
	assert_int_equal(access(out, R_OK), 0);
	tt_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ahead_maps_gives_back_in_order),
		cmocka_unit_test(convert_large_file_through_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
