/* Test support: a small synthetic trace that uses every record kind, on two threads
 * of one process (tid 101 "producer", tid 102 "worker"), with flows both ways. */
#ifndef TT_DEMO_H
#define TT_DEMO_H

#include <stddef.h>

#include "tt_tw.h"

/* The call-site addresses, for tests that write records of their own. */
enum { S_MAIN = 0x1000, S_CHILD = 0x1010, S_WAKE = 0x1020, S_DROP = 0x1030, S_QUEUE = 0x1040,
       S_NEXT = 0x1050, S_WORK = 0x1060, S_ODD = 0x1070 };

extern const struct tt_tw_site tt_demo_sites[];
extern const size_t tt_demo_nsites;

/* Writes the demo trace to `path`; 0 or -1. */
int tt_demo_write(const char *path);

#endif
