/* libticktrace-wrap's one counter, shared by the C (wrap.c) and C++ (wrap_cxx.c)
 * wrappers: "heap_live_bytes" moves by delta, and its new total is recorded. */
#ifndef TT_HEAP_H
#define TT_HEAP_H

#include <stdint.h>

void tt__heap_changed(int64_t delta);

#endif
