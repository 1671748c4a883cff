/* `ticktrace convert` as a function, for the command and the benchmark. */
#ifndef TT_CONVERT_H
#define TT_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tt_decode.h"
#include "tt_report.h"
#include "tt_sinks.h"

enum tt_format {
	TT_FORMAT_AUTO = 0, /* from the output's extension: .pftrace, .perfetto-trace or
	                     * .pb is Perfetto's; JSON otherwise */
	TT_FORMAT_JSON,
	TT_FORMAT_PERFETTO,
};

/* "json", "perfetto": the format, or TT_FORMAT_AUTO for an unknown name. */
enum tt_format tt_format_named(const char *name);

struct tt_convert_opts {
	char *const *inputs;
	size_t ninputs;
	const char *output; /* "-": stdout */
	enum tt_format format;
	bool force;         /* replace an existing output file */
	bool quiet;         /* no summary line (warnings are still printed) */
	bool source;        /* JSON: file and line on every slice and instant */
	struct tt_filter filter; /* all zero: everything */
	bool spikes;             /* mark spikes in the output */
	struct tt_thresholds thresholds; /* and theirs, besides those in the code */
	const char *debug_dir;   /* searched for debug info first (NULL: the system's only) */
	uint64_t json_limit;     /* JSON larger than this gets a warning (0: TT_JSON_VIEWER_LIMIT) */
};

/* What a JSON trace viewer loads: Perfetto's and chrome://tracing's importers read
 * the file as one JavaScript string, and V8 strings stop at 2^29 - 24 characters. */
#define TT_JSON_VIEWER_LIMIT ((UINT64_C(1) << 29) - 24)

/* Reads, decodes and writes; 0, or -1 after reporting the problem, with no output
 * file left behind. `sum` (may be NULL) receives the totals. */
int tt_convert(const struct tt_convert_opts *opts, struct tt_summary *sum);

#endif
