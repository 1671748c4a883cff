/* `ticktrace lines` as a function. */
#ifndef TT_LINES_H
#define TT_LINES_H

#include <stdio.h>

/* Prints each bucket of a profile file from tt_profile_write with its function and
 * file:line. 0, or -1 after reporting the problem. */
int tt_lines(const char *path, FILE *out);

#endif
