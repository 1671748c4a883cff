/* tools/read's inside: what the reader's files call of one another; the layers above
 * see read.h alone. */
#ifndef TT_TOOLS_READ_INTERNAL_H
#define TT_TOOLS_READ_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read.h"

#define TT_FAIL(f, off, ...) tt_error_at((f)->path, (off), __VA_ARGS__)

/* Whether a record's tsc field is a time (a VALUE record's holds a value). */
static inline bool tt_record_timed(uint64_t word)
{
	return TT_RECORD_HAS_TIME(TT_RECORD_KIND(word));
}

/* sections.c: the header, then every section; a site (call site or function)
 * appended and indexed by address, 0 or -1 (also for a second description of an
 * address for the same time span); an EVENTS section's records added to its thread. */
int tt_file_read_header(struct tt_file *f);
int tt_file_read_sections(struct tt_file *f);
int tt_file_add_site(struct tt_file *f, const struct tt_site *s, size_t *cap, uint64_t at);
int tt_file_add_events(struct tt_file *f, struct tt_thread *t, struct tt_events ev,
		       const struct tt_record *r, uint64_t at);

/* snapshot.c: the SNAPSHOT section (`size` bytes at `at`), once, after PROCESS; then,
 * after every section, what it says of the threads. 0, or -1 after reporting. */
int tt_file_read_snapshot(struct tt_file *f, uint64_t at, uint64_t size, bool after_process);
int tt_file_check_snapshot(struct tt_file *f);
void tt_snapshot_free(struct tt_snapshot *s);

/* records.c: unpacks `count` records: NULL, or what is wrong with record *bad, which
 * begins at bytes[*at]. */
const char *tt_unpack_records(const uint8_t *bytes, size_t size, size_t count,
			      struct tt_record *out, size_t *bad, size_t *at);

/* Names a file's call sites the run had not described (a live file's) from the
 * descriptors in the binaries its MODULES list (symbols.c; symbols_pe.c says it
 * cannot). */
void tt_symbols_describe_sites(struct tt_symbols *s, struct tt_file *f);

/* pe.c: a Windows program's functions from the COFF symbol table of its PE file
 * (mingw-w64's; a PDB is not read). tt_pe_is: whether the file open at fd is a PE
 * file. tt_pe_load: its sections and functions, checked against the build id the
 * program ran with (its CodeView GUID and age); NULL after saying why (warned).
 * tt_pe_section_rva: the address in the image of the section at `file_offset`.
 * tt_pe_function: the function holding `rva`, *offset into it; NULL: none. */
struct tt_pe;
bool tt_pe_is(int fd);
struct tt_pe *tt_pe_load(int fd, const char *path, const struct tt_str *build_id);
void tt_pe_free(struct tt_pe *pe);
bool tt_pe_section_rva(const struct tt_pe *pe, uint64_t file_offset, uint32_t *rva);
const char *tt_pe_function(const struct tt_pe *pe, uint64_t rva, uint64_t *offset);
/* tt_pe_line: the source file and *line of `rva` from the file's DWARF (mingw-w64's
 * gcc leaves it in .debug_* sections); NULL: none says. */
const char *tt_pe_line(const struct tt_pe *pe, uint64_t rva, uint32_t *line);
uint64_t tt_pe_image_base(const struct tt_pe *pe);
/* tt_pe_name: the function at `rva` of the file at `path` (as the run named it),
 * named from its COFF symbols (demangled, "+0xOFF" inside one), or its DWARF where
 * they lack the function, else as PROGRAM+0xRVA;
 * its source *file (malloc'd, left as it was where none says) and *line. 0, or -1 out
 * of memory. */
int tt_pe_name(const struct tt_pe *pe, const char *path, uint64_t rva, char **name, char **file, uint32_t *line);
/* tt_pe_local_path: where a Windows program's path (DRIVE:\\..., so too after a \\\\?\\ prefix) is here, malloc'd;
 * NULL: not such a path (or out of memory). Wine's drive Z: is the root, its other
 * drives (C:) the links of its prefix's dosdevices ($WINEPREFIX, else ~/.wine); a file
 * not there (moved, or recorded on Windows) is looked for by its name in `debug_dir`,
 * else in the current directory. */
char *tt_pe_local_path(const char *debug_dir, const char *path);

/* pe_dwarf.c: a PE file's DWARF, read by libdw from its .debug_* sections wrapped in
 * an ELF image made in memory. tt_pe_dwarf_open: NULL when there are none, or they
 * cannot be read; tt_pe_dwarf_line: the source file and *line of `address` (the
 * image's at its preferred base), NULL: none; tt_pe_dwarf_function: the symbol of the
 * function (DW_TAG_subprogram) whose code holds `address`, its *entry address, or
 * NULL: none says. */
struct tt_pe_debug_section {
	char name[64];
	uint64_t file_offset, size;
};
struct tt_pe_dwarf;
struct tt_pe_dwarf *tt_pe_dwarf_open(int fd, const struct tt_pe_debug_section *sections, size_t n);
void tt_pe_dwarf_free(struct tt_pe_dwarf *d);
const char *tt_pe_dwarf_line(struct tt_pe_dwarf *d, uint64_t address, uint32_t *line);
const char *tt_pe_dwarf_function(struct tt_pe_dwarf *d, uint64_t address, uint64_t *entry);

/* lookup.c: the description of `address` whose span ends at `until`, or NULL. */
struct tt_site *tt_file_site_until(const struct tt_file *f, uint64_t address, uint64_t until);

/* recover.c: a live file's chunks to their threads; the sites its records use that
 * were not yet described; a thread's last event cut in half, left out; a stream cut
 * short, its threads' runs of dropped events counted; the sites the decoder needs
 * (lost events, unbegun scopes), where it may. */
int tt_file_read_live_chunks(struct tt_file *f);
int tt_file_name_unknown_sites(struct tt_file *f);
void tt_file_trim_cut_event(struct tt_file *f, struct tt_thread *t);
void tt_file_count_gaps(struct tt_file *f, struct tt_thread *t);
int tt_file_add_decoder_sites(struct tt_file *f);
#endif
