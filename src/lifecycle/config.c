/* Configuration: the environment read once, at start-up, into tt__config (core.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lifecycle/lifecycle.h"

#define TT__DEFAULT_BUFFER_EVENTS (UINT64_C(1) << 20)

static uint64_t tt__parse_buffer(const char *text)
{
	char *end;
	errno = 0;
	unsigned long long events = strtoull(text, &end, 10);
	if (errno || end == text || *end || events == 0 || events > (UINT64_C(1) << 36)) {
		fprintf(stderr,
			"ticktrace: TICKTRACE_BUFFER=%s is not a number of events from 1 to 2^36; "
			"using %" PRIu64 "\n",
			text, TT__DEFAULT_BUFFER_EVENTS);
		return TT__DEFAULT_BUFFER_EVENTS;
	}
	return events;
}

static enum tt__mode tt__parse_mode(const char *text)
{
	static const char *const names[] = {[TT__MODE_STOP] = "stop", [TT__MODE_STREAM] = "stream",
					    [TT__MODE_RING] = "ring"};
	for (int mode = 0; mode < (int)(sizeof names / sizeof names[0]); mode++)
		if (strcmp(text, names[mode]) == 0)
			return (enum tt__mode)mode;
	fprintf(stderr, "ticktrace: TICKTRACE_MODE=%s is not stop, stream or ring; using stop\n", text);
	return TT__MODE_STOP;
}

void tt__config_read(void)
{
	const char *on = getenv("TICKTRACE");
	tt__config.off = on && strcmp(on, "0") == 0;
	const char *buffer = getenv("TICKTRACE_BUFFER");
	tt__config.buffer_events = buffer ? tt__parse_buffer(buffer) : TT__DEFAULT_BUFFER_EVENTS;
	tt__config.chunk_budget =
		(tt__config.buffer_events + TT__CHUNK_RECORDS - 1) / TT__CHUNK_RECORDS;
	/* Set by the image this process exec'd from (exec.c): "PID:N"; a child that
	 * inherited it is another process, its first image. */
	const char *image = getenv("TICKTRACE_EXEC_IMAGE");
	long pid;
	unsigned n;
	if (image && sscanf(image, "%ld:%u", &pid, &n) == 2 && pid == (long)getpid())
		tt__exec_image = n;
	const char *mode = getenv("TICKTRACE_MODE");
	tt__config.mode = mode && *mode ? tt__parse_mode(mode) : TT__MODE_STOP;
	/* Streaming and recycling need a chunk to record into while another is written
	 * or recycled. */
	if (tt__config.mode != TT__MODE_STOP && tt__config.chunk_budget < 2)
		tt__config.chunk_budget = 2;
}
