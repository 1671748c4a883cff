/* Start-up, exit and fork, and the public controls that concern the whole run
 * (tt_enable, tt_disable, tt_dump). How the system starts and ends a run is the
 * platform's: a constructor (a DLL's attach), the exit (tt_os_at_exit: atexit;
 * Windows' C runtime's table, a DLL's detach, the last thread's end), fork
 * (tt_os_at_fork: Windows has none). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle/lifecycle.h"

static struct tt_os_once tt__once;

/* The process that started the runtime (or the child a fork made), as opposed to
 * a vfork child, which shares its memory: that one must not end its run. */
static uint32_t tt__owner_pid;

int tt__in_vfork_child(void)
{
	return tt__owner_pid && tt_os_process_id() != tt__owner_pid;
}

/* The run's end begun (tt__finish), and whether it recorded then: a child that
 * another thread forks meanwhile (the program leaving by exit or _exit) has a run of
 * its own to end, recording as its parent was. */
static int tt__finished, tt__recording_at_finish;

/* The threads of ticktrace's that ended so that the program's could start (base.h),
 * and what that cost the trace: once, at the end (and in the file's header). */
static void tt__say_given_back(void)
{
	char text[TT_GAVE_BACK_TEXT];
	if (!tt_gave_back_text(tt__threads_given_back(), text, sizeof text))
		return;
	uint64_t nproc = tt_os_processes_limit();
	char limit[64] = "";
	if (nproc)
		snprintf(limit, sizeof limit, " (ulimit -u %" PRIu64 ")", nproc);
	fprintf(tt__err, "ticktrace: the program's pthread_create met the limit on the user's "
		"processes (EAGAIN: RLIMIT_NPROC%s, or a cgroup's pids.max): ticktrace ended threads "
		"of its own so that the program's could start: %s\n", limit, text);
}

void tt__finish(void)
{
	if (tt__config.off || tt_os_process_id() != tt__owner_pid ||
	    __atomic_exchange_n(&tt__finished, 1, __ATOMIC_SEQ_CST))
		return;
	tt__recording_at_finish = __atomic_load_n(&tt__recording, __ATOMIC_SEQ_CST);
	/* The lines said at the end go to a stderr whose reader may have left (`prog 2>&1
	 * | head`): their SIGPIPE is ticktrace's, never the program's death. */
	struct tt_os_writing writing;
	tt_os_writing_begin(&writing);
	/* (the exiting thread's own switches told whole, before they are written) */
	tt__sched_settle_self();
	int err = tt__mode->finish();
	/* As ticktrace's threads' work (the service thread's, after _exit, is): a fork
	 * never finds it inside malloc. (Not around the mode's finish, which waits for the
	 * threads that take this themselves.) */
	tt__background_work(1);
	char path[4096];
	/* (its events are all in the live file, kept and marked as a run that exited) */
	const char *live = err ? tt__live_exited() : NULL;
	if (err) {
		char why[256] = "";
		tt__out_lost_why(err, why, sizeof why);
		int named = tt__default_path(path, sizeof path) == 0;
		fprintf(tt__err, "ticktrace: could not write the trace at exit to %s: %s%s%s%s%s\n",
			named ? path : TT_ENV_OUT, strerror(-err), why,
			live ? "; its events are in the live file " : "", live ? live : "",
			live ? ", which ticktrace reads (thread states, in memory only, lost)" : "");
		char lost[32];
		snprintf(lost, sizeof lost, TT_LIST_LOST "%d ", -err);
		tt__list_tagged(lost, named ? path : TT_ENV_OUT);
	}
	/* Whatever threads still record goes nowhere now. (An exec that fails goes on
	 * without recording: its events would go nowhere.) */
	__atomic_store_n(&tt__recording, 0, __ATOMIC_SEQ_CST);
	tt__set_all_limits();
	tt__report_at_exit();
	tt__say_drops();
	tt__sched_say_refused();
	tt__say_given_back();
	tt__err_flush();
	tt__background_work(0);
	tt_os_writing_end(&writing);
}

static void tt__at_exit(void)
{
	tt__finish();
	if (TT_OS_END_JOINS && !tt__config.off)
		tt__threads_end();
}

static void tt__before_fork(void)
{
	tt__background_fork(1);
}

int tt__in_daemon;

static void tt__after_fork_in_parent(void)
{
	tt__background_fork(0);
	/* Its run ends here, as at exit, or what it recorded goes with it; the child
	 * (the daemon) records into its own file. */
	if (tt__in_daemon)
		tt__finish();
}

static void tt__after_fork_in_child(void)
{
	tt__background_reset_after_fork();
	if (tt__config.off)
		return;
	/* The child records into its own file: forget the parent's threads and events,
	 * and take a new start anchor for the new process. */
	tt__forked = 1;
	tt__exec_image = 0;
	tt__owner_pid = tt_os_process_id();
	if (tt__finished) {
		tt__finished = 0;
		__atomic_store_n(&tt__recording, tt__recording_at_finish, __ATOMIC_SEQ_CST);
	}
	tt__err_after_fork_in_child();
	/* What the reset calls may reach the program's own instrumented or patched code
	 * (bash's getenv, for the live file's name): an event from there would register
	 * this thread halfway, with a chunk of the parent's mapping that the arena's
	 * reset then replaces. It is dropped and counted, as during start-up. */
	tt__in_slow_path = 1;
	tt__sched_after_fork();
	tt__registry_reset_after_fork();
	tt__drops_forget_parents();
	tt__names_after_fork();
	tt__arena_reset_after_fork();
	tt__clock_start();
	if (tt__mode->after_fork)
		tt__mode->after_fork();
	tt__signals_after_fork();
	/* (its switches from the child's start, before its next event) */
	tt__sched_thread_starts(1, 0);
	tt__in_slow_path = 0;
}

static void tt__init_once_guarded(void)
{
	tt__err_start(); /* (first: what start-up says goes there) */
	tt__clock_start();
	tt__config_read();
	__atomic_store_n(&tt__mode, tt__config.mode, __ATOMIC_RELEASE);
	if (tt__config.off)
		return;
	tt__err_keep();
	tt__resolve_out();
	if (tt__registry_init() < 0) {
		fprintf(tt__err, "ticktrace: no thread key; recording is off\n");
		tt__config.off = 1;
		return;
	}
	if (tt__mode->prepare)
		tt__mode->prepare();
	tt__config.memory_aside_part = tt__snapshots_memory_part();
	int arena = tt__arena_init();
	if (arena < 0) {
		if (arena == -EAGAIN) /* (its threads: a thread the kernel would not start) */
			fprintf(tt__err, "ticktrace: no thread for the trace buffers (%s: the limit of "
				"processes or threads, RLIMIT_NPROC or a pids cgroup, reached); recording "
				"is off\n", strerror(EAGAIN));
		else if (arena != -E2BIG) /* (else the address-space limit was named) */
			fprintf(tt__err, "ticktrace: no memory for trace buffers; recording is off\n");
		tt__live_finish(); /* (never to hold a buffer: not left for a killed run's) */
		tt__config.off = 1;
		return;
	}
	const char *report = getenv("TICKTRACE_REPORT");
	if (report && *report && tt__mode->drains)
		fprintf(tt__err, "ticktrace: TICKTRACE_REPORT needs TICKTRACE_MODE stop or ring (a "
			"stream's events leave memory as they are written); `ticktrace report` "
			"reads the streamed file\n");
	tt__spikes_start();
	if (tt__mode->begin && tt__mode->begin() < 0) {
		tt__config.off = 1;
		return;
	}
	if (tt__sched_start(tt__config.sched_off, tt__config.sched_only) < 0)
		fprintf(tt__err, "ticktrace: no thread for thread states: the trace has none\n");
	/* (Linux: -ENOTSUP, dlclose is interposed: unload.c; where the system cannot tell,
	 * an unloaded module's functions stay unnamed) */
	tt_os_on_unload(tt__module_unloaded);
	if (tt__signals_init() < 0)
		fprintf(tt__err, "ticktrace: no service thread: no trace on signals or crashes\n");
	tt_os_at_fork(tt__before_fork, tt__after_fork_in_parent, tt__after_fork_in_child);
	tt__owner_pid = tt_os_process_id();
	tt_os_at_exit(tt__at_exit);
	__atomic_store_n(&tt__recording, 1, __ATOMIC_SEQ_CST);
}

/* What start-up calls may reach an interposed, instrumented malloc, whose event must
 * not wait for this start-up to end (core.h: tt__in_slow_path). */
static void tt__init_once(void)
{
	/* (what start-up says, as what the end says: tt__finish) */
	struct tt_os_writing writing;
	tt_os_writing_begin(&writing);
	tt__in_slow_path = 1;
	tt__init_once_guarded();
	tt__in_slow_path = 0;
	tt_os_writing_end(&writing);
	if (tt__config.off)
		__atomic_or_fetch(&tt__hot_global.unusual, TT__HOT_OFF, __ATOMIC_SEQ_CST);
}

void tt__init(void)
{
	tt_os_once(&tt__once, tt__init_once);
}

/* The modes' interface before start-up: a thread's first event starts ticktrace,
 * which puts the mode in use in its place. */
static const struct tt__mode_ops tt__starting = {.start = tt__init};
const struct tt__mode_ops *tt__mode = &tt__starting;

/* Linked in, ticktrace records with no set-up call. The first thread asks for its
 * switches here, as the others do as they start (pthread.c). */
__attribute__((constructor)) static void tt__constructor(void)
{
	tt__init();
	tt__sched_thread_starts(1, 0);
}

static void tt__set_recording(int on)
{
	tt__init();
	if (tt__config.off)
		return;
	__atomic_store_n(&tt__recording, on, __ATOMIC_SEQ_CST);
	/* (for threads yet to register) */
	if (on)
		__atomic_and_fetch(&tt__hot_global.unusual, ~TT__HOT_OFF, __ATOMIC_SEQ_CST);
	else
		__atomic_or_fetch(&tt__hot_global.unusual, TT__HOT_OFF, __ATOMIC_SEQ_CST);
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
	return tt__mode->dump(path);
}
