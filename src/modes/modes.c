/* The modes: what the core's chunks become (core.h: struct tt__mode_ops). A new mode
 * is one more table here and its name, its code in a file of its own beside this one. */
#include <stdio.h>
#include <string.h>

#include "modes/modes.h"

/* Modes stop and ring: a dump writes the whole file from the chunks as they are; as
 * ticktrace's threads' work, whichever thread writes it (the service thread, for a
 * signal or a program that left by _exit): a fork never finds it inside malloc. */
static int tt__dump_whole(const char *path)
{
	tt__background_work(1);
	int err = path ? tt__write_file(path) : tt__write_default_file();
	tt__background_work(0);
	return err;
}

/* Modes stop and ring: the last spikes, the whole file, and then no more live file. */
static int tt__finish_whole(void)
{
	tt__spikes_last();
	int err = tt__nothing_to_write() ? 0 : tt__dump_whole(NULL);
	if (!err)
		tt__live_finish(); /* the trace is all in the file now */
	return err;
}

/* Modes stop and ring: what writing the file at exit would meet, said now (stream's
 * file is made as it begins); buffers in a live file, which outlives a SIGKILL. */
static void tt__prepare_whole(void)
{
	tt__check_out();
	struct tt_os_writing writing;
	tt_os_writing_begin(&writing);
	int err = tt__live_start();
	tt_os_writing_end(&writing);
	char path[4096], why[160];
	if (err)
		fprintf(tt__err, "ticktrace: no live file %s.live (%s): a run killed by " TT_OS_HARD_KILL " will "
			"leave no trace\n", tt__default_path(path, sizeof path) == 0 ? path : TT_ENV_OUT,
			tt__fd_why(err, why, sizeof why));
}

/* Modes stop and ring: their chunks are in the live file when there is one
 * (live.c), and a dump writes the whole file. */
#define TT__WHOLE_FILE_OPS                                  \
	.prepare = tt__prepare_whole, .finish = tt__finish_whole, \
	.chunks_file = tt__live_file, .chunks_at = tt__live_chunks_at, \
	.cover = tt__live_cover, .grow = tt__live_grow, .chunks_file_table = tt__live_table, \
	.chunks_after_fork = tt__live_after_fork, \
	.tick = tt__live_tick, .identify = tt__live_identify, .dump = tt__dump_whole, \
	.after_fork = tt__spikes_after_fork

/* Mode stop: a thread keeps its first chunks. */
static const struct tt__mode_ops tt__stop_ops = {TT__WHOLE_FILE_OPS};

/* Mode ring: a thread recycles its oldest chunk. */
static const struct tt__mode_ops tt__ring_ops = {TT__WHOLE_FILE_OPS, .recycle_oldest = 1,
						 .file_flags = TT_FILE_RING};

/* Mode stream (stream.c): a drain thread writes full chunks as the program runs. */
static const struct tt__mode_ops tt__stream_ops = {
	.begin = tt__stream_start,
	.finish = tt__stream_finish,
	.after_fork = tt__stream_after_fork,
	.chunk_full = tt__stream_chunk_full,
	.thread_exited = tt__stream_thread_exited,
	.dump = tt__stream_flush,
	.drains = 1,
};

/* TICKTRACE_MODE's values, in TT_MODES' order (common.h). */
static const struct tt__mode_ops *const tt__modes[TT_MODE_COUNT] = {&tt__stop_ops, &tt__stream_ops,
								    &tt__ring_ops};

const struct tt__mode_ops *tt__mode_ops_by_name(const char *name)
{
	return tt__modes[tt_mode_index(name, tt__err)];
}
