/* bytes_per_event and file_bytes_per_event in ticktrace-bench and ticktrace-bench.exe
 * (bench/windows/): what a dumped file holds. */
#ifndef TT_BENCH_FILE_BYTES_H
#define TT_BENCH_FILE_BYTES_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "ticktrace/format.h"

/* Bytes the records of `events` events take in a dumped file, and the whole file's
 * growth per event: from two dumps, before and after recording them. 0 or -errno. */
static inline int tt_bench_file_bytes(const char *path, uint64_t *record_bytes, uint64_t *file_bytes)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -errno;
	uint64_t off = sizeof(struct tt_file_header);
	*record_bytes = 0;
	struct tt_section_header section;
	while (fseek(f, (long)off, SEEK_SET) == 0 && fread(&section, sizeof section, 1, f) == 1) {
		if (section.type == TT_SEC_EVENTS)
			*record_bytes += section.size - sizeof(struct tt_events_info);
		off += sizeof section + TT_SECTION_PADDED(section.size);
	}
	*file_bytes = off;
	fclose(f);
	return 0;
}

#endif
