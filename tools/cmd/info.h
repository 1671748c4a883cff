/* `ticktrace info` as a function. */
#ifndef TT_INFO_H
#define TT_INFO_H

#include <stddef.h>
#include <stdio.h>

/* Describes each raw file on `out`: header, clock, process, threads with their event,
 * dropped, unmatched and clamped counts, and the max_sites (0: all) most used call
 * sites with their uses. 0, or -1 after reporting why a file cannot be read. */
int tt_info(char *const *paths, size_t n, size_t max_sites, FILE *out);

/* The call sites info lists unless told otherwise. */
#define TT_INFO_SITES 25

#endif
