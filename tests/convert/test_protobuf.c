/* The Perfetto sink's protobuf writer (tools/sinks/protobuf_internal.h): a message
 * written field by field into growable memory, each field making its own room, gives
 * the bytes of the same message encoded the plain way here (each nested message
 * encoded first, then its tag and length put before it), whatever the memory held
 * when it began and however often it moved on the way: nested messages of one and of
 * several length bytes, wide field numbers, large varints, text with invalid UTF-8. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sinks/protobuf_internal.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh_memory),
		cmocka_unit_test(test_reused_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
