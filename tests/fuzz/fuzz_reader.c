/* libFuzzer target for the raw file reader and the decoder: any bytes are read as a
 * .ttr file; a file the reader accepts goes through everything that reads files but
 * the symbolizer (which opens the files that MODULES names): the JSON and Perfetto
 * sinks as convert drives them (spike marks with every scope over its threshold, the
 * filter's time window and minimum duration), the flat profile and the spike log
 * (`ticktrace report` and `spikes`), all written to /dev/null, and the runtime's
 * record feeder into the same analysis. The input's size picks the report's format,
 * sort and grouping, so that the corpus covers them all. Errors are expected;
 * crashes, leaks and undefined behaviour are what the sanitizers look for. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tt_out tt_fuzz_out;
static FILE *tt_fuzz_null;

/* What convert writes, with every option that changes the way: JSON with sources and
 * spike marks, Perfetto, and each of them again through the filter (convert puts the
 * marks outside it). */
static void tt_fuzz_convert(const struct tt_trace *t)
{
	static const struct tt_an_threshold_rule all[] = {{"*", 0}};
	static const struct tt_thresholds every = {.global = 0, .rules = (struct tt_an_threshold_rule *)all,
						   .nrules = 1};
	/* from 2.5 us to 1 ms: tt_tw's files run from 0 to 10 us, real ones for longer */
	static const struct tt_filter window = {.has_from = true, .from = 2500, .has_to = true,
						.to = 1000000};
	static const struct tt_filter window_min = {.has_from = true, .from = 2500, .has_to = true,
						    .to = 1000000, .min_dur = 50};
	struct tt_sink *writers[] = {tt_json_sink_new(&tt_fuzz_out, true), tt_perfetto_sink_new(&tt_fuzz_out),
				     tt_json_sink_new(&tt_fuzz_out, false), tt_perfetto_sink_new(&tt_fuzz_out)};
	struct tt_sink *filters[] = {writers[2] ? tt_filter_sink_new(writers[2], &window_min) : NULL,
				     writers[3] ? tt_filter_sink_new(writers[3], &window) : NULL};
	struct tt_sink *marks[] = {writers[0] ? tt_spike_mark_sink_new(writers[0], &every) : NULL,
				   filters[0] ? tt_spike_mark_sink_new(filters[0], &every) : NULL};
	struct tt_sink *sinks[] = {marks[0], writers[1], marks[1], filters[1]};
	if (marks[0] && writers[1] && marks[1] && filters[1])
		tt_decode(t, sinks, 4);
	for (size_t i = 0; i < 2; i++) {
		tt_sink_free(marks[i]);
		tt_sink_free(filters[i]);
	}
	for (size_t i = 0; i < 4; i++)
		tt_sink_free(writers[i]);
}

static void tt_fuzz_analyse(const struct tt_trace *t, size_t size)
{
	static const struct tt_an_threshold_rule rules[] = {{"*o*", 100}, {"[!a-m]*", 2000}};
	struct tt_report_opts o = {
		.format = (enum tt_report_format)(size % 3),
		.sort = (enum tt_an_sort)(size / 3 % (TT_AN_SORT_NAME + 1)),
		.by_thread = size & 1,
		.thresholds = {.global = size & 2 ? TT_AN_NO_THRESHOLD : 1000,
			       .rules = (struct tt_an_threshold_rule *)rules, .nrules = size & 4 ? 2 : 0},
	};
	struct tt_summary sum;
	tt_analyse(t, &o, false, tt_fuzz_null, &sum);
	tt_analyse(t, &o, true, tt_fuzz_null, &sum);
}

static size_t tt_fuzz_name(void *ctx, const struct tt_an_thread *th, uint64_t key, char *buf,
			   size_t cap)
{
	(void)ctx;
	(void)th;
	int n = snprintf(buf, cap, "%" PRIx64, key);
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* The runtime's way to the same analysis (the live spikes of mode stream): each
 * thread's records fed as they are, without the decoder. */
static void tt_fuzz_feed(const struct tt_trace *t)
{
	static const struct tt_an_threshold_rule all[] = {{"*", 100}};
	struct tt_an an = {.profile = true, .find_spikes = true, .threshold = 1000,
			   .rules = all, .nrules = 1, .name = tt_fuzz_name};
	const struct tt_file *f = &t->files[0];
	for (size_t i = 0; i < f->nthreads; i++) {
		const struct tt_thread *th = &f->threads[i];
		struct tt_an_thread ta;
		tt_an_thread_init(&ta, &an, NULL);
		struct tt_an_feed feed = {.th = &ta, .clock = &f->clock};
		int rc = 0;
		for (size_t k = 0; k < th->nsections && rc == 0; k++)
			rc = tt_an_feed_records(&feed, tt_section_records(th, k), th->sections[k].count);
		if (rc == 0)
			tt_an_feed_finish(&feed, INT64_MIN, INT64_MIN);
		tt_an_feed_free(&feed);
		tt_an_thread_free(&ta);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tt_diag_quiet = 1;
	if (!tt_fuzz_null) {
		if (tt_out_open(&tt_fuzz_out, "/dev/null", false) < 0 ||
		    !(tt_fuzz_null = fopen("/dev/null", "w")))
			abort();
	}
	/* The reader expects the alignment a mapping has: malloc gives 16 bytes. */
	uint8_t *copy = malloc(size + 1);
	memcpy(copy, data, size);
	struct tt_trace t;
	if (tt_trace_load(&t, "fuzz.ttr", copy, size) == 0) {
		tt_fuzz_convert(&t);
		tt_fuzz_analyse(&t, size);
		tt_fuzz_feed(&t);
	}
	tt_trace_close(&t);
	free(copy);
	return 0;
}
