/* `ticktrace open`: serves one trace file once to the Perfetto UI. */
#ifndef TT_OPEN_H
#define TT_OPEN_H

#include <stdio.h>

/* The port the Perfetto UI may fetch from (its content security policy allows
 * http://127.0.0.1:9001, as Perfetto's own open_trace_in_ui uses). */
#define TT_OPEN_PORT 9001

/* Listens on 127.0.0.1:port (0: any free port), prints on `out` the ui.perfetto.dev
 * URL that loads the file, answers the UI's preflight requests, and returns after
 * the file was sent once (0) or on an error (-1, reported). */
int tt_open(const char *path, int port, FILE *out);

/* `ticktrace open`: tt_open for a trace (Chrome JSON, Perfetto protobuf), for a raw
 * file after converting it to Perfetto's format in a temporary directory (removed
 * when done); anything else is refused (-1, reported). */
int tt_open_trace(char *path, int port, FILE *out);

#endif
