/* A crash's cause in words (common.h), as the tools say it: a signal by its name, a
 * Windows exception (format.h: TT_CRASH_EXCEPTION) by its code and what it means. */
#include <inttypes.h>
#include <string.h>

#include "common.h"

static const struct {
	uint32_t code;
	const char *text;
} tt_exceptions[] = {
	{0xC0000005, "access violation"},
	{0xC0000006, "in-page error"},
	{0xC000001D, "illegal instruction"},
	{0xC0000025, "noncontinuable exception"},
	{0xC000008C, "array bounds exceeded"},
	{0xC000008E, "float divide by zero"},
	{0xC0000094, "integer divide by zero"},
	{0xC0000095, "integer overflow"},
	{0xC0000096, "privileged instruction"},
	{0xC00000FD, "stack overflow"},
	{0xC0000409, "stack buffer overrun (fail fast)"},
	{0x80000003, "breakpoint"},
};

const char *tt_crash_text(uint32_t crash, char *buf, size_t cap)
{
	if (!TT_CRASH_EXCEPTION(crash)) {
		snprintf(buf, cap, "signal %" PRIu32 " (%s)", crash, strsignal((int)crash));
		return buf;
	}
	const char *text = "an exception";
	for (size_t i = 0; i < sizeof tt_exceptions / sizeof *tt_exceptions; i++)
		if (tt_exceptions[i].code == crash)
			text = tt_exceptions[i].text;
	snprintf(buf, cap, "exception 0x%08" PRIX32 " (%s)", crash, text);
	return buf;
}
