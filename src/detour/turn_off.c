/* The zero-markup build tunes itself: a patched function whose calls a thread's
 * TICKTRACE_MIN_DUR keeps erasing (each short, nothing recorded inside) is turned off
 * after K of them (TT_ENV_TURN_OFF): its patch is undone while the program runs, so
 * that its later calls cost what an unpatched call costs. Those later calls are
 * neither recorded nor counted: the runtime keeps when each function was turned off
 * (tt__turned_off: the file's TURNED_OFF section, which `ticktrace report` says), and
 * the run says how many at exit. A program library call (libcalls.c) is turned off by
 * pointing its GOT slot back at the function, or its call sites back through the slot.
 *
 * trampoline.asm calls tt__detour_turn_off from the exit hook each K-th call of a
 * function it erased on a thread, out of line. Another thread may be running the
 * function's entry meanwhile, so the patch's bytes are put back in an order a
 * concurrent executor survives, without a signal handler: a two-byte `jmp .` stored
 * atomically over the patch's first two bytes (a thread that reaches it waits there),
 * then the rest of the bytes, then their first two, atomically. No thread can be
 * inside the patch's bytes: the jump over them is one instruction, and the bytes
 * after it are never run. A thread already past the jump goes on through the stub,
 * recorded, its exit matched: the stubs stay. Signals are blocked while the entry
 * waits, so that a handler on this thread cannot call the function and wait forever. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "detour.h"

/* 1024: a function's first 1024 short calls are counted (FILTERED) */
#define TT__TURN_OFF_DEFAULT 1024

/* trampoline.asm: a function's erased calls on a thread, masked, are 0 every K-th
 * call; all ones: never */
TT__DETOUR_HIDDEN uint64_t tt__detour_turn_off_mask = UINT64_MAX;

struct tt__detour_undo {
	uint64_t payload; /* the function as its records name it (a slot: with TT_FUNC_LIBRARY_CALL) */
	uintptr_t at;     /* its entry, a call site, or a GOT slot */
	uint8_t was[TT__DETOUR_UNDO_MAX]; /* the bytes the patch overwrote (a slot: its target) */
	uint8_t len;
	uint8_t how;  /* TT__UNDO_* */
	int8_t state; /* 0: patched, 1: turned off, -1: cannot be */
};

/* Sorted by payload once turn-off starts; the table is changed (a dlopen, a dlclose)
 * and searched (a turn-off) only while tt__turn_off_busy is held. */
static struct tt__detour_undo *tt__undo;
static size_t tt__nundo, tt__undo_cap;
static int tt__undo_sorted;
static int tt__turn_off_busy;        /* one turns off at a time (the others' calls retry) */
static int tt__unloading;            /* a dlclose runs: no later patch is undone meanwhile */
static uint64_t tt__turned, tt__turn_off_failed;

/* Holds tt__turn_off_busy, for a change of the table: a turn-off holds it only for a
 * few system calls. */
static void tt__undo_hold(void)
{
	while (__atomic_exchange_n(&tt__turn_off_busy, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void tt__undo_let_go(void)
{
	__atomic_store_n(&tt__turn_off_busy, 0, __ATOMIC_RELEASE);
}

static int tt__undo_order(const void *a, const void *b)
{
	uint64_t x = ((const struct tt__detour_undo *)a)->payload, y = ((const struct tt__detour_undo *)b)->payload;
	return x < y ? -1 : x > y;
}

/* The first entry whose payload is not below `payload`. */
static size_t tt__undo_find(uint64_t payload)
{
	size_t lo = 0, hi = tt__nundo;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (tt__undo[mid].payload < payload)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void tt__detour_undoable(uint64_t payload, uintptr_t at, const void *was, size_t len, unsigned how)
{
	int later = (how & TT__UNDO_LATER) != 0;
	if (len > TT__DETOUR_UNDO_MAX)
		return; /* (never turned off) */
	if (later)
		tt__undo_hold();
	if (tt__nundo == tt__undo_cap) {
		size_t cap = tt__undo_cap ? 2 * tt__undo_cap : 256;
		struct tt__detour_undo *more = realloc(tt__undo, cap * sizeof *more);
		if (!more)
			goto done;
		tt__undo = more;
		tt__undo_cap = cap;
	}
	size_t at_index = tt__undo_sorted ? tt__undo_find(payload) : tt__nundo;
	memmove(&tt__undo[at_index + 1], &tt__undo[at_index], (tt__nundo - at_index) * sizeof *tt__undo);
	tt__nundo++;
	struct tt__detour_undo *u = &tt__undo[at_index];
	*u = (struct tt__detour_undo){.payload = payload, .at = at, .len = (uint8_t)len, .how = (uint8_t)how};
	memcpy(u->was, was, len);
done:
	if (later)
		tt__undo_let_go();
}

void tt__detour_unloading(int begins)
{
	tt__undo_hold();
	tt__unloading += begins ? 1 : -1;
	tt__undo_let_go();
}

void tt__detour_forget(uintptr_t low, uintptr_t high)
{
	tt__undo_hold();
	size_t kept = 0;
	for (size_t i = 0; i < tt__nundo; i++)
		if (tt__undo[i].at < low || tt__undo[i].at >= high)
			tt__undo[kept++] = tt__undo[i];
	tt__nundo = kept;
	tt__undo_let_go();
}

static void tt__detour_turned_at_exit(void)
{
	uint64_t turned = __atomic_load_n(&tt__turned, __ATOMIC_RELAXED);
	uint64_t failed = __atomic_load_n(&tt__turn_off_failed, __ATOMIC_RELAXED);
	if (turned)
		fprintf(tt__log(), "ticktrace: %" PRIu64 " function%s turned off after %" PRIu64 " short calls "
			"each (erased as they returned, TICKTRACE_MIN_DUR): their later calls were not "
			"recorded nor counted (`ticktrace report` names them; %s=0: never)\n", turned,
			turned == 1 ? "" : "s", tt__detour_turn_off_mask + 1, TT_ENV_TURN_OFF);
	if (failed)
		fprintf(tt__log(), "ticktrace: %" PRIu64 " function%s to turn off stayed patched (their "
			"code could not be made writable, or its first two bytes straddle two cache "
			"lines): their calls were recorded or erased as before\n", failed, failed == 1 ? "" : "s");
}

/* In a child forked while another thread turned a function off or changed the table:
 * that thread is not there to let go. */
static void tt__undo_after_fork_in_child(void)
{
	tt__turn_off_busy = 0;
	tt__unloading = 0;
}

/* After patching: K from TT_ENV_TURN_OFF (rounded up to a power of two), else (unset,
 * or not a number: said) the zero-markup build's default (`every_sled`). */
void tt__detour_turn_off_start(int every_sled)
{
	const char *env = getenv(TT_ENV_TURN_OFF);
	uint64_t k = every_sled ? TT__TURN_OFF_DEFAULT : 0;
	if (env && *env) {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(env, &end, 10);
		if (errno || *end || env[0] == '-' || n > (UINT64_C(1) << 62))
			fprintf(tt__log(), "ticktrace: %s=%s is not a number of calls (0: never); using the "
				"default (%d in the zero-markup build, never otherwise)\n", TT_ENV_TURN_OFF,
				env, TT__TURN_OFF_DEFAULT);
		else
			k = n;
	}
	if (!k)
		return;
	uint64_t pow2 = 1;
	while (pow2 < k)
		pow2 <<= 1;
	if (tt__nundo)
		qsort(tt__undo, tt__nundo, sizeof *tt__undo, tt__undo_order);
	tt__undo_sorted = 1; /* (a dlopen's patches are put in order) */
	pthread_atfork(NULL, NULL, tt__undo_after_fork_in_child);
	tt__detour_turn_off_mask = pow2 - 1;
	atexit(tt__detour_turned_at_exit);
}

/* Writes `len` bytes over the code at `at`, while other threads may run it (the file's
 * comment says how); 0 or -errno. */
static int tt__detour_unpatch_code(uintptr_t at, const uint8_t *was, size_t len)
{
	if ((at & 63) == 63)
		return -EINVAL; /* the first two bytes in two cache lines: not stored at once */
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t first = at & ~(page - 1), last = (at + len + page - 1) & ~(page - 1);
	if (mprotect((void *)first, last - first, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
		return -errno;
	uint16_t wait_here = 0xfeeb, head; /* jmp . */
	memcpy(&head, was, sizeof head);
	__asm__ volatile("xchgw %0, %1" : "+m"(*(uint16_t *)at), "+r"(wait_here) : : "memory");
	memcpy((uint8_t *)at + 2, was + 2, len - 2);
	__asm__ volatile("xchgw %0, %1" : "+m"(*(uint16_t *)at), "+r"(head) : : "memory");
	return mprotect((void *)first, last - first, PROT_READ | PROT_EXEC) != 0 ? -errno : 0;
}

static int tt__detour_unpatch_slot(const struct tt__detour_undo *u)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), first = u->at & ~(page - 1);
	int relro = (u->how & TT__UNDO_RELRO) != 0;
	if (relro && mprotect((void *)first, page, PROT_READ | PROT_WRITE) != 0)
		return -errno;
	uintptr_t target;
	memcpy(&target, u->was, sizeof target);
	__atomic_store_n((uintptr_t *)u->at, target, __ATOMIC_RELEASE);
	if (relro && mprotect((void *)first, page, PROT_READ) != 0)
		return -errno;
	return 0;
}

/* trampoline.asm, as a thread's exit hook erases the K-th (2K-th...) short call of the
 * function its FUNC_EXIT `word` names, at `tsc`. */
TT__DETOUR_HIDDEN void tt__detour_turn_off(uint64_t word, uint64_t tsc)
{
	uint64_t payload = TT_RECORD_PAYLOAD(word);
	if (__atomic_exchange_n(&tt__turn_off_busy, 1, __ATOMIC_ACQUIRE))
		return; /* (busy: its next K-th call tries again) */
	/* (one patch, or each call site of a library call patched at its call sites) */
	size_t first = tt__undo_find(payload), end = first;
	while (end < tt__nundo && tt__undo[end].payload == payload && !tt__undo[end].state)
		end++;
	if (end == first || ((tt__undo[first].how & TT__UNDO_LATER) && tt__unloading)) {
		tt__undo_let_go();
		return; /* (a dlclose may be unmapping it: its next K-th call tries again) */
	}
	int saved = errno, err = 0;
	sigset_t all, was;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &was);
	for (size_t i = first; i < end; i++) {
		struct tt__detour_undo *u = &tt__undo[i];
		int one = u->how & TT__UNDO_SLOT ? tt__detour_unpatch_slot(u) :
						    tt__detour_unpatch_code(u->at, u->was, u->len);
		u->state = one ? -1 : 1;
		err = err ? err : one;
	}
	if (err)
		__atomic_add_fetch(&tt__turn_off_failed, 1, __ATOMIC_RELAXED);
	else {
		__atomic_add_fetch(&tt__turned, 1, __ATOMIC_RELAXED);
		tt__turned_off(payload, tsc, tt__detour_turn_off_mask + 1);
	}
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	tt__undo_let_go();
	errno = saved;
}
