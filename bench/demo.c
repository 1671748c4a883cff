/* ticktrace-demo: a pipeline of threads passing items of a few microseconds of work
 * through queues: a producer, workers, a consumer. It uses every kind of event, with
 * flows following each item across threads and a queue-depth counter, then writes
 * the raw file and converts it (on Windows, where the ticktrace command is not built,
 * says how to on Linux).
 *
 *   ticktrace-demo [--items N] [--workers N] [--out DIR]
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef TT_DEMO_TOOL
#include "run_tool.h"
#endif
#include "ticktrace.h"

#define TT_DEMO_QUEUE 64

struct tt_demo_queue {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	uint64_t items[TT_DEMO_QUEUE];
	unsigned head, count;
};

static struct tt_demo_queue tt_demo_work, tt_demo_done;

static void tt_demo_queue_init(struct tt_demo_queue *q)
{
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->changed, NULL);
}

/* Names are literals (each TT_ macro declares a static descriptor): one per queue. */
static void tt_demo_count(const struct tt_demo_queue *q)
{
	if (q == &tt_demo_work)
		TT_COUNTER("work_queue_depth", q->count);
	else
		TT_COUNTER("done_queue_depth", q->count);
}

static void tt_demo_push(struct tt_demo_queue *q, uint64_t item)
{
	TT_SCOPE("push");
	pthread_mutex_lock(&q->lock);
	while (q->count == TT_DEMO_QUEUE)
		pthread_cond_wait(&q->changed, &q->lock);
	q->items[(q->head + q->count++) % TT_DEMO_QUEUE] = item;
	tt_demo_count(q);
	pthread_cond_broadcast(&q->changed);
	pthread_mutex_unlock(&q->lock);
}

static uint64_t tt_demo_pop(struct tt_demo_queue *q)
{
	pthread_mutex_lock(&q->lock);
	if (q->count == 0)
		TT_INSTANT("wait");
	while (q->count == 0)
		pthread_cond_wait(&q->changed, &q->lock);
	uint64_t item = q->items[q->head];
	q->head = (q->head + 1) % TT_DEMO_QUEUE;
	q->count--;
	tt_demo_count(q);
	pthread_cond_broadcast(&q->changed);
	pthread_mutex_unlock(&q->lock);
	return item;
}

/* A few microseconds of arithmetic, more for some items. Each round goes through
 * memory, so that no compiler folds rounds together (clang ran the plain loop eight
 * times faster than gcc, and the slow items were no longer slow). */
static volatile uint64_t tt_demo_result;

static void tt_demo_spin(uint64_t item, unsigned rounds)
{
	volatile uint64_t x = item | 1; /* the thread's own: threads do not share a line */
	for (unsigned i = 0; i < rounds; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	tt_demo_result = x;
}

#define TT_DEMO_STOP UINT64_MAX

static unsigned tt_demo_items = 2000, tt_demo_workers = 3;

static void *tt_demo_producer(void *unused)
{
	(void)unused;
	tt_thread_name("producer");
	for (uint64_t id = 0; id < tt_demo_items; id++) {
		TT_BEGIN_ARG("produce", id);
		tt_demo_spin(id, 1000);
		TT_FLOW_OUT(id);
		tt_demo_push(&tt_demo_work, id);
		TT_END();
	}
	for (unsigned i = 0; i < tt_demo_workers; i++)
		tt_demo_push(&tt_demo_work, TT_DEMO_STOP);
	return NULL;
}

static void *tt_demo_worker(void *arg)
{
	char name[32];
	snprintf(name, sizeof name, "worker-%u", (unsigned)(uintptr_t)arg);
	tt_thread_name(name);
	for (;;) {
		uint64_t id = tt_demo_pop(&tt_demo_work);
		if (id == TT_DEMO_STOP)
			break;
		TT_BEGIN_ARG("process", id);
		TT_FLOW_IN(id);
		/* Two phases in one scope each, the second opened as the first closes. */
		TT_BEGIN("parse");
		tt_demo_spin(id, 2000);
		TT_ENDBEGIN("transform");
		TT_THRESHOLD_NS(20000); /* `ticktrace spikes demo.ttr` lists those over 20 us */
		if (id % 97 == 0)
			TT_DESCRIBE("item %" PRIu64 ", one of the slow ones", id);
		tt_demo_spin(id, id % 97 == 0 ? 40000 : 3000); /* now and then a slow one */
		TT_END();
		if (id % 500 == 0)
			TT_INSTANT_ARG("milestone", id);
		TT_FLOW_OUT(id);
		tt_demo_push(&tt_demo_done, id);
		TT_END();
	}
	tt_demo_push(&tt_demo_done, TT_DEMO_STOP);
	return NULL;
}

static void tt_demo_consume(void)
{
	TT_FUNC();
	for (unsigned stopped = 0; stopped < tt_demo_workers;) {
		uint64_t id = tt_demo_pop(&tt_demo_done);
		if (id == TT_DEMO_STOP) {
			stopped++;
			continue;
		}
		TT_BEGIN_ARG("consume", id);
		TT_FLOW_IN(id);
		tt_demo_spin(id, 500);
		TT_END();
	}
}

static unsigned tt_demo_arg(const char *text, const char *option)
{
	char *end;
	unsigned long v = strtoul(text, &end, 10);
	if (*end || v == 0 || v > 1000000) {
		fprintf(stderr, "ticktrace-demo: %s takes a number from 1 to 1000000\n", option);
		exit(2);
	}
	return (unsigned)v;
}

int main(int argc, char **argv)
{
	const char *dir = ".";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--items") == 0 && i + 1 < argc)
			tt_demo_items = tt_demo_arg(argv[++i], "--items");
		else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
			tt_demo_workers = tt_demo_arg(argv[++i], "--workers");
		else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			dir = argv[++i];
		else {
			fprintf(stderr, "usage: ticktrace-demo [--items N] [--workers N] [--out DIR]\n");
			return 2;
		}
	}
	tt_thread_name("consumer");
	tt_demo_queue_init(&tt_demo_work);
	tt_demo_queue_init(&tt_demo_done);
	pthread_t producer, workers[64];
	if (tt_demo_workers > 64)
		tt_demo_workers = 64;
	pthread_create(&producer, NULL, tt_demo_producer, NULL);
	for (unsigned i = 0; i < tt_demo_workers; i++)
		pthread_create(&workers[i], NULL, tt_demo_worker, (void *)(uintptr_t)(i + 1));
	tt_demo_consume();
	pthread_join(producer, NULL);
	for (unsigned i = 0; i < tt_demo_workers; i++)
		pthread_join(workers[i], NULL);

	char raw[4096];
	snprintf(raw, sizeof raw, "%s/demo.ttr", dir);
	int err = tt_dump(raw);
	if (err) {
		fprintf(stderr, "ticktrace-demo: cannot write %s: %s\n", raw, strerror(-err));
		return 1;
	}
#ifdef TT_DEMO_TOOL
	char json[4096];
	snprintf(json, sizeof json, "%s/demo.json", dir);
	/* --spikes: the slow transforms (TT_THRESHOLD_NS above) are marked in the trace */
	char *convert[] = {"ticktrace", "convert", raw, "-o", json, "--force", "--spikes", NULL};
	if (tt_run_tool(TT_DEMO_TOOL, convert) < 0)
		return 1;
	char *abs = realpath(json, NULL);
	printf("\nraw trace:  %s\nChrome/Perfetto trace: %s\n\n"
	       "Open https://ui.perfetto.dev and drop the file on it (or use \"Open trace file\");\n"
	       "chrome://tracing loads it too.\n",
	       raw, abs ? abs : json);
	free(abs);
#else
	/* (Windows: the ticktrace command is Linux's) The file is written: the exit's
	 * dump goes nowhere, as on Linux (run_tool.c). */
	tt_disable();
	_putenv("TICKTRACE_OUT=NUL");
	printf("\nraw trace:  %s\nConvert it on Linux: ticktrace convert %s -o demo.json --spikes\n", raw, raw);
#endif
	return 0;
}
