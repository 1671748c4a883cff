/* tt_symbols_attach (read.h): a trace's functions named, its threads named after
 * them, and the call sites a live file left undescribed named, by whichever reader of
 * binaries is built (symbols.c on Linux, symbols_pe.c in ticktrace.exe). */
#include "read_internal.h"

struct tt_symbols *tt_symbols_attach(struct tt_trace *t, const char *debug_dir)
{
	struct tt_symbols *s = tt_symbols_new(debug_dir);
	if (!s) {
		tt_error("out of memory for symbols");
		return NULL;
	}
	if (tt_trace_symbolize(t, tt_symbols_lookup, s) < 0) {
		tt_symbols_free(s);
		return NULL;
	}
	for (size_t i = 0; i < t->nfiles; i++)
		tt_symbols_describe_sites(s, &t->files[i]);
	/* (after the sites: a thread named after its first scope, which a killed run's
	 * live file may not have described) */
	if (tt_trace_name_threads(t) < 0) {
		tt_symbols_free(s);
		return NULL;
	}
	return s;
}
