/* The records of an EVENTS section: in the file, or a packed section's unpacked
 * (format.h: TT_SEC_EVENTS_PACKED) into its thread's buffer. */
#include <stddef.h>
#include <string.h>

#include "read_internal.h"

/* Unpacks `count` records (format.h: TT_SEC_EVENTS_PACKED): NULL, or what is wrong
 * with record *bad, which begins at bytes[*at]. */
const char *tt_unpack_records(const uint8_t *bytes, size_t size, size_t count,
			     struct tt_record *out, size_t *bad, size_t *at)
{
	uint64_t words[TT_PACKED_LITERAL] = {0};
	uint64_t last_tsc = 0;
	size_t pos = 0;
	for (size_t i = 0; i < count; i++) {
		*bad = i;
		*at = pos;
		if (pos == size)
			return "the section ends before it";
		unsigned tag = bytes[pos++];
		uint64_t word;
		if (tag == TT_PACKED_LITERAL) {
			if (size - pos < sizeof(word))
				return "its word runs past the section";
			memcpy(&word, bytes + pos, sizeof(word));
			pos += sizeof(word);
			words[tt_packed_slot(word)] = word;
		} else if (!(word = words[tag])) {
			return "it names a word slot that no word of the section took";
		}
		uint64_t field = 0;
		for (unsigned shift = 0;; shift += 7) {
			if (pos == size)
				return "its time runs past the section";
			if (shift > 63)
				return "its time is longer than 10 bytes";
			uint8_t byte = bytes[pos++];
			field |= (uint64_t)(byte & 0x7f) << shift;
			if (!(byte & 0x80))
				break;
		}
		if (tt_record_timed(word))
			field = last_tsc += tt_unzigzag(field);
		out[i] = (struct tt_record){.tsc = field, .word = word};
	}
	*bad = count;
	*at = pos;
	return pos == size ? NULL : "bytes are left after the section's records";
}

const struct tt_record *tt_section_records(const struct tt_thread *t, size_t s)
{
	const struct tt_events *ev = &t->sections[s];
	struct tt_unpacked *u = t->unpacked;
	if (ev->records || (u->valid && u->section == s))
		return ev->records ? ev->records : u->records;
	/* Read whole before: it unpacks as it did then (a cut section only shorter). */
	size_t bad, at;
	u->valid = !tt_unpack_records(ev->packed, ev->packed_size, ev->count, u->records, &bad, &at) ||
		   bad == ev->count;
	u->section = s;
	return u->records;
}

bool tt_thread_last_tsc(const struct tt_thread *t, uint64_t *tsc)
{
	for (size_t s = t->nsections; s-- > 0;) {
		const struct tt_record *records = tt_section_records(t, s);
		for (size_t i = records ? t->sections[s].count : 0; i-- > 0;)
			if (tt_record_timed(records[i].word)) {
				*tsc = records[i].tsc;
				return true;
			}
	}
	return false;
}
