/* `ticktrace spikes --suggest`: the markup worth adding to a run, PET's "suggested
 * markup", from its flat profile against the global threshold: thresholds of their
 * own for scopes over the global one on most calls (a frame's Tick), TT_IGNORE for
 * the few long calls that only hold others (main, a thread's loop), and the GCC flag
 * that leaves out of -finstrument-functions the functions too short to measure that
 * make most of the events. */
#ifndef TT_SUGGEST_H
#define TT_SUGGEST_H

#include <stdint.h>
#include <stdio.h>

#include "analysis.h"

/* The suggestions for the table's entries (built with an analysis whose global
 * threshold is `threshold`, or TT__NO_THRESHOLD), as text. */
void tt_suggest_print(const struct tt__table *t, int64_t threshold, FILE *out);

#endif
