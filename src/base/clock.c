/* Time: TSC readings are converted offline to CLOCK_MONOTONIC nanoseconds. The file
 * carries anchors (a TSC reading and the clocks, taken together) from start and from
 * dump; the tools interpolate between them. No sleeping calibration at start-up.
 * (The kernel's own factors in the perf mmap page were considered: on virtual
 * machines cap_user_time is often 0, and perf_event_open cost 9 ms here.) */
#include "base/base.h"

struct tt_anchor tt__start_anchor;
struct tt_machine_info tt__machine;

void tt__clock_start(void)
{
	tt_os_anchor(&tt__start_anchor);
	tt__machine_start(&tt__machine, &tt__start_anchor);
	tt_os_machine_ids(&tt__machine);
}

void tt__clock_fill_header(struct tt_file_header *header)
{
	tt__file_header_init(header, &tt__start_anchor);
	if (tt_os_clock_by_tsc())
		header->flags |= TT_FILE_TSC_RELIABLE;
}
