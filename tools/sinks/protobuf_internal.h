/* tools/sinks' inside: Perfetto's protobuf wire format, which only the Perfetto sink's
 * files (perfetto.c, perfetto_sched.c, protobuf.c) encode with; the layers above see
 * sinks.h alone. Inline, as the encoder runs it for every event.
 *
 * One encoder per field kind, each with its room beside it: the most bytes it writes
 * (field numbers below 2048, as Perfetto's are: a tag of two bytes at most). Packets
 * whose fields are fixed are written in place, into room summed from these at compile
 * time; the others into a growable struct tt_buf, whose fields (tt_pb_*) each make
 * their own room before they write, so that no size is worked out apart from the
 * writing. */
#ifndef TT_TOOLS_SINKS_PROTOBUF_INTERNAL_H
#define TT_TOOLS_SINKS_PROTOBUF_INTERNAL_H

#include <string.h>

#include "sinks.h"

enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2 };
enum {
	PB_TRACE_PACKET = 1,       /* Trace.packet */
	PB_PACKET_MACHINE_ID = 98, /* TracePacket.machine_id: any packet of a machine but the first */
};

#define PB_TAG_ROOM 2     /* a field number below 2048 */
#define PB_VARINT_ROOM 10 /* a 64-bit value */

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

#define PB_UINT_ROOM (PB_TAG_ROOM + PB_VARINT_ROOM)
static inline __attribute__((always_inline)) uint8_t *pb_uint(uint8_t *p, unsigned field,
							      uint64_t v)
{
	return pb_varint(pb_tag(p, field, WT_VARINT), v);
}

#define PB_FIXED64_ROOM (PB_TAG_ROOM + 8)
static inline uint8_t *pb_fixed64(uint8_t *p, unsigned field, uint64_t v)
{
	p = pb_tag(p, field, WT_FIXED64);
	memcpy(p, &v, 8);
	return p + 8;
}

/* The tag and length of a length-delimited field */
#define PB_HEAD_ROOM (PB_TAG_ROOM + PB_VARINT_ROOM)
#define PB_BYTES_ROOM(n) (PB_HEAD_ROOM + (size_t)(n))
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
/* A nested message: the gap before its fields, and the most pb_close moves them by. */
#define PB_MESSAGE_ROOM PB_HEAD_ROOM

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

/* A string field; protobuf strings must be UTF-8, so bytes that are not become
 * U+FFFD (three bytes for one), written straight into the packet after the gap for
 * tag and length. */
#define PB_TEXT_ROOM(len) (PB_MESSAGE_ROOM + 3 * (size_t)(len))
static inline uint8_t *pb_text(uint8_t *q, unsigned field, struct tt_str s)
{
	uint8_t *start = q;
	q = pb_open(q);
	q += tt_utf8_clean(s.ptr, s.len, (char *)q);
	return pb_close(start, q, field);
}

/* ---- A message in growable memory (base.h's struct tt_buf), for packets with
 * strings or of any length ---- */

static inline __attribute__((always_inline)) uint8_t *tt_pb_room(struct tt_buf *w, size_t n)
{
	if (__builtin_expect(w->cap - w->len >= n, 1))
		return (uint8_t *)w->p + w->len;
	return (uint8_t *)tt_buf_room(w, n);
}

static inline void tt_pb_moved(struct tt_buf *w, const uint8_t *end)
{
	w->len = (size_t)(end - (const uint8_t *)w->p);
}

/* Starts a message: empty. */
static inline void tt_pb_reset(struct tt_buf *w)
{
	w->len = 0;
	w->oom = false;
}

/* The fields, each the primitive above in the room it says it needs. */
static inline void tt_pb_uint(struct tt_buf *w, unsigned field, uint64_t v)
{
	uint8_t *q = tt_pb_room(w, PB_UINT_ROOM);
	if (q)
		tt_pb_moved(w, pb_uint(q, field, v));
}

static inline void tt_pb_fixed64(struct tt_buf *w, unsigned field, uint64_t v)
{
	uint8_t *q = tt_pb_room(w, PB_FIXED64_ROOM);
	if (q)
		tt_pb_moved(w, pb_fixed64(q, field, v));
}

static inline void tt_pb_bytes(struct tt_buf *w, unsigned field, const void *data, size_t n)
{
	uint8_t *q = tt_pb_room(w, PB_BYTES_ROOM(n));
	if (q)
		tt_pb_moved(w, pb_bytes(q, field, data, n));
}

static inline void tt_pb_text(struct tt_buf *w, unsigned field, struct tt_str s)
{
	uint8_t *q = tt_pb_room(w, PB_TEXT_ROOM(s.len));
	if (q)
		tt_pb_moved(w, pb_text(q, field, s));
}

/* Opens a nested message: its offset, for tt_pb_close (the memory may move). */
static inline size_t tt_pb_open(struct tt_buf *w)
{
	size_t at = w->len;
	if (tt_pb_room(w, PB_GAP))
		w->len += PB_GAP;
	return at;
}

static inline void tt_pb_close(struct tt_buf *w, size_t at, unsigned field)
{
	if (!w->oom && tt_pb_room(w, PB_MESSAGE_ROOM - PB_GAP))
		tt_pb_moved(w, pb_close((uint8_t *)w->p + at, (uint8_t *)w->p + w->len, field));
}

/* Writes w as one TracePacket: the Trace.packet tag, its length and its bytes; 0, or
 * -1 after reporting that there was no memory for all of it (protobuf.c). */
int tt_pb_write_packet(struct tt_out *out, struct tt_buf *w);

/* Every thread's states as ftrace sched_switch events, their times moved by
 * `boot_offset` (perfetto_sched.c), encoded in `scratch`; 0, or -1 after reporting. */
int tt_pf_states(struct tt_out *out, struct tt_buf *scratch, const struct tt_trace *t,
		 int64_t boot_offset);
#endif
