/* Thread states (TICKTRACE_SCHED): each recording thread asks the kernel for its own
 * context switches when it registers (its first event, the slow path, which only
 * says so), ticktrace's thread "tt-sched" asks the kernel for them (perf_event_open of
 * the thread's tid) and moves them from the kernel's ring into the thread's store
 * every TT__SCHED_DRAIN_NS; the writer takes them from there (SCHED sections).
 * A refusal (seccomp, perf_event_paranoid 3, no descriptor or locked memory left)
 * is counted, the thread records without states, and at exit one line says which
 * threads went without and why. No descriptor is kept: the ring's mapping holds the
 * event, and tt-sched opens them in a table of descriptors of its own, out of the
 * program's (its limit, its closefrom). The recording threads never touch any of it
 * after registering, until they exit. */
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/core_internal.h"

#define TT__SCHED_DRAIN_NS 10000000 /* 10 ms: a ring of 512 switches, 51,200 a second */
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

static struct tt__lock tt__sched = TT__LOCK_INIT(TT__LOCK_SCHED);
static struct tt__sched_block *tt__sched_free, *tt__sched_free_small; /* lock held */
static struct tt__slab tt__sched_slab = {.slab_size = 64 * 1024}; /* the small ones */
static int tt__sched_off;       /* TICKTRACE_SCHED=0, or the kernel said no for good */
static uint32_t tt__sched_wake; /* futex word: bumped to stop the drain's sleep */
static int tt__sched_wanted; /* threads that want their switches recorded */
static uint64_t tt__sched_block_seq; /* lock held */

void tt__sched_lock(sigset_t *old)
{
	tt__block_signals(old);
	tt__lock(&tt__sched);
}

void tt__sched_unlock(const sigset_t *old)
{
	tt__unlock(&tt__sched);
	tt__restore_signals(old);
}

/* Threads that went without states, and why (lock held): said at exit (tt-sched,
 * in a table of descriptors of its own, has no stderr). */
#define TT__SCHED_REFUSED_NAMED 8
static struct {
	unsigned threads;
	uint32_t tids[TT__SCHED_REFUSED_NAMED];
	int errs[4];             /* the distinct reasons (-errno) */
	unsigned err_threads[4]; /* and how many threads each */
} tt__sched_refusals;

/* tt-sched: the thread counted. */
static void tt__sched_refused(const struct tt__slot *slot, int err, int denied)
{
	/* Not allowed for any thread: do not ask again. */
	if (denied)
		tt__sched_off = 1;
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
	sigset_t old;
	tt__sched_lock(&old);
	unsigned n = tt__sched_refusals.threads;
	char line[512];
	int len = 0;
	if (n == 1) {
		len = snprintf(line, sizeof line, "ticktrace: no thread states for thread %u (perf_event_open: %s)",
			       tt__sched_refusals.tids[0], strerror(-tt__sched_refusals.errs[0]));
	} else if (n > 1) {
		len = snprintf(line, sizeof line, "ticktrace: %u threads had no thread states (tid", n);
		for (unsigned i = 0; i < n && i < TT__SCHED_REFUSED_NAMED; i++)
			len += snprintf(line + len, sizeof line - (size_t)len, "%s %u", i ? "," : "",
					tt__sched_refusals.tids[i]);
		len += snprintf(line + len, sizeof line - (size_t)len, "%s; perf_event_open:",
				n > TT__SCHED_REFUSED_NAMED ? ", ..." : "");
		for (int i = 0; i < 4 && tt__sched_refusals.errs[i]; i++)
			len += snprintf(line + len, sizeof line - (size_t)len, "%s %u for %s", i ? "," : "",
					tt__sched_refusals.err_threads[i], strerror(-tt__sched_refusals.errs[i]));
		len += snprintf(line + len, sizeof line - (size_t)len, ")");
	}
	if (n)
		fprintf(stderr, "%s: the trace says when threads ran only for those that have them\n", line);
	tt__sched_unlock(&old);
}

void tt__sched_open(struct tt__slot *slot)
{
	slot->sched.sw.map = NULL;
	if (__atomic_load_n(&tt__sched_off, __ATOMIC_RELAXED))
		return;
	/* tt-sched asks the kernel for it (tens of microseconds, which the thread's first
	 * event does not wait for): its switches from then on. */
	slot->sched.wanted = 1;
	__atomic_add_fetch(&tt__sched_wanted, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&tt__sched_wake, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &tt__sched_wake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Lock held, tt-sched: asks the kernel for the switches of a thread that wants them. */
static void tt__sched_ask(struct tt__slot *slot)
{
	struct tt__sched *s = &slot->sched;
	if (!s->wanted || s->sw.map || s->asked)
		return;
	s->asked = 1;
	if (tt__sched_off)
		return;
	int denied;
	int err = tt__switches_open(&s->sw, (int)slot->tid, &denied);
	if (err) {
		tt__sched_refused(slot, err, denied);
		return;
	}
	/* (after the kernel began to record them: every switch from now on is there) */
	s->since_ns = tt__clock_ns(CLOCK_MONOTONIC);
	s->on = 1;
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
			s->first->lost_before += b->lost_before + b->count;
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
		else if ((b = mmap(NULL, TT__SCHED_BLOCK_BYTES, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
			return NULL;
		b->cap = TT__SCHED_STATES(TT__SCHED_BLOCK_BYTES);
	}
	b->next = NULL;
	b->count = 0;
	b->seq = ++tt__sched_block_seq;
	b->lost_before = s->lost;
	b->since_ns = s->lost ? TT__SINCE_FIRST
		    : s->last ? s->last->states[s->last->count - 1].ns : s->since_ns;
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
	if (!s->sw.map)
		return;
	for (;;) {
		struct tt__sched_block *b = tt__sched_room(s);
		struct tt_sched_state spill[64];
		struct tt_sched_state *to = b ? &b->states[b->count] : spill;
		size_t cap = b ? b->cap - b->count : 64;
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
		     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
			tt__sched_ask(slot);
			tt__sched_drain_slot(slot);
		}
	}
	tt__sched_unlock(&old);
}

void tt__sched_thread_exited(struct tt__slot *slot)
{
	if (!slot->sched.wanted)
		return;
	sigset_t old;
	tt__sched_lock(&old);
	tt__sched_drain_slot(slot);
	tt__switches_close(&slot->sched.sw);
	slot->sched.wanted = 0; /* its tid may be another thread's from now on */
	__atomic_sub_fetch(&tt__sched_wanted, 1, __ATOMIC_RELAXED);
	tt__sched_unlock(&old);
}

/* Lock held: the states from `from`'s state `skip` on, where a reader stopped (its
 * lost states were said then), or from the first block's (from NULL), as SCHED
 * sections say them; *at (NULL: none) moves past them. */
static void tt__sched_walk(struct tt__slot *slot, const struct tt__sched_block *from, uint32_t skip,
			   tt__sched_section_fn fn, void *ctx, struct tt__sched_cursor *at)
{
	const struct tt__sched *s = &slot->sched;
	int64_t last_ns = skip ? from->states[skip - 1].ns : s->since_ns;
	for (const struct tt__sched_block *b = from ? from : s->first; b; b = b->next, skip = 0) {
		if (at)
			*at = (struct tt__sched_cursor){b, b->seq, b->count};
		uint64_t lost = b == from ? 0 : b->lost_before;
		if (b->count == skip && !lost)
			continue;
		int64_t since = skip ? last_ns
			      : b->since_ns != TT__SINCE_FIRST ? b->since_ns
			      : b->count ? b->states[0].ns : last_ns;
		/* The kernel recorded from a moment before since_ns was read: its first
		 * states may be older. */
		if (b->count > skip && b->states[skip].ns < since)
			since = b->states[skip].ns;
		fn(ctx, slot, lost, since, b->states + skip, b->count - skip);
		last_ns = b->count ? b->states[b->count - 1].ns : last_ns;
	}
	/* States lost after the last one kept (mode stop, its store full). */
	if (s->lost && !at)
		fn(ctx, slot, s->lost, last_ns, NULL, 0);
}

void tt__sched_sections(struct tt__slot *slot, tt__sched_section_fn fn, void *ctx)
{
	tt__sched_walk(slot, NULL, 0, fn, ctx, NULL);
}

void tt__sched_read_new(struct tt__slot *slot, struct tt__sched_cursor *at, tt__sched_section_fn fn,
			void *ctx)
{
	sigset_t old;
	tt__sched_lock(&old);
	tt__sched_drain_slot(slot);
	const struct tt__sched_block *b = slot->sched.first;
	while (b && (b != at->block || b->seq != at->seq))
		b = b->next;
	/* Not there (mode ring recycled it): from the first, whose lost_before counts
	 * what went. */
	tt__sched_walk(slot, b, b ? at->count : 0, fn, ctx, at);
	tt__sched_unlock(&old);
}

void tt__sched_release(struct tt__sched *s)
{
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
	return __atomic_load_n(&tt__sched_wanted, __ATOMIC_RELAXED) > 0;
}

static void *tt__sched_main(void *unused)
{
	(void)unused;
	tt__thread_running("tt-sched");
	/* Its perf descriptors, open for a moment each, out of the program's table: a
	 * program that closes every descriptor (a daemon starting) and opens its own
	 * while one is open would have its file closed in its place. */
	tt__fd_private_table();
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
	tt__lock_reset(&tt__sched);
	for (struct tt__slot *slot = tt__registry_head(); slot; slot = slot->next) {
		tt__switches_close(&slot->sched.sw);
		tt__sched_release(&slot->sched);
	}
	tt__sched_wanted = 0;
	memset(&tt__sched_refusals, 0, sizeof tt__sched_refusals); /* the parent's threads' */
	if (!tt__sched_off && tt__start_thread(NULL, tt__sched_main, NULL, 1, 0) < 0)
		tt__sched_off = 1;
}
