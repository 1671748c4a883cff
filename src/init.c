/* Start-up, configuration, the public control functions, exit and fork. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define TT__DEFAULT_BUFFER_EVENTS (UINT64_C(1) << 20)

struct tt__config tt__config;
int tt__recording;
int tt__forked;

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

/* Held by ticktrace's own threads while they do work that allocates (writing a
 * file, describing a live file), and by fork: a fork never finds one of them inside
 * malloc, which matters where the allocator is not fork-safe (AddressSanitizer's). */
static pthread_mutex_t tt__background = PTHREAD_MUTEX_INITIALIZER;

void tt__background_work(int begin)
{
	if (begin)
		pthread_mutex_lock(&tt__background);
	else
		pthread_mutex_unlock(&tt__background);
}

static void tt__before_fork(void)
{
	pthread_mutex_lock(&tt__background);
}

static void tt__after_fork_in_parent(void)
{
	pthread_mutex_unlock(&tt__background);
}

/* futex word: ticktrace's own threads that began to run */
static uint32_t tt__threads_started;

void tt__thread_running(const char *name)
{
	prctl(PR_SET_NAME, name, 0, 0, 0);
	__atomic_add_fetch(&tt__threads_started, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &tt__threads_started, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

int tt__start_thread(pthread_t *thread, void *(*main)(void *), void *arg, int detached, int wait)
{
	uint32_t before = __atomic_load_n(&tt__threads_started, __ATOMIC_ACQUIRE);
	/* The thread inherits a full signal mask: the program's signals are not for it. */
	sigset_t old;
	tt__block_signals(&old);
	pthread_t id;
	int err = pthread_create(&id, NULL, main, arg);
	tt__restore_signals(&old);
	if (err)
		return -err;
	/* Running before the program goes on, so that no fork finds it starting: a
	 * sanitizer's allocator, held by a thread as it starts, would stay locked in the
	 * child. (Not in a fork's child handler: the sanitizer may hold it until then.) */
	while (wait && __atomic_load_n(&tt__threads_started, __ATOMIC_ACQUIRE) == before)
		syscall(SYS_futex, &tt__threads_started, FUTEX_WAIT_PRIVATE, before, NULL, NULL, 0);
	if (detached)
		pthread_detach(id);
	if (thread)
		*thread = id;
	return 0;
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

static void tt__at_exit(void)
{
	if (tt__config.off)
		return;
	if (tt__config.mode == TT__MODE_STREAM) {
		int err = tt__stream_finish();
		/* Whatever threads still record goes nowhere now. */
		__atomic_store_n(&tt__recording, 0, __ATOMIC_SEQ_CST);
		tt__set_all_limits();
		if (err)
			fprintf(stderr, "ticktrace: could not finish the streamed trace: %s\n", strerror(-err));
		return;
	}
	char path[4096];
	int err = tt__default_path(path, sizeof path);
	if (!err)
		err = tt__write_file(path);
	if (err)
		fprintf(stderr, "ticktrace: could not write the trace at exit: %s\n", strerror(-err));
	else
		tt__live_finish(); /* the trace is all in the file now */
	tt__report_at_exit();
}

static void tt__after_fork_in_child(void)
{
	pthread_mutex_init(&tt__background, NULL);
	if (tt__config.off)
		return;
	/* The child records into its own file: forget the parent's threads and events,
	 * and take a new start anchor for the new process. */
	tt__forked = 1;
	tt__registry_reset_after_fork();
	tt__arena_reset_after_fork();
	tt__anchor_now(&tt__start_anchor);
	tt__stream_after_fork();
	tt__signals_after_fork();
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
	const char *mode = getenv("TICKTRACE_MODE");
	tt__config.mode = mode && *mode ? tt__parse_mode(mode) : TT__MODE_STOP;
	/* Streaming and recycling need a chunk to record into while another is written
	 * or recycled. */
	if (tt__config.mode != TT__MODE_STOP && tt__config.chunk_budget < 2)
		tt__config.chunk_budget = 2;
	if (tt__config.off)
		return;
	if (tt__registry_init() < 0) {
		fprintf(stderr, "ticktrace: no thread key; recording is off\n");
		tt__config.off = 1;
		return;
	}
	/* Modes stop and ring: buffers in a live file, which outlives a SIGKILL. */
	if (tt__config.mode != TT__MODE_STREAM) {
		int err = tt__live_start();
		if (err)
			fprintf(stderr, "ticktrace: no live file (%s): a run killed by SIGKILL will "
				"leave no trace\n", strerror(-err));
	}
	if (tt__arena_init() < 0) {
		fprintf(stderr, "ticktrace: no memory for trace buffers; recording is off\n");
		tt__config.off = 1;
		return;
	}
	int spikes = tt__spikes_start();
	if (spikes)
		fprintf(stderr, "ticktrace: cannot log spikes (TICKTRACE_SPIKES): %s\n", strerror(-spikes));
	if (tt__config.mode == TT__MODE_STREAM) {
		int err = tt__stream_start();
		if (err) {
			fprintf(stderr, "ticktrace: cannot stream the trace (%s); recording is off\n",
				strerror(-err));
			tt__config.off = 1;
			return;
		}
	}
	if (tt__signals_init() < 0)
		fprintf(stderr, "ticktrace: no service thread: no trace on signals or crashes\n");
	pthread_atfork(tt__before_fork, tt__after_fork_in_parent, tt__after_fork_in_child);
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
	if (tt__config.mode == TT__MODE_STREAM)
		return tt__stream_flush(path);
	char default_path[4096];
	if (!path) {
		int err = tt__default_path(default_path, sizeof default_path);
		if (err)
			return err;
		path = default_path;
	}
	return tt__write_file(path);
}
