/* A run of lost events (common.h): counted as it grows, and told in the records both
 * runtimes write where it was (TT_REC_DROPPED and its VALUE). */
#include "common.h"

const int8_t tt_scope_change[256] = {
	[TT_REC_BEGIN] = 1, [TT_REC_BEGIN_ARG] = 1, [TT_REC_FUNC_ENTER] = 1,
	[TT_REC_END] = -1, [TT_REC_FUNC_EXIT] = -1,
};
const int8_t tt_scope_low[256] = {
	[TT_REC_END] = -1, [TT_REC_FUNC_EXIT] = -1, [TT_REC_ENDBEGIN] = -1,
};

void tt_gap_add(struct tt_gap *g, const struct tt_record *event)
{
	if (!g->count) {
		g->first_tsc = event->tsc;
		g->depth = g->min_depth = 0;
	}
	unsigned kind = TT_RECORD_KIND(event->word) & 0xff;
	if (g->depth + tt_scope_low[kind] < g->min_depth)
		g->min_depth = g->depth + tt_scope_low[kind];
	g->depth += tt_scope_change[kind];
	g->last_tsc = event->tsc;
	g->count++;
}

size_t tt_gap_records(const struct tt_gap *g, struct tt_record out[2])
{
	if (!g->count)
		return 0;
	uint64_t count = g->count;
	uint64_t closes = g->min_depth < 0 ? (uint64_t)-(int64_t)g->min_depth : 0;
	uint64_t opens = (uint64_t)((int64_t)g->depth - g->min_depth);
	out[0].tsc = g->first_tsc;
	out[0].word = TT_RECORD_WORD(TT_REC_DROPPED, count < TT_PAYLOAD_MASK ? count : TT_PAYLOAD_MASK);
	out[1].tsc = g->last_tsc;
	out[1].word = TT_RECORD_WORD(TT_REC_VALUE,
				     TT_GAP_DEPTHS(closes < TT_GAP_DEPTH_MAX ? closes : TT_GAP_DEPTH_MAX,
						   opens < TT_GAP_DEPTH_MAX ? opens : TT_GAP_DEPTH_MAX));
	return 2;
}
