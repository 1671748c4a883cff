/* The threads' sections: THREAD with its name and dropped counts, EVENTS with its
 * records as they are or packed (mode stream), from a snapshot of every chunk's
 * extent taken once, so that the counts and the records written agree. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/writer.h"

int tt__snapshot_thread(struct tt__thread_snapshot *snap, struct tt__slot *slot)
{
	size_t cap = 16;
	snap->slot = slot;
	snap->chunks = 0;
	snap->records = 0;
	snap->extents = malloc(cap * sizeof *snap->extents);
	if (!snap->extents)
		return -ENOMEM;
	/* The chunk after each is the one it had before its extent was taken: one the
	 * thread moves to meanwhile would follow a chunk read only up to where it was
	 * then, with the events in between missing. */
	const struct tt__chunk *next;
	for (const struct tt__chunk *chunk = slot->first; chunk; chunk = next) {
		next = __atomic_load_n(&chunk->next, __ATOMIC_ACQUIRE);
		if (snap->chunks == cap) {
			struct tt__extent *grown = realloc(snap->extents, 2 * cap * sizeof *grown);
			if (!grown)
				return -ENOMEM;
			snap->extents = grown;
			cap *= 2;
		}
		/* A chunk that cannot say where its records end (its header was lost) is
		 * refused rather than written as an extent of some other length. */
		if (chunk->size < sizeof *chunk || chunk->size > TT__CHUNK_SIZE)
			return -EUCLEAN;
		struct tt__extent *e = &snap->extents[snap->chunks++];
		tt__chunk_extent(slot, chunk, &e->begin, &e->end);
		snap->records += (uint64_t)(e->end - e->begin);
	}
	snap->gap_records = tt__gap_records(slot, snap->gap);
	snap->records += snap->gap_records;
	return 0;
}

/* The name a thread has now: its own (named or read at exit), or its comm if alive. */
static void tt__thread_name_now(const struct tt__slot *slot, char *name, size_t size)
{
	snprintf(name, size, "%s", slot->name);
	if (slot->named || (__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_EXITED))
		return;
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%u/comm", slot->tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(name, (int)size, f))
		name[strcspn(name, "\n")] = 0;
	fclose(f);
}

void tt__out_thread_info(struct tt__out *out, uint32_t type, const struct tt__slot *slot,
			 uint64_t records, uint64_t *dropped_total)
{
	char name[64];
	tt__thread_name_now(slot, name, sizeof name);
	uint32_t flags = __atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE);
	struct tt_thread_info info = {
		.index = slot->index,
		.tid = slot->tid,
		.events = records,
		.name_len = (uint32_t)strlen(name),
		.flags = (flags & TT__SLOT_EXITED ? TT_THREAD_EXITED : 0) |
			 (flags & TT__SLOT_WRAPPED ? TT_THREAD_WRAPPED : 0) |
			 (flags & TT__SLOT_RUNTIME ? TT_THREAD_RUNTIME : 0) |
			 (slot->sched.on ? TT_THREAD_SCHED : 0),
	};
	struct tt__gap gap;
	tt__drops_now(slot, info.dropped, &gap);
	for (int i = 0; i < TT_DROP_CAUSES; i++)
		*dropped_total += info.dropped[i];
	uint64_t size = sizeof info + info.name_len;
	tt__out_section(out, type, size);
	tt__out(out, &info, sizeof info);
	tt__out(out, name, info.name_len);
	tt__out_pad(out, size);
}

void tt__out_events(struct tt__out *out, const struct tt__slot *slot, uint64_t first,
		    const struct tt_record *begin, const struct tt_record *end)
{
	uint64_t count = (uint64_t)(end - begin);
	struct tt_events_info events = {.thread_index = slot->index, .first_record = first};
	tt__out_section(out, TT_SEC_EVENTS, sizeof events + count * sizeof(struct tt_record));
	tt__out(out, &events, sizeof events);
	tt__out(out, begin, count * sizeof(struct tt_record));
}

size_t tt__pack_records(uint8_t *buf, const struct tt_record *begin, const struct tt_record *end)
{
	uint64_t words[TT_PACKED_LITERAL] = {0};
	uint64_t last_tsc = 0;
	uint8_t *p = buf;
	for (const struct tt_record *r = begin; r < end; r++) {
		uint64_t word = r->word, field = r->tsc;
		unsigned slot = tt_packed_slot(word);
		if (word && words[slot] == word) {
			*p++ = (uint8_t)slot;
		} else {
			*p++ = TT_PACKED_LITERAL;
			memcpy(p, &word, sizeof word);
			p += sizeof word;
			words[slot] = word;
		}
		if (TT_RECORD_HAS_TIME(TT_RECORD_KIND(word))) {
			uint64_t delta = field - last_tsc;
			last_tsc = field;
			field = tt_zigzag(delta);
		}
		do {
			uint8_t low = field & 0x7f;
			field >>= 7;
			*p++ = (uint8_t)(low | (field ? 0x80 : 0));
		} while (field);
	}
	return (size_t)(p - buf);
}

void tt__out_events_packed(struct tt__out *out, const struct tt__slot *slot, uint64_t first,
			   uint64_t records, const uint8_t *packed, size_t bytes)
{
	struct tt_events_info events = {.thread_index = slot->index, .first_record = first};
	struct tt_packed_info info = {.records = records};
	uint64_t size = sizeof events + sizeof info + bytes;
	tt__out_section(out, TT_SEC_EVENTS_PACKED, size);
	tt__out(out, &events, sizeof events);
	tt__out(out, &info, sizeof info);
	tt__out(out, packed, bytes);
	tt__out_pad(out, size);
}

struct tt__sched_out {
	struct tt__out *out;
	tt__sched_section_fn seen;
	void *ctx;
};

static void tt__out_sched_section(void *arg, struct tt__slot *slot, uint64_t lost, int64_t since_ns,
				  const struct tt_sched_state *states, size_t n)
{
	struct tt__sched_out *so = arg;
	struct tt_sched_info info = {.thread_index = slot->index, .lost = lost, .since_ns = since_ns};
	tt__out_section(so->out, TT_SEC_SCHED, sizeof info + n * sizeof *states);
	tt__out(so->out, &info, sizeof info);
	tt__out(so->out, states, n * sizeof *states);
	if (so->seen)
		so->seen(so->ctx, slot, lost, since_ns, states, n);
}

void tt__out_sched(struct tt__out *out, struct tt__slot *slot, int release, tt__sched_section_fn seen,
		   void *ctx)
{
	if (!slot->sched.on)
		return;
	sigset_t old;
	tt__sched_lock(&old);
	tt__sched_drain_slot(slot);
	struct tt__sched_out so = {.out = out, .seen = seen, .ctx = ctx};
	tt__sched_sections(slot, tt__out_sched_section, &so);
	if (release) {
		tt__sched_release(&slot->sched);
		slot->sched.lost = 0;
	}
	tt__sched_unlock(&old);
}

void tt__out_thread(struct tt__out *out, const struct tt__thread_snapshot *snap,
		    uint64_t *dropped_total)
{
	tt__out_thread_info(out, TT_SEC_THREAD, snap->slot, snap->records, dropped_total);
	uint64_t first = 0;
	for (size_t c = 0; c < snap->chunks; c++) {
		const struct tt__extent *e = &snap->extents[c];
		if (e->end == e->begin)
			continue;
		tt__out_events(out, snap->slot, first, e->begin, e->end);
		first += (uint64_t)(e->end - e->begin);
	}
	if (snap->gap_records)
		tt__out_events(out, snap->slot, first, snap->gap, snap->gap + snap->gap_records);
	tt__out_sched(out, snap->slot, 0, NULL, NULL);
}
