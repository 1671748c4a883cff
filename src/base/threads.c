/* ticktrace's own threads: started with every signal blocked, and kept out of a fork
 * while they allocate. */
#include "base/base.h"

/* The stack of each thread of ticktrace's own under an address-space limit. */
#define TT__OWN_STACK_LIMITED (1u << 20)

/* Held by ticktrace's own threads while they do work that allocates (writing a
 * file, describing a live file), and by fork: a fork never finds one of them inside
 * malloc, which matters where the allocator is not fork-safe (AddressSanitizer's).
 * Let go around each system call that may wait (tt__background_io): a fork waits for
 * memory work, never for ticktrace's I/O (a snapshot written to a slow disk or a
 * FIFO held fork() for the whole write). The work itself stays one at a time
 * (tt__work), as when the lock was held throughout: so no other thread of
 * ticktrace's takes `tt__background` while one is in its I/O, and the one in its I/O
 * takes it again holding what it holds (base.h: the order). */
static struct tt__lock tt__work = TT__LOCK_INIT(TT__LOCK_WORK);
static struct tt__lock tt__background = TT__LOCK_INIT(TT__LOCK_BACKGROUND);
static __thread int tt__background_mine __attribute__((tls_model("initial-exec")));
/* Threads of ticktrace's waiting for the work, and the times it was taken (what a
 * thread that gives way looks at: tt__background_give_way). */
static uint32_t tt__work_waiting, tt__work_taken;

void tt__background_work(int begin)
{
	if (begin) {
		__atomic_add_fetch(&tt__work_waiting, 1, __ATOMIC_SEQ_CST);
		tt__lock(&tt__work);
		__atomic_sub_fetch(&tt__work_waiting, 1, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&tt__work_taken, 1, __ATOMIC_SEQ_CST);
		tt__lock(&tt__background);
	} else {
		tt__unlock(&tt__background);
		tt__unlock(&tt__work);
	}
	tt__background_mine = begin;
}

/* A long piece of work (tt-live's descriptions of every record a busy thread wrote:
 * seconds, for as long as it is behind) lets a thread that waits for the work have it
 * between its steps, and goes on once that one is done: a snapshot waited for it (its
 * window copied 23 s after its spike, the rings had overwritten it; the larger the
 * buffer, the longer tt-live was behind: r49's sqlite3 run). A futex lock is not
 * fair: let go and taken again at once, the waiter would not have it. */
void tt__background_give_way(void)
{
	if (!tt__background_mine || !__atomic_load_n(&tt__work_waiting, __ATOMIC_SEQ_CST))
		return;
	uint32_t taken = __atomic_load_n(&tt__work_taken, __ATOMIC_SEQ_CST);
	tt__background_work(0);
	/* (until one took it: a millisecond's naps, no wake-up asked of each taker) */
	while (__atomic_load_n(&tt__work_taken, __ATOMIC_SEQ_CST) == taken &&
	       __atomic_load_n(&tt__work_waiting, __ATOMIC_SEQ_CST))
		tt_os_wait(&tt__work_taken, taken, 1000000);
	tt__background_work(1);
}

void tt__background_fork(int begin)
{
	if (begin)
		tt__lock(&tt__background);
	else
		tt__unlock(&tt__background);
}

void tt__background_io(int begin)
{
	if (!tt__background_mine)
		return;
	/* (the platform's lock alone: the work goes on holding it, as the order sees it) */
	if (begin)
		tt_os_unlock(&tt__background.os);
	else
		tt_os_lock(&tt__background.os);
}

void tt__background_reset_after_fork(void)
{
	tt__lock_reset(&tt__work);
	tt__lock_reset(&tt__background);
	tt__background_mine = 0;
	tt__work_waiting = 0; /* (the parent's threads are not the child's) */
}

/* (tt_os_wait's word) ticktrace's own threads that began to run */
static uint32_t tt__threads_started;
/* their kernel ids, as many as fit (a child's after fork follow its parent's) */
static pid_t tt__own_tids[16];
static uint32_t tt__own_count;

void tt__thread_running(const char *name)
{
	tt_os_thread_set_name(name);
	tt_os_signals_blocked_for_good();
	uint32_t index = __atomic_fetch_add(&tt__own_count, 1, __ATOMIC_RELAXED);
	if (index < sizeof tt__own_tids / sizeof tt__own_tids[0])
		__atomic_store_n(&tt__own_tids[index], (pid_t)tt_os_thread_id(), __ATOMIC_RELAXED);
	__atomic_add_fetch(&tt__threads_started, 1, __ATOMIC_RELEASE);
	tt_os_wake_all(&tt__threads_started);
}

int tt__own_thread(pid_t tid)
{
	uint32_t n = __atomic_load_n(&tt__own_count, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n && i < sizeof tt__own_tids / sizeof tt__own_tids[0]; i++)
		if (__atomic_load_n(&tt__own_tids[i], __ATOMIC_RELAXED) == tid)
			return 1;
	return 0;
}

/* the functions ticktrace's own threads run, as many as fit */
static void *(*tt__own_mains[16])(void *);
static uint32_t tt__own_main_count;

int tt__own_thread_main(void *(*main)(void *))
{
	uint32_t n = __atomic_load_n(&tt__own_main_count, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n && i < sizeof tt__own_mains / sizeof tt__own_mains[0]; i++)
		if (__atomic_load_n(&tt__own_mains[i], __ATOMIC_RELAXED) == main)
			return 1;
	return 0;
}

/* ticktrace's threads the program may have back (base.h), each as it runs now. */
static struct {
	pid_t pid, tid;     /* the process and thread that run it (pid set last: its own) */
	void (*wake)(void);
	int ask;            /* asked to end */
	int gone;           /* ended so, in this process */
} tt__optional[TT__OPTIONAL_COUNT];
static __thread int tt__optional_mine __attribute__((tls_model("initial-exec"))) = -1;
/* How long the kernel may take to let an ended thread go (its task no longer counts
 * once its id is gone): 1 ms apart, a second at most. */
#define TT__GIVE_BACK_POLLS 1000

void tt__thread_optional(enum tt__optional_thread which, void (*wake)(void))
{
	/* (a fork's child starts its own: the parent's ended ones are not the child's) */
	__atomic_store_n(&tt__optional[which].pid, 0, __ATOMIC_SEQ_CST);
	tt__optional[which].tid = (pid_t)tt_os_thread_id();
	tt__optional[which].wake = wake;
	__atomic_store_n(&tt__optional[which].ask, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&tt__optional[which].gone, 0, __ATOMIC_SEQ_CST);
	tt__optional_mine = (int)which;
	__atomic_store_n(&tt__optional[which].pid, (pid_t)tt_os_process_id(), __ATOMIC_SEQ_CST);
}

/* The run's end asked every thread of ticktrace's to return (tt__threads_end). */
static int tt__ending;
/* the wakes of those no give-back ends */
static void (*tt__end_wakes[4])(void);
static uint32_t tt__end_wake_count;

int tt__thread_end_asked(void)
{
	return __atomic_load_n(&tt__ending, __ATOMIC_SEQ_CST) ||
	       (tt__optional_mine >= 0 && __atomic_load_n(&tt__optional[tt__optional_mine].ask, __ATOMIC_SEQ_CST));
}

void tt__thread_ends_with(void (*wake)(void))
{
	uint32_t index = __atomic_fetch_add(&tt__end_wake_count, 1, __ATOMIC_RELAXED);
	if (index < sizeof tt__end_wakes / sizeof tt__end_wakes[0])
		__atomic_store_n(&tt__end_wakes[index], wake, __ATOMIC_RELEASE);
}

/* How long the run's end waits for ticktrace's threads, all told (each returns within
 * milliseconds of being told). */
#define TT__THREADS_END_NS (INT64_C(2) * 1000000000)

void tt__threads_end(void)
{
	if (__atomic_exchange_n(&tt__ending, 1, __ATOMIC_SEQ_CST))
		return;
	pid_t pid = (pid_t)tt_os_process_id();
	for (int i = 0; i < TT__OPTIONAL_COUNT; i++)
		if (__atomic_load_n(&tt__optional[i].pid, __ATOMIC_SEQ_CST) == pid && tt__optional[i].wake)
			tt__optional[i].wake();
	uint32_t wakes = __atomic_load_n(&tt__end_wake_count, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < wakes && i < sizeof tt__end_wakes / sizeof tt__end_wakes[0]; i++)
		if (__atomic_load_n(&tt__end_wakes[i], __ATOMIC_ACQUIRE))
			tt__end_wakes[i]();
	int64_t until = tt_os_monotonic_ns() + TT__THREADS_END_NS;
	uint32_t n = __atomic_load_n(&tt__own_count, __ATOMIC_ACQUIRE), left = 0;
	pid_t self = (pid_t)tt_os_thread_id();
	for (uint32_t i = 0; i < n && i < sizeof tt__own_tids / sizeof tt__own_tids[0]; i++) {
		pid_t tid = __atomic_load_n(&tt__own_tids[i], __ATOMIC_RELAXED);
		while (tid != self && tt_os_thread_alive((uint32_t)tid) && tt_os_monotonic_ns() < until)
			tt_os_sleep_ns(1000000);
		left += tid != self && tt_os_thread_alive((uint32_t)tid);
	}
	if (left)
		fprintf(tt__err, "ticktrace: %u of its threads did not end within %d s of the exit: "
			"the system's end of the process ends them\n", (unsigned)left,
			(int)(TT__THREADS_END_NS / 1000000000));
}

int tt__thread_give_back(void)
{
	pid_t pid = (pid_t)tt_os_process_id();
	for (int i = 0; i < TT__OPTIONAL_COUNT; i++) {
		if (__atomic_load_n(&tt__optional[i].pid, __ATOMIC_SEQ_CST) != pid ||
		    __atomic_exchange_n(&tt__optional[i].ask, 1, __ATOMIC_SEQ_CST))
			continue;
		if (tt__optional[i].wake)
			tt__optional[i].wake();
		for (int n = 0; n < TT__GIVE_BACK_POLLS &&
				tt_os_thread_alive((uint32_t)tt__optional[i].tid); n++)
			tt_os_sleep_ns(1000000);
		__atomic_store_n(&tt__optional[i].gone, 1, __ATOMIC_SEQ_CST);
		return 1;
	}
	return 0;
}

uint32_t tt__threads_given_back(void)
{
	static const uint32_t flags[TT__OPTIONAL_COUNT] = {TT_FILE_GAVE_PREFAULT, TT_FILE_GAVE_LIVE,
							   TT_FILE_GAVE_SPIKES, TT_FILE_GAVE_SCHED,
							   TT_FILE_GAVE_DUMP};
	uint32_t gone = 0;
	for (int i = 0; i < TT__OPTIONAL_COUNT; i++)
		if (__atomic_load_n(&tt__optional[i].gone, __ATOMIC_SEQ_CST))
			gone |= flags[i];
	return gone;
}

int tt__start_thread(struct tt_os_thread *thread, void *(*main)(void *), void *arg, int wait)
{
	if (!tt__own_thread_main(main)) {
		uint32_t index = __atomic_fetch_add(&tt__own_main_count, 1, __ATOMIC_RELAXED);
		if (index < sizeof tt__own_mains / sizeof tt__own_mains[0])
			__atomic_store_n(&tt__own_mains[index], main, __ATOMIC_RELEASE);
	}
	uint32_t before = __atomic_load_n(&tt__threads_started, __ATOMIC_ACQUIRE);
	/* Under an address-space limit, a smaller stack than the default (RLIMIT_STACK,
	 * 8 MiB each): the program keeps the room. */
	size_t stack = tt__address_room() != UINT64_MAX ? TT__OWN_STACK_LIMITED : 0;
	int err = tt_os_thread_start(thread, main, arg, stack);
	if (err)
		return err;
	/* Running before the program goes on, so that no fork finds it starting: a
	 * sanitizer's allocator, held by a thread as it starts, would stay locked in the
	 * child. (Not in a fork's child handler: the sanitizer may hold it until then.) */
	while (wait && TT_OS_START_WAITS && __atomic_load_n(&tt__threads_started, __ATOMIC_ACQUIRE) == before)
		tt_os_wait(&tt__threads_started, before, TT_OS_FOREVER);
	return 0;
}
