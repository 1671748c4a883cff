/* Perfetto's protobuf wire format: what of it runs out of line (protobuf_internal.h
 * inline). */
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>

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

int tt_pb_write_packet(struct tt_out *out, struct tt_buf *w)
{
	if (w->oom)
		return tt_error("out of memory");
	uint8_t head[PB_HEAD_ROOM];
	uint8_t *h = pb_varint(pb_tag(head, PB_TRACE_PACKET, WT_LEN), w->len);
	size_t hn = (size_t)(h - head);
	if (w->len > TT_OUT_BUFFER / 2) {
		/* written past the buffers whole, its head moved in front: a unit of its own */
		size_t n = w->len;
		if (!tt_buf_room(w, hn))
			return tt_error("out of memory");
		memmove(w->p + hn, w->p, n);
		memcpy(w->p, head, hn);
		tt_out_bytes(out, w->p, hn + n);
		return 0;
	}
	tt_out_reserve(out, hn + w->len);
	tt_out_unit(out);
	tt_out_lit(out, (const char *)head, hn);
	tt_out_lit(out, (const char *)w->p, w->len);
	return 0;
}

/* ---- Compressed packets: tt_perfetto_compress ---- */

/* A bundle's packets before deflate: Perfetto's service makes bundles whose packet
 * is below 512 KB; compressed, this many bytes of ours are far below that (a packet
 * longer than it is a bundle alone). The output's pieces (tt_out_unit), found by
 * the main thread as it writes the packets. */
#define TT_PB_BUNDLE TT_OUT_PIECE
/* By default a trace is deflated from this many bytes of packets on: below, the
 * bytes saved are not worth a reader that must inflate them. */
#define TT_PB_LARGE (1u << 20)
enum { PKT_COMPRESSED_PACKETS = 50 };
/* libdeflate's levels: 1 deflates ticktrace's packets 39-fold at about 1 GB/s, 6
 * 40-fold at 0.4 GB/s (zlib's level 1: 37-fold at 0.5 GB/s); above 6 nothing gained. */
enum { TT_PB_LEVEL_FAST = 1, TT_PB_LEVEL_SMALL = 6 };

struct tt_pb_packer {
	struct libdeflate_compressor *z;
	bool deciding;        /* TT_PACK_LARGE: held until it is large or ends */
	struct tt_buf packed; /* what the call gives back */
	struct tt_buf held;   /* whole packets, while deciding */
};

/* One bundle: p's n bytes of whole packets, deflated (zlib's format, as Perfetto's
 * service writes them) into a compressed_packets packet at the end of k->packed;
 * false when out of memory. */
static bool tt_pb_bundle(struct tt_pb_packer *k, const char *p, size_t n)
{
	size_t bound = libdeflate_zlib_compress_bound(k->z, n), head = 2 * PB_HEAD_ROOM;
	uint8_t *q = (uint8_t *)tt_buf_room(&k->packed, head + bound);
	if (!q)
		return false;
	size_t zn = libdeflate_zlib_compress(k->z, p, n, q + head, bound);
	if (zn == 0)
		return false;
	/* the packet's head before the deflated bytes: Trace.packet, then its one field */
	uint8_t h[2 * PB_HEAD_ROOM];
	uint8_t *inner = pb_varint(pb_tag(h + PB_HEAD_ROOM, PKT_COMPRESSED_PACKETS, WT_LEN), zn);
	size_t inner_n = (size_t)(inner - (h + PB_HEAD_ROOM));
	uint8_t *outer = pb_varint(pb_tag(h, PB_TRACE_PACKET, WT_LEN), inner_n + zn);
	size_t outer_n = (size_t)(outer - h);
	memmove(q, h, outer_n);
	memmove(q + outer_n, h + PB_HEAD_ROOM, inner_n);
	memmove(q + outer_n + inner_n, q + head, zn);
	k->packed.len += outer_n + inner_n + zn;
	return true;
}

/* The length of the packet at p (n bytes on), or 0 when p holds only part of it. */
static inline size_t tt_pb_packet_at(const uint8_t *p, size_t n)
{
	/* nearly every event's packet is below 128 bytes: a length of one byte */
	if (__builtin_expect(n >= 2 && p[1] < 0x80, 1))
		return (size_t)p[1] <= n - 2 ? (size_t)p[1] + 2 : 0;
	uint64_t len = 0;
	for (size_t i = 1, shift = 0; i < n && i <= PB_HEAD_ROOM; i++, shift += 7) {
		len |= (uint64_t)(p[i] & 0x7f) << shift;
		if (!(p[i] & 0x80))
			return len <= n - i - 1 ? (size_t)len + i + 1 : 0;
	}
	return 0;
}

/* What was held, whole packets, in bundles as the output cuts a buffer in pieces: by
 * a walk over the packets, each length saying where the next is (once a trace, below
 * TT_PB_LARGE bytes and the buffer that ends the holding). */
static bool tt_pb_bundle_held(struct tt_pb_packer *k, const char *p, size_t n)
{
	size_t at = 0;
	while (at < n) {
		size_t end = at, len;
		while (end < n && (len = tt_pb_packet_at((const uint8_t *)p + end, n - end)) &&
		       (end == at || end - at + len <= TT_PB_BUNDLE))
			end += len;
		if (end == at || !tt_pb_bundle(k, p + at, end - at))
			return false; /* (a packet cut: none is, the output's units are whole) */
		at = end;
	}
	return true;
}

/* Deflates p's whole packets in bundles, the pieces the output cut them in (n 0: the
 * end). While deciding, holds everything until TT_PB_LARGE bytes came (then deflated
 * from the first) or the end (then given back as it came). */
static const char *tt_pb_pack(void *ctx, const char *p, size_t n, const size_t *cuts, size_t ncuts,
			      size_t *packed)
{
	struct tt_pb_packer *k = ctx;
	k->packed.len = 0;
	if (k->deciding) {
		if (n && k->held.len + n < TT_PB_LARGE) {
			tt_buf_add(&k->held, p, n);
			*packed = 0;
			return k->held.oom ? NULL : "";
		}
		k->deciding = false;
		if (n == 0) {
			*packed = k->held.len;
			return k->held.p ? k->held.p : "";
		}
		if (k->held.len) {
			tt_buf_add(&k->held, p, n);
			if (k->held.oom || !tt_pb_bundle_held(k, k->held.p, k->held.len))
				return NULL;
			n = 0;
		}
	}
	for (size_t i = 0, at = 0; at < n; i++) {
		size_t end = i < ncuts ? cuts[i] : n;
		if (!tt_pb_bundle(k, p + at, end - at))
			return NULL;
		at = end;
	}
	*packed = k->packed.len;
	return k->packed.p ? k->packed.p : "";
}

static void tt_pb_packer_free(void *ctx)
{
	struct tt_pb_packer *k = ctx;
	libdeflate_free_compressor(k->z);
	free(k->packed.p);
	free(k->held.p);
	free(k);
}

int tt_perfetto_compress(struct tt_out *out, enum tt_packing how)
{
	if (how == TT_PACK_NEVER)
		return 0;
	struct tt_pb_packer *k = calloc(1, sizeof(*k));
	if (k)
		k->z = libdeflate_alloc_compressor(how == TT_PACK_ALWAYS ? TT_PB_LEVEL_SMALL :
									   TT_PB_LEVEL_FAST);
	if (!k || !k->z) {
		free(k);
		return tt_error("out of memory");
	}
	k->deciding = how == TT_PACK_LARGE;
	out->pack = tt_pb_pack;
	out->pack_free = tt_pb_packer_free;
	out->pack_ctx = k;
	return 0;
}
