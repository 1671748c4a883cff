/* The program that test_longrun runs in the modes and situations it checks: the mode
 * is chosen when the library starts, and some runs end by a signal.
 *
 *   tt_longrun_prog seq THREADS EVENTS   each thread "seq-N" records EVENTS instants
 *                                        "seq" with argument N << 32 | i, then exits
 *   tt_longrun_prog churn THREADS        THREADS threads one after the other, each
 *                                        recording "churn" (argument: its number);
 *                                        prints the resident kB outside ticktrace's
 *                                        arena after a tenth and at the end
 *   tt_longrun_prog hold EVENTS FLUSH    records EVENTS "seq" instants on the main
 *                                        thread, calls tt_dump(NULL) if FLUSH is 1,
 *                                        tt_dump(FLUSH) if it is a path, then
 *                                        prints "ready" and waits to be killed
 *   tt_longrun_prog scopes EVENTS        records EVENTS scopes "iter", each around a
 *                                        "seq" instant, prints "ready", waits to be killed
 *   tt_longrun_prog crash HOW EVENTS     records EVENTS "seq" instants, begins "crashing"
 *                                        and dies: HOW is segv or abort
 *   tt_longrun_prog extremes ROUNDS      ROUNDS times: threshold notes of 0..999 ns (a
 *                                        thousand words), then the counter "edge" at
 *                                        each of tt_edges.h's and the instant "edge"
 *                                        with each as its argument
 *   tt_longrun_prog fork EVENTS [HOW]    records EVENTS "seq" instants (number 1) and forks;
 *                                        the child records EVENTS (number 2) and exits
 *                                        (by _exit, if HOW is "_exit"; with HOW "getenv",
 *                                        the program's own getenv records an instant
 *                                        "getenv" while fork runs, as bash's patched
 *                                        getenv does, and the child exits),
 *                                        the parent waits for it, records EVENTS more
 *                                        (going on from EVENTS) and prints the child's pid
 *
 *   tt_longrun_prog spiky SPIKES [NAME]  records an instant "start", waits 0.1 s, then
 *                                        scopes "frame" around 1,000 "fast" ones;
 *                                        the second frame holds a "slow" scope of 30 ms;
 *                                        then waits until the file SPIKES names NAME
 *                                        ("slow" if not given) and prints "spike logged
 *                                        after N ms" (N from the end of "slow"), or gives
 *                                        up after 60 s
 *
 *   tt_longrun_prog burst SPIKES EVENTS  records EVENTS "seq" instants at once, then a
 *                                        "slow" scope of 30 ms, then as spiky
 *
 *   tt_longrun_prog exec EVENTS HOW      records EVENTS "seq" instants, then becomes
 *                                        /bin/true by execl (HOW "execl") or execvp
 *                                        ("execvp")
 *   tt_longrun_prog daemon EVENTS        records EVENTS "seq" instants (number 1), becomes a
 *                                        daemon (daemon(1, 1): its parent leaves by _exit),
 *                                        prints its pid, records EVENTS (number 2), exits
 *   tt_longrun_prog destructors THREADS  THREADS threads one after the other (each on
 *                                        the stack of the one before), each recording
 *                                        "seq" events numbered by it, also from a key
 *                                        destructor that records and sets its key
 *                                        again in every round of destructors
 *   tt_longrun_prog values               records, until it is killed, rounds i = 0, 1, ...
 *                                        of a scope "iter" around an instant "seq" with
 *                                        argument i and a counter "count" of value i,
 *                                        pausing 100 us every 64 rounds; prints "ready"
 *                                        0.3 s after its first round, when the run has
 *                                        described its thread and call sites
 *
 *   tt_longrun_prog dumped EVENTS PATH   a thread "seq-0" records "seq" instants 0, 1, ...:
 *                                        EVENTS, then more for as long as the main thread
 *                                        runs tt_dump(PATH) (and at least 10,000), then
 *                                        EVENTS more; prints how many it recorded
 *   tt_longrun_prog seconds THREADS MS   each thread "seq-N" records "seq" instants (as
 *                                        "seq" does) for MS milliseconds; prints how many
 *                                        each recorded, one line each
 *
 *   tt_longrun_prog moves DIR EVENTS     records EVENTS "seq" instants, moves to the
 *                                        directory DIR (as daemon(0, 0) moves to /),
 *                                        records EVENTS more and exits
 *
 *   tt_longrun_prog names COUNT          records COUNT instants named at run time
 *                                        ("name-0", "name-1", ...: all distinct); prints
 *                                        the RSS (kB) before and after
 *
 *   tt_longrun_prog firsts THREADS       the main thread, then THREADS threads one after
 *                                        the other, record a scope "first" (their first
 *                                        event) and a scope "second"
 *
 *   tt_longrun_prog dumps COUNT DIR      a thread "seq-0" records "seq" instants 0, 1, ...
 *                                        while the main thread calls tt_dump(DIR/N.ttr)
 *                                        for N = 0 .. COUNT - 1, then exits
 *
 *   tt_longrun_prog overlimit PATH       records 1000 "seq" instants, calls tt_dump(NULL)
 *                                        (its outcome aside), then writes 1 MiB to PATH
 *                                        itself: past RLIMIT_FSIZE, the program's own
 *                                        write meets SIGXFSZ as it would without ticktrace
 *
 *   tt_longrun_prog_static hole EVENTS   records EVENTS "seq" instants with, after the
 *                                        first 100, a record reserved and never written
 *                                        (as when a signal handler that interrupted an
 *                                        event jumps away), then exits (static build:
 *                                        it reaches the runtime's internals)
 *   tt_longrun_prog_static held HELD EVENTS  records HELD "seq" instants with the chunks
 *                                        held (as a dump holds them: a ring grows, then
 *                                        drops), then EVENTS more (the ring recycles
 *                                        past the gap's record), and prints how many
 *   tt_longrun_prog_static torn EVENTS PATH  records EVENTS counters "count" (values 0 ..
 *                                        EVENTS - 1), writes the first record of one more
 *                                        and calls tt_dump(PATH) before it writes the
 *                                        second (as a dump from another thread can find
 *                                        a thread), then writes it and exits
 *
 * With TT_PROG_OWN_HANDLER=1, the program installs a SIGSEGV and SIGABRT handler of its
 * own before ticktrace starts (where it is linked statically: the constructor runs
 * first), which prints "own handler" and returns.
 * With TT_PROG_TERM_HANDLER=1, "hold" installs a SIGTERM handler of its own after
 * ticktrace started (tt_prog_install_term_handler), which prints the same.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ticktrace.h"
#include "tt_edges.h"

struct tt_prog_seq {
	uint32_t number, events;
};

/* "seq" events number << 32 | i for i in [from, from + events). */
static void tt_prog_record_seq(uint32_t number, uint32_t from, uint32_t events)
{
	for (uint32_t i = from; i < from + events; i++)
		TT_INSTANT_ARG("seq", (uint64_t)number << 32 | i);
}

static void *tt_prog_seq_thread(void *arg)
{
	const struct tt_prog_seq *s = arg;
	char name[32];
	snprintf(name, sizeof name, "seq-%u", s->number);
	tt_thread_name(name);
	tt_prog_record_seq(s->number, 0, s->events);
	return NULL;
}

static int tt_prog_seq(uint32_t threads, uint32_t events)
{
	pthread_t *ids = calloc(threads, sizeof *ids);
	struct tt_prog_seq *seqs = calloc(threads, sizeof *seqs);
	if (!ids || !seqs)
		return 1;
	for (uint32_t i = 0; i < threads; i++) {
		seqs[i] = (struct tt_prog_seq){i, events};
		if (pthread_create(&ids[i], NULL, tt_prog_seq_thread, &seqs[i]))
			return 1;
	}
	for (uint32_t i = 0; i < threads; i++)
		pthread_join(ids[i], NULL);
	free(ids);
	free(seqs);
	return 0;
}

/* "dumped": the recording thread and the main thread, which dumps meanwhile. */
static struct tt_prog_dumped {
	uint32_t events, recorded;
	int half_way; /* the thread recorded its first EVENTS */
	int dumping;  /* 1 while the main thread is in tt_dump, 2 once it returned */
} tt_prog_dumped;

static void *tt_prog_dumped_thread(void *arg)
{
	(void)arg;
	struct tt_prog_dumped *d = &tt_prog_dumped;
	tt_thread_name("seq-0");
	tt_prog_record_seq(0, 0, d->events);
	uint32_t next = d->events;
	__atomic_store_n(&d->half_way, 1, __ATOMIC_RELEASE);
	/* Through the whole dump, some chunks' worth; not flat out: a dump the scheduler
	 * holds up on a loaded machine would see the ring grow past what it may while held
	 * (16 MiB, some milliseconds of a thread recording flat out), and drop. */
	while (__atomic_load_n(&d->dumping, __ATOMIC_ACQUIRE) != 2 || next < d->events + 10000) {
		tt_prog_record_seq(0, next++, 1);
		nanosleep(&(struct timespec){0, 1000}, NULL);
	}
	tt_prog_record_seq(0, next, d->events);
	d->recorded = next + d->events;
	return NULL;
}

static int tt_prog_dumped_run(uint32_t events, const char *path)
{
	struct tt_prog_dumped *d = &tt_prog_dumped;
	d->events = events;
	pthread_t id;
	if (pthread_create(&id, NULL, tt_prog_dumped_thread, NULL))
		return 1;
	while (!__atomic_load_n(&d->half_way, __ATOMIC_ACQUIRE))
		sched_yield();
	__atomic_store_n(&d->dumping, 1, __ATOMIC_RELEASE);
	int err = tt_dump(path);
	__atomic_store_n(&d->dumping, 2, __ATOMIC_RELEASE);
	pthread_join(id, NULL);
	printf("%u\n", d->recorded);
	return err != 0;
}

static void *tt_prog_until_dumped(void *arg)
{
	(void)arg;
	tt_thread_name("seq-0");
	for (uint32_t next = 0; __atomic_load_n(&tt_prog_dumped.dumping, __ATOMIC_ACQUIRE) != 2; next++)
		tt_prog_record_seq(0, next, 1);
	return NULL;
}

static int tt_prog_dumps(uint32_t count, const char *dir)
{
	pthread_t id;
	if (pthread_create(&id, NULL, tt_prog_until_dumped, NULL))
		return 1;
	int failed = 0;
	for (uint32_t n = 0; n < count && !failed; n++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%u.ttr", dir, n);
		failed = tt_dump(path) != 0;
	}
	__atomic_store_n(&tt_prog_dumped.dumping, 2, __ATOMIC_RELEASE);
	pthread_join(id, NULL);
	return failed;
}

struct tt_prog_timed {
	uint32_t number, recorded;
	int64_t ms;
};

static int64_t tt_prog_now_ms(void);

static void *tt_prog_timed_thread(void *arg)
{
	struct tt_prog_timed *t = arg;
	char name[32];
	snprintf(name, sizeof name, "seq-%u", t->number);
	tt_thread_name(name);
	int64_t end = tt_prog_now_ms() + t->ms;
	do {
		tt_prog_record_seq(t->number, t->recorded, 4096);
		t->recorded += 4096;
	} while (tt_prog_now_ms() < end);
	return NULL;
}

static int tt_prog_seconds(uint32_t threads, int64_t ms)
{
	pthread_t ids[16];
	struct tt_prog_timed timed[16];
	if (threads > 16)
		return 1;
	for (uint32_t i = 0; i < threads; i++) {
		timed[i] = (struct tt_prog_timed){.number = i, .ms = ms};
		if (pthread_create(&ids[i], NULL, tt_prog_timed_thread, &timed[i]))
			return 1;
	}
	for (uint32_t i = 0; i < threads; i++) {
		pthread_join(ids[i], NULL);
		printf("%u\n", timed[i].recorded);
	}
	return 0;
}

static long tt_prog_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			kb = atol(line + 6);
	if (f)
		fclose(f);
	return kb;
}

/* The resident memory of every mapping but ticktrace's arena (the one reservation of a
 * GiB or more): the chunks a stream's writer has not given back yet live there, as
 * many as the budget allows, and the arena's pages stay resident once faulted in; a
 * writer held up by a loaded machine moves its frontier on and tt-prefault faults in
 * the next 16 MiB (+20 MB in loaded suite runs). What is left is what threads that
 * came and went may have kept. */
static long tt_prog_rss_outside_arena_kb(void)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[256];
	long kb = 0, mapping_kb = 0;
	int arena = 0;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long low, high;
		if (sscanf(line, "%lx-%lx ", &low, &high) == 2) { /* a mapping's first line */
			arena = high - low >= (1ul << 30);
			mapping_kb = 0;
		} else if (sscanf(line, "Rss: %ld kB", &mapping_kb) == 1 && !arena) {
			kb += mapping_kb;
		}
	}
	if (f)
		fclose(f);
	return f ? kb : -1;
}

static void *tt_prog_churn_thread(void *arg)
{
	TT_INSTANT_ARG("churn", (uintptr_t)arg);
	return NULL;
}

static int tt_prog_names(uint32_t count)
{
	long before = tt_prog_rss_kb();
	for (uint32_t i = 0; i < count; i++) {
		char name[32];
		snprintf(name, sizeof name, "name-%u", i);
		TT_INSTANT_DYN(name);
	}
	printf("%ld %ld\n", before, tt_prog_rss_kb());
	return 0;
}

static void *tt_prog_firsts_thread(void *arg)
{
	(void)arg;
	TT_BEGIN("first");
	TT_END();
	TT_BEGIN("second");
	TT_END();
	return NULL;
}

static int tt_prog_firsts(uint32_t threads)
{
	tt_prog_firsts_thread(NULL);
	for (uint32_t i = 0; i < threads; i++) {
		pthread_t id;
		if (pthread_create(&id, NULL, tt_prog_firsts_thread, NULL))
			return 1;
		pthread_join(id, NULL);
	}
	return 0;
}

static int tt_prog_churn(uint32_t threads)
{
	long early = 0;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (uint32_t i = 0; i < threads; i++) {
		pthread_t id;
		if (pthread_create(&id, &attr, tt_prog_churn_thread, (void *)(uintptr_t)i))
			return 1;
		pthread_join(id, NULL);
		if (i + 1 == threads / 10)
			early = tt_prog_rss_outside_arena_kb();
	}
	printf("%ld %ld\n", early, tt_prog_rss_outside_arena_kb());
	return 0;
}

static void tt_prog_wait_to_be_killed(void)
{
	/* A test that failed before it killed us: we go with it, not left running for
	 * hours (4 holders outlived a failed test_longrun by 2 h). */
	pid_t parent = getppid();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(1);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

static void tt_prog_own_handler(int sig)
{
	(void)sig;
	static const char said[] = "own handler\n";
	if (write(1, said, sizeof said - 1) < 0)
		_exit(3);
}

/* TT_PROG_TERM_HANDLER=1, once ticktrace runs: a SIGTERM handler of the program's own
 * (SA_RESETHAND: a second SIGTERM ends it), installed as programs do, where SIGTERM
 * and SIGINT have their default action; else it says what it found instead. */
static void tt_prog_install_term_handler(void)
{
	const char *own = getenv("TT_PROG_TERM_HANDLER");
	if (!own || strcmp(own, "1") != 0)
		return;
	struct sigaction was;
	if (sigaction(SIGTERM, NULL, &was) != 0 || (was.sa_flags & SA_SIGINFO) ||
	    was.sa_handler != SIG_DFL) {
		printf("SIGTERM's action is not the default\n");
		return;
	}
	if (signal(SIGINT, SIG_DFL) != SIG_DFL) {
		printf("SIGINT's handler is not the default\n");
		return;
	}
	struct sigaction action = {.sa_handler = tt_prog_own_handler, .sa_flags = SA_RESETHAND};
	sigaction(SIGTERM, &action, NULL);
}

static int tt_prog_hold(uint32_t events, const char *flush)
{
	tt_prog_record_seq(0, 0, events);
	if (strcmp(flush, "0") != 0 && tt_dump(strcmp(flush, "1") == 0 ? NULL : flush) != 0)
		return 1;
	tt_prog_install_term_handler();
	tt_prog_wait_to_be_killed();
	return 0;
}

__attribute__((constructor(101))) static void tt_prog_install_own_handler(void)
{
	const char *own = getenv("TT_PROG_OWN_HANDLER");
	if (!own || strcmp(own, "1") != 0)
		return;
	/* Returning from it: SIGSEGV comes again at its instruction, abort() raises
	 * SIGABRT again with the default action. SA_RESETHAND: the second time the
	 * default action ends the program. */
	struct sigaction action = {.sa_handler = tt_prog_own_handler, .sa_flags = SA_RESETHAND};
	sigaction(SIGSEGV, &action, NULL);
	sigaction(SIGABRT, &action, NULL);
}

static int tt_prog_scopes(uint32_t events)
{
	for (uint32_t i = 0; i < events; i++) {
		TT_BEGIN("iter");
		TT_INSTANT_ARG("seq", i);
		TT_END();
	}
	tt_prog_wait_to_be_killed();
	return 0;
}

static int tt_prog_crash(const char *how, uint32_t events)
{
	tt_prog_record_seq(0, 0, events);
	TT_BEGIN("crashing");
	volatile uintptr_t unmapped = 8;
	if (strcmp(how, "segv") == 0)
		*(volatile int *)unmapped = 1;
	if (strcmp(how, "abort") == 0)
		abort();
	return 1;
}

/* Set while fork runs (`fork EVENTS getenv`): the program's getenv records then, where
 * ticktrace's reset of the child calls it. */
static int tt_prog_getenv_records;

/* The program's own getenv, as bash has one: ticktrace's calls reach it. */
char *getenv(const char *name)
{
	extern char **environ;
	if (__atomic_load_n(&tt_prog_getenv_records, __ATOMIC_RELAXED))
		TT_INSTANT("getenv");
	size_t len = strlen(name);
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

static int tt_prog_fork(uint32_t events, const char *how)
{
	tt_prog_record_seq(1, 0, events);
	fflush(stdout);
	int getenv_records = how && strcmp(how, "getenv") == 0;
	__atomic_store_n(&tt_prog_getenv_records, getenv_records, __ATOMIC_RELAXED);
	pid_t child = fork();
	__atomic_store_n(&tt_prog_getenv_records, 0, __ATOMIC_RELAXED);
	if (child < 0)
		return 1;
	if (child == 0) {
		tt_prog_record_seq(2, 0, events);
		if (how && strcmp(how, "_exit") == 0)
			_exit(0);
		exit(0);
	}
	int status;
	if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "tt_longrun_prog: the child ended with status %#x\n", status);
		return 1;
	}
	tt_prog_record_seq(1, events, events);
	printf("%d\n", (int)child);
	return 0;
}

static int64_t tt_prog_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int tt_prog_file_says(const char *path, const char *what)
{
	FILE *f = fopen(path, "re");
	char line[4096];
	int found = 0;
	while (f && !found && fgets(line, sizeof line, f))
		found = strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return found;
}

/* Waits until the file `spikes` says `quoted` ("\"slow\""), for 60 s at most from
 * `slow_end`; says how long it took. */
static int tt_prog_wait_logged(const char *spikes, const char *quoted, int64_t slow_end)
{
	while (!tt_prog_file_says(spikes, quoted)) {
		if (tt_prog_now_ms() - slow_end > 60000)
			return 1;
		struct timespec poll = {0, 5000000};
		nanosleep(&poll, NULL);
	}
	printf("spike logged after %lld ms\n", (long long)(tt_prog_now_ms() - slow_end));
	return 0;
}

/* EVENTS "seq" instants at once (a small ring wraps many times before tt-spikes
 * looks), then "slow", 30 ms, then as spiky. */
static int tt_prog_burst(const char *spikes, uint64_t events)
{
	for (uint64_t i = 0; i < events; i++)
		TT_INSTANT_ARG("seq", i);
	TT_BEGIN("slow");
	nanosleep(&(struct timespec){0, 30000000}, NULL);
	TT_END();
	return tt_prog_wait_logged(spikes, "\"slow\"", tt_prog_now_ms());
}

static int tt_prog_spiky(const char *spikes, const char *name)
{
	char quoted[256];
	snprintf(quoted, sizeof quoted, "\"%s\"", name);
	int64_t slow_end = 0;
	/* tt-sched asks for the thread's states out of line, after its first event: give
	 * it time, so that the spike's split (on CPU, preempted, blocked) is known. */
	TT_INSTANT("start");
	nanosleep(&(struct timespec){0, 100000000}, NULL);
	for (int i = 0; i < 3; i++) {
		TT_SCOPE("frame");
		for (int k = 0; k < 1000; k++) {
			TT_BEGIN("fast");
			TT_END();
		}
		if (i == 1) {
			TT_BEGIN("slow");
			struct timespec slow = {0, 30000000};
			nanosleep(&slow, NULL);
			TT_END();
			slow_end = tt_prog_now_ms();
		}
	}
	return tt_prog_wait_logged(spikes, quoted, slow_end);
}

static int tt_prog_exec(uint32_t events, const char *how)
{
	tt_prog_record_seq(0, 0, events);
	if (strcmp(how, "execl") == 0) {
		execl("/bin/true", "true", (char *)NULL);
	} else {
		char *const argv[] = {"true", NULL};
		execvp("true", argv);
	}
	return 1;
}

static int tt_prog_moves(const char *dir, uint32_t events)
{
	tt_prog_record_seq(0, 0, events);
	if (chdir(dir) < 0)
		return 1;
	tt_prog_record_seq(0, events, events);
	return 0;
}

static int tt_prog_overlimit(const char *path)
{
	tt_prog_record_seq(0, 0, 1000);
	(void)tt_dump(NULL);
	FILE *f = fopen(path, "we");
	static char block[1 << 20];
	if (!f || fwrite(block, 1, sizeof block, f) != sizeof block || fclose(f) != 0)
		return 1;
	return 0;
}

static int tt_prog_daemon(uint32_t events)
{
	tt_prog_record_seq(1, 0, events);
	if (daemon(1, 1) < 0)
		return 1;
	printf("%d\n", (int)getpid());
	fflush(stdout);
	tt_prog_record_seq(2, 0, events);
	return 0;
}

static pthread_key_t tt_prog_key;

/* Records in every round of key destructors, the last one too. */
static void tt_prog_key_destructor(void *arg)
{
	uint32_t number = (uint32_t)(uintptr_t)arg - 1;
	TT_INSTANT_ARG("seq", (uint64_t)number << 32 | 1000000);
	pthread_setspecific(tt_prog_key, arg);
}

static void *tt_prog_destructors_thread(void *arg)
{
	uint32_t number = (uint32_t)(uintptr_t)arg;
	tt_prog_record_seq(number, 0, 10);
	pthread_setspecific(tt_prog_key, (void *)(uintptr_t)(number + 1));
	return NULL;
}

static int tt_prog_destructors(uint32_t threads)
{
	if (pthread_key_create(&tt_prog_key, tt_prog_key_destructor))
		return 1;
	for (uint32_t i = 0; i < threads; i++) {
		pthread_t id;
		if (pthread_create(&id, NULL, tt_prog_destructors_thread, (void *)(uintptr_t)i))
			return 1;
		pthread_join(id, NULL);
	}
	return 0;
}


static int tt_prog_extremes(uint32_t rounds)
{
	for (uint32_t r = 0; r < rounds; r++) {
		TT_BEGIN("round");
		for (uint64_t ns = 0; ns < 1000; ns++)
			TT_THRESHOLD_NS(ns);
		for (size_t i = 0; i < TT_EDGES; i++) {
			TT_COUNTER("edge", (int64_t)tt_edges[i]);
			TT_INSTANT_ARG("edge", tt_edges[i]);
		}
		TT_END();
	}
	return 0;
}

static void tt_prog_values(void)
{
	struct timespec pause = {0, 100000};
	int64_t ready_at = tt_prog_now_ms() + 300;
	bool said = false;
	for (uint64_t i = 0;; i++) {
		TT_BEGIN("iter");
		TT_INSTANT_ARG("seq", i);
		TT_COUNTER("count", (int64_t)i);
		TT_END();
		if ((i & 63) == 0)
			nanosleep(&pause, NULL);
		if (!said && tt_prog_now_ms() >= ready_at) {
			printf("ready\n");
			fflush(stdout);
			said = true;
		}
	}
}

#ifdef TT_PROG_INTERNALS
#include "core/core.h"

static int tt_prog_hole(uint32_t events)
{
	tt_prog_record_seq(0, 0, 100);
	struct tt__slot *slot = tt__find_slot(tt_os_thread_key());
	if (!slot)
		return 1;
	__atomic_fetch_add(&slot->hot->cursor, sizeof(struct tt_record), __ATOMIC_RELAXED);
	tt_prog_record_seq(0, 100, events - 100);
	return 0;
}

static int tt_prog_held(uint32_t held, uint32_t events)
{
	tt__hold_chunks(1);
	tt_prog_record_seq(0, 0, held);
	tt__hold_chunks(0);
	tt_prog_record_seq(0, held, events);
	printf("%u\n", held + events);
	return 0;
}

static int tt_prog_torn(uint32_t events, const char *path)
{
	for (uint32_t i = 0; i < events; i++)
		TT_COUNTER("count", (int64_t)i);
	struct tt__slot *slot = tt__find_slot(tt_os_thread_key());
	if (!slot)
		return 1;
	struct tt_record *event = (struct tt_record *)__atomic_fetch_add(&slot->hot->cursor, 2 * sizeof *event,
									 __ATOMIC_RELAXED);
	event[0] = (struct tt_record){__builtin_ia32_rdtsc(), TT_RECORD_WORD(TT_REC_COUNTER, 0)};
	int err = tt_dump(path);
	event[1] = (struct tt_record){events, TT_RECORD_WORD(TT_REC_VALUE, 0)};
	return err != 0;
}
#endif

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "seq") == 0)
		return tt_prog_seq((uint32_t)atol(argv[2]), (uint32_t)atol(argv[3]));
	if (argc == 3 && strcmp(argv[1], "names") == 0)
		return tt_prog_names((uint32_t)atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "firsts") == 0)
		return tt_prog_firsts((uint32_t)atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "churn") == 0)
		return tt_prog_churn((uint32_t)atol(argv[2]));
	if (argc == 4 && strcmp(argv[1], "hold") == 0)
		return tt_prog_hold((uint32_t)atol(argv[2]), argv[3]);
	if (argc == 3 && strcmp(argv[1], "scopes") == 0)
		return tt_prog_scopes((uint32_t)atol(argv[2]));
	if (argc == 4 && strcmp(argv[1], "crash") == 0)
		return tt_prog_crash(argv[2], (uint32_t)atol(argv[3]));
#ifdef TT_PROG_INTERNALS
	if (argc == 3 && strcmp(argv[1], "hole") == 0)
		return tt_prog_hole((uint32_t)atol(argv[2]));
	if (argc == 4 && strcmp(argv[1], "held") == 0)
		return tt_prog_held((uint32_t)atol(argv[2]), (uint32_t)atol(argv[3]));
	if (argc == 4 && strcmp(argv[1], "torn") == 0)
		return tt_prog_torn((uint32_t)atol(argv[2]), argv[3]);
#endif
	if (argc == 4 && strcmp(argv[1], "burst") == 0)
		return tt_prog_burst(argv[2], (uint64_t)atoll(argv[3]));
	if ((argc == 3 || argc == 4) && strcmp(argv[1], "spiky") == 0)
		return tt_prog_spiky(argv[2], argc == 4 ? argv[3] : "slow");
	if (argc == 4 && strcmp(argv[1], "exec") == 0)
		return tt_prog_exec((uint32_t)atol(argv[2]), argv[3]);
	if (argc == 4 && strcmp(argv[1], "moves") == 0)
		return tt_prog_moves(argv[2], (uint32_t)atol(argv[3]));
	if (argc == 3 && strcmp(argv[1], "overlimit") == 0)
		return tt_prog_overlimit(argv[2]);
	if (argc == 3 && strcmp(argv[1], "daemon") == 0)
		return tt_prog_daemon((uint32_t)atol(argv[2]));
	if (argc == 3 && strcmp(argv[1], "destructors") == 0)
		return tt_prog_destructors((uint32_t)atol(argv[2]));
	if (argc == 2 && strcmp(argv[1], "values") == 0)
		tt_prog_values();
	if ((argc == 3 || argc == 4) && strcmp(argv[1], "fork") == 0)
		return tt_prog_fork((uint32_t)atol(argv[2]), argc == 4 ? argv[3] : NULL);
	if (argc == 4 && strcmp(argv[1], "dumps") == 0)
		return tt_prog_dumps((uint32_t)atol(argv[2]), argv[3]);
	if (argc == 4 && strcmp(argv[1], "dumped") == 0)
		return tt_prog_dumped_run((uint32_t)atol(argv[2]), argv[3]);
	if (argc == 4 && strcmp(argv[1], "seconds") == 0)
		return tt_prog_seconds((uint32_t)atol(argv[2]), atol(argv[3]));
	if (argc == 3 && strcmp(argv[1], "extremes") == 0)
		return tt_prog_extremes((uint32_t)atol(argv[2]));
	fprintf(stderr, "usage: see the top of tests/programs/tt_longrun_prog.c\n");
	return 2;
}
