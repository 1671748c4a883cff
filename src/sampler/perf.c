/* Self-profiling through perf_event_open on the process itself. The kernel writes a
 * sample (the user-mode instruction pointer) into an mmap ring buffer at every
 * interval; a drain thread owned by the profile reads the rings, so no signal ever
 * interrupts the program.
 *
 * One thread: one event bound to that thread on any CPU (cpu -1). Every thread:
 * an inherited event per (thread, CPU), because the kernel refuses to mmap an
 * inherited event bound to no CPU; the events of one CPU share one ring
 * (PERF_EVENT_IOC_SET_OUTPUT), and threads created later inherit them. The drain
 * thread exists before the events, so it is neither sampled nor inherits them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler/sampler.h"

/* The drain thread's poll: DRAIN_POLL_MS where something it must see cannot wake it (a
 * ring not polled, the eventfd the program took), else DRAIN_IDLE_MS: each wake-up
 * costs it a timer interrupt and a switch (30 to 80 us of CPU on a KVM/PVM VM), and
 * polled rings wake it at a quarter full. */
enum { MAX_RING_PAGES = 32, DRAIN_POLL_MS = 100, DRAIN_IDLE_MS = 1000 };

struct drain_start {
	struct tt_profile *p;
	sem_t ready;   /* posted once tid is set */
	pid_t tid;
};

static void fill_attr(const struct tt_profile *p, size_t data_size, struct perf_event_attr *a)
{
	static const uint64_t hw_config[] = {
		[TT_PROFILE_INSTRUCTIONS] = PERF_COUNT_HW_INSTRUCTIONS,
		[TT_PROFILE_CYCLES] = PERF_COUNT_HW_CPU_CYCLES,
		[TT_PROFILE_BRANCH_MISSES] = PERF_COUNT_HW_BRANCH_MISSES,
		[TT_PROFILE_CACHE_MISSES] = PERF_COUNT_HW_CACHE_MISSES,
	};
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	if (p->source == TT_PROFILE_TIME) {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_TASK_CLOCK;
	} else {
		a->type = PERF_TYPE_HARDWARE;
		a->config = hw_config[p->source];
	}
	a->sample_period = p->interval;
	a->sample_type = PERF_SAMPLE_IP;
	a->disabled = 1;
	a->inherit = (p->flags & TT_PROFILE_ALL_THREADS) != 0;
	/* New threads, but not child processes: a fork()ed child runs the same code
	 * at the same addresses and would count into this histogram. */
	a->inherit_thread = a->inherit;
	/* User mode only: what perf_event_paranoid 2 allows, and all a range of the
	 * program's own code can contain. */
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(data_size / 4);
}

static int open_event(struct perf_event_attr *a, pid_t tid, int cpu, bool hardware)
{
	int fd = tt_os_perf_event_open(a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL && a->inherit_thread) {
		/* Before Linux 5.13 there is no inherit_thread: child processes inherit
		 * too, the lesser evil than not sampling new threads. */
		a->inherit_thread = 0;
		fd = tt_os_perf_event_open(a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd >= 0)
		return fd;
	/* No PMU: the kernel says ENOENT (no such event) or EOPNOTSUPP (no sampling). */
	if (hardware && (errno == ENOENT || errno == EOPNOTSUPP))
		return -ENODEV;
	return -errno;
}

/* Count every record between the ring's tail and head, then release them. Records
 * are 8-byte aligned, so a header never wraps; a body may. */
static void drain_ring(struct tt_profile *p, struct tt__perf_ring *r)
{
	struct perf_event_mmap_page *meta = r->base;
	const unsigned char *data = (const unsigned char *)r->base + sysconf(_SC_PAGESIZE);
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	uint64_t mask = r->data_size - 1;
	while (tail < head) {
		struct perf_event_header h;
		memcpy(&h, data + (tail & mask), sizeof(h));
		if (h.size < sizeof(h))
			break; /* never written by a sane kernel; do not spin on it */
		uint64_t body[2] = {0, 0}; /* sample: ip; lost: id, count */
		size_t want = h.size - sizeof(h) < sizeof(body) ? h.size - sizeof(h) : sizeof(body);
		for (size_t i = 0; i < want; i++)
			((unsigned char *)body)[i] = data[(tail + sizeof(h) + i) & mask];
		if (h.type == PERF_RECORD_SAMPLE)
			tt__profile_account(p, (uintptr_t)body[0]);
		else if (h.type == PERF_RECORD_LOST)
			__atomic_fetch_add(&p->lost, body[1], __ATOMIC_RELAXED);
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

/* Whether event i is still the one opened: the program may have closed it (closefrom)
 * and put a descriptor of its own at the number. */
static bool event_ours(const struct tt__perf *pf, size_t i)
{
	uint64_t id;
	return tt__fd_ours(&pf->fds[i]) && ioctl((int)pf->fds[i].file.handle, PERF_EVENT_IOC_ID, &id) == 0 &&
	       id == pf->ids[i];
}

void tt__perf_collect(struct tt_profile *p)
{
	struct tt__perf *pf = &p->u.perf;
	pthread_mutex_lock(&pf->drain_lock);
	for (size_t i = 0; i < pf->nrings; i++)
		drain_ring(p, &pf->rings[i]);
	pthread_mutex_unlock(&pf->drain_lock);
}

static void *drain_main(void *arg)
{
	struct drain_start *ds = arg;
	struct tt_profile *p = ds->p;
	struct tt__perf *pf = &p->u.perf;
	ds->tid = gettid();
	sem_post(&ds->ready); /* ds is gone after this */

	/* The opener writes 1 once the rings exist, or 2 if it gave up. */
	uint64_t go = 0;
	if (read((int)pf->wake.file.handle, &go, sizeof(go)) != sizeof(go) || go != 1)
		return NULL;
	struct pollfd *pfds = calloc(pf->nrings + 1, sizeof(*pfds));
	if (!pfds)
		return NULL; /* tt_profile_read and stop still drain, only less often */
	for (;;) {
		/* (a descriptor the program took is not polled: the timeout drains its ring) */
		bool woken = tt__fd_ours(&pf->wake);
		pfds[0] = (struct pollfd){.fd = woken ? (int)pf->wake.file.handle : -1, .events = POLLIN};
		for (size_t i = 0; i < pf->nrings; i++) {
			struct tt__perf_ring *r = &pf->rings[i];
			bool polled = !r->hung_up && event_ours(pf, r->event);
			woken = woken && polled;
			pfds[i + 1] = (struct pollfd){.fd = polled ? (int)pf->fds[r->event].file.handle : -1, .events = POLLIN};
		}
		/* The short timeout also drains rings whose task exited and are no longer
		 * polled. (The eventfd taken during the long one: close waits it out.) */
		if (poll(pfds, pf->nrings + 1, woken ? DRAIN_IDLE_MS : DRAIN_POLL_MS) < 0 && errno != EINTR)
			break;
		if (pfds[0].revents || __atomic_load_n(&pf->quit, __ATOMIC_ACQUIRE))
			break;
		for (size_t i = 0; i < pf->nrings; i++)
			if (pfds[i + 1].revents & (POLLHUP | POLLERR))
				pf->rings[i].hung_up = true;
		tt__perf_collect(p);
	}
	free(pfds);
	return NULL;
}

/* Start the drain thread with every signal blocked (it must never run a handler
 * meant for the program), and learn its tid. */
static int start_drain_thread(struct tt_profile *p, pid_t *tid)
{
	struct tt__perf *pf = &p->u.perf;
	struct drain_start ds = {.p = p};
	if (sem_init(&ds.ready, 0, 0) != 0)
		return -errno;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = -pthread_create(&pf->drain_thread, NULL, drain_main, &ds);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0) {
		while (sem_wait(&ds.ready) != 0)
			continue; /* EINTR */
		pf->drain_started = true;
		*tid = ds.tid;
	}
	sem_destroy(&ds.ready);
	return rc;
}

/* The thread ids to open events for: the owner, or every thread but the drain
 * thread. Returns the count, or -errno. */
static int list_threads(const struct tt_profile *p, pid_t drain_tid, pid_t **out)
{
	if (!(p->flags & TT_PROFILE_ALL_THREADS)) {
		*out = malloc(sizeof(**out));
		if (!*out)
			return -ENOMEM;
		(*out)[0] = p->owner_tid;
		return 1;
	}
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -errno;
	pid_t *tids = NULL;
	int n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(d));) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0 || tid == drain_tid)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			pid_t *grown = realloc(tids, (size_t)cap * sizeof(*tids));
			if (!grown) {
				free(tids);
				closedir(d);
				return -ENOMEM;
			}
			tids = grown;
		}
		tids[n++] = tid;
	}
	closedir(d);
	*out = tids;
	return n;
}

static void unmap_and_close(struct tt__perf *pf)
{
	for (size_t i = 0; i < pf->nrings; i++)
		munmap(pf->rings[i].base, (size_t)sysconf(_SC_PAGESIZE) + pf->rings[i].data_size);
	/* (one the program took is its own now: left open) */
	for (size_t i = 0; i < pf->nfds; i++)
		if (event_ours(pf, i))
			tt__fd_close(&pf->fds[i]);
		else
			tt__fd_forget(&pf->fds[i]);
	free(pf->rings);
	free(pf->fds);
	free(pf->ids);
	pf->rings = NULL;
	pf->fds = NULL;
	pf->ids = NULL;
	pf->nrings = pf->nfds = 0;
}

/* Open an event for every (thread, CPU) pair and give each CPU one ring of `pages`
 * data pages. A thread that exits meanwhile (ESRCH) and an offline CPU (ENODEV) are
 * skipped; if nothing opened, the last of those errors is returned (ENODEV also
 * means "no PMU"). On failure *map_failed says whether mmap was at
 * fault (so that a smaller ring may succeed). */
static int open_events(struct tt_profile *p, const pid_t *tids, int ntids, size_t pages,
		       bool *map_failed)
{
	struct tt__perf *pf = &p->u.perf;
	bool all = (p->flags & TT_PROFILE_ALL_THREADS) != 0;
	bool hardware = p->source != TT_PROFILE_TIME;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	long ncpus = all ? sysconf(_SC_NPROCESSORS_CONF) : 1;
	if (ncpus < 1)
		ncpus = 1;
	struct perf_event_attr attr;
	fill_attr(p, pages * page, &attr);

	*map_failed = false;
	pf->fds = calloc((size_t)ntids * (size_t)ncpus, sizeof(*pf->fds));
	pf->ids = calloc((size_t)ntids * (size_t)ncpus, sizeof(*pf->ids));
	pf->rings = calloc((size_t)ncpus, sizeof(*pf->rings));
	if (!pf->fds || !pf->ids || !pf->rings) {
		unmap_and_close(pf);
		return -ENOMEM;
	}
	int rc = 0, skipped = -ESRCH;
	for (long c = 0; c < ncpus && rc == 0; c++) {
		struct tt__perf_ring *ring = NULL;
		for (int t = 0; t < ntids; t++) {
			int fd = open_event(&attr, tids[t], all ? (int)c : -1, hardware);
			if (fd == -ESRCH || (fd == -ENODEV && all)) {
				skipped = fd;
				continue;
			}
			/* (kept in ticktrace's share of descriptors: past it, -EMFILE) */
			if (fd >= 0)
				fd = tt__fd_keep(&pf->fds[pf->nfds], (struct tt_os_file){fd}) < 0 ?
					     -EMFILE :
					     (int)pf->fds[pf->nfds].file.handle;
			if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_ID, &pf->ids[pf->nfds]) != 0) {
				rc = fd < 0 ? fd : -errno;
				if (fd >= 0)
					tt__fd_close(&pf->fds[pf->nfds]);
				break;
			}
			size_t event = pf->nfds++;
			if (ring) {
				if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, (int)pf->fds[ring->event].file.handle) != 0) {
					rc = -errno;
					break;
				}
				continue;
			}
			void *base = mmap(NULL, page + pages * page, PROT_READ | PROT_WRITE,
					  MAP_SHARED, fd, 0);
			if (base == MAP_FAILED) {
				rc = -errno;
				*map_failed = true;
				break;
			}
			ring = &pf->rings[pf->nrings++];
			*ring = (struct tt__perf_ring){.event = event, .base = base, .data_size = pages * page};
		}
	}
	if (rc == 0 && pf->nrings == 0)
		rc = skipped;
	if (rc != 0)
		unmap_and_close(pf);
	return rc;
}

int tt__perf_open(struct tt_profile *p)
{
	if (tt__profile_no_kernel_sampler())
		return -EACCES;
	struct tt__perf *pf = &p->u.perf;
	*pf = (struct tt__perf){.wake = TT__FD_NONE};
	pthread_mutex_init(&pf->drain_lock, NULL);
	pid_t drain_tid = 0, *tids = NULL;
	int fd = eventfd(0, EFD_CLOEXEC);
	int rc = fd < 0 ? -errno : tt__fd_keep(&pf->wake, (struct tt_os_file){fd});
	if (rc == 0)
		rc = start_drain_thread(p, &drain_tid);
	int ntids = rc == 0 ? list_threads(p, drain_tid, &tids) : rc;
	rc = ntids < 0 ? ntids : 0;
	/* Pages locked for perf are limited per user (perf_event_mlock_kb, then
	 * RLIMIT_MEMLOCK): halve the rings until they fit. */
	if (rc == 0) {
		bool map_failed;
		size_t pages = MAX_RING_PAGES;
		while ((rc = open_events(p, tids, ntids, pages, &map_failed)) != 0 && map_failed &&
		       pages > 1)
			pages /= 2;
	}
	free(tids);
	if (pf->drain_started) {
		uint64_t word = rc == 0 ? 1 : 2; /* go, or give up */
		(void)!write((int)pf->wake.file.handle, &word, sizeof(word));
	}
	if (rc != 0)
		tt__perf_close(p);
	return rc;
}

static int ioctl_all(struct tt__perf *pf, unsigned long request)
{
	for (size_t i = 0; i < pf->nfds; i++) {
		if (!event_ours(pf, i))
			return -EBADF;
		if (ioctl((int)pf->fds[i].file.handle, request, 0) != 0)
			return -errno;
	}
	return 0;
}

int tt__perf_start(struct tt_profile *p)
{
	int rc = ioctl_all(&p->u.perf, PERF_EVENT_IOC_ENABLE);
	if (rc != 0)
		ioctl_all(&p->u.perf, PERF_EVENT_IOC_DISABLE);
	return rc;
}

int tt__perf_stop(struct tt_profile *p)
{
	/* Disabling reaches the event on whichever CPU runs its task and returns after
	 * it stopped; every sample taken is in a ring by then. */
	int rc = ioctl_all(&p->u.perf, PERF_EVENT_IOC_DISABLE);
	tt__perf_collect(p);
	return rc;
}

uint64_t tt__perf_cpu_ns(struct tt_profile *p)
{
	/* A task-clock event counts the ns its task ran while enabled; an inherited
	 * event's value includes its children. */
	struct tt__perf *pf = &p->u.perf;
	uint64_t total = 0;
	for (size_t i = 0; i < pf->nfds; i++) {
		uint64_t v;
		if (event_ours(pf, i) && read((int)pf->fds[i].file.handle, &v, sizeof(v)) == sizeof(v))
			total += v;
	}
	return total;
}

void tt__perf_close(struct tt_profile *p)
{
	struct tt__perf *pf = &p->u.perf;
	if (pf->drain_started) {
		/* (told through the eventfd while it is ours; else it sees `quit` within its
		 * poll's timeout) */
		uint64_t quit = 1;
		__atomic_store_n(&pf->quit, true, __ATOMIC_RELEASE);
		if (tt__fd_ours(&pf->wake))
			(void)!write((int)pf->wake.file.handle, &quit, sizeof(quit));
		pthread_join(pf->drain_thread, NULL);
		pf->drain_started = false;
	}
	unmap_and_close(pf);
	tt__fd_close(&pf->wake);
	pthread_mutex_destroy(&pf->drain_lock);
}

const struct tt__mechanism tt__perf_mechanism = {
	.id = TT_PROFILE_PERF,
	.start = tt__perf_start,
	.stop = tt__perf_stop,
	.collect = tt__perf_collect,
	.cpu_ns = tt__perf_cpu_ns,
	.close = tt__perf_close,
};
