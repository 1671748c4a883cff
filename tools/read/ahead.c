/* The reader's thread (read.h's tt_ahead): the pages of a mapped input that the
 * decoder asks for are mapped before it reads them, and those it has read are given
 * back, on a thread of their own. The kernel's work for them (a fault for every few
 * pages ahead, page tables torn down behind) was 7 to 10 % of the decoding thread's
 * time on a 914 MB file; here it runs beside the decoding. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "read_internal.h"

/* Jobs waiting at most: what a stalled thread keeps resident stays within a few MiB a
 * job (the decoder's steps are a MiB). */
#define TT_AHEAD_JOBS 16

struct tt_ahead_job {
	const uint8_t *p;
	size_t n;
	bool release; /* else mapped in */
};

struct tt_ahead {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a job queued or taken, or the end */
	struct tt_ahead_job jobs[TT_AHEAD_JOBS];
	size_t first, count;
	bool quit;
};

/* The jobs in the order they came: a range mapped in is never mapped after the decoder
 * has given it back (it asks for each before it reads it, and gives it back after). */
static void *tt_ahead_run(void *arg)
{
	struct tt_ahead *a = arg;
	pthread_mutex_lock(&a->lock);
	for (;;) {
		while (!a->count && !a->quit)
			pthread_cond_wait(&a->cond, &a->lock);
		if (!a->count)
			break;
		struct tt_ahead_job job = a->jobs[a->first];
		a->first = (a->first + 1) % TT_AHEAD_JOBS;
		a->count--;
		pthread_cond_signal(&a->cond); /* room for a release that waits */
		pthread_mutex_unlock(&a->lock);
		if (job.release)
			tt_os_release(job.p, job.n);
		else
			tt_os_map_in(job.p, job.n);
		pthread_mutex_lock(&a->lock);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

struct tt_ahead *tt_ahead_start(void)
{
	struct tt_ahead *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	if (tt_thread_start(&a->thread, tt_ahead_run, a) != 0) {
		pthread_mutex_destroy(&a->lock);
		pthread_cond_destroy(&a->cond);
		free(a);
		return NULL;
	}
	return a;
}

void tt_ahead_stop(struct tt_ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->quit = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL); /* after the jobs queued: every release done */
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->cond);
	free(a);
}

/* Queues a job: a range to map in is left out when the queue is full (the decoder
 * then maps it as it reads); one to give back waits for room. */
static void tt_ahead_queue(struct tt_ahead *a, const uint8_t *p, size_t n, bool release)
{
	pthread_mutex_lock(&a->lock);
	while (release && a->count == TT_AHEAD_JOBS)
		pthread_cond_wait(&a->cond, &a->lock);
	if (a->count < TT_AHEAD_JOBS) {
		a->jobs[(a->first + a->count) % TT_AHEAD_JOBS] = (struct tt_ahead_job){p, n, release};
		a->count++;
		pthread_cond_signal(&a->cond);
	}
	pthread_mutex_unlock(&a->lock);
}

/* Bytes [from, to) of a mapped file as whole pages around them, in *p and *n; false
 * when there are none. */
static bool tt_file_pages(const struct tt_file *f, uint64_t from, uint64_t to, const uint8_t **p,
			  size_t *n)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t start = from & ~(page - 1), end = (to + page - 1) & ~(page - 1);
	if (end > f->size)
		end = f->size;
	if (!f->mapped || end <= start)
		return false;
	*p = f->data + start;
	*n = (size_t)(end - start);
	return true;
}

/* The kernel maps the cached pages of the aligned 64 KiB around a page it faults in
 * (fault_around_bytes' default): a release that ended inside such a window had its tail
 * mapped again by the next fault beyond it, and never given back (up to 60 KiB a step). */
#define TT_FAULT_AROUND ((uintptr_t)64 << 10)

void tt_file_release(struct tt_ahead *a, const struct tt_file *f, uint64_t from, uint64_t to)
{
	/* Whole pages around the range: the mapping is read-only and private, so a page
	 * dropped that another thread's records still need is read again, no more. */
	const uint8_t *p;
	size_t n;
	if (!tt_file_pages(f, from, to, &p, &n))
		return;
	/* Both ends back to a window's start, but the file's end: the tail left mapped
	 * goes with the next release. */
	uintptr_t start = (uintptr_t)p, end = start + n;
	if (end != (uintptr_t)(f->data + f->size))
		end &= ~(TT_FAULT_AROUND - 1);
	start &= ~(TT_FAULT_AROUND - 1);
	if (start < (uintptr_t)f->data)
		start = (uintptr_t)f->data;
	if (end <= start)
		return;
	p = (const uint8_t *)start;
	n = end - start;
	if (a)
		tt_ahead_queue(a, p, n, true);
	else
		tt_os_release(p, n);
}

void tt_file_read_ahead(struct tt_ahead *a, const struct tt_file *f, uint64_t from, uint64_t to)
{
	const uint8_t *p;
	size_t n;
	if (a && tt_file_pages(f, from, to, &p, &n))
		tt_ahead_queue(a, p, n, false);
}
