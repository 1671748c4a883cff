/* What says whose a file is, as both runtimes fill it: the file header's format and
 * clock, PROCESS, and MACHINE with its wall clocks at the start and as written. */
#include <string.h>

#include "sections/sections.h"

void tt__file_header_init(struct tt_file_header *header, const struct tt_anchor *start)
{
	*header = (struct tt_file_header){
		.version = TT_FILE_VERSION,
		.header_size = sizeof *header,
		.flags = tt_os_invariant_tsc() ? TT_FILE_INVARIANT_TSC : 0,
		.tsc_source = TT_TSC_ANCHORS,
		.start = *start,
		.pid = tt_os_process_id(),
	};
	memcpy(header->magic, TT_FILE_MAGIC, TT_FILE_MAGIC_LEN);
	tt_os_anchor(&header->end);
	header->tsc_hz = tt_os_anchor_hz(&header->start, &header->end);
}

void tt__out_process_section(struct tt__out *out, const struct tt_process_info *info, const char *name,
			     const char *cmdline)
{
	uint64_t size = sizeof *info + info->name_len + info->cmdline_len;
	tt__out_section(out, TT_SEC_PROCESS, size);
	tt__out(out, info, sizeof *info);
	tt__out(out, name, info->name_len);
	tt__out(out, cmdline, info->cmdline_len);
	tt__out_pad(out, size);
}

void tt__machine_start(struct tt_machine_info *machine, const struct tt_anchor *start)
{
	char host[TT_HOST_NAME_MAX + 1];
	*machine = (struct tt_machine_info){.flags = TT_MACHINE_START_CLOCK};
	machine->host_name_len = (uint32_t)tt_os_host_name(host, sizeof host);
	memcpy(machine->host_name, host, machine->host_name_len);
	tt_os_clock_reading(start, &machine->start);
}

void tt__out_machine(struct tt__out *out, const struct tt_machine_info *at_start)
{
	struct tt_machine_info machine = *at_start;
	struct tt_anchor now;
	tt_os_anchor(&now);
	tt_os_clock_reading(&now, &machine.written);
	machine.flags |= TT_MACHINE_WRITTEN_CLOCK;
	tt_os_machine_tick(&machine); /* (as found so far) */
	tt__out_section(out, TT_SEC_MACHINE, sizeof machine);
	tt__out(out, &machine, sizeof machine);
	tt__out_pad(out, sizeof machine);
}
