/* Mode stream in the benchmark (stream_bench.c). */
#ifndef TT_STREAM_BENCH_H
#define TT_STREAM_BENCH_H

#include <stdint.h>

/* Each run writes 1.6 GB: at most this many. */
#define TT_BENCH_STREAM_MAX_REPEATS 5

/* ticktrace-bench --stream-child: the measured loop, in a process recording in mode
 * stream; prints nanoseconds per event. */
int tt_bench_stream_child(void);

/* Runs the child `repeats` times (at most TT_BENCH_STREAM_MAX_REPEATS): the median
 * nanoseconds per event, and the events dropped in all runs. 0, or -1 said
 * (tt_bench_say). */
int tt_bench_stream(int repeats, double *ns, uint64_t *dropped);

/* The records a finished raw file holds, and the dropped events its THREAD_TOTALS
 * (mode stream's) count; -1 when it has no END (its writer did not finish). */
int tt_bench_file_records(const char *path, uint64_t *dropped, uint64_t *records);

#endif
