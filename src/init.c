/* Start-up, configuration, the public control functions, exit and fork. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define TT__DEFAULT_BUFFER_EVENTS (UINT64_C(1) << 20)

struct tt__config tt__config;
int tt__recording;

static pthread_once_t tt__once = PTHREAD_ONCE_INIT;

void tt__block_signals(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

void tt__restore_signals(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

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

static void tt__at_exit(void)
{
	if (tt__config.off)
		return;
	char path[4096];
	int err = tt__default_path(path, sizeof path);
	if (!err)
		err = tt__write_file(path);
	if (err)
		fprintf(stderr, "ticktrace: could not write the trace at exit: %s\n", strerror(-err));
	tt__report_at_exit();
}

static void tt__after_fork_in_child(void)
{
	if (tt__config.off)
		return;
	/* The child records into its own file: forget the parent's threads and events,
	 * and take a new start anchor for the new process. */
	tt__registry_reset_after_fork();
	tt__arena_reset_after_fork();
	tt__anchor_now(&tt__start_anchor);
}

static void tt__init_once_guarded(void)
{
	tt__anchor_now(&tt__start_anchor);
	const char *on = getenv("TICKTRACE");
	tt__config.off = on && strcmp(on, "0") == 0;
	const char *buffer = getenv("TICKTRACE_BUFFER");
	tt__config.buffer_events = buffer ? tt__parse_buffer(buffer) : TT__DEFAULT_BUFFER_EVENTS;
	tt__config.chunk_budget =
		(tt__config.buffer_events + TT__CHUNK_RECORDS - 1) / TT__CHUNK_RECORDS;
	if (tt__config.off)
		return;
	if (tt__registry_init() < 0) {
		fprintf(stderr, "ticktrace: no thread key; recording is off\n");
		tt__config.off = 1;
		return;
	}
	if (tt__arena_init() < 0) {
		fprintf(stderr, "ticktrace: no memory for trace buffers; recording is off\n");
		tt__config.off = 1;
		return;
	}
	pthread_atfork(NULL, NULL, tt__after_fork_in_child);
	atexit(tt__at_exit);
	__atomic_store_n(&tt__recording, 1, __ATOMIC_SEQ_CST);
}

/* What start-up calls may reach an interposed, instrumented malloc, whose event must
 * not wait for this start-up to end (internal.h: tt__in_slow_path). */
static void tt__init_once(void)
{
	tt__in_slow_path = 1;
	tt__init_once_guarded();
	tt__in_slow_path = 0;
}

void tt__init(void)
{
	pthread_once(&tt__once, tt__init_once);
}

/* Linked in, ticktrace records with no set-up call. */
__attribute__((constructor)) static void tt__constructor(void)
{
	tt__init();
}

static void tt__set_recording(int on)
{
	tt__init();
	if (tt__config.off)
		return;
	__atomic_store_n(&tt__recording, on, __ATOMIC_SEQ_CST);
	tt__set_all_limits();
}

void tt_enable(void)
{
	tt__set_recording(1);
}

void tt_disable(void)
{
	tt__set_recording(0);
}

int tt_dump(const char *path)
{
	tt__init();
	if (tt__config.off)
		return -ECANCELED;
	char default_path[4096];
	if (!path) {
		int err = tt__default_path(default_path, sizeof default_path);
		if (err)
			return err;
		path = default_path;
	}
	return tt__write_file(path);
}
