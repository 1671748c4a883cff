/* Perfetto's protobuf wire format: what of it runs out of line (protobuf_internal.h
 * inline). */
#include <string.h>

#include "protobuf_internal.h"

/* Closes a message whose length or field number needs more than a byte each: its
 * bytes move up behind the longer tag and length. */
uint8_t *tt_pb_close_wide(uint8_t *start, uint8_t *end, unsigned field)
{
	size_t n = (size_t)(end - (start + PB_GAP));
	uint8_t head[16];
	size_t h = (size_t)(pb_varint(pb_tag(head, field, WT_LEN), n) - head);
	memmove(start + h, start + PB_GAP, n);
	memcpy(start, head, h);
	return start + h + n;
}

/* Writes one TracePacket: the Trace.packet tag, its length and its bytes. */
void tt_pb_packet(struct tt_out *out, const uint8_t *body, size_t n)
{
	uint8_t head[16];
	uint8_t *h = pb_varint(pb_tag(head, PB_TRACE_PACKET, WT_LEN), n);
	if (n > TT_OUT_BUFFER / 2) {
		tt_out_bytes(out, head, (size_t)(h - head));
		tt_out_bytes(out, body, n);
		return;
	}
	tt_out_reserve(out, (size_t)(h - head) + n);
	tt_out_lit(out, (const char *)head, (size_t)(h - head));
	tt_out_lit(out, (const char *)body, n);
}
