/* Signals: TICKTRACE_DUMP_SIGNAL (a name such as SIGUSR2, or a number) writes the
 * trace while the program runs, and a crash (SIGSEGV, SIGBUS, SIGABRT, SIGFPE,
 * SIGILL) writes it before the program dies. Writing a file is not
 * async-signal-safe, so the handlers only hand the work to the service thread
 * (tt-dump), which never records: a crashing thread waits for it (at most
 * TT__CRASH_WAIT_S seconds, in case the crash left a lock held), then the signal goes
 * on to the handler the program had installed before, or, where that was the
 * default action, the default action is restored and the signal raised again.
 *
 * SIGTERM, SIGINT, SIGHUP and SIGPIPE (a `kill`, systemd's stop, Ctrl-C, a closed
 * terminal, a pipe's reader gone: `prog | head`) do the same where the program left
 * their default action, which ends it: the trace is written, then the default action
 * ends the program as it would have. Where the program ignores one (nohup, a server
 * ignoring SIGPIPE), ticktrace takes none.
 *
 * A handler the program installs after ticktrace started replaces ticktrace's; and the
 * program asking (sigaction, signal) of one of those four sees the action it
 * had, not ticktrace's: one that installs its handler only over the default does.
 * Where the program sets one back to its default (gzip's and many GNU tools' handlers:
 * clean up, SIG_DFL, raise it again), ticktrace's is installed instead, shown as that
 * default, so the raise that follows has the trace written. A handler of the program's
 * with SA_RESETHAND, which the kernel would reset to the default unseen, goes through
 * ticktrace's reset: the program's handler runs over ticktrace's, installed as its
 * default. An ignored one is never taken. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lifecycle/lifecycle.h"

#define TT__CRASH_WAIT_S 10

static const int tt__crash_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
/* The signals that end a program by default, taken only while they do. */
static const int tt__end_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGPIPE};

static struct sigaction tt__program_actions[NSIG]; /* what the program had installed */
static int tt__end_taken; /* (the four are taken back at their default: crashes handled) */
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
	if (err)
		fprintf(tt__err, "ticktrace: could not write the trace on signal %d to %s: %s\n",
			crash ? crash : tt__dump_signal,
			tt__default_path(path, sizeof path) == 0 ? path : TT_ENV_OUT, strerror(-err));
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

static void tt__on_dump_signal(int sig)
{
	(void)sig;
	int saved_errno = errno;
	tt__request_dump();
	errno = saved_errno;
}

/* Async-signal-safe: waits until dump number `mine` is written, or the time is up
 * (at once where no service thread runs: none, or it gave way to the program's). */
static void tt__wait_dump(uint32_t mine)
{
	if (!__atomic_load_n(&tt__service_started, __ATOMIC_ACQUIRE))
		return;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		uint32_t done = __atomic_load_n(&tt__done, __ATOMIC_SEQ_CST);
		if ((int32_t)(done - mine) >= 0)
			return;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= TT__CRASH_WAIT_S)
			return;
		tt_os_wait(&tt__done, done, 100000000);
	}
}

typedef int (*tt__sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*tt__handler_fn)(int);
static tt__sigaction_fn tt__next_sigaction;
static tt__handler_fn (*tt__next_signal)(int, tt__handler_fn);

/* The C library's own (found before any signal handler may call them: dlsym is not
 * async-signal-safe). */
static void tt__find_next_signal_calls(void)
{
	if (!tt__next_sigaction)
		tt__next_sigaction = (tt__sigaction_fn)(uintptr_t)dlsym(RTLD_NEXT, "sigaction");
	if (!tt__next_signal)
		tt__next_signal = (tt__handler_fn(*)(int, tt__handler_fn))(uintptr_t)dlsym(RTLD_NEXT, "signal");
}

/* The signal goes where it would have gone without ticktrace. */
static void tt__chain(int sig, siginfo_t *info, void *context)
{
	struct sigaction program = tt__program_actions[sig];
	/* As the kernel would have done before calling it. */
	if (program.sa_flags & SA_RESETHAND) {
		tt__program_actions[sig].sa_handler = SIG_DFL;
		tt__program_actions[sig].sa_flags = 0;
	}
	if (program.sa_flags & SA_SIGINFO) {
		program.sa_sigaction(sig, info, context);
		return;
	}
	/* Ignored (inherited so across exec): a signal sent is dropped, but a fault the
	 * kernel raised would come back at its instruction forever; the kernel kills a
	 * program that ignores one, and so does this. */
	if (program.sa_handler == SIG_IGN && (!info || info->si_code <= 0))
		return;
	if (program.sa_handler != SIG_DFL && program.sa_handler != SIG_IGN) {
		program.sa_handler(sig);
		return;
	}
	/* Blocked while this handler runs: it comes again, with the default action, as
	 * soon as the handler returns (a fault would anyway, at its instruction). */
	tt__next_signal(sig, SIG_DFL); /* (not signal: that would take it back) */
	raise(sig);
}

static void tt__on_crash(int sig, siginfo_t *info, void *context)
{
	int saved_errno = errno;
	int first = 0;
	/* The first crash writes the trace; a thread that crashes meanwhile waits too. */
	if (__atomic_compare_exchange_n(&tt__crash_signal, &first, sig, 0, __ATOMIC_SEQ_CST,
					__ATOMIC_SEQ_CST) &&
	    (int)tt_os_thread_id() != __atomic_load_n(&tt__service_tid, __ATOMIC_ACQUIRE))
		tt__wait_dump(tt__request_dump());
	else if ((int)tt_os_thread_id() != __atomic_load_n(&tt__service_tid, __ATOMIC_ACQUIRE))
		tt__wait_dump(__atomic_load_n(&tt__requests, __ATOMIC_SEQ_CST));
	tt__chain(sig, info, context);
	errno = saved_errno;
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

/* A signal's number from its name ("SIGUSR2", "USR2") or its number; 0 if neither. */
static int tt__signal_named(const char *text)
{
	static const struct {
		const char *name;
		int number;
	} names[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP}, {"QUIT", SIGQUIT},
		     {"PWR", SIGPWR}, {"WINCH", SIGWINCH}, {"URG", SIGURG}};
	const char *name = strncmp(text, "SIG", 3) == 0 ? text + 3 : text;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(name, names[i].name) == 0)
			return names[i].number;
	char *end;
	long number = strtol(text, &end, 10);
	return *text && !*end && number > 0 && number < NSIG ? (int)number : 0;
}

static int tt__end_signal(int sig)
{
	for (size_t i = 0; i < sizeof tt__end_signals / sizeof tt__end_signals[0]; i++)
		if (sig == tt__end_signals[i])
			return 1;
	return 0;
}

/* Ticktrace's action for a signal that ends the program, installed in its place. */
static int tt__take_end(int sig, struct sigaction *was)
{
	struct sigaction action = {.sa_sigaction = tt__on_crash, .sa_flags = SA_SIGINFO | SA_ONSTACK};
	sigfillset(&action.sa_mask);
	return tt__next_sigaction(sig, &action, was);
}

/* A handler of the program's with SA_RESETHAND, run as the kernel would (reset first),
 * the default it is reset to ticktrace's. */
static void tt__on_reset(int sig, siginfo_t *info, void *context)
{
	int saved_errno = errno;
	tt__take_end(sig, NULL);
	errno = saved_errno;
	tt__chain(sig, info, context);
}

/* Whether `seen` is ticktrace's action for a signal that ends the program, which the
 * program is shown as the action it had (the default, or its own handler under
 * tt__on_reset). (A crash signal's is shown as it is: a handler of the program's that
 * chains to the one it found then has the trace written.) */
static int tt__taken_for_program(int sig, const struct sigaction *seen)
{
	return tt__end_signal(sig) && (seen->sa_flags & SA_SIGINFO) &&
	       (seen->sa_sigaction == tt__on_crash || seen->sa_sigaction == tt__on_reset);
}

/* Whether the program's `action` for `sig` is one ticktrace puts its own under: the
 * default of a signal that ends the program, or a handler the kernel resets to it. */
static int tt__takes(int sig, const struct sigaction *action)
{
	if (!action || !__atomic_load_n(&tt__end_taken, __ATOMIC_ACQUIRE) || !tt__end_signal(sig) ||
	    sig == tt__dump_signal)
		return 0;
	int handler = (action->sa_flags & SA_SIGINFO) ||
		      (action->sa_handler != SIG_DFL && action->sa_handler != SIG_IGN);
	return handler ? (action->sa_flags & SA_RESETHAND) != 0 : action->sa_handler == SIG_DFL;
}

__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction *action,
							 struct sigaction *old)
{
	tt__find_next_signal_calls();
	if (!tt__takes(sig, action)) {
		int rc = tt__next_sigaction(sig, action, old);
		if (rc == 0 && old && tt__taken_for_program(sig, old))
			*old = tt__program_actions[sig];
		return rc;
	}
	/* (what the program asks is written before ticktrace's goes in: its handlers read it) */
	struct sigaction had = tt__program_actions[sig], was;
	tt__program_actions[sig] = *action;
	int rc;
	if (action->sa_flags & SA_RESETHAND) {
		struct sigaction reset = *action;
		reset.sa_flags = (action->sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
		reset.sa_sigaction = tt__on_reset;
		rc = tt__next_sigaction(sig, &reset, &was);
	} else {
		rc = tt__take_end(sig, &was);
	}
	if (rc != 0)
		tt__program_actions[sig] = had;
	else if (old)
		*old = tt__taken_for_program(sig, &was) ? had : was;
	return rc;
}

__attribute__((visibility("default"))) tt__handler_fn signal(int sig, tt__handler_fn handler)
{
	tt__find_next_signal_calls();
	struct sigaction action = {.sa_handler = handler, .sa_flags = SA_RESTART}, was;
	if (tt__takes(sig, &action)) /* (the default: through sigaction, which takes it) */
		return sigaction(sig, &action, &was) == 0 ? was.sa_handler : SIG_ERR;
	tt__handler_fn had = tt__next_signal(sig, handler);
	/* (the C library returns a handler's sa_handler, which shares sa_sigaction's place) */
	struct sigaction seen = {.sa_sigaction = (void (*)(int, siginfo_t *, void *))(uintptr_t)had,
				 .sa_flags = SA_SIGINFO};
	return had != SIG_ERR && tt__taken_for_program(sig, &seen) ? tt__program_actions[sig].sa_handler
								     : had;
}

static int tt__install(int sig, struct sigaction *action)
{
	sigfillset(&action->sa_mask);
	return sigaction(sig, action, &tt__program_actions[sig]);
}

int tt__signals_init(void)
{
	const char *dump = getenv("TICKTRACE_DUMP_SIGNAL");
	if (dump && *dump) {
		tt__dump_signal = tt__signal_named(dump);
		/* A crash signal would then loop at its fault; SIGKILL and SIGSTOP take no
		 * handler. */
		for (size_t i = 0; i < sizeof tt__crash_signals / sizeof tt__crash_signals[0]; i++)
			if (tt__dump_signal == tt__crash_signals[i])
				tt__dump_signal = 0;
		if (tt__dump_signal == SIGKILL || tt__dump_signal == SIGSTOP)
			tt__dump_signal = 0;
		if (!tt__dump_signal)
			fprintf(tt__err, "ticktrace: TICKTRACE_DUMP_SIGNAL=%s is not a signal ticktrace "
				"can take (USR1, USR2, HUP, QUIT, PWR, WINCH, URG, or the number of a "
				"signal that is neither a crash's nor KILL or STOP)\n", dump);
	}
	int err = tt__start_thread(NULL, tt__service_main, NULL, 1);
	if (err)
		return err;
	__atomic_store_n(&tt__service_started, 1, __ATOMIC_RELEASE);
	tt__find_next_signal_calls();
	if (tt__dump_signal) {
		struct sigaction action = {.sa_handler = tt__on_dump_signal, .sa_flags = SA_RESTART};
		tt__install(tt__dump_signal, &action);
	}
	const char *crash = getenv("TICKTRACE_CRASH");
	if (crash && strcmp(crash, "0") == 0)
		return 0;
	struct sigaction action = {.sa_sigaction = tt__on_crash, .sa_flags = SA_SIGINFO | SA_ONSTACK};
	for (size_t i = 0; i < sizeof tt__crash_signals / sizeof tt__crash_signals[0]; i++)
		tt__install(tt__crash_signals[i], &action);
	__atomic_store_n(&tt__end_taken, 1, __ATOMIC_RELEASE);
	for (size_t i = 0; i < sizeof tt__end_signals / sizeof tt__end_signals[0]; i++) {
		struct sigaction now;
		int sig = tt__end_signals[i];
		if (sig != tt__dump_signal && sigaction(sig, NULL, &now) == 0 &&
		    !(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_DFL)
			tt__install(sig, &action);
	}
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
		fprintf(tt__err, "ticktrace: the child process %d has no service thread\n", (int)getpid());
}
