/* A scope's description as records (common.h): what TT_DESCRIBE records
 * (lifecycle/control.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

size_t tt_describe_records(struct tt_record *records, uint64_t tsc, const char *fmt, va_list ap)
{
	int saved_errno = errno;
	char text[TT_DESCRIBE_MAX + 2]; /* one byte past the limit, to see where it cuts */
	int n = vsnprintf(text, sizeof text, fmt, ap);
	errno = saved_errno;
	if (n < 0)
		return 0;
	size_t len = tt_utf8_cut(text, TT_DESCRIBE_MAX);
	records[0] = (struct tt_record){tsc, TT_RECORD_WORD(TT_REC_DESCRIBE, len)};
	size_t texts = TT_TEXT_RECORDS(len);
	for (size_t i = 0; i < texts; i++) {
		unsigned char bytes[16] = {0};
		size_t at = i * TT_TEXT_BYTES;
		memcpy(bytes, text + at, len - at < TT_TEXT_BYTES ? len - at : TT_TEXT_BYTES);
		uint64_t payload = 0;
		memcpy(&records[1 + i].tsc, bytes, 8);
		memcpy(&payload, bytes + 8, 7);
		records[1 + i].word = TT_RECORD_WORD(TT_REC_TEXT, payload);
	}
	return 1 + texts;
}

size_t tt_utf8_cut(const char *text, size_t max)
{
	size_t len = strnlen(text, max + 1);
	if (len <= max)
		return len;
	for (len = max; len > 0 && ((unsigned char)text[len] & 0xC0) == 0x80;)
		len--;
	return len;
}
