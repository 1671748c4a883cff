/* What a thread's chunk holds, for those that read it while its thread records (a
 * dump, tt-spikes, mode stream's drain, tt-sched's reading of its scopes): a file of
 * its own that calls nothing of the core's, below every reader. */
#include "core/core_internal.h"

const struct tt__chunk *tt__chunk_extent(const struct tt__slot *slot, const struct tt__chunk *chunk,
					 const struct tt_record **begin, const struct tt_record **end)
{
	/* (its successor first: once it has one, its size says where its records end) */
	const struct tt__chunk *next = __atomic_load_n(&chunk->next, __ATOMIC_ACQUIRE);
	const struct tt_record *first = (const struct tt_record *)(chunk + 1);
	const struct tt_record *last = (const struct tt_record *)((const char *)chunk + chunk->size);
	if (last < first)
		last = first; /* a size that does not cover its header: no record (a scratch chunk's 0) */
	if (!next) {
		const struct tt__hot *hot = __atomic_load_n(&slot->hot, __ATOMIC_ACQUIRE);
		const struct tt_record *cursor =
			(const struct tt_record *)__atomic_load_n(&hot->cursor, __ATOMIC_ACQUIRE);
		if (cursor >= first && cursor < last)
			last = cursor;
	}
	/* (space reserved by an event that did not fit at the end of the chunk, or not
	 * yet written, is all zero) */
	*begin = first;
	*end = tt_written_end(first, last);
	return next;
}

const struct tt_record *tt__settled_end(const struct tt__slot *slot, const struct tt__chunk *chunk,
					const struct tt_record *begin, const struct tt_record *end)
{
	if (!slot->filters || __atomic_load_n(&chunk->next, __ATOMIC_ACQUIRE))
		return end; /* nothing erased, or a chunk its thread left: never written again */
	return tt__before_enters(begin, end);
}
