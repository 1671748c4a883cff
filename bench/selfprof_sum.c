/* The routine the self-profiling demo measures, alone in its compile unit so that
 * bench/meson.build can forbid what would remove its branch: vectorizing the loop,
 * and if-conversion into a conditional move (-fno-tree-vectorize -fno-if-conversion
 * -fno-if-conversion2 -fno-tree-loop-if-convert). The demo checks the result in the
 * disassembly it prints. */
#include "selfprof_sum.h"

TT_PROFILED(bytesum) uint64_t tt_bench_bytesum(const unsigned char *buf, size_t n)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		if (buf[i] <= 0x7F)
			sum += buf[i];
	return sum;
}
