/* event_stream_ns and stream_dropped: 100 million events recorded in mode stream
 * while the drain thread writes them to a file on disk. The mode is chosen when the
 * library starts, so each run is a child process, this program started again with
 * --stream-child and TICKTRACE_MODE=stream; it prints its nanoseconds per event, and
 * the dropped events are read back from the THREAD_TOTALS of the file it wrote. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "median.h"
#include "stream_bench.h"
#include "ticktrace.h"
#include "ticktrace/format.h"
#include "timing.h"

#define TT_BENCH_STREAM_PAIRS 50000000 /* 100 million events */
#define TT_BENCH_STREAM_BUFFER "16777216" /* events per thread waiting for the drain */

int tt_bench_stream_child(void)
{
	TT_INSTANT("start"); /* the thread's registration, outside the measurement */
	int64_t t0 = tt_bench_now_ns();
	for (int i = 0; i < TT_BENCH_STREAM_PAIRS; i++) {
		TT_BEGIN("stream");
		TT_END();
	}
	int64_t t1 = tt_bench_now_ns();
	printf("%.6f\n", (double)(t1 - t0) / (2.0 * TT_BENCH_STREAM_PAIRS));
	return 0;
}

int tt_bench_file_records(const char *path, uint64_t *dropped, uint64_t *records)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	off_t off = sizeof(struct tt_file_header);
	struct tt_section_header section;
	int ended = 0;
	*dropped = *records = 0;
	while (pread(fd, &section, sizeof section, off) == (ssize_t)sizeof section) {
		off += sizeof section;
		struct tt_thread_info info;
		if (section.type == TT_SEC_THREAD_TOTALS &&
		    pread(fd, &info, sizeof info, off) == (ssize_t)sizeof info)
			for (int i = 0; i < TT_DROP_CAUSES; i++)
				*dropped += info.dropped[i];
		struct tt_packed_info packed;
		if (section.type == TT_SEC_EVENTS)
			*records += (section.size - sizeof(struct tt_events_info)) / sizeof(struct tt_record);
		if (section.type == TT_SEC_EVENTS_PACKED &&
		    pread(fd, &packed, sizeof packed, off + (off_t)sizeof(struct tt_events_info)) ==
			    (ssize_t)sizeof packed)
			*records += packed.records;
		ended |= section.type == TT_SEC_END;
		off += (off_t)TT_SECTION_PADDED(section.size);
	}
	close(fd);
	return ended ? 0 : -1;
}

/* One child run: its ns per event, and what its file says; 0, or -1 said. */
static int tt_bench_stream_once(const char *dir, double *ns, uint64_t *dropped)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/ticktrace-bench-stream-XXXXXX", dir);
	int fd = mkstemp(path);
	if (fd < 0) {
		tt_bench_say("the stream run: cannot make %s: %s", path, strerror(errno));
		return -1;
	}
	close(fd);
	char env[4200];
	snprintf(env, sizeof env, "TICKTRACE_MODE=stream TICKTRACE_BUFFER=" TT_BENCH_STREAM_BUFFER " TICKTRACE_OUT='%s'",
		 path);
	int err = tt_bench_child(env, "--stream-child", 1, ns);
	uint64_t records;
	/* Every event is in the file, or counted as dropped. */
	if (!err && (tt_bench_file_records(path, dropped, &records) < 0 ||
		     records + *dropped < 2 * (uint64_t)TT_BENCH_STREAM_PAIRS)) {
		tt_bench_say("the stream run's file %s does not hold or count every event", path);
		err = -1;
	}
	unlink(path);
	return err;
}

int tt_bench_stream(int repeats, double *ns, uint64_t *dropped)
{
	const char *dir = tt_bench_dir();
	double runs[TT_BENCH_STREAM_MAX_REPEATS];
	if (repeats > TT_BENCH_STREAM_MAX_REPEATS)
		repeats = TT_BENCH_STREAM_MAX_REPEATS;
	*dropped = 0;
	for (int r = 0; r < repeats; r++) {
		uint64_t lost;
		int err = tt_bench_stream_once(dir, &runs[r], &lost);
		if (err)
			return err;
		*dropped += lost;
	}
	*ns = tt_bench_median(runs, repeats);
	return 0;
}
