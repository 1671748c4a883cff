/* The sinks that tt_decode drives (tt_decode.h). Each returns NULL when out of memory;
 * free with tt_sink_free. */
#ifndef TT_SINKS_H
#define TT_SINKS_H

#include "tt_decode.h"
#include "tt_out.h"

/* Chrome trace JSON (FORMATS.md), streamed into `out`. */
struct tt_sink *tt_json_sink_new(struct tt_out *out);

/* Perfetto's protobuf TrackEvent format (FORMATS.md, tools/perfetto_trace.proto). */
struct tt_sink *tt_perfetto_sink_new(struct tt_out *out);

void tt_sink_free(struct tt_sink *s);

#endif
