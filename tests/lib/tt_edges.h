/* Values at the edges of 64 bits and of a varint's bytes, which tt_longrun_prog
 * records (extremes) and test_longrun expects back from a packed stream file. */
#ifndef TT_EDGES_H
#define TT_EDGES_H

#include <stdint.h>

static const uint64_t tt_edges[] = {0, 1, UINT64_MAX, (uint64_t)INT64_MIN, INT64_MAX,
				    UINT64_C(1) << 63 | 1, 0x7f, 0x80, 0x3fff, 0x4000};
#define TT_EDGES (sizeof tt_edges / sizeof tt_edges[0])

#endif
