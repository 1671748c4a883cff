/* A Windows program's file:line: mingw-w64's gcc leaves DWARF in a PE file's .debug_*
 * sections, which libdw reads as it reads an ELF file's once they are wrapped in an
 * ELF image made in memory (libelf opens ELF alone): the debug sections' bytes under
 * their own names, nothing else. Its functions name those the COFF symbol table lacks
 * (the static functions gas leaves out of it). Their addresses are the image's at its preferred
 * base (ImageBase + RVA), the linker having resolved them. */
#include "read_internal.h"

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tt_pe_dwarf {
	unsigned char *image; /* the ELF file made: libelf and libdw read it in place */
	Elf *elf;
	Dwarf *dw;
};

void tt_pe_dwarf_free(struct tt_pe_dwarf *d)
{
	if (!d)
		return;
	if (d->dw)
		dwarf_end(d->dw);
	if (d->elf)
		elf_end(d->elf);
	free(d->image);
	free(d);
}

/* The ELF image of the sections: its header, their bytes back to back, the section
 * names, the section headers (a null one first, the names' last). NULL when out of
 * memory or a section cannot be read. */
static unsigned char *tt_pe_elf_image(int fd, const struct tt_pe_debug_section *sections, size_t n,
				      size_t *size)
{
	size_t data = 0, names = 1 + sizeof ".shstrtab";
	for (size_t i = 0; i < n; i++) {
		data += sections[i].size;
		names += strlen(sections[i].name) + 1;
	}
	size_t headers_at = (sizeof(Elf64_Ehdr) + data + names + 7) & ~(size_t)7;
	*size = headers_at + (n + 2) * sizeof(Elf64_Shdr);
	unsigned char *image = calloc(1, *size);
	if (!image)
		return NULL;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)image;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC; /* (its addresses final: libdw relocates nothing) */
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shoff = headers_at;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = (Elf64_Half)(n + 2);
	eh->e_shstrndx = (Elf64_Half)(n + 1);
	Elf64_Shdr *sh = (Elf64_Shdr *)(image + headers_at);
	size_t at = sizeof(Elf64_Ehdr), names_at = sizeof(Elf64_Ehdr) + data, name = 1;
	for (size_t i = 0; i < n; i++) {
		if (pread(fd, image + at, sections[i].size, (off_t)sections[i].file_offset) !=
		    (ssize_t)sections[i].size) {
			free(image);
			return NULL;
		}
		sh[i + 1] = (Elf64_Shdr){.sh_name = (Elf64_Word)name, .sh_type = SHT_PROGBITS,
					 .sh_offset = at, .sh_size = sections[i].size, .sh_addralign = 1};
		strcpy((char *)image + names_at + name, sections[i].name);
		name += strlen(sections[i].name) + 1;
		at += sections[i].size;
	}
	strcpy((char *)image + names_at + name, ".shstrtab");
	sh[n + 1] = (Elf64_Shdr){.sh_name = (Elf64_Word)name, .sh_type = SHT_STRTAB,
				 .sh_offset = names_at, .sh_size = names, .sh_addralign = 1};
	return image;
}

struct tt_pe_dwarf *tt_pe_dwarf_open(int fd, const struct tt_pe_debug_section *sections, size_t n)
{
	if (!n)
		return NULL;
	struct tt_pe_dwarf *d = calloc(1, sizeof(*d));
	size_t size;
	if (!d || !(d->image = tt_pe_elf_image(fd, sections, n, &size)) ||
	    !(d->elf = elf_memory((char *)d->image, size)) ||
	    !(d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL))) {
		tt_pe_dwarf_free(d);
		return NULL;
	}
	return d;
}

/* The unit that covers `address`: by .debug_aranges, else each unit asked in turn. */
static bool tt_pe_dwarf_unit(Dwarf *dw, Dwarf_Addr address, Dwarf_Die *cu)
{
	if (dwarf_addrdie(dw, address, cu))
		return true;
	Dwarf_Off off = 0, next;
	size_t header;
	while (dwarf_nextcu(dw, off, &next, &header, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + header, cu) && dwarf_haspc(cu, address) == 1)
			return true;
		off = next;
	}
	return false;
}

const char *tt_pe_dwarf_line(struct tt_pe_dwarf *d, uint64_t address, uint32_t *line)
{
	Dwarf_Die cu;
	Dwarf_Line *l = d && tt_pe_dwarf_unit(d->dw, address, &cu) ? dwarf_getsrc_die(&cu, address) : NULL;
	const char *file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
	int lineno = 0;
	if (file)
		dwarf_lineno(l, &lineno);
	*line = lineno > 0 ? (uint32_t)lineno : 0;
	return file;
}

/* The function's symbol: its linkage name (C++'s mangled one, which says its
 * parameters), else its name, from its declaration where the definition refers to it. */
static const char *tt_pe_dwarf_symbol(Dwarf_Die *fn)
{
	static const int names[] = {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name};
	Dwarf_Attribute attr;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (dwarf_attr_integrate(fn, names[i], &attr))
			return dwarf_formstring(&attr);
	return NULL;
}

const char *tt_pe_dwarf_function(struct tt_pe_dwarf *d, uint64_t address, uint64_t *entry)
{
	Dwarf_Die cu, *scopes = NULL;
	int n = d && tt_pe_dwarf_unit(d->dw, address, &cu) ? dwarf_getscopes(&cu, address, &scopes) : 0;
	const char *symbol = NULL;
	for (int i = 0; i < n && !symbol; i++) { /* (innermost first: past inlined calls) */
		Dwarf_Addr low;
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram && dwarf_lowpc(&scopes[i], &low) == 0 &&
		    low <= address) {
			symbol = tt_pe_dwarf_symbol(&scopes[i]);
			*entry = low;
		}
	}
	free(scopes);
	return symbol;
}
