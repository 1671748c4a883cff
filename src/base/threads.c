/* ticktrace's own threads: started with every signal blocked, and kept out of a fork
 * while they allocate. */
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/base.h"

void tt__block_signals(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

void tt__restore_signals(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* Held by ticktrace's own threads while they do work that allocates (writing a
 * file, describing a live file), and by fork: a fork never finds one of them inside
 * malloc, which matters where the allocator is not fork-safe (AddressSanitizer's). */
static pthread_mutex_t tt__background = PTHREAD_MUTEX_INITIALIZER;

void tt__background_work(int begin)
{
	if (begin)
		pthread_mutex_lock(&tt__background);
	else
		pthread_mutex_unlock(&tt__background);
}

/* tt__writing: how many of ticktrace's writes are under way, and whether SIGXFSZ is
 * ignored for them (the program had it at its default action). */
static pthread_mutex_t tt__writing_mutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned tt__writers;
static int tt__xfsz_ignored;

static void tt__xfsz_action(void (*handler)(int))
{
	struct sigaction action = {.sa_handler = handler};
	sigemptyset(&action.sa_mask);
	sigaction(SIGXFSZ, &action, NULL);
}

void tt__writing(int begin)
{
	sigset_t old;
	tt__block_signals(&old);
	pthread_mutex_lock(&tt__writing_mutex);
	if (begin && tt__writers++ == 0) {
		struct sigaction now;
		tt__xfsz_ignored = sigaction(SIGXFSZ, NULL, &now) == 0 && !(now.sa_flags & SA_SIGINFO) &&
				   now.sa_handler == SIG_DFL;
		if (tt__xfsz_ignored)
			tt__xfsz_action(SIG_IGN);
	} else if (!begin && --tt__writers == 0 && tt__xfsz_ignored) {
		tt__xfsz_action(SIG_DFL);
		tt__xfsz_ignored = 0;
	}
	pthread_mutex_unlock(&tt__writing_mutex);
	tt__restore_signals(&old);
}

void tt__background_reset_after_fork(void)
{
	pthread_mutex_init(&tt__background, NULL);
	/* Writes of the parent's threads that are not the child's: its action back. */
	pthread_mutex_init(&tt__writing_mutex, NULL);
	if (tt__writers && tt__xfsz_ignored)
		tt__xfsz_action(SIG_DFL);
	tt__writers = 0;
	tt__xfsz_ignored = 0;
}

/* futex word: ticktrace's own threads that began to run */
static uint32_t tt__threads_started;
/* their kernel ids, as many as fit (a child's after fork follow its parent's) */
static pid_t tt__own_tids[16];
static uint32_t tt__own_count;

void tt__thread_running(const char *name)
{
	prctl(PR_SET_NAME, name, 0, 0, 0);
	uint32_t index = __atomic_fetch_add(&tt__own_count, 1, __ATOMIC_RELAXED);
	if (index < sizeof tt__own_tids / sizeof tt__own_tids[0])
		__atomic_store_n(&tt__own_tids[index], gettid(), __ATOMIC_RELAXED);
	__atomic_add_fetch(&tt__threads_started, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &tt__threads_started, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
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

int tt__start_thread(pthread_t *thread, void *(*main)(void *), void *arg, int detached, int wait)
{
	if (!tt__own_thread_main(main)) {
		uint32_t index = __atomic_fetch_add(&tt__own_main_count, 1, __ATOMIC_RELAXED);
		if (index < sizeof tt__own_mains / sizeof tt__own_mains[0])
			__atomic_store_n(&tt__own_mains[index], main, __ATOMIC_RELEASE);
	}
	uint32_t before = __atomic_load_n(&tt__threads_started, __ATOMIC_ACQUIRE);
	/* The thread inherits a full signal mask: the program's signals are not for it. */
	sigset_t old;
	tt__block_signals(&old);
	pthread_t id;
	int err = pthread_create(&id, NULL, main, arg);
	tt__restore_signals(&old);
	if (err)
		return -err;
	/* Running before the program goes on, so that no fork finds it starting: a
	 * sanitizer's allocator, held by a thread as it starts, would stay locked in the
	 * child. (Not in a fork's child handler: the sanitizer may hold it until then.) */
	while (wait && __atomic_load_n(&tt__threads_started, __ATOMIC_ACQUIRE) == before)
		syscall(SYS_futex, &tt__threads_started, FUTEX_WAIT_PRIVATE, before, NULL, NULL, 0);
	if (detached)
		pthread_detach(id);
	if (thread)
		*thread = id;
	return 0;
}
