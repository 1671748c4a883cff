#include "report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void tt_frames_init(struct tt_frame_stats *fs, int64_t budget)
{
	*fs = (struct tt_frame_stats){.budget = budget, .min = INT64_MAX};
}

void tt_frames_free(struct tt_frame_stats *fs)
{
	free(fs->hist.counts);
	free(fs->scopes);
	*fs = (struct tt_frame_stats){0};
}

static size_t tt_frames_slot(const struct tt_frame_stats *fs, uint64_t key)
{
	size_t i = (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (fs->cap - 1);
	while (fs->scopes[i].key && fs->scopes[i].key != key)
		i = (i + 1) & (fs->cap - 1);
	return i;
}

void tt_frames_scope(struct tt_frame_stats *fs, const struct tt_an_thread *th, uint64_t key,
		     int64_t self)
{
	if (!fs->site || fs->oom || !key)
		return;
	if (2 * (fs->count + 1) > fs->cap) {
		size_t cap = fs->cap ? 2 * fs->cap : 256;
		struct tt_frame_scope *old = fs->scopes, *grown = calloc(cap, sizeof *grown);
		if (!grown) {
			fs->oom = true;
			return;
		}
		size_t old_cap = fs->cap;
		fs->scopes = grown;
		fs->cap = cap;
		for (size_t i = 0; i < old_cap; i++)
			if (old[i].key)
				fs->scopes[tt_frames_slot(fs, old[i].key)] = old[i];
		free(old);
	}
	struct tt_frame_scope *s = &fs->scopes[tt_frames_slot(fs, key)];
	if (!s->key) {
		*s = (struct tt_frame_scope){.key = key, .thread = th};
		fs->count++;
	}
	s->self += self;
}

/* Makes room at `at` in a list of at most `max` items of `size` bytes, largest first,
 * that holds *n: the last falls out when it is full. */
static void *tt_top_insert(void *list, size_t *n, size_t max, size_t size, size_t at)
{
	if (*n < max)
		(*n)++;
	char *base = list;
	memmove(base + (at + 1) * size, base + at * size, (*n - 1 - at) * size);
	return base + at * size;
}

/* The frame that just ended, if among the worst so far: with its top scopes. */
static void tt_frames_keep_worst(struct tt_frame_stats *fs, uint64_t number, int64_t start,
				 int64_t dur)
{
	size_t at = fs->nworst;
	while (at > 0 && fs->worst[at - 1].dur < dur)
		at--;
	if (at == TT_WORST_FRAMES)
		return;
	struct tt_worst_frame *w = tt_top_insert(fs->worst, &fs->nworst, TT_WORST_FRAMES,
						 sizeof fs->worst[0], at);
	*w = (struct tt_worst_frame){.number = number, .start = start, .dur = dur};
	for (size_t i = 0; i < fs->cap; i++) {
		const struct tt_frame_scope *s = &fs->scopes[i];
		if (!s->key)
			continue;
		size_t k = w->ntop;
		while (k > 0 && w->top[k - 1].self < s->self)
			k--;
		if (k < TT_WORST_SCOPES)
			*(struct tt_frame_scope *)tt_top_insert(w->top, &w->ntop, TT_WORST_SCOPES,
								sizeof w->top[0], k) = *s;
	}
}

void tt_frames_mark(struct tt_frame_stats *fs, const struct tt_event *e)
{
	if (!fs->site) {
		fs->site = e->site;
		fs->track = e->func;
	}
	if (e->func != fs->track)
		return;
	if (e->value >= 2) { /* frame value - 1 ended */
		fs->frames++;
		fs->over += fs->budget > 0 && e->dur > fs->budget;
		fs->min = e->dur < fs->min ? e->dur : fs->min;
		fs->max = e->dur > fs->max ? e->dur : fs->max;
		fs->total += e->dur;
		if (tt_an_hist_add(&fs->hist, e->dur) < 0)
			fs->oom = true;
		tt_frames_keep_worst(fs, e->value - 1, e->ts - e->dur, e->dur);
	}
	/* the scopes of the next frame start from nothing */
	if (fs->count) {
		memset(fs->scopes, 0, fs->cap * sizeof fs->scopes[0]);
		fs->count = 0;
	}
}

int tt_frames_print(const struct tt_frame_stats *fs, const struct tt_an *an, FILE *out)
{
	char a[32], b[32], c[32], d[32], m[32];
	if (!fs->site || fs->frames == 0) {
		fputs("no frames: the trace has fewer than two frame marks (TT_FRAME_MARK)\n", out);
		return 0;
	}
	int64_t mean = fs->total / (int64_t)fs->frames;
	fprintf(out, "frames: %" PRIu64 " frames of \"%.*s\", %s in all\n", fs->frames,
		(int)fs->site->name.len, fs->site->name.ptr, tt_an_fmt_ns(a, fs->total));
	fprintf(out, "frame time: mean %s  p50 %s  p95 %s  p99 %s  max %s\n", tt_an_fmt_ns(m, mean),
		tt_an_fmt_ns(a, tt_an_hist_percentile(&fs->hist, fs->frames, 500, fs->min, fs->max)),
		tt_an_fmt_ns(b, tt_an_hist_percentile(&fs->hist, fs->frames, 950, fs->min, fs->max)),
		tt_an_fmt_ns(c, tt_an_hist_percentile(&fs->hist, fs->frames, 990, fs->min, fs->max)),
		tt_an_fmt_ns(d, fs->max));
	if (fs->budget > 0)
		fprintf(out, "over the budget of %s: %" PRIu64 " frames (%.1f%%)\n",
			tt_an_fmt_ns(a, fs->budget), fs->over, 100.0 * (double)fs->over / (double)fs->frames);
	fprintf(out, "worst frames, with the scopes that took the most of them (self time):\n");
	for (size_t i = 0; i < fs->nworst; i++) {
		const struct tt_worst_frame *w = &fs->worst[i];
		fprintf(out, "  frame %" PRIu64 " took %s at %s:", w->number, tt_an_fmt_ns(a, w->dur),
			tt_an_fmt_ns(b, w->start));
		for (size_t k = 0; k < w->ntop; k++) {
			char name[512];
			an->name(an->ctx, w->top[k].thread, w->top[k].key, name, sizeof name);
			fprintf(out, "%s %s %s", k ? "," : "", name, tt_an_fmt_ns(a, w->top[k].self));
		}
		fputc('\n', out);
	}
	return fs->oom ? -1 : 0;
}
