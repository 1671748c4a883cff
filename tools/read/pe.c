/* A Windows program's functions by name: the COFF symbol table mingw-w64's linker
 * keeps in a PE file unless it is stripped (libelf and libdw read ELF alone), and
 * their lines from its DWARF sections (pe_dwarf.c), which name the functions the
 * symbol table lacks. The symbols have no sizes: the exception directory's
 * (.pdata's) function extents tell where one's code ends. MSVC's programs keep theirs in a
 * PDB, which is not read: said where it is named. */
#include "read_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbol_name.h"

#define TT_PE_COFF_SYMBOL 18       /* bytes of a symbol table entry */
#define TT_PE_SECTION 40           /* bytes of a section header */
#define TT_PE_DEBUG_ENTRY 28       /* bytes of a debug directory entry */
#define TT_PE_FUNCTION_TYPE 0x20   /* a symbol's type: a function (gcc's, not NASM's) */
#define TT_PE_CLASS_EXTERNAL 2
#define TT_PE_CLASS_STATIC 3
#define TT_PE_DEBUG_CODEVIEW 2
#define TT_PE_DIR_EXCEPTION 3       /* DataDirectory[3]: .pdata's RUNTIME_FUNCTIONs */
#define TT_PE_DIR_DEBUG 6
#define TT_PE_RUNTIME_FUNCTION 12  /* bytes of one: its code's first RVA, its end's */
#define TT_PE_SCN_EXECUTE 0x20000000u
#define TT_PE_MAX_SYMBOLS (1u << 26) /* 1.2 GB of symbols: more is damage */

struct tt_pe_symbol {
	uint32_t rva;
	bool typed; /* a function by its type: before an untyped label at its address
	             * (the linker's __start_SECTION) */
	char *name;
};

struct tt_pe_section {
	uint32_t rva, file_offset;
};

struct tt_pe {
	uint64_t image_base;        /* where its DWARF's addresses put it */
	struct tt_pe_dwarf *dwarf;  /* NULL: none */
	struct tt_pe_section *sections;
	size_t nsections;
	struct tt_pe_symbol *symbols; /* functions, by address */
	size_t nsymbols;
	uint8_t *extents; /* .pdata's RUNTIME_FUNCTIONs, by address (NULL: none) */
	size_t nextents;
};

static uint16_t tt_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t tt_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* `n` bytes at `off` of the file, or NULL (out of memory, or not that long). */
static uint8_t *tt_pe_read(int fd, uint64_t off, size_t n)
{
	uint8_t *p = malloc(n ? n : 1);
	if (p && pread(fd, p, n, (off_t)off) != (ssize_t)n) {
		free(p);
		return NULL;
	}
	return p;
}

bool tt_pe_is(int fd)
{
	uint8_t mz[2];
	return pread(fd, mz, 2, 0) == 2 && mz[0] == 'M' && mz[1] == 'Z';
}

void tt_pe_free(struct tt_pe *pe)
{
	if (!pe)
		return;
	for (size_t i = 0; i < pe->nsymbols; i++)
		free(pe->symbols[i].name);
	free(pe->symbols);
	free(pe->sections);
	free(pe->extents);
	tt_pe_dwarf_free(pe->dwarf);
	free(pe);
}

static int tt_pe_symbol_cmp(const void *a, const void *b)
{
	const struct tt_pe_symbol *x = a, *y = b;
	if (x->rva != y->rva)
		return x->rva < y->rva ? -1 : 1;
	return (int)x->typed - (int)y->typed; /* (a lookup takes the last of those at one address) */
}

/* The COFF string table after the `count` symbols at `table` (its size first, itself
 * counted), malloc'd, *size its bytes; NULL: none, or cut short. */
static uint8_t *tt_pe_strings(int fd, uint32_t table, uint32_t count, uint32_t *size)
{
	uint64_t at = table + (uint64_t)count * TT_PE_COFF_SYMBOL;
	uint8_t *size_bytes = table ? tt_pe_read(fd, at, 4) : NULL;
	*size = size_bytes ? tt_le32(size_bytes) : 0;
	free(size_bytes);
	return *size >= 4 && *size < (1u << 30) ? tt_pe_read(fd, at, *size) : NULL;
}

/* The bytes of the data directory `index` (its size in *size, up to `max`), read from
 * the section that holds it, malloc'd; NULL: none (or too large, or cut short). */
static uint8_t *tt_pe_directory(int fd, const uint8_t *opt, const uint8_t *sections, size_t nsections,
				uint32_t index, uint32_t max, uint32_t *size)
{
	if (tt_le32(opt + 108) <= index)
		return NULL;
	uint32_t dir_rva = tt_le32(opt + 112 + index * 8);
	*size = tt_le32(opt + 112 + index * 8 + 4);
	for (size_t s = 0; dir_rva && s < nsections; s++) {
		const uint8_t *sh = sections + s * TT_PE_SECTION;
		uint32_t rva = tt_le32(sh + 12), raw_size = tt_le32(sh + 16), raw = tt_le32(sh + 20);
		if (dir_rva >= rva && dir_rva - rva < raw_size)
			return *size <= max ? tt_pe_read(fd, raw + (dir_rva - rva), *size) : NULL;
	}
	return NULL;
}

/* The file's CodeView record (its debug directory's), checked against `build_id` (the
 * GUID and age the program ran with; empty: not checked); its PDB's name into *pdb
 * (malloc'd) when it names one. 1: the record there (the same build, or not checked),
 * 0: none and none asked for, -1: another build. */
static int tt_pe_codeview(int fd, const uint8_t *opt, const uint8_t *sections, size_t nsections,
			  const struct tt_str *build_id, char **pdb)
{
	uint32_t dir_size;
	uint8_t *dir = tt_pe_directory(fd, opt, sections, nsections, TT_PE_DIR_DEBUG, 64 * TT_PE_DEBUG_ENTRY,
				       &dir_size);
	for (size_t i = 0; dir && i + TT_PE_DEBUG_ENTRY <= dir_size; i += TT_PE_DEBUG_ENTRY) {
		uint32_t type = tt_le32(dir + i + 12), len = tt_le32(dir + i + 16);
		uint8_t *cv = type == TT_PE_DEBUG_CODEVIEW && len >= 24 && len < 4096
				      ? tt_pe_read(fd, tt_le32(dir + i + 24), len)
				      : NULL;
		if (!cv || memcmp(cv, "RSDS", 4) != 0) {
			free(cv);
			continue;
		}
		int same = !build_id->len || (build_id->len == 20 && memcmp(cv + 4, build_id->ptr, 20) == 0);
		if (len > 24 && cv[24])
			*pdb = strndup((const char *)cv + 24, len - 24);
		free(cv);
		free(dir);
		return same ? 1 : -1;
	}
	free(dir);
	return build_id->len ? -1 : 0;
}

/* The functions of the COFF symbol table: its global symbols and those typed as
 * functions, in executable sections. 0, -1 when out of memory, -2 when the table is
 * cut short. */
static int tt_pe_functions(struct tt_pe *pe, int fd, uint32_t table, uint32_t count, const uint8_t *sections,
			   size_t nsections)
{
	uint8_t *syms = tt_pe_read(fd, table, (size_t)count * TT_PE_COFF_SYMBOL);
	uint32_t strings_size;
	uint8_t *strings = tt_pe_strings(fd, table, count, &strings_size);
	int rc = syms ? 0 : -2;
	if (syms && !(pe->symbols = calloc(count ? count : 1, sizeof(*pe->symbols))))
		rc = -1;
	for (uint32_t i = 0; rc == 0 && i < count; i += 1u + syms[(size_t)i * TT_PE_COFF_SYMBOL + 17]) {
		const uint8_t *sym = syms + (size_t)i * TT_PE_COFF_SYMBOL;
		uint16_t section = tt_le16(sym + 12), type = tt_le16(sym + 14);
		uint8_t class = sym[16];
		/* (an assembler's global labels are untyped; its local ones, static, are not
		 * functions) */
		bool function = class == TT_PE_CLASS_EXTERNAL ||
				(class == TT_PE_CLASS_STATIC && type == TT_PE_FUNCTION_TYPE);
		if (!function || section == 0 || section > nsections ||
		    !(tt_le32(sections + (section - 1u) * TT_PE_SECTION + 36) & TT_PE_SCN_EXECUTE))
			continue;
		char *name;
		if (tt_le32(sym) != 0) {
			name = strndup((const char *)sym, 8);
		} else {
			uint32_t at = tt_le32(sym + 4);
			if (!strings || at < 4 || at >= strings_size)
				continue;
			name = strndup((const char *)strings + at, strings_size - at);
		}
		if (!name) {
			rc = -1;
			break;
		}
		uint32_t rva = tt_le32(sections + (section - 1u) * TT_PE_SECTION + 12) + tt_le32(sym + 8);
		pe->symbols[pe->nsymbols++] = (struct tt_pe_symbol){rva, type == TT_PE_FUNCTION_TYPE, name};
	}
	free(syms);
	free(strings);
	if (rc == 0)
		qsort(pe->symbols, pe->nsymbols, sizeof(*pe->symbols), tt_pe_symbol_cmp);
	return rc;
}

/* The DWARF of the file's .debug_* sections (their long names are in the string
 * table: "/OFFSET"), or NULL. */
static struct tt_pe_dwarf *tt_pe_dwarf(int fd, const uint8_t *sections, size_t nsections,
				       uint32_t symtab, uint32_t nsyms)
{
	uint32_t strings_size;
	uint8_t *strings = tt_pe_strings(fd, symtab, nsyms, &strings_size);
	struct tt_pe_debug_section *debug = calloc(nsections + 1, sizeof(*debug));
	size_t n = 0;
	for (size_t i = 0; debug && i < nsections; i++) {
		const uint8_t *sh = sections + i * TT_PE_SECTION;
		char name[9] = {0};
		memcpy(name, sh, 8);
		unsigned long at = name[0] == '/' ? strtoul(name + 1, NULL, 10) : 0;
		const char *full = at ? (strings && at >= 4 && at < strings_size ? (const char *)strings + at : "") : name;
		uint32_t size = tt_le32(sh + 8), raw = tt_le32(sh + 16); /* its bytes; in the file, padded */
		if (strncmp(full, ".debug_", 7) != 0 || strnlen(full, 64) == 64)
			continue;
		snprintf(debug[n].name, sizeof debug[n].name, "%s", full);
		debug[n].file_offset = tt_le32(sh + 20);
		debug[n++].size = size && size < raw ? size : raw;
	}
	struct tt_pe_dwarf *dwarf = debug ? tt_pe_dwarf_open(fd, debug, n) : NULL;
	free(debug);
	free(strings);
	return dwarf;
}

struct tt_pe *tt_pe_load(int fd, const char *path, const struct tt_str *build_id)
{
	uint8_t *dos = tt_pe_read(fd, 0, 64), *head = NULL, *sections = NULL;
	uint32_t nt = dos ? tt_le32(dos + 60) : 0;
	free(dos);
	const char *problem = "not a PE file (no PE header)";
	struct tt_pe *pe = NULL;
	char *pdb = NULL;
	/* the signature, the file header (20 bytes), the PE32+ optional header (240) */
	if (!(head = tt_pe_read(fd, nt, 4 + 20 + 240)) || memcmp(head, "PE\0\0", 4) != 0)
		goto bad;
	problem = "not a 64-bit PE file";
	uint16_t nsections = tt_le16(head + 6), optional_size = tt_le16(head + 20);
	uint32_t symtab = tt_le32(head + 12), nsyms = tt_le32(head + 16);
	const uint8_t *opt = head + 24;
	if (tt_le16(opt) != 0x20b || optional_size < 240)
		goto bad;
	problem = "its section headers are cut short";
	if (!(sections = tt_pe_read(fd, (uint64_t)nt + 24 + optional_size, (size_t)nsections * TT_PE_SECTION)))
		goto bad;
	problem = "out of memory";
	if (!(pe = calloc(1, sizeof(*pe))) || !(pe->sections = calloc(nsections + 1u, sizeof(*pe->sections))))
		goto bad;
	for (size_t s = 0; s < nsections; s++)
		pe->sections[pe->nsections++] =
			(struct tt_pe_section){tt_le32(sections + s * TT_PE_SECTION + 12),
					       tt_le32(sections + s * TT_PE_SECTION + 20)};
	/* what the run recorded of it (format.h's tt_module_info): the debug directory's
	 * CodeView GUID and age, else the header's stamp */
	const struct tt_str none = {"", 0};
	bool stamped = build_id->len == TT_PE_STAMP_SIZE;
	int codeview = tt_pe_codeview(fd, opt, sections, nsections, stamped ? &none : build_id, &pdb);
	if (codeview < 0) {
		tt_warn("%s: not the file the program ran (its CodeView GUID and age differ from "
			"the build id recorded): its functions are named by offset", path);
		goto quiet;
	}
	uint8_t stamp[TT_PE_STAMP_SIZE];
	memcpy(stamp, head + 8, 4);     /* TimeDateStamp */
	memcpy(stamp + 4, opt + 56, 4); /* SizeOfImage */
	memcpy(stamp + 8, opt + 64, 4); /* CheckSum */
	if (stamped && memcmp(stamp, build_id->ptr, sizeof stamp) != 0) {
		tt_warn("%s: not the file the program ran (its header's time stamp, size or checksum "
			"differ from those recorded): its functions are named by offset", path);
		goto quiet;
	}
	/* (a file that keeps no build id, as tt_profile_write's: the link is not to blame) */
	if (!build_id->len && codeview)
		tt_warn("%s: the file read keeps no build id of it (a profile's keeps none): whether "
			"it is the file the program ran is not known", path);
	else if (!build_id->len)
		tt_warn("%s: the run recorded no build id of it (neither a CodeView record, which "
			"mingw's ld writes with -Wl,--build-id, nor a header's time stamp): whether it "
			"is the file the program ran is not known", path);
	problem = "its symbol table is larger than any file";
	if (nsyms > TT_PE_MAX_SYMBOLS)
		goto bad;
	int rc = symtab && nsyms ? tt_pe_functions(pe, fd, symtab, nsyms, sections, nsections) : 0;
	problem = rc == -2 ? "its symbol table is cut short" : "out of memory";
	if (rc != 0)
		goto bad;
	pe->image_base = (uint64_t)tt_le32(opt + 24) | (uint64_t)tt_le32(opt + 28) << 32;
	pe->dwarf = tt_pe_dwarf(fd, sections, nsections, symtab, nsyms);
	uint32_t extents_size; /* (none, or unreadable: the symbols' extents unknown) */
	pe->extents = tt_pe_directory(fd, opt, sections, nsections, TT_PE_DIR_EXCEPTION, 1u << 30, &extents_size);
	pe->nextents = pe->extents ? extents_size / TT_PE_RUNTIME_FUNCTION : 0;
	if (!pe->nsymbols)
		tt_warn("%s: no COFF symbol table (stripped%s%s%s): its functions are named by "
			"offset%s", path, pdb ? ", or built by MSVC; its symbols are in " : "",
			pdb ? pdb : "", pdb ? ", a PDB" : "", pdb ? ", as ticktrace does not read PDB files" : "");
	free(pdb);
	free(head);
	free(sections);
	return pe;
bad:
	tt_warn("%s: cannot read it (%s): its functions are named by offset", path, problem);
quiet:
	free(pdb);
	free(head);
	free(sections);
	tt_pe_free(pe);
	return NULL;
}

bool tt_pe_section_rva(const struct tt_pe *pe, uint64_t file_offset, uint32_t *rva)
{
	for (size_t s = 0; s < pe->nsections; s++)
		if (pe->sections[s].file_offset == file_offset) {
			*rva = pe->sections[s].rva;
			return true;
		}
	return false;
}

const char *tt_pe_function(const struct tt_pe *pe, uint64_t rva, uint64_t *offset)
{
	size_t lo = 0, hi = pe->nsymbols;
	while (lo < hi) { /* the first symbol past rva */
		size_t mid = lo + (hi - lo) / 2;
		if (pe->symbols[mid].rva <= rva)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	*offset = rva - pe->symbols[lo - 1].rva;
	return pe->symbols[lo - 1].name;
}

/* The first RVA of the function whose code holds `rva`, as .pdata says; false: none
 * says (no .pdata, or code outside every function it lists). */
static bool tt_pe_extent(const struct tt_pe *pe, uint64_t rva, uint32_t *begin)
{
	size_t lo = 0, hi = pe->nextents;
	while (lo < hi) { /* the first function that begins past rva (.pdata is sorted) */
		size_t mid = lo + (hi - lo) / 2;
		if (tt_le32(pe->extents + mid * TT_PE_RUNTIME_FUNCTION) <= rva)
			lo = mid + 1;
		else
			hi = mid;
	}
	const uint8_t *f = lo ? pe->extents + (lo - 1) * TT_PE_RUNTIME_FUNCTION : NULL;
	if (!f || rva >= tt_le32(f + 4))
		return false;
	*begin = tt_le32(f);
	return true;
}

uint64_t tt_pe_image_base(const struct tt_pe *pe)
{
	return pe->image_base;
}

const char *tt_pe_line(const struct tt_pe *pe, uint64_t rva, uint32_t *line)
{
	*line = 0;
	return pe->dwarf ? tt_pe_dwarf_line(pe->dwarf, pe->image_base + rva, line) : NULL;
}

/* Where a path of drive D: run under Wine is here: D: is its prefix's dosdevices/d:, a
 * link (c: to ../drive_c, z: to /), the prefix $WINEPREFIX, else ~/.wine; malloc'd,
 * NULL when neither is set (or out of memory). */
static char *tt_pe_wine_path(const char *path)
{
	const char *prefix = getenv("WINEPREFIX"), *home = getenv("HOME");
	char drive = (char)(path[0] | 0x20), *local = NULL;
	int n = prefix && *prefix ? tt_asprintf(&local, "%s/dosdevices/%c:", prefix, drive)
		: home && *home	  ? tt_asprintf(&local, "%s/.wine/dosdevices/%c:", home, drive)
				  : -1;
	if (n < 0)
		return NULL;
	char *whole = NULL;
	n = tt_asprintf(&whole, "%s%s", local, path + 2);
	for (char *c = whole + strlen(local); n >= 0 && *c; c++)
		if (*c == '\\')
			*c = '/';
	free(local);
	return n < 0 ? NULL : whole;
}

char *tt_pe_local_path(const char *debug_dir, const char *path)
{
	/* (its \\?\ form the same file: Windows keeps it for a module loaded from deeper
	 * than MAX_PATH) */
	if (strncmp(path, "\\\\?\\", 4) == 0)
		path += 4;
	if (!((path[0] | 0x20) >= 'a' && (path[0] | 0x20) <= 'z' && path[1] == ':' && path[2] == '\\'))
		return NULL;
	struct stat st;
	char *local = NULL;
	if ((path[0] | 0x20) == 'z') {
		local = strdup(path + 2);
		for (char *c = local; c && *c; c++)
			if (*c == '\\')
				*c = '/';
		if (!local || stat(local, &st) == 0)
			return local;
	}
	char *wine = tt_pe_wine_path(path);
	if (wine && stat(wine, &st) == 0) {
		free(local);
		return wine;
	}
	free(wine);
	if (local && !debug_dir)
		return local; /* (Z:'s path, said as not there) */
	free(local); /* (moved since: looked for in debug_dir) */
	if (tt_asprintf(&local, "%s/%s", debug_dir ? debug_dir : ".", strrchr(path, '\\') + 1) < 0)
		local = NULL;
	return local;
}

int tt_pe_name(const struct tt_pe *pe, const char *path, uint64_t rva, char **name, char **file, uint32_t *line)
{
	const char *src = tt_pe_line(pe, rva, line);
	if (src && !(*file = strdup(src)))
		return -1;
	uint64_t off, entry;
	const char *symbol = tt_pe_function(pe, rva, &off);
	/* A function the symbol table lacks (a static one gas left out) is its DWARF's; a
	 * symbol before a function that begins past it is another's: neither is named
	 * after it. */
	const char *described = pe->dwarf ? tt_pe_dwarf_function(pe->dwarf, pe->image_base + rva, &entry) : NULL;
	uint32_t begin;
	if (described && (!symbol || rva - off != entry - pe->image_base)) {
		symbol = described;
		off = pe->image_base + rva - entry;
	} else if (!described && symbol && tt_pe_extent(pe, rva, &begin) && begin > rva - off) {
		symbol = NULL;
	}
	if (!symbol) {
		const char *slash = strrchr(path, '\\');
		if (!slash)
			slash = strrchr(path, '/');
		return tt_asprintf(name, "%s+0x%" PRIx64, slash ? slash + 1 : path, rva);
	}
	if (!(*name = tt__symbol_name(symbol)))
		return -1;
	if (!off)
		return 0;
	char *plain = *name;
	int rc = tt_asprintf(name, "%s+0x%" PRIx64, plain, off);
	free(plain);
	return rc < 0 ? -1 : 0;
}
