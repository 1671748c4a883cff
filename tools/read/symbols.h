/* Offline symbols for -finstrument-functions: names a function address of a raw file
 * from the ELF files its MODULES section lists, with elfutils (libdwfl): the symbol,
 * demangled for C++; file and line where debug info exists, found beside the file or
 * by build-id in the debug directories where the binary is stripped; "module+0xOFF"
 * where nothing names it. Each address is resolved once.
 *
 *   struct tt_symbols *sym = tt_symbols_attach(&trace, NULL);  // before tt_decode
 *   ...
 *   tt_symbols_free(sym);                                       // after the trace is done
 */
#ifndef TT_SYMBOLS_H
#define TT_SYMBOLS_H

#include "tt_decode.h"

struct tt_symbols;

/* `debug_dir`: a directory searched for debug info (by build-id, .build-id/xx/yyyy.debug,
 * and by name) before the system's /usr/lib/debug; NULL: the system's only. NULL when
 * out of memory. */
struct tt_symbols *tt_symbols_new(const char *debug_dir);
void tt_symbols_free(struct tt_symbols *s);

/* A new symbolizer that names the trace's functions (tt_trace_symbolize); NULL after
 * reporting the problem. Free it after the trace is closed. */
struct tt_symbols *tt_symbols_attach(struct tt_trace *t, const char *debug_dir);

/* The tt_symbolize_fn (tt_decode.h): `ctx` is a struct tt_symbols. What it returns stays
 * valid until tt_symbols_free. */
int tt_symbols_lookup(void *ctx, const struct tt_file *file, uint64_t address, uint64_t tsc,
		      struct tt_symbol *out);

#endif
