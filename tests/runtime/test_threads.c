/* The recorder under threads and signals: every event kept, on the right thread.
 * Each test uses site names of its own and looks only at those, since all tests
 * share the process's recorder. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ticktrace.h"
#include "tt_test_trace.h"

/* ---- sequences: each event of site "seq" carries its test, the number of the
 * thread that recorded it and its place in that thread's sequence ---- */

#define TT_TEST_SEQ(test, number, seq) ((uint64_t)(test) << 48 | (uint64_t)(number) << 32 | (seq))
enum tt_test_id {
	TT_TEST_LIVE = 1,
	TT_TEST_COLLIDE,
	TT_TEST_STORM,
	TT_TEST_HANDLER,
	TT_TEST_SHARED_PAUSED
};

#define TT_TEST_MAX_THREADS 1024

struct tt_test_sequences {
	uint64_t test;             /* the test whose events are checked */
	uint32_t threads_seen;     /* file threads that hold such events */
	uint32_t next[TT_TEST_MAX_THREADS]; /* next expected sequence number, per number */
	uint32_t owner_tid[TT_TEST_MAX_THREADS];
	const struct tt_thread *last_thread;
	uint32_t last_number;
};

static void tt_test_check_sequence(const struct tt_test_event *e, void *arg)
{
	struct tt_test_sequences *s = arg;
	if (strcmp(e->name, "seq") != 0 || e->value >> 48 != s->test)
		return;
	uint32_t number = (uint32_t)(e->value >> 32) & 0xffff, seq = (uint32_t)e->value;
	assert_true(number < TT_TEST_MAX_THREADS);
	if (e->thread != s->last_thread) {
		s->threads_seen++;
		s->last_thread = e->thread;
		s->last_number = number;
		/* A number is recorded by one thread only: never two buffers for it. */
		assert_int_equal(s->owner_tid[number], 0);
		s->owner_tid[number] = e->thread->tid;
	}
	/* Never another thread's event in this thread's buffer, nothing lost between. */
	assert_int_equal(number, s->last_number);
	assert_int_equal(seq, s->next[number]);
	s->next[number]++;
}

static void tt_test_verify_sequences(enum tt_test_id test, uint32_t threads, uint32_t per_thread)
{
	struct tt_test_trace trace;
	tt_test_dump(&trace);
	struct tt_test_sequences *s = calloc(1, sizeof *s);
	s->test = test;
	tt_test_each_event(&trace, tt_test_check_sequence, s);
	assert_int_equal(s->threads_seen, threads);
	for (uint32_t i = 0; i < threads; i++)
		assert_int_equal(s->next[i], per_thread);
	for (size_t t = 0; t < trace.file.nthreads; t++)
		assert_int_equal(trace.file.threads[t].dropped_total, 0);
	free(s);
	tt_test_close(&trace);
}

/* ---- 1,000 live threads, 10,000 events each ---- */

struct tt_test_worker {
	pthread_barrier_t *live; /* everyone is alive before anyone records or exits */
	enum tt_test_id test;
	uint32_t number, events;
	uintptr_t thread_pointer;
};

static void *tt_test_record_sequence(void *arg)
{
	struct tt_test_worker *w = arg;
	w->thread_pointer = (uintptr_t)pthread_self();
	pthread_barrier_wait(w->live);
	for (uint32_t i = 0; i < w->events; i++)
		TT_INSTANT_ARG("seq", TT_TEST_SEQ(w->test, w->number, i));
	pthread_barrier_wait(w->live);
	return NULL;
}

static void test_thousand_live_threads(void **state)
{
	(void)state;
	enum { THREADS = 1000, EVENTS = 10000 };
	static struct tt_test_worker workers[THREADS];
	static pthread_t threads[THREADS];
	pthread_barrier_t live;
	pthread_barrier_init(&live, NULL, THREADS);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (uint32_t i = 0; i < THREADS; i++) {
		workers[i] = (struct tt_test_worker){&live, TT_TEST_LIVE, i, EVENTS, 0};
		assert_int_equal(pthread_create(&threads[i], &attr, tt_test_record_sequence, &workers[i]), 0);
	}
	for (uint32_t i = 0; i < THREADS; i++)
		pthread_join(threads[i], NULL);
	pthread_barrier_destroy(&live);
	tt_test_verify_sequences(TT_TEST_LIVE, THREADS, EVENTS);
}

/* ---- threads whose thread pointers hash alike, chosen on purpose ---- */

/* glibc places the thread descriptor, whose address is the thread pointer, at a fixed
 * distance below the top of a stack the caller provides. */
static void *tt_test_report_self(void *arg)
{
	*(uintptr_t *)arg = (uintptr_t)pthread_self();
	return NULL;
}

/* Stacks for `n` threads whose thread pointers share one table index, in a region of
 * 16,384 64 KiB stacks (*region; unmap with tt_test_unmap_stacks). */
enum { TT_TEST_STACK = 64 * 1024, TT_TEST_STACKS = 16384 };

static void tt_test_colliding_stacks(char **region, int n, char **stacks)
{
	*region = mmap(NULL, (size_t)TT_TEST_STACK * TT_TEST_STACKS, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(*region != MAP_FAILED);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	uintptr_t probe_tp;
	pthread_t probe;
	pthread_attr_setstack(&attr, *region, TT_TEST_STACK);
	pthread_create(&probe, &attr, tt_test_report_self, &probe_tp);
	pthread_join(probe, NULL);
	pthread_attr_destroy(&attr);
	uintptr_t below_top = (uintptr_t)*region + TT_TEST_STACK - probe_tp;

	static uint16_t first_at[1 << 16];
	static uint16_t next_same[TT_TEST_STACKS];
	memset(first_at, 0xff, sizeof first_at);
	int found = 0;
	for (int k = 1; k < TT_TEST_STACKS && !found; k++) {
		uintptr_t tp = (uintptr_t)*region + (uintptr_t)(k + 1) * TT_TEST_STACK - below_top;
		uint32_t h = tt_test_table_index(tp);
		next_same[k] = first_at[h];
		first_at[h] = (uint16_t)k;
		int alike = 0;
		for (int j = k; j != 0xffff && alike < n; j = next_same[j])
			stacks[alike++] = *region + (size_t)j * TT_TEST_STACK;
		found = alike == n;
	}
	assert_true(found);
}

static void tt_test_unmap_stacks(char *region)
{
	munmap(region, (size_t)TT_TEST_STACK * TT_TEST_STACKS);
}

static void test_colliding_thread_pointers(void **state)
{
	(void)state;
	/* Three on one index: the hot path's entry belongs to one of them, the others
	 * are found by probing. (Six alike among 16,384 would be too rare to find.) */
	enum { THREADS = 3 };
	char *region, *stacks[THREADS];
	tt_test_colliding_stacks(&region, THREADS, stacks);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_barrier_t live;
	pthread_barrier_init(&live, NULL, THREADS);
	struct tt_test_worker workers[THREADS];
	pthread_t threads[THREADS];
	for (int i = 0; i < THREADS; i++) {
		workers[i] = (struct tt_test_worker){&live, TT_TEST_COLLIDE, (uint32_t)i, 20000, 0};
		pthread_attr_setstack(&attr, stacks[i], TT_TEST_STACK);
		assert_int_equal(pthread_create(&threads[i], &attr, tt_test_record_sequence, &workers[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(threads[i], NULL);
	uint32_t index = tt_test_table_index(workers[0].thread_pointer);
	for (int i = 1; i < THREADS; i++)
		assert_int_equal(tt_test_table_index(workers[i].thread_pointer), index);
	pthread_barrier_destroy(&live);
	pthread_attr_destroy(&attr);
	tt_test_verify_sequences(TT_TEST_COLLIDE, THREADS, 20000);
	tt_test_unmap_stacks(region);
}

/* The owner of the entry two threads share pauses: the other records on (the hot
 * path once took the owner's "off" for its own and lost its events uncounted). */
struct tt_test_pauser {
	struct tt_test_worker w;
	pthread_barrier_t *paused, *done;
};

static void *tt_test_record_then_pause(void *arg)
{
	struct tt_test_pauser *p = arg;
	for (uint32_t i = 0; i < p->w.events; i++)
		TT_INSTANT_ARG("seq", TT_TEST_SEQ(p->w.test, p->w.number, i));
	tt_pause();
	pthread_barrier_wait(p->paused);
	pthread_barrier_wait(p->done);
	tt_resume();
	return NULL;
}

static void *tt_test_record_while_paused(void *arg)
{
	struct tt_test_pauser *p = arg;
	pthread_barrier_wait(p->paused);
	for (uint32_t i = 0; i < p->w.events; i++)
		TT_INSTANT_ARG("seq", TT_TEST_SEQ(p->w.test, p->w.number, i));
	pthread_barrier_wait(p->done);
	return NULL;
}

static void test_paused_owner_of_a_shared_entry(void **state)
{
	(void)state;
	enum { EVENTS = 5000 };
	char *region, *stacks[2];
	tt_test_colliding_stacks(&region, 2, stacks);
	pthread_barrier_t paused, done;
	pthread_barrier_init(&paused, NULL, 2);
	pthread_barrier_init(&done, NULL, 2);
	struct tt_test_pauser p[2] = {
		{{NULL, TT_TEST_SHARED_PAUSED, 0, EVENTS, 0}, &paused, &done},
		{{NULL, TT_TEST_SHARED_PAUSED, 1, EVENTS, 0}, &paused, &done},
	};
	void *(*mains[2])(void *) = {tt_test_record_then_pause, tt_test_record_while_paused};
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_t threads[2];
	for (int i = 0; i < 2; i++) {
		pthread_attr_setstack(&attr, stacks[i], TT_TEST_STACK);
		assert_int_equal(pthread_create(&threads[i], &attr, mains[i], &p[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	pthread_attr_destroy(&attr);
	pthread_barrier_destroy(&paused);
	pthread_barrier_destroy(&done);
	tt_test_verify_sequences(TT_TEST_SHARED_PAUSED, 2, EVENTS);
	tt_test_unmap_stacks(region);
}

/* ---- 20,000 threads one after another: stacks, and thread pointers, are reused ---- */

static void *tt_test_churn_one(void *arg)
{
	struct tt_test_worker *w = arg;
	w->thread_pointer = (uintptr_t)pthread_self();
	TT_BEGIN_ARG("churn", w->number);
	TT_END();
	return NULL;
}

struct tt_test_churn {
	uint8_t *seen;
	uint32_t begins, ends;
	const struct tt_thread *last_thread;
};

static void tt_test_check_churn(const struct tt_test_event *e, void *arg)
{
	struct tt_test_churn *c = arg;
	if (e->kind == TT_REC_BEGIN_ARG && strcmp(e->name, "churn") == 0) {
		assert_true(e->value < 20000);
		assert_int_equal(c->seen[e->value], 0); /* each thread's event once */
		/* A new thread is a new thread in the trace, even on a reused stack. */
		assert_ptr_not_equal(e->thread, c->last_thread);
		c->seen[e->value] = 1;
		c->last_thread = e->thread;
		c->begins++;
	} else if (e->kind == TT_REC_END && e->thread == c->last_thread) {
		c->ends++;
	}
}

static void test_twenty_thousand_threads_in_turn(void **state)
{
	(void)state;
	enum { THREADS = 20000 };
	uintptr_t *pointers = calloc(THREADS, sizeof *pointers);
	for (uint32_t i = 0; i < THREADS; i++) {
		struct tt_test_worker w = {.number = i};
		pthread_t thread;
		assert_int_equal(pthread_create(&thread, NULL, tt_test_churn_one, &w), 0);
		pthread_join(thread, NULL);
		pointers[i] = w.thread_pointer;
	}
	/* The point of the test: glibc did hand out the same thread pointer again. */
	int reused = 0;
	for (uint32_t i = 1; i < THREADS && !reused; i++)
		reused = pointers[i] == pointers[0];
	assert_true(reused);
	free(pointers);

	struct tt_test_trace trace;
	tt_test_dump(&trace);
	struct tt_test_churn churn = {.seen = calloc(THREADS, 1)};
	tt_test_each_event(&trace, tt_test_check_churn, &churn);
	assert_int_equal(churn.begins, THREADS);
	assert_int_equal(churn.ends, THREADS);
	free(churn.seen);
	tt_test_close(&trace);
}

/* ---- a signal storm: handlers record while the hot path is interrupted ---- */

static volatile uint32_t tt_test_handled;

static void tt_test_on_signal(int sig)
{
	(void)sig;
	uint32_t n = tt_test_handled;
	TT_BEGIN("handler");
	TT_INSTANT_ARG("seq", TT_TEST_SEQ(TT_TEST_HANDLER, 0, n));
	TT_END();
	tt_test_handled = n + 1;
}

struct tt_test_handler_pairs {
	uint32_t depth, begins, ends, instants;
};

static void tt_test_check_handler_nesting(const struct tt_test_event *e, void *arg)
{
	struct tt_test_handler_pairs *p = arg;
	if (e->kind == TT_REC_BEGIN && strcmp(e->name, "handler") == 0) {
		assert_int_equal(p->depth, 0); /* handlers do not nest here */
		p->depth++;
		p->begins++;
	} else if (e->kind == TT_REC_INSTANT_ARG && e->value >> 48 == TT_TEST_HANDLER) {
		assert_int_equal(p->depth, 1);
		p->instants++;
	} else if (e->kind == TT_REC_END && p->depth) {
		p->depth--;
		p->ends++;
	}
}

/* A signal sent to a thread that is busy in user space waits for the target's next
 * kernel entry (on a virtual machine, the next timer tick). A per-thread timer armed
 * by the target fires as an interrupt on the target's own CPU, so its signals land
 * anywhere in the hot path, thousands of times a second. */
static void test_signal_storm(void **state)
{
	(void)state;
	enum { EVENTS = 1000000, LEAST = 100 };
	struct sigaction sa = {.sa_handler = tt_test_on_signal};
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR1};
	sev._sigev_un._tid = gettid();
	timer_t timer;
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
	struct itimerspec every_20us = {{0, 20000}, {0, 20000}};
	timer_settime(timer, 0, &every_20us, NULL);
	for (uint32_t i = 0; i < EVENTS; i++)
		TT_INSTANT_ARG("seq", TT_TEST_SEQ(TT_TEST_STORM, 0, i));
	timer_delete(timer);
	signal(SIGUSR1, SIG_IGN);
	print_message("signal storm: %u signals handled during %d events\n", tt_test_handled, EVENTS);
	assert_true(tt_test_handled >= LEAST);

	/* The interrupted sequence is whole and in order, and so is the handlers'. */
	tt_test_verify_sequences(TT_TEST_STORM, 1, EVENTS);
	tt_test_verify_sequences(TT_TEST_HANDLER, 1, tt_test_handled);
	struct tt_test_trace trace;
	tt_test_dump(&trace);
	struct tt_test_handler_pairs pairs = {0};
	tt_test_each_event(&trace, tt_test_check_handler_nesting, &pairs);
	tt_test_close(&trace);
	assert_int_equal(pairs.begins, tt_test_handled);
	assert_int_equal(pairs.instants, tt_test_handled);
	assert_int_equal(pairs.ends, tt_test_handled);
}

/* ---- on/off ---- */

struct tt_test_count {
	const char *name;
	uint32_t count;
};

static void tt_test_count_named(const struct tt_test_event *e, void *arg)
{
	struct tt_test_count *c = arg;
	c->count += strcmp(e->name, c->name) == 0;
}

static uint32_t tt_test_count_events(const char *name)
{
	struct tt_test_trace trace;
	tt_test_dump(&trace);
	struct tt_test_count count = {name, 0};
	tt_test_each_event(&trace, tt_test_count_named, &count);
	tt_test_close(&trace);
	return count.count;
}

static void test_disable_and_enable(void **state)
{
	(void)state;
	tt_disable();
	for (int i = 0; i < 100; i++)
		TT_INSTANT("while-off");
	tt_enable();
	for (int i = 0; i < 100; i++)
		TT_INSTANT("while-on");
	assert_int_equal(tt_test_count_events("while-off"), 0);
	assert_int_equal(tt_test_count_events("while-on"), 100);
}

/* A thread that exits paused leaves its table entry to the next thread on its stack,
 * which records (the entry's "off" must not outlive its owner). */
static void *tt_test_exit_paused(void *arg)
{
	*(uintptr_t *)arg = (uintptr_t)pthread_self();
	TT_INSTANT("before-pause");
	tt_pause();
	TT_INSTANT("while-paused");
	return NULL;
}

static void *tt_test_record_after(void *arg)
{
	*(uintptr_t *)arg = (uintptr_t)pthread_self();
	for (int i = 0; i < 100; i++)
		TT_INSTANT("on-the-same-stack");
	return NULL;
}

static void test_paused_thread_exits_and_its_stack_records(void **state)
{
	(void)state;
	enum { STACK = 256 * 1024 };
	void *stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(stack != MAP_FAILED);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, stack, STACK);
	uintptr_t first, second;
	pthread_t thread;
	assert_int_equal(pthread_create(&thread, &attr, tt_test_exit_paused, &first), 0);
	pthread_join(thread, NULL);
	assert_int_equal(pthread_create(&thread, &attr, tt_test_record_after, &second), 0);
	pthread_join(thread, NULL);
	assert_int_equal(first, second); /* one thread pointer: one table entry */
	assert_int_equal(tt_test_count_events("while-paused"), 0);
	assert_int_equal(tt_test_count_events("on-the-same-stack"), 100);
	pthread_attr_destroy(&attr);
	munmap(stack, STACK);
}

/* Threads that first record while recording is off (no entry yet) record once it is
 * on again. */
static void *tt_test_record_on_and_off(void *arg)
{
	pthread_barrier_t *barrier = arg;
	for (int i = 0; i < 50; i++)
		TT_INSTANT("new-while-off");
	pthread_barrier_wait(barrier); /* tt_enable */
	pthread_barrier_wait(barrier);
	for (int i = 0; i < 50; i++)
		TT_INSTANT("new-then-on");
	return NULL;
}

static void test_new_threads_while_disabled(void **state)
{
	(void)state;
	pthread_barrier_t barrier;
	pthread_barrier_init(&barrier, NULL, 2);
	tt_disable();
	pthread_t thread;
	assert_int_equal(pthread_create(&thread, NULL, tt_test_record_on_and_off, &barrier), 0);
	pthread_barrier_wait(&barrier);
	tt_enable();
	pthread_barrier_wait(&barrier);
	pthread_join(thread, NULL);
	pthread_barrier_destroy(&barrier);
	assert_int_equal(tt_test_count_events("new-while-off"), 0);
	assert_int_equal(tt_test_count_events("new-then-on"), 50);
}

/* ---- the file itself ---- */

static void test_dump_file_is_private_and_replaces_links(void **state)
{
	(void)state;
	char dir[] = "/tmp/tt-dump-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char target[128], link[128];
	snprintf(target, sizeof target, "%s/target", dir);
	snprintf(link, sizeof link, "%s/trace.ttr", dir);
	FILE *f = fopen(target, "w");
	fputs("keep me", f);
	fclose(f);
	assert_int_equal(symlink(target, link), 0);
	TT_INSTANT("file");
	assert_int_equal(tt_dump(link), 0);

	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISREG(st.st_mode)); /* the link was replaced, not followed */
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_size, 7);
	/* Nothing but the two files: no temporary left behind. */
	char cmd[256];
	snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 2", dir);
	assert_int_equal(system(cmd), 0);
	snprintf(link, sizeof link, "%s/missing/trace.ttr", dir);
	assert_int_equal(tt_dump(link), -ENOENT);
	assert_int_equal(tt_dump(dir), -EISDIR);
	/* A device is written in place: renaming over /dev/null would replace it. */
	assert_int_equal(tt_dump("/dev/null"), 0);
	assert_int_equal(lstat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	snprintf(cmd, sizeof cmd, "rm -r %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	/* (the small ones first: each check dumps all the process has recorded, and after
	 * the storm's and the 20,000 threads' that took 25 s a test, 4 minutes under ASan) */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disable_and_enable),
		cmocka_unit_test(test_paused_thread_exits_and_its_stack_records),
		cmocka_unit_test(test_new_threads_while_disabled),
		cmocka_unit_test(test_dump_file_is_private_and_replaces_links),
		cmocka_unit_test(test_thousand_live_threads),
		cmocka_unit_test(test_colliding_thread_pointers),
		cmocka_unit_test(test_paused_owner_of_a_shared_entry),
		cmocka_unit_test(test_twenty_thousand_threads_in_turn),
		cmocka_unit_test(test_signal_storm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
