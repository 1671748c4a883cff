/* Thread states (TICKTRACE_SCHED): each thread asks the kernel for its own context
 * switches (a perf event of its tid) as it starts, before its first event, out of
 * the hot path: the program's threads in their start (lifecycle's pthread_create),
 * the first thread in the constructor, a fork's child as it begins; its first event
 * (the slow path, registering) takes them into its slot. A thread made otherwise (raw
 * clone, or before ticktrace started) has ticktrace's thread "tt-sched" ask for them
 * as it registers, counted and said at exit. tt-sched moves the switches from the
 * kernel's ring into the thread's store every TT__SCHED_DRAIN_NS; the writer takes them
 * from there (SCHED sections).
 * A refusal (seccomp, perf_event_paranoid 3, no descriptor or locked memory left)
 * is counted, the thread records without states, and at exit one line says which
 * threads went without and why. No descriptor is kept: the ring's mapping holds the
 * event, and tt-sched opens them in a table of descriptors of its own, out of the
 * program's (its limit, its closefrom). The recording threads never touch any of it
 * after registering, until they exit. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_internal.h"

#define TT__SCHED_DRAIN_NS 10000000 /* 10 ms: a ring of 512 switches, 51,200 a second */
#define TT__COUNTERS_PERIOD_NS 1000000 /* tt-sched's look at the threads' last records */
/* and where the counters only bound wake-ups and tell stolen time apart, beside the
 * switches: a coarser resolution for them, half the looks' cost */
#define TT__COUNTERS_BESIDE_NS 2000000
/* A store's first block is small (14 states): threads that come and go by the
 * thousand, their states waiting for mode stream's writer, keep little memory. Then
 * pages. */
#define TT__SCHED_SMALL_BYTES 256u
#define TT__SCHED_BLOCK_BYTES 4096u
#define TT__SCHED_STATES(bytes) \
	(((bytes) - sizeof(struct tt__sched_block)) / sizeof(struct tt_sched_state))
/* A thread's store holds 1024 blocks at most (about 260,000 states, 4 MiB): mode stop keeps
 * the first, ring the latest, stream writes them as they fill. */
#define TT__SCHED_BLOCKS_MAX 1024
/* A switch is in its thread's ring this long after its time at most (written in the
 * context switch, interrupts off), as a reader that drains the ring takes it */
#define TT__SCHED_WRITTEN_NS 20000

/* What states cost (tt__sched_weigh): the kernel's CPU per switch record, a thread's
 * switch out or in (the benchmark's sched_kernel_floor_pct: about 2 us more CPU for a
 * hop's four, with no ticktrace), and the share of the program's CPU time above which
 * the cost is said, once, weighed over a second at a time, where it is also a share of
 * one CPU's time that counts. */
#define TT__SCHED_RECORD_NS 500
#define TT__SCHED_COST_SHARE_PCT 5
#define TT__SCHED_COST_WALL_PCT 1 /* of one CPU: 10 ms a second */
#define TT__SCHED_WEIGH_NS 1000000000

/* The price found, said by tt-sched as it finds it (a long run, or one killed, hears it
 * while it matters), or at exit where tt-sched could not reach the program's stderr. */
static char tt__sched_price[256];
static int tt__sched_price_set;

static struct tt__lock tt__sched = TT__LOCK_INIT(TT__LOCK_SCHED);
static struct tt__sched_block *tt__sched_free, *tt__sched_free_small; /* lock held */
static struct tt__slab tt__sched_slab = {.slab_size = 64 * 1024}; /* the small ones */
/* The page-sized ones, 64 to a mapping: a thread that switches 50,000 times a second
 * fills one every 2.5 ms (a system call each, mapped one by one). */
static struct tt__slab tt__sched_block_slab = {.slab_size = 64 * TT__SCHED_BLOCK_BYTES};
static int tt__sched_off;       /* no switches: TICKTRACE_SCHED=0 or schedstat, or the
                                 * kernel said no for good */
static int tt__sched_off_why, tt__sched_off_err; /* which (enum tt_no_states; its errno) */
static int tt__sched_counters_allowed; /* not TICKTRACE_SCHED=switches */
static uint32_t tt__sched_wake; /* (tt_os_wait's word) bumped to stop the drain's sleep */
static int tt__sched_wanted; /* threads that want their switches recorded */
/* tt-sched sleeps until woken: no thread has wanted states for TT__SCHED_LINGER_NS.
 * Until then it wakes every period all the same, so that a program that starts its
 * threads one after another (none recording meanwhile) does not pay a wake-up, and
 * often a switch to tt-sched on its CPU, in each thread's start or first event. */
static int tt__sched_dormant;
#define TT__SCHED_LINGER_NS 1000000000
static uint64_t tt__sched_block_seq; /* lock held */
static uint64_t tt__sched_moved; /* states moved out of the kernel's rings, or lost there (lock held) */
static int tt__sched_ready; /* tt-sched runs: threads ask for their switches as they start */
/* tt-sched walks the threads each drain only while one may have switches to drain or to
 * ask for: a ring was opened, or the switches are allowed, or a thread that registered
 * before the kernel refused them all waits to be asked (its reason then). Where the
 * counters are the only source the walk is no use: in the benchmark's 64 threads, some
 * 10 us of cold slots each drain. */
static int tt__sched_rings_opened;
static unsigned tt__sched_to_ask;
static unsigned tt__sched_late; /* threads that had tt-sched ask: said at exit */
/* Below a small limit (base/fds.c), threads that did not ask for their own as they
 * started (a descriptor of the program's table, for a moment): tt-sched asked, in its
 * own table. Said at exit, with the counters' readings not taken so (counters.c). */
static unsigned tt__sched_few;
/* The calling thread's switches, asked for as it started and, while `held`, not yet
 * taken by its first event; closed at its exit by the key's destructor otherwise. */
struct tt__sched_early {
	struct tt__switches sw; /* map NULL: refused (its first event has tt-sched ask again) */
	int err;                /* the refusal's -errno */
	int64_t since_ns;       /* when the kernel was asked */
	int held; /* (a fork's child forgets its parent's: tt__sched_after_fork) */
	int off; /* not asked: no switches for any thread (the counters alone) */
	int few; /* not asked below a small limit (base/fds.c): tt-sched asks */
	/* Where its counters are its states' source (perf refused): read by the thread
	 * itself as it starts (read: taken), a reading before its first scope that no
	 * wait for tt-sched's CPU delays (100 threads started together on a loaded
	 * machine: tt-sched, its budget spent on their first readings, left 62 to 91 of
	 * their spikes of 5 ms and more never read) */
	struct tt_schedstat_sample reading;
	int read;
};
static __thread struct tt__sched_early tt__sched_mine __attribute__((tls_model("initial-exec")));

void tt__sched_lock(struct tt_os_signals *old)
{
	tt_os_signals_block(old);
	tt__lock(&tt__sched);
}

void tt__sched_unlock(const struct tt_os_signals *old)
{
	tt__unlock(&tt__sched);
	tt_os_signals_restore(old);
}

void tt__sched_lock_held_signals(void)
{
	tt__lock(&tt__sched);
}

void tt__sched_unlock_held_signals(void)
{
	tt__unlock(&tt__sched);
}

/* Threads that went without states, and why (lock held): said at exit, one line for
 * them all. */
#define TT__SCHED_REFUSED_NAMED 8
static struct {
	unsigned threads;
	uint32_t tids[TT__SCHED_REFUSED_NAMED];
	int errs[4];             /* the distinct reasons (-errno) */
	unsigned err_threads[4]; /* and how many threads each */
} tt__sched_refusals;
/* Threads refused as they started, or after perf was refused for every thread, and
 * never asked by tt-sched (most end first): counted as they start, unnamed (their
 * registration holds the registry's lock, which goes after the sched lock). */
static unsigned tt__sched_refused_unasked;
static int tt__sched_refused_unasked_err; /* (-errno: the last one's) */

/* A thread refused before tt-sched asked for it (as it registers): counted. */
static void tt__sched_count_unasked(const struct tt__sched *s)
{
	if (s->none != TT_NO_STATES_REFUSED)
		return;
	__atomic_store_n(&tt__sched_refused_unasked_err, -s->none_err, __ATOMIC_RELAXED);
	__atomic_add_fetch(&tt__sched_refused_unasked, 1, __ATOMIC_RELAXED);
}

/* tt-sched: the thread counted. */
static void tt__sched_refused(const struct tt__slot *slot, int err, int denied, int counted)
{
	/* Not allowed for any thread: do not ask again; the counters say instead. */
	if (denied) {
		tt__sched_off_why = TT_NO_STATES_REFUSED;
		tt__sched_off_err = -err;
		__atomic_store_n(&tt__sched_off, 1, __ATOMIC_RELEASE);
		if (tt__sched_counters_allowed)
			__atomic_store_n(&tt__counters_on, 1, __ATOMIC_RELEASE);
	}
	if (counted)
		return;
	if (tt__sched_refusals.threads < TT__SCHED_REFUSED_NAMED)
		tt__sched_refusals.tids[tt__sched_refusals.threads] = slot->tid;
	tt__sched_refusals.threads++;
	for (int i = 0; i < 4; i++) {
		if (tt__sched_refusals.errs[i] && tt__sched_refusals.errs[i] != err)
			continue;
		tt__sched_refusals.errs[i] = err;
		tt__sched_refusals.err_threads[i]++;
		break;
	}
}

void tt__sched_say_refused(void)
{
	struct tt_os_signals old;
	tt__sched_lock(&old);
	unsigned unasked = __atomic_load_n(&tt__sched_refused_unasked, __ATOMIC_RELAXED);
	if (unasked) {
		int err = __atomic_load_n(&tt__sched_refused_unasked_err, __ATOMIC_RELAXED);
		for (int i = 0; i < 4; i++) {
			if (tt__sched_refusals.errs[i] && tt__sched_refusals.errs[i] != err)
				continue;
			tt__sched_refusals.errs[i] = err;
			tt__sched_refusals.err_threads[i] += unasked;
			break;
		}
	}
	int said;
	tt__switches_refusal(0, &said);
	unsigned named = tt__sched_refusals.threads, n = said ? named + unasked : 0;
	char line[512];
	int len = 0;
	if (n == 1 && named == 1) {
		len = snprintf(line, sizeof line, "ticktrace: no thread states for thread %u (perf_event_open: %s)",
			       tt__sched_refusals.tids[0], strerror(-tt__sched_refusals.errs[0]));
	} else if (n) {
		len = snprintf(line, sizeof line, "ticktrace: %u thread%s had no thread states (%s", n,
			       n > 1 ? "s" : "", named ? "tid" : "");
		for (unsigned i = 0; i < named && i < TT__SCHED_REFUSED_NAMED; i++)
			len += snprintf(line + len, sizeof line - (size_t)len, "%s %u", i ? "," : "",
					tt__sched_refusals.tids[i]);
		len += snprintf(line + len, sizeof line - (size_t)len, "%s%sperf_event_open:",
				n > TT__SCHED_REFUSED_NAMED && named ? ", ..." : "", named ? "; " : "");
		for (int i = 0; i < 4 && tt__sched_refusals.errs[i]; i++)
			len += snprintf(line + len, sizeof line - (size_t)len, "%s %u for %s", i ? "," : "",
					tt__sched_refusals.err_threads[i], strerror(-tt__sched_refusals.errs[i]));
		len += snprintf(line + len, sizeof line - (size_t)len, ")");
	}
	bool counters = n && __atomic_load_n(&tt__counters_on, __ATOMIC_ACQUIRE);
	if (counters && tt__counters_kept)
		fprintf(tt__err, "%s: their spikes' causes come from their own counters instead "
			"(schedstat: coarser, each split says its resolution)\n", line);
	else if (counters)
		fprintf(tt__err, "%s: their own counters stood in, read in scopes open %d ms or more, "
			"but none was: their spikes have no split\n", line, TT__COUNTERS_AFTER_NS / 1000000);
	else if (n)
		fprintf(tt__err, "%s: the trace says when threads ran only for those that have them\n", line);
	if (__atomic_load_n(&tt__sched_price_set, __ATOMIC_ACQUIRE))
		fputs(tt__sched_price, tt__err);
	uint64_t unread = __atomic_load_n(&tt__counters_unread, __ATOMIC_RELAXED);
	if (unread)
		fprintf(tt__err, "ticktrace: tt-sched's reading of the threads' counters reached its "
			"budget (%g%% of the program's CPU time, or %g%% of one CPU's where more, and %g%% of "
			"what its cores had idle in its first second and %g%% of what they had idle all "
			"run long, up to %g%% of one CPU's time; a spike of %d ms and more pays for its "
			"readings, up to %g%% of one CPU's time, and one its thread slept through from "
			"what such spikes earn, %d%% of their length, up to %g%% of one CPU's time, which "
			"past the budget pays for the next scopes too): at least %" PRIu64
			" scope%s open long enough to be read went unread (past it, it looks every %d to %d ms, "
			"and does not see those that open and end between): their spikes have no split unless other "
			"readings bound them (their thread's own, or those of the scopes beside them; each spike "
			"without one says why)\n",
			TT__COUNTERS_BUDGET_PCT, TT__COUNTERS_BUDGET_WALL_PCT, TT__COUNTERS_START_PCT, TT__COUNTERS_IDLE_PCT,
			TT__COUNTERS_IDLE_MAX_PCT, TT__COUNTERS_SPIKE_NS / 1000000, TT__COUNTERS_SPIKE_WALL_PCT,
			TT__COUNTERS_SLEPT_PCT, TT__COUNTERS_SLEPT_WALL_PCT, unread,
			unread == 1 ? "" : "s",
			TT__COUNTERS_OVER_BUDGET_NS / 1000000, TT__COUNTERS_OVER_BUDGET_MAX_NS / 1000000);
	int64_t held_ns = tt__scopes_held_for();
	if (held_ns)
		fprintf(tt__err, "ticktrace: tt-sched's reading of the threads' records, to follow their "
			"scopes, reached its share (%g%% of the program's CPU time, or %g%% of one CPU's "
			"where more) and stopped for %.0f ms of the run: the threads that went on recording "
			"then, their scopes not known from then on, were read blind, each %d ms while they "
			"recorded (each %d ms once followed again, or past this share, which they are charged to, "
			"not the budget above, where they filled a buffer chunk since, else each %d ms, and as a "
			"scope begun before ended), %" PRIu64 " readings, %.1f ms of its CPU time with the looks "
			"woken for them alone (past the "
			"budget, a scope such a thread opened was read in their stead, each %d ms at most): a spike there splits "
			"as finely, a shorter one may say nothing\n",
			TT__SCOPES_PCT, TT__COUNTERS_BUDGET_WALL_PCT, (double)held_ns / 1e6,
			TT__COUNTERS_BLIND_NS / 1000000, TT__COUNTERS_BETWEEN_NS / 1000000,
			TT__COUNTERS_OVER_BUDGET_MAX_NS / 1000000, __atomic_load_n(&tt__counters_blind, __ATOMIC_RELAXED),
			(double)__atomic_load_n(&tt__counters_blind_ns, __ATOMIC_RELAXED) / 1e6,
			TT__COUNTERS_BETWEEN_NS / 1000000);
	if (tt__sched_late)
		fprintf(tt__err, "ticktrace: %u threads not started by pthread_create after ticktrace "
			"started (raw clone, or earlier) had their thread states asked for by tt-sched "
			"at their first event: none for what they did until then\n", tt__sched_late);
	unsigned few = __atomic_load_n(&tt__sched_few, __ATOMIC_RELAXED),
		 untaken = __atomic_load_n(&tt__counters_few, __ATOMIC_RELAXED);
	char why[160];
	if (few)
		fprintf(tt__err, "ticktrace: %u threads had their thread states asked for by tt-sched, in "
			"its own table, at their first event rather than as they started (none for what "
			"they did until then: %s, not even for a moment)\n", few,
			tt__fd_why(-EMFILE, why, sizeof why));
	if (untaken)
		fprintf(tt__err, "ticktrace: %u readings of a thread's counters that it takes itself (as "
			"it starts or exits, or for a dump) were not taken (%s, not even for a moment)\n",
			untaken, tt__fd_why(-EMFILE, why, sizeof why));
	tt__sched_unlock(&old);
}

/* At a thread's exit (its key's exit): switches it asked for as it started
 * and never took, closed. */
static void tt__sched_early_gone(void *unused)
{
	(void)unused;
	/* (taken by its first event, as nearly always: nothing a handler could take either,
	 * and no signal mask set and put back, two system calls each thread's exit) */
	if (!__atomic_load_n(&tt__sched_mine.held, __ATOMIC_RELAXED))
		return;
	struct tt_os_signals old;
	tt_os_signals_block(&old); /* (a handler's first event would take them) */
	if (tt__sched_mine.held) {
		tt__sched_mine.held = 0;
		tt__switches_close(&tt__sched_mine.sw);
	}
	tt_os_signals_restore(&old);
}

static struct tt_os_exit_key tt__sched_early_key = {tt__sched_early_gone, 0};

static void tt__sched_wake_up(void)
{
	__atomic_add_fetch(&tt__sched_wake, 1, __ATOMIC_RELEASE);
	tt_os_wake(&tt__sched_wake);
}

/* tt-sched woken if it sleeps for good (a thread's switches to drain soon), or its
 * looks at the counters rest (a new thread's first scope is seen as it opens). */
static void tt__sched_rouse(void)
{
	/* (sequentially consistent: tt-sched stores dormant, then looks at the wanted) */
	if (__atomic_load_n(&tt__sched_dormant, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&tt__counters_resting, __ATOMIC_RELAXED))
		tt__sched_wake_up();
}

/* The calling thread's first reading of its counters, as it starts. Where `asked_ns`,
 * the clock before pthread_create made it (lifecycle/pthread.c), is known: its counters
 * then, all 0 (each starts at 0 as the kernel makes the thread: exact, and its own in
 * format.h's sense, TT_SCHEDSTAT_OWN_FIRST: each wait of its began after), however late
 * it started, with no system call. A reading as it started was 9 system calls and the
 * kernel's first build of its /proc directory, about 30 us a thread (s23's schedcost:
 * 17 to 21 us the directory, which the next reading that needs the file pays now:
 * tt-sched's, its exit's). Its first scopes' splits lose nothing they claim: a late
 * start's wait for a CPU lies between that call and its first event, within the
 * bounds common/analysis/states.c draws from a reading to an edge. Else (the main
 * thread, a fork's child) read (below a small limit, `few`, not: no descriptor of the
 * program's for a moment). 1: a reading in *out, 0: none, -1: none for want of a
 * descriptor. */
static int tt__sched_start_reading(int64_t asked_ns, int few, struct tt_schedstat_sample *out)
{
	if (asked_ns) {
		*out = (struct tt_schedstat_sample){.ns = asked_ns};
		return 1;
	}
	return few ? -1 : tt_os_counters_read_own(tt_os_thread_id(), out) == 0;
}

void tt__sched_thread_starts(int alone, int64_t asked_ns)
{
	int off = __atomic_load_n(&tt__sched_off, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&tt__sched_ready, __ATOMIC_ACQUIRE) || tt__sched_mine.held ||
	    (off && !__atomic_load_n(&tt__counters_on, __ATOMIC_ACQUIRE)))
		return;
	struct tt__sched_early *e = &tt__sched_mine;
	/* Not cancelled here (close is a cancellation point): a thread cancelled as it
	 * starts is cancelled in the program's own code, its cleanups pushed. */
	int cancel;
	tt_os_cancel_hold(&cancel);
	int denied;
	e->off = off;
	e->sw = (struct tt__switches){0};
	/* (below a small limit, none of the program's descriptors, even for a moment:
	 * tt-sched asks at its first event; asked for only where one would be taken) */
	int few = !alone && (!off || !asked_ns) && tt__fd_room() < 0;
	e->few = few && !off;
	/* (refused: its first event has tt-sched ask again, which says why) */
	e->err = off ? 0 : few ? -EMFILE : tt__switches_open(&e->sw, 0, 1, &denied);
	if (!off && e->err == 0)
		/* after the kernel began to record: every switch from now on is there */
		e->since_ns = tt_os_monotonic_ns();
	int counters = (off || e->err) && __atomic_load_n(&tt__counters_on, __ATOMIC_ACQUIRE);
	int read = counters ? tt__sched_start_reading(asked_ns, few, &e->reading) : 0;
	if (read < 0)
		__atomic_add_fetch(&tt__counters_few, 1, __ATOMIC_RELAXED);
	e->read = read > 0;
	tt_os_cancel_restore(cancel);
	tt_os_exit_set(&tt__sched_early_key, e);
	/* Last: an event in a signal handler from here on takes them. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->held = 1;
	/* Here rather than in the thread's first event, which then finds tt-sched awake. */
	if (!off && e->err == 0)
		tt__sched_rouse();
}

void tt__sched_open(struct tt__slot *slot)
{
	struct tt__sched *s = &slot->sched;
	s->sw.map = NULL;
	s->counters.files.handle = s->counters.files.stat = -1;
	struct tt__sched_early *e = tt__sched_mine.held ? &tt__sched_mine : NULL;
	tt__sched_mine.held = 0;
	/* (tt-sched, which lists the slot once it is registered, keeps it first) */
	s->counters.early_held = e && e->read;
	if (s->counters.early_held)
		s->counters.early = e->reading;
	e = e && !e->off ? e : NULL; /* (nothing asked of the kernel) */
	if (__atomic_load_n(&tt__sched_off, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&tt__counters_on, __ATOMIC_ACQUIRE)) {
		if (e)
			tt__switches_close(&e->sw);
		s->none = tt__sched_off_why;
		s->none_err = tt__sched_off_err;
		/* (perf refused for every thread, TICKTRACE_SCHED=switches: tt-sched never
		 * asks it, and the exit says it all the same) */
		tt__sched_count_unasked(s);
		return;
	}
	s->wanted = 1;
	/* Until tt-sched asks (a refusal as it started: it asks again), what a thread that
	 * ends first says: refused as it started, or for every thread (tt-sched does not ask
	 * again; the counters, where allowed, are its source), else not asked yet. */
	s->none = TT_NO_STATES_TOO_SHORT, s->none_err = 0;
	if (e && e->few) /* (counted as its first event has tt-sched ask) */
		__atomic_add_fetch(&tt__sched_few, 1, __ATOMIC_RELAXED);
	if (e && !e->sw.map)
		s->none = TT_NO_STATES_REFUSED, s->none_err = -e->err;
	else if (!e && __atomic_load_n(&tt__sched_off, __ATOMIC_ACQUIRE))
		s->none = tt__sched_off_why, s->none_err = tt__sched_off_err;
	tt__sched_count_unasked(s);
	__atomic_add_fetch(&tt__sched_wanted, 1, __ATOMIC_SEQ_CST);
	if (e && e->sw.map) {
		/* Asked for as the thread started: tt-sched only drains them, from its next
		 * period on. */
		s->sw = e->sw;
		s->since_ns = e->since_ns;
		s->asked = s->on = 1;
		__atomic_store_n(&tt__sched_rings_opened, 1, __ATOMIC_RELAXED);
		/* (woken as the thread started: it lingers) */
		tt__sched_rouse();
		return;
	}
	/* Refused as it started, or made otherwise: tt-sched asks the kernel for it now
	 * (tens of microseconds, which the thread's first event does not wait for): its
	 * switches from then on, or the refusal (then the counters, where allowed). The
	 * counters alone have nothing to ask: tt-sched's next look (at most a period away)
	 * sees the thread's scopes as any other's (a wake-up costs it 15 to 50 us of CPU
	 * on a loaded VM: the benchmark's 64 threads woke it some 30 times a run). */
	if (__atomic_load_n(&tt__sched_off, __ATOMIC_RELAXED)) {
		tt__sched_rouse();
		return;
	}
	if (!e && TT_OS_THREADS_SEEN_STARTING) /* (else none is: not news) */
		__atomic_add_fetch(&tt__sched_late, 1, __ATOMIC_RELAXED);
	s->ask_due = 1;
	__atomic_add_fetch(&tt__sched_to_ask, 1, __ATOMIC_RELEASE);
	tt__sched_wake_up();
}

/* Lock held: the slot is asked, or gone. */
static void tt__sched_asked(struct tt__sched *s)
{
	if (s->ask_due)
		__atomic_sub_fetch(&tt__sched_to_ask, 1, __ATOMIC_RELAXED);
	s->ask_due = 0;
}

/* Lock held, tt-sched: asks the kernel for the switches of a thread that wants them. */
static void tt__sched_ask(struct tt__slot *slot)
{
	struct tt__sched *s = &slot->sched;
	if (!s->wanted || s->sw.map || s->asked)
		return;
	s->asked = 1;
	tt__sched_asked(s);
	int counted = s->none == TT_NO_STATES_REFUSED; /* (as it started) */
	if (tt__sched_off) {
		s->none = tt__sched_off_why;
		s->none_err = tt__sched_off_err;
		if (s->none == TT_NO_STATES_REFUSED)
			tt__sched_refused(slot, -s->none_err, 0, counted);
		return;
	}
	int denied;
	int err = tt__switches_open(&s->sw, (int)slot->tid, 0, &denied);
	if (err) {
		s->none = TT_NO_STATES_REFUSED;
		s->none_err = -err;
		tt__sched_refused(slot, err, denied, counted);
		return;
	}
	/* (refused as it started, counted then: has them after all) */
	if (counted)
		__atomic_sub_fetch(&tt__sched_refused_unasked, 1, __ATOMIC_RELAXED);
	/* (after the kernel began to record them: every switch from now on is there) */
	s->since_ns = tt_os_monotonic_ns();
	s->on = 1;
	__atomic_store_n(&tt__sched_rings_opened, 1, __ATOMIC_RELAXED);
}

/* The switches a block stood for: its states, and those lost before and among them. */
static uint64_t tt__sched_block_switches(const struct tt__sched_block *b)
{
	uint64_t n = b->lost_before;
	for (uint32_t i = 0; i < b->count; i++)
		n += b->states[i].what == TT__SCHED_LOST ? b->states[i].cpu : 1;
	return n;
}

/* Lock held: a block to fill, the store's last if it has room, or NULL (the state is
 * lost: mode stop, the store full). Mode ring recycles its oldest. */
static struct tt__sched_block *tt__sched_room(struct tt__sched *s)
{
	struct tt__sched_block *b = s->last;
	if (b && b->count < b->cap)
		return b;
	if (s->blocks >= TT__SCHED_BLOCKS_MAX) {
		if (!tt__config.mode->recycle_oldest)
			return NULL;
		b = s->first;
		s->first = b->next;
		s->blocks--;
		if (!s->first)
			s->last = NULL;
		/* What it held is gone from before the next block's first state. */
		if (s->first) {
			s->first->lost_before += tt__sched_block_switches(b);
			s->first->since_ns = TT__SINCE_FIRST;
		}
	} else if (!s->first) {
		b = tt__sched_free_small;
		if (b)
			tt__sched_free_small = b->next;
		else if (!(b = tt__slab_alloc(&tt__sched_slab, TT__SCHED_SMALL_BYTES)))
			return NULL;
		b->cap = TT__SCHED_STATES(TT__SCHED_SMALL_BYTES);
	} else {
		b = tt__sched_free;
		if (b)
			tt__sched_free = b->next;
		else if (!(b = tt__slab_alloc(&tt__sched_block_slab, TT__SCHED_BLOCK_BYTES)))
			return NULL;
		b->cap = TT__SCHED_STATES(TT__SCHED_BLOCK_BYTES);
	}
	b->next = NULL;
	b->count = 0;
	b->seq = ++tt__sched_block_seq;
	b->lost_before = s->lost;
	b->since_ns = s->lost || s->gap ? TT__SINCE_FIRST
		    : s->last ? s->last->states[s->last->count - 1].ns : s->since_ns;
	s->lost = 0;
	s->gap = 0;
	if (s->last)
		s->last->next = b;
	else
		s->first = b;
	s->last = b;
	s->blocks++;
	return b;
}

/* Lock held: `lost` switches the kernel lost after the store's last state (0: counted
 * already), before those read next: a mark among the states where the last block has
 * room, else before the next block's first. */
static void tt__sched_gap(struct tt__sched *s, uint64_t lost)
{
	struct tt__sched_block *b = s->last;
	if (b && !b->count) {
		b->lost_before += lost;
		b->since_ns = TT__SINCE_FIRST;
		return;
	}
	do {
		if (!b || b->count == b->cap) {
			s->lost += lost;
			s->gap = 1;
			return;
		}
		uint32_t some = lost > UINT32_MAX ? UINT32_MAX : (uint32_t)lost;
		b->states[b->count] = (struct tt_sched_state){
			.ns = b->states[b->count - 1].ns, .cpu = some, .what = TT__SCHED_LOST};
		b->count++;
		lost -= some;
	} while (lost);
}

void tt__sched_drain_slot(struct tt__slot *slot)
{
	struct tt__sched *s = &slot->sched;
	if (!s->sw.map)
		return;
	for (;;) {
		struct tt__sched_block *b = tt__sched_room(s);
		struct tt_sched_state spill[64];
		struct tt_sched_state *to = b ? &b->states[b->count] : spill;
		size_t cap = b ? b->cap - b->count : 64;
		size_t n = tt__switches_read(&s->sw, to, cap);
		/* (those the kernel lost, its ring full, count: it was asked to write them) */
		tt__sched_moved += n + s->sw.lost;
		if (b)
			b->count += (uint32_t)n;
		else
			s->lost += n;
		if (s->sw.gap)
			tt__sched_gap(s, s->sw.lost);
		else if (n < cap)
			return;
		s->sw.lost = 0;
		s->sw.gap = 0;
	}
}

void tt__sched_drain(struct tt__slot *only)
{
	struct tt_os_signals old;
	tt__sched_lock(&old);
	if (only) {
		tt__sched_drain_slot(only);
	} else {
		for (struct tt__slot *slot = tt__registry_head(); slot;
		     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
			tt__sched_ask(slot);
			tt__sched_drain_slot(slot);
			/* (a thread that switches often: a larger ring) */
			if (tt__switches_grow(&slot->sched.sw, (int)slot->tid) > 0)
				tt__sched_drain_slot(slot);
		}
	}
	tt__sched_unlock(&old);
}

/* The calling thread's own switches drained, with what the kernel lost of them said:
 * where a read found its ring full, the kernel says how many it lost only before the
 * thread's next switch, which a nap of the thread makes (a few tries, each some tens
 * of microseconds: only a thread that switches faster than tt-sched drains). Lock not
 * held; signals blocked. */
static void tt__sched_settle(struct tt__slot *slot)
{
	for (int tries = 0;; tries++) {
		tt__lock(&tt__sched);
		tt__sched_drain_slot(slot);
		int unsaid = tt__switches_unsaid(&slot->sched.sw);
		tt__unlock(&tt__sched);
		if (!unsaid || tries == 3)
			return;
		tt_os_sleep_ns(1);
	}
}

void tt__sched_settle_self(void)
{
	struct tt_os_signals old;
	tt_os_signals_block(&old);
	uint32_t tid = tt_os_thread_id();
	for (struct tt__slot *slot = tt__registry_head(); slot;
	     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
		if (slot->tid == tid && slot->sched.wanted &&
		    !(__atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE) & TT__SLOT_EXITED)) {
			tt__sched_settle(slot);
			break;
		}
	}
	tt_os_signals_restore(&old);
}

void tt__sched_thread_exited(struct tt__slot *slot)
{
	if (!slot->sched.wanted)
		return;
	/* (no switches, nor any to come where none is asked for: nothing to settle, and the
	 * lock taken once, not twice, where tt-sched holds it through its looks) */
	if (!__atomic_load_n(&tt__sched_off, __ATOMIC_ACQUIRE) || slot->sched.sw.map)
		tt__sched_settle(slot);
	tt__lock(&tt__sched);
	/* Its exit: a moment it ran with every switch before it read, so read before the
	 * last drain (a preemption after the drain, in the unmapping, is never read: a
	 * time read then put the exit after another thread took its CPU), or its last
	 * switch in, where the drain found one after that. */
	int64_t watched = tt_os_monotonic_ns();
	tt__sched_drain_slot(slot);
	const struct tt__sched_block *last = slot->sched.last;
	if (last && last->count && last->states[last->count - 1].ns > watched)
		watched = last->states[last->count - 1].ns;
	slot->sched.exited_ns = watched;
	/* (what the kernel still did not say: one lost, and the thread's end not known) */
	if (tt__switches_unsaid(&slot->sched.sw))
		slot->sched.lost++;
	tt__switches_close(&slot->sched.sw);
	tt__counters_read_at_exit(slot); /* (its files: tt-sched closes them, in its own table) */
	slot->sched.counters.watched = 0; /* (read for the last time) */
	slot->sched.wanted = 0; /* its tid may be another thread's from now on */
	tt__sched_asked(&slot->sched);
	__atomic_sub_fetch(&tt__sched_wanted, 1, __ATOMIC_RELAXED);
	tt__unlock(&tt__sched);
}

/* Lock held: the states from `from`'s state `skip` on, where a reader stopped (its
 * lost states were said then), or from the first block's (from NULL), as SCHED
 * sections say them: a section for each run of states between losses; *at (NULL:
 * none) moves past them. */
static void tt__sched_walk(struct tt__slot *slot, const struct tt__sched_block *from, uint32_t skip,
			   tt__sched_section_fn fn, void *ctx, struct tt__sched_cursor *at)
{
	const struct tt__sched *s = &slot->sched;
	int64_t last_ns = skip ? from->states[skip - 1].ns : s->since_ns;
	uint64_t lost = 0; /* lost since the last state said */
	/* (a reader that stopped after a loss: what comes next follows a span not known) */
	bool gap = skip && from->states[skip - 1].what == TT__SCHED_LOST, said = false;
	for (const struct tt__sched_block *b = from ? from : s->first; b; b = b->next, skip = 0) {
		if (at)
			*at = (struct tt__sched_cursor){b, b->seq, b->count};
		if (b != from)
			lost += b->lost_before;
		int64_t since = skip ? last_ns : b->since_ns;
		gap |= since == TT__SINCE_FIRST;
		for (uint32_t i = skip; i < b->count;) {
			uint32_t end = i;
			while (end < b->count && b->states[end].what != TT__SCHED_LOST)
				end++;
			if (end > i) {
				/* The kernel recorded from a moment before since_ns was read: its
				 * first states may be older. */
				if (gap || b->states[i].ns < since)
					since = b->states[i].ns;
				fn(ctx, slot, lost, since, b->states + i, end - i);
				said = true;
				lost = 0;
				gap = false;
				last_ns = b->states[end - 1].ns;
			}
			for (; end < b->count && b->states[end].what == TT__SCHED_LOST; end++) {
				lost += b->states[end].cpu;
				gap = true;
			}
			i = end;
		}
	}
	/* Lost after the last state kept: at the store's end, after a full store (mode
	 * stop), and what the kernel may have lost and not said yet (as one, until it says
	 * how many; counted once by a reader that takes the states away). */
	int unsaid = tt__switches_unsaid(&s->sw);
	lost += s->lost + (unsaid == 1);
	if (lost) {
		fn(ctx, slot, lost, last_ns, NULL, 0);
		said = true;
	}
	/* A thread that never left its CPU since the kernel was asked (a short run on an
	 * idle CPU) has no state, and is known all the same: a section without states
	 * says it ran from since_ns on (once in a stream's file). */
	if (!said && !from && s->on && !s->said)
		fn(ctx, slot, 0, s->since_ns, NULL, 0);
}

void tt__sched_sections(struct tt__slot *slot, tt__sched_section_fn fn, void *ctx)
{
	tt__sched_walk(slot, NULL, 0, fn, ctx, NULL);
}

int64_t tt__sched_read_new(struct tt__slot *slot, struct tt__sched_cursor *at, tt__sched_section_fn fn,
			   void *ctx)
{
	struct tt_os_signals old;
	tt__sched_lock(&old);
#ifdef _WIN32
	int64_t known = INT64_MIN; /* (the session gives them up to 2 s late) */
#else
	/* (read before the drain, the kernel writing each switch as it makes it, less the
	 * moments one made on another CPU takes to be there; a thread that exited, as its
	 * exit was read: tt__sched_thread_exited) */
	int64_t known = slot->sched.sw.map	? tt_os_monotonic_ns() - TT__SCHED_WRITTEN_NS
			: slot->sched.exited_ns ? slot->sched.exited_ns
						: INT64_MIN;
#endif
	tt__sched_drain_slot(slot);
	const struct tt__sched_block *b = slot->sched.first;
	while (b && (b != at->block || b->seq != at->seq))
		b = b->next;
	/* Not there (mode ring recycled it): from the first, whose lost_before counts
	 * what went. */
	tt__sched_walk(slot, b, b ? at->count : 0, fn, ctx, at);
	tt__sched_unlock(&old);
	return known;
}

void tt__sched_release(struct tt__sched *s)
{
	/* (the walk that wrote them counted what the kernel has not said yet as one) */
	if (tt__switches_unsaid(&s->sw))
		tt__switches_told(&s->sw);
	for (struct tt__sched_block *b = s->first, *next; b; b = next) {
		next = b->next;
		/* The next block goes on from the last state written (the last block may
		 * be empty: made ready for states that were not there yet). */
		if (b->count)
			s->since_ns = b->states[b->count - 1].ns;
		struct tt__sched_block **list =
			b->cap == TT__SCHED_STATES(TT__SCHED_SMALL_BYTES) ? &tt__sched_free_small : &tt__sched_free;
		b->next = *list;
		*list = b;
	}
	s->first = s->last = NULL;
	s->blocks = 0;
}

int tt__sched_any(void)
{
	return __atomic_load_n(&tt__sched_wanted, __ATOMIC_SEQ_CST) > 0;
}

/* tt-sched, after a drain: where the threads switch so often that their states cost
 * more than TT__SCHED_COST_SHARE_PCT of the program's CPU time (the kernel's records
 * and tt-sched's own work), says so once, with the rate and the cost: the states go
 * on (they are what was asked for), the user knows their price. */
struct tt__sched_weight {
	int64_t wall_ns, cpu_ns, own_ns; /* at the window's start (wall_ns 0: none yet) */
	uint64_t moved;
	int said;
};

static void tt__sched_weigh(struct tt__sched_weight *w)
{
	int64_t now = tt_os_monotonic_ns();
	if (w->said || now - w->wall_ns < TT__SCHED_WEIGH_NS)
		return;
	int64_t cpu = tt_os_process_cpu_ns(), own = tt_os_thread_cpu_ns();
	uint64_t moved = __atomic_load_n(&tt__sched_moved, __ATOMIC_RELAXED);
	if (w->wall_ns && cpu > w->cpu_ns) {
		double records = (double)(moved - w->moved);
		double records_ns = records * TT__SCHED_RECORD_NS;
		double cost_ns = records_ns + (double)(own - w->own_ns);
		double pct = 100.0 * cost_ns / (double)(cpu - w->cpu_ns);
		/* Said for what the switches cost (tt-sched's own work alone is no rate), and
		 * where that counts: a program that mostly sleeps has little CPU time of its
		 * own, which a few switches, or tt-sched's wake-ups, seem large against. */
		int switches_cost = 100.0 * records_ns / (double)(cpu - w->cpu_ns) > TT__SCHED_COST_SHARE_PCT &&
				     100.0 * records_ns / (double)(now - w->wall_ns) > TT__SCHED_COST_WALL_PCT;
		if (switches_cost) {
			w->said = 1;
			snprintf(tt__sched_price, sizeof tt__sched_price,
				 "ticktrace: threads switch %.0f times a second: their states cost about "
				 "%.0f%% of the program's CPU time (the kernel's switch records, about %d ns "
				 "each, and their draining); TICKTRACE_SCHED=0 turns them off\n",
				 records / 2 * 1e9 / (double)(now - w->wall_ns), pct, TT__SCHED_RECORD_NS);
			if (!tt__err_say(tt__sched_price))
				__atomic_store_n(&tt__sched_price_set, 1, __ATOMIC_RELEASE);
		}
	}
	*w = (struct tt__sched_weight){now, cpu, own, moved, w->said};
}

static void *tt__sched_main(void *unused)
{
	(void)unused;
	tt__thread_running("tt-sched");
	/* Its perf descriptors, open for a moment each, out of the program's table: a
	 * program that closes every descriptor (a daemon starting) and opens its own
	 * while one is open would have its file closed in its place. */
	if (tt__fd_private_table(NULL, 0) < 0 && TT_OS_COUNTERS_FILES)
		/* (the counters' files kept open in the program's table could be closed, and
		 * their numbers reused, behind tt-sched's back; Windows keeps none there, and
		 * has no table of a thread's own) */
		__atomic_store_n(&tt__counters_on, 0, __ATOMIC_RELEASE), tt__sched_counters_allowed = 0;
	tt__thread_optional(TT__OPTIONAL_SCHED, tt__sched_wake_up);
	struct tt__sched_weight weight = {0};
	int64_t drained_ns = 0, wanted_ns = tt_os_monotonic_ns();
	for (;;) {
		uint32_t seq = __atomic_load_n(&tt__sched_wake, __ATOMIC_SEQ_CST);
		if (tt__thread_end_asked()) {
			/* (its place the program's: threads started from now on ask for no
			 * switches, as where it never started; the rings open are read as the
			 * trace is written) */
			if (!__atomic_load_n(&tt__sched_off, __ATOMIC_ACQUIRE)) {
				tt__sched_off_why = TT_NO_STATES_NOT_ASKED;
				__atomic_store_n(&tt__sched_off, 1, __ATOMIC_RELEASE);
			}
			return NULL;
		}
		int64_t now = tt_os_monotonic_ns();
		/* The counters every millisecond, the switches every TT__SCHED_DRAIN_NS. */
		int counters = __atomic_load_n(&tt__counters_on, __ATOMIC_ACQUIRE);
		int64_t wait_ns = !counters ? TT__SCHED_DRAIN_NS
				: __atomic_load_n(&tt__sched_off, __ATOMIC_RELAXED) ? TT__COUNTERS_PERIOD_NS
				: TT__COUNTERS_BESIDE_NS;
		if (!tt__sched_any()) {
			/* No thread has states: a while in periods (a new one's first look as
			 * soon as if it were awake), then asleep until one does. */
			if (now - wanted_ns < TT__SCHED_LINGER_NS) {
				tt_os_wait(&tt__sched_wake, seq, wait_ns);
				continue;
			}
			__atomic_store_n(&tt__sched_dormant, 1, __ATOMIC_SEQ_CST);
			if (!tt__sched_any())
				tt_os_wait(&tt__sched_wake, seq, TT_OS_FOREVER);
			__atomic_store_n(&tt__sched_dormant, 0, __ATOMIC_RELAXED);
			wanted_ns = tt_os_monotonic_ns();
			continue;
		}
		wanted_ns = now;
		if (!counters || now - drained_ns >= TT__SCHED_DRAIN_NS) {
			if (!__atomic_load_n(&tt__sched_off, __ATOMIC_RELAXED) ||
			    __atomic_load_n(&tt__sched_rings_opened, __ATOMIC_RELAXED) ||
			    __atomic_load_n(&tt__sched_to_ask, __ATOMIC_ACQUIRE)) {
				tt__sched_drain(NULL);
				tt__sched_weigh(&weight);
			}
			drained_ns = now;
		}
		if (counters) /* (it may want to be back sooner, for a scope due a reading) */
			wait_ns = tt__counters_tick(wait_ns, __atomic_load_n(&tt__sched_off, __ATOMIC_RELAXED));
		/* (woken early by a thread that needs asking for) */
		tt_os_wait(&tt__sched_wake, seq, wait_ns);
	}
	return NULL;
}


uint32_t tt__sched_no_states(const struct tt__slot *slot)
{
	const struct tt__sched *s = &slot->sched;
	int said;
	return s->on			      ? 0 :
	       s->none == TT_NO_STATES_REFUSED ? tt__switches_refusal(-s->none_err, &said) :
						 TT_THREAD_NO_STATES_FLAGS(s->none, s->none_err);
}

int tt__sched_counters_stand_in(const struct tt__slot *slot)
{
	const struct tt__sched *s = &slot->sched;
	return !s->on && (__atomic_load_n(&tt__counters_on, __ATOMIC_ACQUIRE) ||
			  s->none == TT_NO_STATES_COUNTERS ||
			  (s->none == TT_NO_STATES_REFUSED && tt__sched_counters_allowed));
}

int tt__sched_start(int off, int only)
{
	tt__sched_off = off || only == TT__SCHED_SCHEDSTAT;
	tt__sched_off_why = off ? TT_NO_STATES_OFF : TT_NO_STATES_COUNTERS;
	tt__sched_counters_allowed = !off && only != TT__SCHED_SWITCHES;
	/* (read whatever the source: the counters' readings say it) */
	tt__counters_steal = tt_os_steal_accounted();
	/* The counters from the start, the source or beside the switches (wake-ups, stolen
	 * time), but with TICKTRACE_SCHED=switches. */
	tt__counters_on = only == TT__SCHED_SCHEDSTAT || tt__sched_counters_allowed;
	if (off)
		return 0;
	int err = tt_os_exit_key_make(&tt__sched_early_key);
	if (!err)
		err = tt__start_thread(NULL, tt__sched_main, NULL, 1);
	if (err) {
		tt__sched_off_why = TT_NO_STATES_NOT_ASKED;
		tt__sched_off = 1;
		tt__counters_on = 0;
	} else {
		__atomic_store_n(&tt__sched_ready, 1, __ATOMIC_RELEASE);
	}
	return err;
}

void tt__sched_after_fork(void)
{
	/* The parent's threads' events are not the child's: close them (this thread's
	 * too). */
	tt__lock_reset(&tt__sched);
	for (struct tt__slot *slot = tt__registry_head(); slot; slot = slot->next) {
		tt__switches_close(&slot->sched.sw);
		tt__counters_forget(&slot->sched.counters, 0);
		tt__sched_release(&slot->sched);
	}
	tt__sched_wanted = 0;
	tt__sched_to_ask = 0;
	tt__sched_rings_opened = 0; /* (closed above) */
	tt__sched_dormant = 0; /* (the parent's tt-sched's) */
	tt__sched_late = 0;
	tt__sched_few = tt__counters_few = 0;
	memset(&tt__sched_refusals, 0, sizeof tt__sched_refusals); /* the parent's threads' */
	tt__sched_refused_unasked = 0;
	tt__counters_after_fork();
	if ((!tt__sched_off || tt__counters_on) && tt__start_thread(NULL, tt__sched_main, NULL, 0) < 0) {
		tt__sched_off_why = TT_NO_STATES_NOT_ASKED;
		tt__sched_off = 1;
		tt__counters_on = 0;
	}
	/* (the parent's ring, which the kernel does not copy: this thread asks again once
	 * the child's run has its clocks, tt__sched_thread_starts) */
	tt__sched_mine.held = 0;
}
