/* libFuzzer target for the raw file reader and the decoder: any bytes are read as a
 * .ttr file; a file the reader accepts is decoded into the JSON and Perfetto sinks
 * (written to /dev/null), the JSON through the spike detector with every scope over
 * its threshold. Errors are expected; crashes, leaks and undefined behaviour are what
 * the sanitizers look for. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tt_report.h"
#include "tt_sinks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tt_out out;
	static int out_ready;
	tt_diag_quiet = 1;
	if (!out_ready) {
		if (tt_out_open(&out, "/dev/null", false) < 0)
			abort();
		out_ready = 1;
	}
	/* The reader expects the alignment a mapping has: malloc gives 16 bytes. */
	uint8_t *copy = malloc(size + 1);
	memcpy(copy, data, size);
	struct tt_trace t;
	if (tt_trace_load(&t, "fuzz.ttr", copy, size) == 0) {
		static const struct tt__threshold_rule all[] = {{"*", 0}};
		static const struct tt_thresholds every = {.global = 0, .rules = (struct tt__threshold_rule *)all,
							   .nrules = 1};
		struct tt_sink *json = tt_json_sink_new(&out, true);
		struct tt_sink *sinks[] = {json ? tt_spike_mark_sink_new(json, &every) : NULL,
					   tt_perfetto_sink_new(&out)};
		if (sinks[0] && sinks[1])
			tt_decode(&t, sinks, 2);
		tt_sink_free(sinks[0]);
		tt_sink_free(json);
		tt_sink_free(sinks[1]);
	}
	tt_trace_close(&t);
	free(copy);
	return 0;
}
