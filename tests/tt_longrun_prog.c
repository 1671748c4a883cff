/* The program that test_longrun runs in the modes and situations it checks: the mode
 * is chosen when the library starts, and some runs end by a signal.
 *
 *   tt_longrun_prog seq THREADS EVENTS   each thread "seq-N" records EVENTS instants
 *                                        "seq" with argument N << 32 | i, then exits
 *   tt_longrun_prog churn THREADS        THREADS threads one after the other, each
 *                                        recording "churn" (argument: its number);
 *                                        prints the RSS (kB) after a tenth and at the end
 *   tt_longrun_prog hold EVENTS FLUSH    records EVENTS "seq" instants on the main
 *                                        thread, calls tt_dump(NULL) if FLUSH is 1,
 *                                        prints "ready" and waits to be killed
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ticktrace.h"

struct tt_prog_seq {
	uint32_t number, events;
};

static void tt_prog_record_seq(uint32_t number, uint32_t events)
{
	for (uint32_t i = 0; i < events; i++)
		TT_INSTANT_ARG("seq", (uint64_t)number << 32 | i);
}

static void *tt_prog_seq_thread(void *arg)
{
	const struct tt_prog_seq *s = arg;
	char name[32];
	snprintf(name, sizeof name, "seq-%u", s->number);
	tt_thread_name(name);
	tt_prog_record_seq(s->number, s->events);
	return NULL;
}

static int tt_prog_seq(uint32_t threads, uint32_t events)
{
	pthread_t *ids = calloc(threads, sizeof *ids);
	struct tt_prog_seq *seqs = calloc(threads, sizeof *seqs);
	if (!ids || !seqs)
		return 1;
	for (uint32_t i = 0; i < threads; i++) {
		seqs[i] = (struct tt_prog_seq){i, events};
		if (pthread_create(&ids[i], NULL, tt_prog_seq_thread, &seqs[i]))
			return 1;
	}
	for (uint32_t i = 0; i < threads; i++)
		pthread_join(ids[i], NULL);
	free(ids);
	free(seqs);
	return 0;
}

static long tt_prog_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			kb = atol(line + 6);
	if (f)
		fclose(f);
	return kb;
}

static void *tt_prog_churn_thread(void *arg)
{
	TT_INSTANT_ARG("churn", (uintptr_t)arg);
	return NULL;
}

static int tt_prog_churn(uint32_t threads)
{
	long early = 0;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (uint32_t i = 0; i < threads; i++) {
		pthread_t id;
		if (pthread_create(&id, &attr, tt_prog_churn_thread, (void *)(uintptr_t)i))
			return 1;
		pthread_join(id, NULL);
		if (i + 1 == threads / 10)
			early = tt_prog_rss_kb();
	}
	printf("%ld %ld\n", early, tt_prog_rss_kb());
	return 0;
}

static int tt_prog_hold(uint32_t events, int flush)
{
	tt_prog_record_seq(0, events);
	if (flush && tt_dump(NULL) != 0)
		return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "seq") == 0)
		return tt_prog_seq((uint32_t)atol(argv[2]), (uint32_t)atol(argv[3]));
	if (argc == 3 && strcmp(argv[1], "churn") == 0)
		return tt_prog_churn((uint32_t)atol(argv[2]));
	if (argc == 4 && strcmp(argv[1], "hold") == 0)
		return tt_prog_hold((uint32_t)atol(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: see the top of tests/tt_longrun_prog.c\n");
	return 2;
}
