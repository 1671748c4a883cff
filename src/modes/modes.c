/* The modes: what the core's chunks become (core.h: struct tt__mode_ops). A new mode
 * is one more table here, its code in a file of its own beside this one. */
#include "modes/modes.h"

/* Modes stop and ring: a dump writes the whole file from the chunks as they are. */
static int tt__dump_whole(const char *path)
{
	return path ? tt__write_file(path) : tt__write_default_file();
}

/* Modes stop and ring: their chunks are in the live file when there is one
 * (live.c), and a dump writes the whole file. */
#define TT__WHOLE_FILE_OPS                                  \
	.chunks_fd = tt__live_fd, .chunks_at = tt__live_chunks_at, \
	.cover = tt__live_cover, .chunks_after_fork = tt__live_after_fork, \
	.tick = tt__live_tick, .dump = tt__dump_whole

/* Mode stop: a thread keeps its first chunks. */
static const struct tt__mode_ops tt__stop_ops = {TT__WHOLE_FILE_OPS};

/* Mode ring: a thread recycles its oldest chunk. */
static const struct tt__mode_ops tt__ring_ops = {TT__WHOLE_FILE_OPS, .recycle_oldest = 1};

/* Mode stream (stream.c): a drain thread writes full chunks as the program runs. */
static const struct tt__mode_ops tt__stream_ops = {
	.chunk_full = tt__stream_chunk_full,
	.thread_exited = tt__stream_thread_exited,
	.dump = tt__stream_flush,
	.drains = 1,
};

const struct tt__mode_ops *tt__mode_ops_for(enum tt__mode mode)
{
	static const struct tt__mode_ops *const ops[] = {
		[TT__MODE_STOP] = &tt__stop_ops,
		[TT__MODE_STREAM] = &tt__stream_ops,
		[TT__MODE_RING] = &tt__ring_ops,
	};
	return ops[mode];
}
