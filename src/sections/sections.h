/* ticktrace runtime, layer sections: a raw file's bytes (FORMATS.md), buffered into few
 * large writes onto a sink (platform.h), and the sections that need nothing of a
 * runtime's but what they are handed: headers and padding, MODULES, END. Below both
 * runtimes' writers (writer/ on Linux, portable/ on Windows), on the platform layer
 * alone. Never installed; names tt__. */
#ifndef TT_SECTIONS_H
#define TT_SECTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "platform/platform.h"

#ifdef _WIN32
#define TT__HIDDEN /* (a DLL exports what its .def names alone) */
#else
#define TT__HIDDEN __attribute__((visibility("hidden")))
#endif

/* out.c: a file's bytes, buffered, and section headers */
struct tt__out {
	struct tt_os_sink *sink; /* where its bytes go */
	int err; /* the first error, as -errno: nothing more is put (Linux's writer: -EBADF,
	          * its descriptor is the program's now) */
	uint64_t offset; /* bytes written to the sink, buffered ones included */
	size_t len;
	char buf[1 << 16];
};
/* `out` emptied, to write into `sink` from its start. */
void tt__out_to(struct tt__out *out, struct tt_os_sink *sink) TT__HIDDEN;
void tt__out(struct tt__out *out, const void *data, size_t size) TT__HIDDEN;
void tt__out_flush(struct tt__out *out) TT__HIDDEN;
void tt__out_section(struct tt__out *out, uint32_t type, uint64_t size) TT__HIDDEN;
void tt__out_pad(struct tt__out *out, uint64_t size) TT__HIDDEN;
/* A section's header: within an UNLOADED section when `until` is not 0 (what it
 * describes held until then). */
void tt__out_section_until(struct tt__out *out, uint32_t type, uint64_t size,
			   uint64_t until) TT__HIDDEN;
void tt__out_end(struct tt__out *out, const struct tt_end_info *end) TT__HIDDEN;
/* MODULES with the entries of `m`, within an UNLOADED section when `until` is not 0. */
void tt__out_module_list(struct tt__out *out, const struct tt_os_module_list *m,
			 uint64_t until) TT__HIDDEN;
/* MODULES of those loaded now; 0, or -ENOMEM (no section). */
int tt__out_loaded_modules(struct tt__out *out) TT__HIDDEN;

/* Memory as a sink: the bytes put at `at` of [mem, mem + cap), -ENOSPC past it (a
 * mapped file's head: Windows' live file). */
struct tt__mem_sink {
	struct tt_os_sink sink;
	char *mem;
	uint64_t cap;
};
void tt__mem_sink(struct tt__mem_sink *sink, void *mem, uint64_t cap) TT__HIDDEN;

#endif /* TT_SECTIONS_H */
