/* `ticktrace report --frames`: the frame times of a run (TT_FRAME_MARK), their
 * distribution, the frames over a budget, and the scopes that took the most of the
 * worst frames. Fed by the report's sink: the frame boundaries, and each scope's self
 * time as it closes, which counts in the frame it closes in. Memory is bounded: a
 * histogram of frame times, the scopes of the frame in progress, and the breakdown of
 * the TT_WORST_FRAMES worst frames. */
#ifndef TT_FRAMES_H
#define TT_FRAMES_H

#include <stdint.h>
#include <stdio.h>

#include "analysis.h"
#include "tt_decode.h"

#define TT_WORST_FRAMES 5
#define TT_WORST_SCOPES 5

struct tt_frame_scope {
	uint64_t key;
	const struct tt__thread_analysis *thread; /* for its name */
	int64_t self;
};

struct tt_worst_frame {
	uint64_t number;
	int64_t start, dur;
	struct tt_frame_scope top[TT_WORST_SCOPES]; /* most self time first */
	size_t ntop;
};

struct tt_frame_stats {
	int64_t budget;
	const struct tt_site *site; /* the frames counted: the first name marked */
	uint64_t track;
	uint64_t frames;            /* frames that ended */
	uint64_t over;              /* of them, longer than budget */
	int64_t min, max, total;
	struct tt__hist hist;
	/* the frame in progress: self time by scope key (open addressing) */
	struct tt_frame_scope *scopes;
	size_t cap, count;
	struct tt_worst_frame worst[TT_WORST_FRAMES]; /* longest first */
	size_t nworst;
	bool oom;
};

void tt_frames_init(struct tt_frame_stats *fs, int64_t budget);
void tt_frames_free(struct tt_frame_stats *fs);
/* A frame boundary (the decoder's frame event). */
void tt_frames_mark(struct tt_frame_stats *fs, const struct tt_event *e);
/* A scope closed with `self` ns of its own. */
void tt_frames_scope(struct tt_frame_stats *fs, const struct tt__thread_analysis *th, uint64_t key,
		     int64_t self);
/* The report as text; names from `an`. 0, or -1 when memory ran out. */
int tt_frames_print(const struct tt_frame_stats *fs, const struct tt__analysis *an, FILE *out);

#endif
