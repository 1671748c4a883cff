#ifndef TT_BENCH_SELFPROF_SUM_H
#define TT_BENCH_SELFPROF_SUM_H

#include <stddef.h>
#include <stdint.h>

#include "ticktrace/profile.h"

/* The sum of the bytes of buf that are <= 0x7F, with a real branch per byte. Lives
 * in section tt_prof_bytesum. */
uint64_t tt_bench_bytesum(const unsigned char *buf, size_t n);

#endif
