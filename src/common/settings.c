/* The settings both runtimes (Linux's lifecycle/config.c, Windows' portable/start.c)
 * read alike from the environment (common.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "common.h"

uint64_t tt_buffer_events(const char *text, FILE *err)
{
	if (!text)
		return TT_BUFFER_EVENTS_DEFAULT;
	char *end;
	errno = 0;
	unsigned long long events = strtoull(text, &end, 10);
	/* (strtoull takes "-5" as 2^64 - 5: beyond the range too) */
	if (errno || end == text || *end || events == 0 || events > TT_BUFFER_EVENTS_MAX) {
		fprintf(err, "ticktrace: TICKTRACE_BUFFER=%s is not a number of events from 1 to 2^36; "
			"using %" PRIu64 "\n", text, TT_BUFFER_EVENTS_DEFAULT);
		return TT_BUFFER_EVENTS_DEFAULT;
	}
	return events;
}
