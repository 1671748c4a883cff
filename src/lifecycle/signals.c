/* Signals and crashes: TICKTRACE_DUMP_SIGNAL (a name such as SIGUSR2, or a number)
 * writes the trace while the program runs, and a crash (Linux: SIGSEGV, SIGBUS,
 * SIGABRT, SIGFPE, SIGILL; Windows: an unhandled exception, abort()) writes it before
 * the program dies, and so do the signals that end a program left at their default
 * (Linux: SIGTERM, SIGINT, SIGHUP, SIGPIPE). Which signals, and the program's own
 * actions kept, chained to and shown it, are the platform's (tt_os_on_crash,
 * tt_os_on_signal: Linux's sigaction and signal interposed there). Writing a file is
 * not async-signal-safe, so the handlers only hand the work to the service thread
 * (tt-dump), which never records: a crashing thread waits for it (at most
 * TT__CRASH_WAIT_S seconds, in case the crash left a lock held), then the platform
 * lets the signal or exception go on as it would have gone. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle/lifecycle.h"

#define TT__CRASH_WAIT_S 10

static int tt__dump_signal;
static uint32_t tt__requests;  /* (tt_os_wait's word) dumps asked for */
static uint32_t tt__done;      /* (tt_os_wait's word) dumps finished */
static int tt__service_tid;
static int tt__service_started; /* (its tid is known once it runs) */
/* the program leaves by _exit: its run ends as at exit, by this (start.c's) */
static void (*tt__exit_asked)(void);

/* Async-signal-safe: asks the service thread for a dump; returns its number. */
static uint32_t tt__request_dump(void)
{
	uint32_t mine = __atomic_add_fetch(&tt__requests, 1, __ATOMIC_SEQ_CST);
	tt_os_wake(&tt__requests);
	return mine;
}

static void tt__service_dump(void)
{
	void (*finish)(void) = __atomic_load_n(&tt__exit_asked, __ATOMIC_ACQUIRE);
	if (finish) {
		finish(); /* (all of it, its lines at exit too: this thread may print) */
		return;
	}
	int crash = __atomic_load_n(&tt__crash_signal, __ATOMIC_ACQUIRE);
	/* (the mode keeps fork out of its writing: modes.c, or its drain thread) */
	int err = crash ? tt__mode->finish() : tt__mode->dump(NULL);
	char path[4096];
	uint32_t cause = (uint32_t)(crash ? crash : tt__dump_signal);
	if (err) /* (Windows' exception: its code, as the file's crash_signal) */
		fprintf(tt__err, TT_CRASH_EXCEPTION(cause) ? "ticktrace: could not write the trace on exception 0x%08" PRIX32 " to %s: %s\n"
							   : "ticktrace: could not write the trace on signal %" PRIu32 " to %s: %s\n",
			cause, tt__default_path(path, sizeof path) == 0 ? path : TT_ENV_OUT, strerror(-err));
}

/* tt-dump asked to end (base.h): a request of none, which wakes it. */
static void tt__service_end(void)
{
	tt__request_dump();
}

static void *tt__service_main(void *unused)
{
	(void)unused;
	tt__thread_running("tt-dump");
	__atomic_store_n(&tt__service_tid, (int)tt_os_thread_id(), __ATOMIC_RELEASE);
	tt__thread_optional(TT__OPTIONAL_DUMP, tt__service_end);
	uint32_t handled = 0;
	for (;;) {
		uint32_t asked = __atomic_load_n(&tt__requests, __ATOMIC_SEQ_CST);
		if (tt__thread_end_asked()) {
			__atomic_store_n(&tt__service_started, 0, __ATOMIC_RELEASE);
			return NULL;
		}
		if (asked == handled) {
			tt_os_wait(&tt__requests, asked, TT_OS_FOREVER);
			continue;
		}
		tt__service_dump();
		handled = asked;
		__atomic_store_n(&tt__done, handled, __ATOMIC_SEQ_CST);
		tt_os_wake_all(&tt__done);
	}
	return NULL;
}

static void tt__on_dump_signal(void)
{
	tt__request_dump();
}

/* Async-signal-safe: waits until dump number `mine` is written, or the time is up
 * (at once where no service thread runs: none, or it gave way to the program's). */
static void tt__wait_dump(uint32_t mine)
{
	if (!__atomic_load_n(&tt__service_started, __ATOMIC_ACQUIRE))
		return;
	int64_t until = tt_os_monotonic_ns() + TT__CRASH_WAIT_S * INT64_C(1000000000);
	for (;;) {
		uint32_t done = __atomic_load_n(&tt__done, __ATOMIC_SEQ_CST);
		if ((int32_t)(done - mine) >= 0 || tt_os_monotonic_ns() >= until)
			return;
		tt_os_wait(&tt__done, done, 100000000);
	}
}

/* (tt_os_on_crash's: the platform goes on to the action before as this returns) */
static void tt__on_crash(uint32_t cause)
{
	int first = 0;
	/* The first crash writes the trace; a thread that crashes meanwhile waits too. */
	if (__atomic_compare_exchange_n(&tt__crash_signal, &first, (int)cause, 0, __ATOMIC_SEQ_CST,
					__ATOMIC_SEQ_CST) &&
	    (int)tt_os_thread_id() != __atomic_load_n(&tt__service_tid, __ATOMIC_ACQUIRE))
		tt__wait_dump(tt__request_dump());
	else if ((int)tt_os_thread_id() != __atomic_load_n(&tt__service_tid, __ATOMIC_ACQUIRE))
		tt__wait_dump(__atomic_load_n(&tt__requests, __ATOMIC_SEQ_CST));
}

int tt__finish_from_anywhere(void (*finish)(void))
{
	if (!__atomic_load_n(&tt__service_started, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&tt__service_tid, __ATOMIC_ACQUIRE) == (int)tt_os_thread_id())
		return 0;
	__atomic_store_n(&tt__exit_asked, finish, __ATOMIC_RELEASE);
	tt__wait_dump(tt__request_dump());
	return 1;
}

int tt__signals_init(void)
{
	const char *dump = getenv("TICKTRACE_DUMP_SIGNAL");
	if (dump && *dump) {
		tt__dump_signal = tt_os_dump_signal(dump);
		if (tt__dump_signal == -ENOSYS)
			fprintf(tt__err, "ticktrace: TICKTRACE_DUMP_SIGNAL=%s: this system sends no "
				"signals (tt_dump writes the trace while the program runs); ignored\n", dump);
		else if (!tt__dump_signal)
			fprintf(tt__err, "ticktrace: TICKTRACE_DUMP_SIGNAL=%s is not a signal ticktrace "
				"can take (USR1, USR2, HUP, QUIT, PWR, WINCH, URG, or the number of a "
				"signal that is neither a crash's nor KILL or STOP)\n", dump);
		if (tt__dump_signal < 0)
			tt__dump_signal = 0;
	}
	int err = tt__start_thread(NULL, tt__service_main, NULL, 1);
	if (err)
		return err;
	__atomic_store_n(&tt__service_started, 1, __ATOMIC_RELEASE);
	if (tt__dump_signal)
		tt_os_on_signal(tt__dump_signal, tt__on_dump_signal);
	const char *crash = getenv("TICKTRACE_CRASH");
	if (crash && strcmp(crash, "0") == 0)
		return 0;
	if (tt_os_on_crash(tt__on_crash, 1) < 0)
		fprintf(tt__err, "ticktrace: no crash handler: a crash leaves no trace\n");
	return 0;
}

/* In the child after fork: its own service thread; the handlers stay. */
void tt__signals_after_fork(void)
{
	__atomic_store_n(&tt__requests, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&tt__done, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&tt__crash_signal, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&tt__exit_asked, NULL, __ATOMIC_SEQ_CST);
	__atomic_store_n(&tt__service_tid, 0, __ATOMIC_SEQ_CST); /* (the parent's) */
	int started = tt__start_thread(NULL, tt__service_main, NULL, 0) >= 0;
	__atomic_store_n(&tt__service_started, started, __ATOMIC_RELEASE);
	if (!started)
		fprintf(tt__err, "ticktrace: the child process %u has no service thread\n",
			(unsigned)tt_os_process_id());
}
