/* `ticktrace flame` as a function. */
#ifndef TT_FLAME_H
#define TT_FLAME_H

#include <stdbool.h>
#include <stddef.h>

#include "tt_sinks.h"

struct tt_flame_opts {
	char *const *inputs;
	size_t ninputs;
	const char *output; /* "-": stdout */
	bool svg;           /* an SVG; otherwise folded stacks */
	bool force, quiet;
	struct tt_filter filter;
	const char *debug_dir;
};

/* Writes the flame graph of the inputs' slices (self time by path of scopes and
 * functions, per thread name). 0, or -1 after reporting the problem, with no output
 * file left behind. */
int tt_flame(const struct tt_flame_opts *o);

#endif
