/* Thread states (TICKTRACE_SCHED): each recording thread asks the kernel for its own
 * context switches when it registers (its first event, the slow path), and
 * ticktrace's thread "tt-sched" moves them from the kernel's ring into the thread's
 * store every TT__SCHED_DRAIN_NS; the writer takes them from there (SCHED sections).
 * A refusal (seccomp, perf_event_paranoid 3, no descriptor or locked memory left)
 * is said once and the thread records without states. The recording threads never
 * touch any of it after registering, until they exit. */
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/core.h"

#define TT__SCHED_DRAIN_NS 10000000 /* 10 ms: a ring of 512 switches, 51,200 a second */
#define TT__SCHED_BLOCK_BYTES (64u * 1024u)
#define TT__SCHED_BLOCK_STATES \
	((TT__SCHED_BLOCK_BYTES - sizeof(struct tt__sched_block)) / sizeof(struct tt_sched_state))
/* A thread's store holds 64 blocks at most (262,080 states, 4 MiB): mode stop keeps
 * the first, ring the latest, stream writes them as they fill. */
#define TT__SCHED_BLOCKS_MAX 64

static pthread_mutex_t tt__sched_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct tt__sched_block *tt__sched_free; /* lock held */
static int tt__sched_off;       /* TICKTRACE_SCHED=0, or the kernel said no for good */
static int tt__sched_said;      /* the refusal was said */
static uint32_t tt__sched_wake; /* futex word: bumped to stop the drain's sleep */
static int tt__sched_open_events; /* threads whose switches are being recorded */

void tt__sched_lock(sigset_t *old)
{
	tt__block_signals(old);
	pthread_mutex_lock(&tt__sched_mutex);
}

void tt__sched_unlock(const sigset_t *old)
{
	pthread_mutex_unlock(&tt__sched_mutex);
	tt__restore_signals(old);
}

/* The slow path, registering the calling thread (registry lock held, signals
 * blocked): a line on stderr, once, and only write(2) (no malloc here). */
static void tt__sched_refused(int err, int denied)
{
	/* Not allowed for any thread: do not ask again. */
	if (denied)
		__atomic_store_n(&tt__sched_off, 1, __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&tt__sched_said, 1, __ATOMIC_RELAXED))
		return;
	char line[256];
	int n = snprintf(line, sizeof line,
			 "ticktrace: no thread states for thread %d (perf_event_open: %s): the trace "
			 "says when threads ran only for those that have them\n",
			 (int)gettid(), strerror(-err));
	if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

void tt__sched_open(struct tt__slot *slot)
{
	slot->sched.sw.fd = -1;
	if (__atomic_load_n(&tt__sched_off, __ATOMIC_RELAXED))
		return;
	int denied;
	int err = tt__switches_open(&slot->sched.sw, &denied);
	if (err) {
		tt__sched_refused(err, denied);
		return;
	}
	slot->sched.on = 1;
	__atomic_add_fetch(&tt__sched_open_events, 1, __ATOMIC_RELAXED);
	/* The drain runs from the first thread that has states. */
	__atomic_add_fetch(&tt__sched_wake, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &tt__sched_wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Lock held: a block to fill, the store's last if it has room, or NULL (the state is
 * lost: mode stop, the store full). Mode ring recycles its oldest. */
static struct tt__sched_block *tt__sched_room(struct tt__sched *s)
{
	struct tt__sched_block *b = s->last;
	if (b && b->count < TT__SCHED_BLOCK_STATES)
		return b;
	if (s->blocks >= TT__SCHED_BLOCKS_MAX) {
		if (tt__config.mode != TT__MODE_RING)
			return NULL;
		b = s->first;
		s->first = b->next;
		s->blocks--;
		if (!s->first)
			s->last = NULL;
		/* What it held is gone from before the next block's first state. */
		if (s->first)
			s->first->lost_before += b->lost_before + b->count;
	} else if (tt__sched_free) {
		b = tt__sched_free;
		tt__sched_free = b->next;
	} else {
		b = mmap(NULL, TT__SCHED_BLOCK_BYTES, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b == MAP_FAILED)
			return NULL;
	}
	b->next = NULL;
	b->count = 0;
	b->lost_before = s->lost;
	s->lost = 0;
	if (s->last)
		s->last->next = b;
	else
		s->first = b;
	s->last = b;
	s->blocks++;
	return b;
}

void tt__sched_drain_slot(struct tt__slot *slot)
{
	struct tt__sched *s = &slot->sched;
	if (s->sw.fd < 0)
		return;
	for (;;) {
		struct tt__sched_block *b = tt__sched_room(s);
		struct tt_sched_state spill[64];
		struct tt_sched_state *to = b ? &b->states[b->count] : spill;
		size_t cap = b ? TT__SCHED_BLOCK_STATES - b->count : 64;
		size_t n = tt__switches_read(&s->sw, to, cap);
		s->lost += s->sw.lost;
		s->sw.lost = 0;
		if (b)
			b->count += (uint32_t)n;
		else
			s->lost += n;
		if (n < cap)
			return;
	}
}

void tt__sched_drain(struct tt__slot *only)
{
	sigset_t old;
	tt__sched_lock(&old);
	if (only) {
		tt__sched_drain_slot(only);
	} else {
		for (struct tt__slot *slot = tt__registry_head(); slot;
		     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE))
			tt__sched_drain_slot(slot);
	}
	tt__sched_unlock(&old);
}

void tt__sched_thread_exited(struct tt__slot *slot)
{
	if (slot->sched.sw.fd < 0)
		return;
	sigset_t old;
	tt__sched_lock(&old);
	tt__sched_drain_slot(slot);
	tt__switches_close(&slot->sched.sw);
	__atomic_sub_fetch(&tt__sched_open_events, 1, __ATOMIC_RELAXED);
	tt__sched_unlock(&old);
}

void tt__sched_release(struct tt__sched *s)
{
	if (s->last) {
		s->last->next = tt__sched_free;
		tt__sched_free = s->first;
	}
	s->first = s->last = NULL;
	s->blocks = 0;
}

int tt__sched_any(void)
{
	return __atomic_load_n(&tt__sched_open_events, __ATOMIC_RELAXED) > 0;
}

static void *tt__sched_main(void *unused)
{
	(void)unused;
	tt__thread_running("tt-sched");
	for (;;) {
		uint32_t seq = __atomic_load_n(&tt__sched_wake, __ATOMIC_ACQUIRE);
		if (!tt__sched_any()) {
			/* no thread has states yet: sleep until one does */
			syscall(SYS_futex, &tt__sched_wake, FUTEX_WAIT_PRIVATE, seq, NULL, NULL, 0);
			continue;
		}
		tt__sched_drain(NULL);
		struct timespec period = {0, TT__SCHED_DRAIN_NS};
		nanosleep(&period, NULL);
	}
	return NULL;
}


int tt__sched_start(int off)
{
	tt__sched_off = off;
	if (off)
		return 0;
	int err = tt__start_thread(NULL, tt__sched_main, NULL, 1, 1);
	if (err)
		tt__sched_off = 1;
	return err;
}

void tt__sched_after_fork(void)
{
	/* The parent's threads' events are not the child's: close them (this thread's
	 * too: it asks again for its own at its next event). */
	pthread_mutex_init(&tt__sched_mutex, NULL);
	for (struct tt__slot *slot = tt__registry_head(); slot; slot = slot->next) {
		if (slot->sched.sw.fd >= 0)
			tt__switches_close(&slot->sched.sw);
		tt__sched_release(&slot->sched);
	}
	tt__sched_open_events = 0;
	if (!tt__sched_off && tt__start_thread(NULL, tt__sched_main, NULL, 1, 0) < 0)
		tt__sched_off = 1;
}
