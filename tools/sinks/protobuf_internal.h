/* tools/sinks' inside: Perfetto's protobuf wire format, which only the Perfetto sink's
 * files (perfetto.c, perfetto_sched.c, protobuf.c) encode with; the layers above see
 * sinks.h alone. Inline, as the encoder runs it for every event. */
#ifndef TT_TOOLS_SINKS_PROTOBUF_INTERNAL_H
#define TT_TOOLS_SINKS_PROTOBUF_INTERNAL_H

#include <string.h>

#include "sinks.h"

enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2 };
enum { PB_TRACE_PACKET = 1 }; /* Trace.packet */

/* Protobuf primitives over a byte pointer: each returns the end. */
static inline __attribute__((always_inline)) uint8_t *pb_varint(uint8_t *p, uint64_t v)
{
	if (__builtin_constant_p(v < 0x80) && v < 0x80) { /* a tag or a small constant */
		*p = (uint8_t)v;
		return p + 1;
	}
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline __attribute__((always_inline)) uint8_t *pb_tag(uint8_t *p, unsigned field,
							     unsigned wire)
{
	return pb_varint(p, (uint64_t)field << 3 | wire);
}

static inline __attribute__((always_inline)) uint8_t *pb_uint(uint8_t *p, unsigned field,
							      uint64_t v)
{
	return pb_varint(pb_tag(p, field, WT_VARINT), v);
}

static inline uint8_t *pb_fixed64(uint8_t *p, unsigned field, uint64_t v)
{
	p = pb_tag(p, field, WT_FIXED64);
	memcpy(p, &v, 8);
	return p + 8;
}

static inline uint8_t *pb_bytes(uint8_t *p, unsigned field, const void *data, size_t n)
{
	p = pb_varint(pb_tag(p, field, WT_LEN), n);
	memcpy(p, data, n);
	return p + n;
}

/* Room for the tag and length of a nested message, enough for a field below 16 and
 * a message below 128 bytes, which most are: its content is written after the gap,
 * and pb_close moves it only when the tag or the length needs more. */
#define PB_GAP 2

static inline uint8_t *pb_open(uint8_t *p)
{
	return p + PB_GAP;
}

/* The rare path, a long message or a large field number: out of line (protobuf.c). */
uint8_t *tt_pb_close_wide(uint8_t *start, uint8_t *end, unsigned field);

/* Inline: every packet closes two or three messages. */
static inline __attribute__((always_inline)) uint8_t *pb_close(uint8_t *start, uint8_t *end,
							       unsigned field)
{
	size_t n = (size_t)(end - (start + PB_GAP));
	if (__builtin_expect(field < 16 && n < 128, 1)) { /* one byte each, in place */
		start[0] = (uint8_t)(field << 3 | WT_LEN);
		start[1] = (uint8_t)n;
		return end;
	}
	return tt_pb_close_wide(start, end, field);
}

/* Growable scratch for packets whose size depends on strings (descriptors, interned
 * data); events that need none of that are built on the stack. */
struct tt_pb_buf {
	uint8_t *p;
	size_t cap;
};

static inline uint8_t *tt_pb_room(struct tt_pb_buf *b, size_t n)
{
	if (b->cap < n) {
		uint8_t *p = realloc(b->p, n);
		if (!p)
			return NULL;
		b->p = p;
		b->cap = n;
	}
	return b->p;
}

/* Room for a string field: tag, length, and the text with invalid bytes replaced. */
static inline size_t tt_str_room(struct tt_str s)
{
	return 3 * (size_t)s.len + 16;
}

/* A string field; protobuf strings must be UTF-8, so bytes that are not become
 * U+FFFD, written straight into the packet after the gap for tag and length. */
static inline uint8_t *pb_text(uint8_t *q, unsigned field, struct tt_str s)
{
	uint8_t *start = q;
	q = pb_open(q);
	q += tt_utf8_clean(s.ptr, s.len, (char *)q);
	return pb_close(start, q, field);
}

/* Writes one TracePacket: the Trace.packet tag, its length and its bytes (protobuf.c). */
void tt_pb_packet(struct tt_out *out, const uint8_t *body, size_t n);
/* Every thread's states as ftrace sched_switch events, their times moved by
 * `boot_offset` (perfetto_sched.c); 0, or -1 after reporting. */
int tt_pf_states(struct tt_out *out, struct tt_pb_buf *scratch, const struct tt_trace *t,
		 int64_t boot_offset);
#endif
