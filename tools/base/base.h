/* Errors and warnings on stderr, in one format: the file, the byte offset, the problem. */
#ifndef TT_DIAG_H
#define TT_DIAG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TT_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Nonzero: print nothing (the fuzzer). */
extern int tt_diag_quiet;

/* Writes n bytes of text from a trace or the command line with control bytes (a
 * terminal's escape sequences) shown as \xNN, not sent; returns the columns used.
 * Every error and warning goes through it. */
size_t tt_put_escaped(FILE *out, const char *text, size_t n);

/* "ticktrace: error: PATH: offset N: problem". Returns -1, so that callers can
 * `return tt_error_at(...)`. */
TT_PRINTF(3, 4) int tt_error_at(const char *path, uint64_t offset, const char *fmt, ...);
/* "ticktrace: error: problem" */
TT_PRINTF(1, 2) int tt_error(const char *fmt, ...);
/* "ticktrace: warning: problem" */
TT_PRINTF(1, 2) void tt_warn(const char *fmt, ...);

#endif
