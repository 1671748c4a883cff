/* Perfetto's protobuf wire format: what of it runs out of line (protobuf_internal.h
 * inline). */
#include <string.h>

#include "protobuf_internal.h"

/* Closes a message whose length or field number needs more than a byte each: its
 * bytes move up behind the longer tag and length. */
uint8_t *tt_pb_close_wide(uint8_t *start, uint8_t *end, unsigned field)
{
	size_t n = (size_t)(end - (start + PB_GAP));
	uint8_t head[PB_HEAD_ROOM];
	size_t h = (size_t)(pb_varint(pb_tag(head, field, WT_LEN), n) - head);
	memmove(start + h, start + PB_GAP, n);
	memcpy(start, head, h);
	return start + h + n;
}

int tt_pb_write_packet(struct tt_out *out, const struct tt_buf *w)
{
	if (w->oom)
		return tt_error("out of memory");
	uint8_t head[PB_HEAD_ROOM];
	uint8_t *h = pb_varint(pb_tag(head, PB_TRACE_PACKET, WT_LEN), w->len);
	if (w->len > TT_OUT_BUFFER / 2) {
		tt_out_bytes(out, head, (size_t)(h - head));
		tt_out_bytes(out, w->p, w->len);
		return 0;
	}
	tt_out_reserve(out, (size_t)(h - head) + w->len);
	tt_out_lit(out, (const char *)head, (size_t)(h - head));
	tt_out_lit(out, (const char *)w->p, w->len);
	return 0;
}
