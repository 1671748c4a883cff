/* The Perfetto sink's protobuf writer (tools/sinks/protobuf_internal.h): a message
 * written field by field into growable memory, each field making its own room, gives
 * the bytes of the same message encoded the plain way here (each nested message
 * encoded first, then its tag and length put before it), whatever the memory held
 * when it began and however often it moved on the way: nested messages of one and of
 * several length bytes, wide field numbers, large varints, text with invalid UTF-8.
 * And packets written to a deflating output (tt_perfetto_compress) come out in the
 * bundles a walk over them would cut: each buffer's packets as many a bundle as fit
 * in TT_OUT_PIECE bytes, a longer packet alone, a packet past half a buffer alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libdeflate.h>
#include <stdio.h>

#include "sinks/protobuf_internal.h"
#include "tt_check.h"

/* The plain encoding: a byte string grown by hand. */
struct ref {
	uint8_t b[4096];
	size_t n;
};

static void ref_varint(struct ref *r, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;
		v >>= 7;
		r->b[r->n++] = byte | (v ? 0x80 : 0);
	} while (v);
}

static void ref_uint(struct ref *r, unsigned field, uint64_t v)
{
	ref_varint(r, (uint64_t)field << 3 | WT_VARINT);
	ref_varint(r, v);
}

static void ref_len(struct ref *r, unsigned field, const void *data, size_t n)
{
	ref_varint(r, (uint64_t)field << 3 | WT_LEN);
	ref_varint(r, n);
	memcpy(r->b + r->n, data, n);
	r->n += n;
}

/* One message, both ways: an outer message (field 3) holding a number, a text of
 * `len` bytes (an invalid byte at its middle), an inner message (field 200) with a
 * large varint and a fixed64, and a flag after it. */
static void check_message(size_t len, struct tt_buf *w)
{
	char *text = malloc(len);
	assert_non_null(text);
	memset(text, 'x', len);
	if (len)
		text[len / 2] = (char)0xff; /* not UTF-8: U+FFFD */

	struct ref inner = {0}, outer = {0}, want = {0};
	ref_varint(&inner, 300u << 3 | WT_VARINT);
	ref_varint(&inner, UINT64_MAX);
	ref_varint(&inner, 7u << 3 | WT_FIXED64);
	uint64_t fixed = UINT64_C(0x0123456789abcdef);
	memcpy(inner.b + inner.n, &fixed, 8);
	inner.n += 8;
	ref_uint(&outer, 1, 150);
	size_t clean_len = len ? len - 1 + 3 : 0;
	uint8_t *clean = malloc(clean_len + 1);
	assert_non_null(clean);
	memset(clean, 'x', clean_len);
	if (len)
		memcpy(clean + len / 2, "\xef\xbf\xbd", 3);
	ref_len(&outer, 2, clean, clean_len);
	ref_len(&outer, 200, inner.b, inner.n);
	ref_uint(&outer, 4, 1);
	ref_len(&want, 3, outer.b, outer.n);

	tt_pb_reset(w);
	size_t o = tt_pb_open(w);
	tt_pb_uint(w, 1, 150);
	tt_pb_text(w, 2, (struct tt_str){text, (uint32_t)len});
	size_t i = tt_pb_open(w);
	tt_pb_uint(w, 300, UINT64_MAX);
	tt_pb_fixed64(w, 7, fixed);
	tt_pb_close(w, i, 200);
	tt_pb_uint(w, 4, 1);
	tt_pb_close(w, o, 3);

	assert_false(w->oom);
	assert_int_equal(w->len, want.n);
	assert_memory_equal(w->p, want.b, want.n);
	free(text);
	free(clean);
}

static void test_fresh_memory(void **state)
{
	(void)state;
	/* each from empty memory: the first fields grow it, and so do the long texts */
	static const size_t lens[] = {0, 1, 40, 100, 126, 127, 128, 300, 1000};
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		struct tt_buf w = {0};
		check_message(lens[k], &w);
		tt_buf_free(&w);
	}
}

static void test_reused_memory(void **state)
{
	(void)state;
	/* one buffer for all, as the sink keeps its scratch: longer, then shorter */
	struct tt_buf w = {0};
	for (size_t len = 0; len < 1200; len += 37)
		check_message(len, &w);
	for (size_t len = 1200; len > 0; len -= 100)
		check_message(len, &w);
	tt_buf_free(&w);
}

/* A packet's content: n bytes of its number, so that any packet moved or cut shows */
static void fill(struct tt_buf *w, size_t n, uint32_t number)
{
	tt_pb_reset(w);
	char *p = tt_buf_room(w, n);
	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = (char)(number * 7 + i / 251);
	w->len = n;
}

/* The bundles a walk over the packets cuts: the output's buffers as they fill (a
 * packet that does not fit ends the buffer; one past half a buffer goes alone), each
 * buffer's packets greedily into bundles of TT_OUT_PIECE bytes, a longer one alone. */
static size_t model_bundles(const size_t *sizes, size_t n, size_t *bundles)
{
	size_t nb = 0, buffer = 0, bundle = 0;
	for (size_t i = 0; i < n; i++) {
		size_t whole = sizes[i] + 2; /* the tag, the length's varint */
		for (size_t v = sizes[i]; v >= 128; v >>= 7)
			whole++;
		bool alone = sizes[i] > TT_OUT_BUFFER / 2;
		if (alone || TT_OUT_BUFFER - buffer < whole) { /* the buffer handed on */
			if (bundle)
				bundles[nb++] = bundle;
			buffer = bundle = 0;
		}
		if (alone) {
			bundles[nb++] = whole;
			continue;
		}
		if (bundle && bundle + whole > TT_OUT_PIECE) {
			bundles[nb++] = bundle;
			bundle = 0;
		}
		bundle += whole;
		buffer += whole;
	}
	if (bundle)
		bundles[nb++] = bundle;
	return nb;
}

static size_t varint_at(const uint8_t *p, size_t *at)
{
	size_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		uint8_t b = p[(*at)++];
		v |= (size_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

static void test_bundles(void **state)
{
	(void)state;
	enum { PACKETS = 200000 };
	size_t *sizes = malloc(PACKETS * sizeof(*sizes)), *want = malloc(PACKETS * sizeof(*want));
	assert_true(sizes && want);
	/* mostly events' sizes, some a piece's size or longer, one past half a buffer, and
	 * a run of packets that fill a piece two at a time (so that a buffer's last often
	 * ends past its piece's limit) */
	uint64_t x = 88172645463325252u;
	for (size_t i = 0; i < PACKETS; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		sizes[i] = i == PACKETS / 3 ? 3u << 20 : x % 500 == 0 ? 200000 + x % 100000 :
			   i >= PACKETS / 2 && i < PACKETS / 2 + 400 ? 100000 + x % 1000 : 1 + x % 150;
	}
	char dir[256], path[512];
	tt_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/out.pftrace", dir);
	struct tt_out out;
	assert_int_equal(tt_out_open(&out, path, false), 0);
	assert_int_equal(tt_perfetto_compress(&out, TT_PACK_ALWAYS), 0);
	struct tt_buf w = {0};
	for (size_t i = 0; i < PACKETS; i++) {
		fill(&w, sizes[i], (uint32_t)i);
		assert_int_equal(tt_pb_write_packet(&out, &w), 0);
	}
	assert_int_equal(tt_out_finish(&out, 0), 0);

	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	size_t n = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *data = malloc(n), *plain = malloc(TT_OUT_BUFFER);
	assert_true(data && plain && fread(data, 1, n, f) == n);
	fclose(f);
	tt_rmdir(dir);
	size_t nwant = model_bundles(sizes, PACKETS, want), nb = 0, packet = 0;
	struct libdeflate_decompressor *z = libdeflate_alloc_decompressor();
	assert_non_null(z);
	for (size_t at = 0; at < n; nb++) {
		assert_int_equal(data[at++], 0x0a); /* Trace.packet: one compressed_packets */
		size_t len = varint_at(data, &at), end = at + len, plain_n;
		assert_int_equal(varint_at(data, &at), 50 << 3 | 2);
		size_t zn = varint_at(data, &at);
		assert_int_equal(at + zn, end);
		assert_int_equal(libdeflate_zlib_decompress(z, data + at, zn, plain, TT_OUT_BUFFER, &plain_n),
				 LIBDEFLATE_SUCCESS);
		assert_true(nb < nwant);
		assert_int_equal(plain_n, want[nb]);
		for (size_t k = 0; k < plain_n; packet++) { /* whole packets, in order, as written */
			assert_int_equal(plain[k++], 0x0a);
			size_t m = varint_at(plain, &k);
			assert_int_equal(m, sizes[packet]);
			assert_int_equal((uint8_t)plain[k + m - 1], (uint8_t)(packet * 7 + (m - 1) / 251));
			k += m;
		}
		at = end;
	}
	assert_int_equal(nb, nwant);
	assert_int_equal(packet, PACKETS);
	libdeflate_free_decompressor(z);
	tt_buf_free(&w);
	free(data);
	free(plain);
	free(sizes);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh_memory),
		cmocka_unit_test(test_reused_memory),
		cmocka_unit_test(test_bundles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
