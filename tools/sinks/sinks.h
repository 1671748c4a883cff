/* tools/sinks: the output formats tt_decode drives (decode.h): Chrome JSON (json.c),
 * Perfetto protobuf (perfetto.c), the filter that wraps any of them (filter.c), and
 * flame graphs (flame.c). Each constructor returns NULL when out of memory; free with
 * tt_sink_free. */
#ifndef TT_TOOLS_SINKS_H
#define TT_TOOLS_SINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "../decode/decode.h"

/* The sinks that tt_decode drives (decode.h). Each returns NULL when out of memory;
 * free with tt_sink_free. */

/* Perfetto nests slices at most this deep (slice_max_depth_exceeded) and then drops
 * deeper ones, whose ends, in protobuf, close the slices around them too early. Both
 * writers leave out what is nested deeper (slices, instants, flow ends), count it
 * and warn, so that what remains shows with its true times. */
#define TT_MAX_SHOWN_DEPTH 512

struct tt_folded {
	uint64_t slices, instants, flows;
};

/* Whether e is nested too deep to show; counts it in *count when it is. */
static inline bool tt_too_deep(const struct tt_event *e, uint64_t *count)
{
	if (__builtin_expect(e->depth < TT_MAX_SHOWN_DEPTH, 1))
		return false;
	++*count;
	return true;
}

/* The warning that counts what was left out, or 0 (and buf "") when nothing was. */
size_t tt_folded_message(const struct tt_folded *f, char *buf, size_t cap);

/* Chrome trace JSON (FORMATS.md), streamed into `out`. */
/* `source`: each slice and instant carries its "file:line" as args.src (a third of
 * the file's bytes; Perfetto's format interns source locations instead). */
struct tt_sink *tt_json_sink_new(struct tt_out *out, bool source);

/* Perfetto's protobuf TrackEvent format (FORMATS.md, tools/perfetto_trace.proto). */
struct tt_sink *tt_perfetto_sink_new(struct tt_out *out);

/* What the filter sink keeps: events of the named threads (tid or name; none named:
 * all) in [from, to] (ns since the trace start), slices of min_dur ns or more. */
struct tt_filter {
	const char *const *threads;
	size_t nthreads;
	bool has_from, has_to; /* without them, no bound: zero is no filter at all */
	int64_t from, to;
	int64_t min_dur;
	bool clip; /* cut slices at [from, to] (flagged TT_EV_CLIPPED_*), not keep them whole */
};

/* Passes to `inner` only what the filter keeps (filter.c); `inner` stays the
 * caller's to free. */
struct tt_sink *tt_filter_sink_new(struct tt_sink *inner, const struct tt_filter *f);
/* Whether the filter keeps less than everything. */
bool tt_filter_active(const struct tt_filter *f);

/* The flame graph (flame.c): each slice's self time added to its path of scopes and
 * functions, under its thread's name. After decoding, tt_flame_write writes it: an
 * SVG titled `title`, or folded stacks ("thread;outer;inner NANOSECONDS" a line);
 * the distinct names and paths in *frames and *stacks. 0, or -1 after reporting. */
struct tt_sink *tt_flame_sink_new(void);
int tt_flame_write(struct tt_sink *flame, FILE *out, bool svg, const char *title, size_t *frames,
		   size_t *stacks);

/* ---- Perfetto's protobuf wire format, for perfetto.c: inline, as the encoder
 * runs them for every event ---- */

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
/* The CPU of th->states[i]: its own, or, for a RUNNING state no switch in gives
 * (TT__NO_CPU: running since its switches were asked for), that of the switch out
 * that ends it, since every switch from then on is there; TT__NO_CPU when neither
 * says (perfetto_sched.c). */
uint32_t tt_state_cpu(const struct tt_thread *th, size_t i);
#endif
