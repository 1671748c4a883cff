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

void tt__background_reset_after_fork(void)
{
	pthread_mutex_init(&tt__background, NULL);
}

/* futex word: ticktrace's own threads that began to run */
static uint32_t tt__threads_started;

void tt__thread_running(const char *name)
{
	prctl(PR_SET_NAME, name, 0, 0, 0);
	__atomic_add_fetch(&tt__threads_started, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &tt__threads_started, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

int tt__start_thread(pthread_t *thread, void *(*main)(void *), void *arg, int detached, int wait)
{
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
