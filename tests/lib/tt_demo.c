#include "tt_demo.h"

const struct tt_tw_site tt_demo_sites[] = {
	{S_MAIN, "main", "demo.c", "main", 10},
	{S_CHILD, "child", "demo.c", "main", 11},
	{S_WAKE, "wake", "demo.c", "main", 12},
	{S_DROP, "drop", "demo.c", "main", 13},
	{S_QUEUE, "queue_depth", "demo.c", "main", 14},
	{S_NEXT, "next", "demo.c", "main", 15},
	{S_WORK, "work", "worker.c", "run", 20},
	/* a name that needs every kind of JSON escape, and a byte that is not UTF-8 */
	{S_ODD, "q\"uo\\te\n\x01tab\t\xff\xc3\xa9", "odd.c", "odd", 30},
};
#define N(a) (sizeof(a) / sizeof((a)[0]))
const size_t tt_demo_nsites = N(tt_demo_sites);

#define R TT_TW_REC
/* Times are TSC ticks at 1 GHz; the trace starts at TSC 1000, so ts = tsc - 1000 ns. */
static const struct tt_record producer[] = {
	R(TT_REC_PAD, 0, 0),
	R(TT_REC_BEGIN, S_MAIN, 2000),
	R(TT_REC_BEGIN_ARG, S_CHILD, 3000),
	/* the thread's second EVENTS section starts here, between a record and its VALUE */
	R(TT_REC_VALUE, 0, 77),
	R(TT_REC_INSTANT, S_WAKE, 4000),
	R(TT_REC_INSTANT_ARG, S_DROP, 5000), R(TT_REC_VALUE, 0, 5),
	R(TT_REC_COUNTER, S_QUEUE, 6000), R(TT_REC_VALUE, 0, (uint64_t)-3),
	R(TT_REC_FLOW_OUT, 0, 6500), R(TT_REC_VALUE, 0, 0x42),
	R(TT_REC_END, 0, 7000),
	R(TT_REC_ENDBEGIN, S_NEXT, 8000),
	R(TT_REC_FUNC_ENTER, 0x401000, 9000),
	R(TT_REC_FLOW_IN, 0, 9200), R(TT_REC_VALUE, 0, 0x43),
	R(TT_REC_FUNC_EXIT, 0x401000, 9500),
	R(TT_REC_END, 0, 10000),
};
#define PRODUCER_SPLIT 3

static const struct tt_record worker[] = {
	R(TT_REC_BEGIN, S_WORK, 6800),
	R(TT_REC_FLOW_IN, 0, 6900), R(TT_REC_VALUE, 0, 0x42),
	R(TT_REC_FLOW_OUT, 0, 6950), R(TT_REC_VALUE, 0, 0x43),
	R(TT_REC_INSTANT, S_ODD, 7100),
	R(TT_REC_END, 0, 8800),
};

int tt_demo_write(const char *path)
{
	struct tt_tw w;
	if (tt_tw_open_file(&w, path) < 0)
		return -1;
	tt_tw_header(&w, NULL);
	tt_tw_process(&w, 4242, "demo");
	tt_tw_sites(&w, tt_demo_sites, tt_demo_nsites);
	static const uint64_t funcs[] = {0x401000}; /* the producer's FUNC_ENTER */
	tt_tw_funcs(&w, funcs, N(funcs));
	tt_tw_thread(&w, 0, 101, "producer", N(producer), 0);
	tt_tw_events(&w, 0, 0, producer, PRODUCER_SPLIT);
	/* The worker's records come before the producer's later ones in the file, though
	 * its flow in happened after the producer's flow out. */
	tt_tw_thread(&w, 1, 102, "worker", N(worker), 0);
	tt_tw_events(&w, 1, 0, worker, N(worker));
	tt_tw_events(&w, 0, PRODUCER_SPLIT, producer + PRODUCER_SPLIT, N(producer) - PRODUCER_SPLIT);
	tt_tw_end(&w);
	return tt_tw_close(&w);
}
