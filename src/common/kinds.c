/* The record kinds' names in messages, and where a buffer's written events end
 * (common.h). */
#include "common.h"

static const char *const tt_kind_names[TT_REC_KIND_MAX + 1] = {
	[TT_REC_BEGIN_ARG] = "BEGIN_ARG", [TT_REC_INSTANT_ARG] = "INSTANT_ARG",
	[TT_REC_COUNTER] = "COUNTER", [TT_REC_FLOW_OUT] = "FLOW_OUT", [TT_REC_FLOW_IN] = "FLOW_IN",
	[TT_REC_DESCRIBE] = "DESCRIBE", [TT_REC_DROPPED] = "DROPPED",
	[TT_REC_SCOPE_VALUE] = "SCOPE_VALUE",
};

const char *tt_kind_name(unsigned kind)
{
	return kind <= TT_REC_KIND_MAX ? tt_kind_names[kind] : NULL;
}

const char *tt_drop_cause_text(unsigned cause)
{
	static const char *const texts[TT_DROP_CAUSES] = {
		[TT_DROP_FULL] = "the buffer was full",
		[TT_DROP_NO_MEMORY] = "no memory for a buffer",
		[TT_DROP_BEHIND] = "the disk fell behind",
		[TT_DROP_REENTERED] = "recorded from inside ticktrace",
	};
	return cause < TT_DROP_CAUSES ? texts[cause] : NULL;
}

const struct tt_record *tt_written_end(const struct tt_record *first, const struct tt_record *last)
{
	while (last > first && __atomic_load_n(&last[-1].word, __ATOMIC_ACQUIRE) == 0)
		last--;
	/* (an event never spans two chunks: its VALUE or TEXT records follow it here) */
	const struct tt_record *start = last;
	while (start > first && last - start <= TT_TEXT_RECORDS(TT_DESCRIBE_MAX)) {
		unsigned kind = TT_RECORD_KIND(__atomic_load_n(&start[-1].word, __ATOMIC_ACQUIRE));
		if (kind != TT_REC_VALUE && kind != TT_REC_TEXT)
			break;
		start--;
	}
	if (start == first)
		return last;
	uint64_t word = __atomic_load_n(&start[-1].word, __ATOMIC_ACQUIRE);
	unsigned kind = TT_RECORD_KIND(word);
	uint64_t bytes = TT_RECORD_PAYLOAD(word);
	uint64_t after = TT_RECORD_HAS_VALUE(kind) ? 1 :
			 kind == TT_REC_DESCRIBE && bytes <= TT_DESCRIBE_MAX ? TT_TEXT_RECORDS(bytes) : 0;
	return (uint64_t)(last - start) < after ? start - 1 : last;
}

const struct tt_record *tt_first_opener(const struct tt_record *first, const struct tt_record *last,
					size_t *left)
{
	for (const struct tt_record *r = first; r < last && *left; r++, --*left)
		if (TT_OPENS_SCOPE(TT_RECORD_KIND(r->word)))
			return r;
	return NULL;
}
