/* `ticktrace record`: runs a program with functions patched to record their calls. */
#ifndef TT_RECORD_H
#define TT_RECORD_H

#include <stdbool.h>
#include <stddef.h>

struct tt_record_opts {
	char **patterns;    /* -f: globs over symbol names, or 0xADDR */
	size_t npatterns;
	const char *out;    /* the raw file (TICKTRACE_OUT; %p: the process id) */
	const char *convert; /* after the run, convert to this file; NULL: say how */
	bool force;         /* the conversion may replace an existing file */
	bool follow;        /* the programs it starts are traced too, each into its own file */
	char **argv;        /* the program and its arguments */
};

/* Runs the program and waits for it; its exit status (128 + signal when killed), 127
 * when it was not found and 126 when it could not be run (as a shell), or 1 when
 * ticktrace failed (no detour library, the trace not converted); each said on stderr. */
int tt_record(const struct tt_record_opts *opts);

#endif
