/* pe_dwarf.c's functions (read_internal.h) in ticktrace.exe, where libdw is not built:
 * a PE file's DWARF is not read, said once for each file that has some, and its
 * functions have no file:line (their names come from the COFF symbols all the same,
 * and those the COFF symbols lack are named by offset).
 * `ticktrace` on Linux reads it. */
#include "read_internal.h"

struct tt_pe_dwarf *tt_pe_dwarf_open(int fd, const struct tt_pe_debug_section *sections, size_t n)
{
	(void)fd;
	(void)sections;
	if (n)
		tt_warn("a Windows program's DWARF (its file:line) is not read by ticktrace.exe (elfutils' "
			"libdw is not built for Windows): its functions are named without file:line; "
			"`ticktrace` on Linux reads it");
	return NULL;
}

void tt_pe_dwarf_free(struct tt_pe_dwarf *d)
{
	(void)d;
}

const char *tt_pe_dwarf_line(struct tt_pe_dwarf *d, uint64_t address, uint32_t *line)
{
	(void)d;
	(void)address;
	(void)line;
	return NULL;
}

const char *tt_pe_dwarf_function(struct tt_pe_dwarf *d, uint64_t address, uint64_t *entry)
{
	(void)d;
	(void)address;
	(void)entry;
	return NULL;
}
