#include "read_internal.h"

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbol_name.h"

/* One ELF file, opened once for every process that mapped it, at its own virtual
 * addresses: a process's address A is the file's A - bias (per process). */
struct tt_elf {
	char *path;
	unsigned char *build_id;
	size_t build_id_len;
	Dwfl *dwfl;
	Dwfl_Module *mod; /* NULL: unusable (said so once) */
	GElf_Addr dwfl_bias; /* where libdwfl put the file: its address = vaddr + this */
	struct tt_pe *pe;    /* a Windows program's file instead (mod NULL) */
	/* Compilation units by address, for debug info without .debug_aranges (clang's),
	 * where libdw finds no line by itself; built at the first such miss. */
	struct tt_cu_range *cu_ranges;
	size_t ncu_ranges;
	bool cu_ranges_built;
};

struct tt_cu_range {
	Dwarf_Addr low, high; /* [low, high) in libdwfl's addresses */
	Dwarf_Die cu;
};

/* A MODULES entry of one raw file, once resolved. */
struct tt_sym_module {
	struct tt_elf *elf; /* NULL: unusable */
	uint64_t bias;      /* process address - libdwfl address */
	bool resolved;
};

/* One raw file: its modules, and what its addresses were found to be. */
struct tt_sym_file {
	const struct tt_file *file;
	struct tt_sym_module *modules; /* by position in file->modules */
	struct tt_map found;           /* address and module -> position in results */
};

struct tt_sym_result {
	char *name, *file;
	uint32_t line;
};

struct tt_symbols {
	char *debuginfo_path;
	char *debug_dir; /* --debug-dir, absolute when it exists, or NULL */
	Dwfl_Callbacks callbacks; /* each Dwfl points at it */
	struct tt_elf **elves;
	size_t nelves;
	struct tt_sym_file *files;
	size_t nfiles;
	struct tt_sym_result *results;
	size_t nresults, results_cap;
};

/* ---- separate debug info, found without blocking ----
 * libdwfl's own search (dwfl_standard_find_debuginfo) opens each candidate path with
 * a blocking open(): a FIFO at one of them (the debug link of an ELF file that a raw
 * file names, and a raw file can come from anyone) would hang every command. The same
 * places are searched here, each opened only if it is a regular file (tt_open_regular),
 * and a file is taken only when its build-id is the one wanted. */

/* The build-id of the ELF file open at fd, into id (at most cap bytes); its length, or
 * 0 when it has none. */
static size_t tt_fd_build_id(int fd, unsigned char *id, size_t cap)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *bits;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &bits) : -1;
	size_t len = n > 0 && (size_t)n <= cap ? (size_t)n : 0;
	if (len)
		memcpy(id, bits, len);
	elf_end(elf);
	return len;
}

/* The alternate debug file (DWZ) that the ELF file at `path` names, and its build-id:
 * its .gnu_debugaltlink section, a name and then the id. */
static size_t tt_altlink(const char *path, char *name, size_t name_cap, unsigned char *id, size_t cap)
{
	const char *why;
	int fd = tt_open_regular(path, &why);
	if (fd < 0)
		return 0;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t shstrndx, len = 0;
	Elf_Scn *scn = NULL;
	while (elf && elf_getshdrstrndx(elf, &shstrndx) == 0 && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		Elf_Data *d = sname && strcmp(sname, ".gnu_debugaltlink") == 0 ? elf_getdata(scn, NULL) : NULL;
		if (!d || !d->d_buf)
			continue;
		size_t nlen = strnlen(d->d_buf, d->d_size);
		if (nlen + 1 < d->d_size && nlen < name_cap && d->d_size - nlen - 1 <= cap) {
			memcpy(name, d->d_buf, nlen + 1);
			len = d->d_size - nlen - 1;
			memcpy(id, (const char *)d->d_buf + nlen + 1, len);
		}
		break;
	}
	elf_end(elf);
	close(fd);
	return len;
}

/* Opens `path` when it is a regular ELF file whose build-id is id; its descriptor, with
 * its name in *found (malloc'ed), or -1. */
static int tt_try_debug_file(const char *path, const unsigned char *id, size_t len, char **found)
{
	const char *why;
	int fd = tt_open_regular(path, &why);
	unsigned char got[64];
	if (fd < 0)
		return -1;
	if (tt_fd_build_id(fd, got, sizeof got) != len || memcmp(got, id, len) != 0 ||
	    !(*found = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int tt_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			     Dwarf_Addr base, const char *file_name, const char *debuglink,
			     GElf_Word crc, char **found)
{
	(void)modname, (void)base, (void)crc;
	const struct tt_symbols *s = *userdata;
	const unsigned char *bits;
	GElf_Addr at;
	unsigned char id[64];
	char alt_name[PATH_MAX];
	/* The module's own build-id; for its alternate debug file (asked with that file's
	 * name as the link, once the debug info is open), the one its debug file names. */
	int n = dwfl_module_build_id(mod, &bits, &at);
	size_t len = n > 0 && (size_t)n <= sizeof id ? (size_t)n : 0;
	memcpy(id, bits, len);
	if (debuglink && file_name) {
		size_t alt = tt_altlink(file_name, alt_name, sizeof alt_name, id, sizeof id);
		if (alt && strcmp(alt_name, debuglink) == 0)
			len = alt;
	}
	if (!len)
		return -1; /* without a build-id, no file can be told to be the right one */
	char path[PATH_MAX], hex[2 * sizeof id + 1];
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	const char *dirs[] = {s->debug_dir, "/usr/lib/debug"};
	int fd = -1;
	for (size_t i = 0; i < 2 && fd < 0; i++)
		if (dirs[i] && snprintf(path, sizeof path, "%s/.build-id/%.2s/%s.debug", dirs[i], hex,
					hex + 2) < (int)sizeof path)
			fd = tt_try_debug_file(path, id, len, found);
	if (fd >= 0 || !debuglink)
		return fd;
	/* by the link's name: absolute, beside the file, in its .debug, and under each
	 * directory the file's own directory */
	const char *slash = file_name ? strrchr(file_name, '/') : NULL;
	int dir_len = slash ? (int)(slash - file_name) : 0;
	const char *where = slash ? file_name : ".";
	if (debuglink[0] == '/')
		return tt_try_debug_file(debuglink, id, len, found);
	const char *forms[] = {"%.*s/%s", "%.*s/.debug/%s"};
	for (size_t i = 0; i < 2 && fd < 0; i++)
		if (snprintf(path, sizeof path, forms[i], slash ? dir_len : 1, where, debuglink) <
		    (int)sizeof path)
			fd = tt_try_debug_file(path, id, len, found);
	for (size_t i = 0; i < 2 && fd < 0; i++)
		if (dirs[i] && slash && file_name[0] == '/' &&
		    snprintf(path, sizeof path, "%s%.*s/%s", dirs[i], dir_len, file_name, debuglink) <
			    (int)sizeof path)
			fd = tt_try_debug_file(path, id, len, found);
	return fd;
}

struct tt_symbols *tt_symbols_new(const char *debug_dir)
{
	struct tt_symbols *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	/* Beside the file, in its .debug, then by build-id and by name under the given
	 * directory and the system's (build-id searches take only absolute paths). */
	char abs[PATH_MAX];
	const char *dir = debug_dir && realpath(debug_dir, abs) ? abs : debug_dir;
	if ((dir ? asprintf(&s->debuginfo_path, ":.debug:%s:/usr/lib/debug", dir) < 0 :
		   !(s->debuginfo_path = strdup(":.debug:/usr/lib/debug"))) ||
	    (dir && !(s->debug_dir = strdup(dir)))) {
		free(s->debuginfo_path);
		free(s);
		return NULL;
	}
	s->callbacks = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = tt_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &s->debuginfo_path,
	};
	return s;
}

void tt_symbols_free(struct tt_symbols *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nelves; i++) {
		struct tt_elf *e = s->elves[i];
		if (e->dwfl)
			dwfl_end(e->dwfl);
		tt_pe_free(e->pe);
		free(e->path);
		free(e->build_id);
		free(e->cu_ranges);
		free(e);
	}
	for (size_t i = 0; i < s->nfiles; i++) {
		free(s->files[i].modules);
		tt_map_free(&s->files[i].found);
	}
	for (size_t i = 0; i < s->nresults; i++) {
		free(s->results[i].name);
		free(s->results[i].file);
	}
	free(s->elves);
	free(s->files);
	free(s->results);
	free(s->debuginfo_path);
	free(s->debug_dir);
	free(s);
}

static const char *tt_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Opens the ELF file once; checks that it is the one the process mapped. */
static struct tt_elf *tt_elf_open(const struct tt_module *m)
{
	struct tt_elf *e = calloc(1, sizeof(*e));
	if (!e || !(e->path = strndup(m->path.ptr, m->path.len)) ||
	    !(e->build_id = malloc(m->build_id.len + 1))) {
		if (e)
			free(e->path);
		free(e);
		return NULL;
	}
	memcpy(e->build_id, m->build_id.ptr, m->build_id.len);
	e->build_id_len = m->build_id.len;
	return e;
}

static void tt_elf_load(struct tt_symbols *s, struct tt_elf *e)
{
	e->dwfl = dwfl_begin(&s->callbacks);
	if (!e->dwfl)
		return;
	/* Opened here, not by libdwfl: the path comes from the raw file, and a FIFO there
	 * would block libdwfl's open for ever. */
	const char *why;
	char *local = tt_pe_local_path(s->debug_dir, e->path);
	int fd = tt_open_regular(local ? local : e->path, &why);
	if (fd < 0) {
		tt_warn("%s: cannot read it (%s%s%s): its functions are named %s+0xOFFSET, the offset "
			"in the file", e->path, local ? local : "", local ? ": " : "", why, tt_basename(e->path));
		free(local);
		return;
	}
	if (tt_pe_is(fd)) {
		e->pe = tt_pe_load(fd, local ? local : e->path,
				   &(struct tt_str){(const char *)e->build_id, e->build_id_len});
		close(fd);
		free(local);
		return;
	}
	free(local);
	dwfl_report_begin(e->dwfl);
	/* At the file's own addresses: base 0 added to its p_vaddr; fd is libdwfl's now. */
	Dwfl_Module *mod = dwfl_report_elf(e->dwfl, tt_basename(e->path), e->path, fd, 0, true);
	dwfl_report_end(e->dwfl, NULL, NULL);
	if (!mod) {
		tt_warn("%s: cannot read it (%s): its functions are named %s+0xOFFSET, the offset "
			"in the file", e->path, dwfl_errmsg(-1), tt_basename(e->path));
		return;
	}
	void **userdata; /* tt_find_debuginfo's */
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = s;
	const unsigned char *bits;
	GElf_Addr at;
	int n = dwfl_module_build_id(mod, &bits, &at);
	if (e->build_id_len && (n != (int)e->build_id_len || memcmp(bits, e->build_id, (size_t)n))) {
		tt_warn("%s: not the file the program ran (its build-id differs from the one "
			"recorded): its functions are named %s+0xOFFSET, the offset in the file "
			"that ran", e->path, tt_basename(e->path));
		return;
	}
	if (!dwfl_module_getelf(mod, &e->dwfl_bias))
		return;
	e->mod = mod;
}

static struct tt_elf *tt_elf_for(struct tt_symbols *s, const struct tt_module *m)
{
	for (size_t i = 0; i < s->nelves; i++) {
		struct tt_elf *e = s->elves[i];
		if (strlen(e->path) == m->path.len && memcmp(e->path, m->path.ptr, m->path.len) == 0 &&
		    e->build_id_len == m->build_id.len &&
		    memcmp(e->build_id, m->build_id.ptr, m->build_id.len) == 0)
			return e;
	}
	struct tt_elf **grown = realloc(s->elves, (s->nelves + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	s->elves = grown;
	struct tt_elf *e = tt_elf_open(m);
	if (!e)
		return NULL;
	s->elves[s->nelves++] = e;
	tt_elf_load(s, e);
	return e;
}

/* Where the process put the file: the segment the module entry describes (the same
 * file offset) gives its bias. */
static bool tt_module_bias(const struct tt_elf *e, const struct tt_module *m, uint64_t *bias)
{
	GElf_Addr unused;
	Elf *elf = dwfl_module_getelf(e->mod, &unused);
	size_t n;
	if (!elf || elf_getphdrnum(elf, &n) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == m->file_offset) {
			*bias = m->start - ph.p_vaddr - e->dwfl_bias;
			return true;
		}
	}
	tt_warn("%s: no loadable segment at file offset 0x%" PRIx64 " as the program mapped "
		"it: its functions there are named by offset", e->path, m->file_offset);
	return false;
}

static struct tt_sym_file *tt_sym_file_for(struct tt_symbols *s, const struct tt_file *f)
{
	for (size_t i = 0; i < s->nfiles; i++)
		if (s->files[i].file == f)
			return &s->files[i];
	struct tt_sym_file *grown = realloc(s->files, (s->nfiles + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	s->files = grown;
	struct tt_sym_file *sf = &s->files[s->nfiles];
	*sf = (struct tt_sym_file){.file = f, .modules = calloc(f->nmodules + 1, sizeof(*sf->modules))};
	if (!sf->modules)
		return NULL;
	s->nfiles++;
	return sf;
}

static int tt_cu_range_cmp(const void *a, const void *b)
{
	const struct tt_cu_range *x = a, *y = b;
	return (x->low > y->low) - (x->low < y->low);
}

static int tt_cu_ranges_build(struct tt_elf *e)
{
	e->cu_ranges_built = true;
	size_t cap = 0;
	Dwarf_Addr bias;
	for (Dwarf_Die *cu = NULL; (cu = dwfl_module_nextcu(e->mod, cu, &bias));) {
		Dwarf_Addr base, low, high;
		for (ptrdiff_t off = 0; (off = dwarf_ranges(cu, off, &base, &low, &high)) > 0;) {
			if (e->ncu_ranges == cap) {
				cap = cap ? 2 * cap : 64;
				struct tt_cu_range *grown = realloc(e->cu_ranges, cap * sizeof(*grown));
				if (!grown)
					return -1;
				e->cu_ranges = grown;
			}
			e->cu_ranges[e->ncu_ranges++] = (struct tt_cu_range){low + bias, high + bias, *cu};
		}
	}
	if (e->ncu_ranges)
		qsort(e->cu_ranges, e->ncu_ranges, sizeof(*e->cu_ranges), tt_cu_range_cmp);
	return 0;
}

/* The line of `address` through the unit that covers it, found without aranges. */
static int tt_line_by_unit(struct tt_elf *e, Dwarf_Addr address, Dwarf_Line **line)
{
	*line = NULL;
	if (!e->cu_ranges_built && tt_cu_ranges_build(e) < 0)
		return -1;
	size_t lo = 0, hi = e->ncu_ranges; /* the last range that starts at or before it */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (e->cu_ranges[mid].low <= address)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || address >= e->cu_ranges[lo - 1].high)
		return 0;
	Dwarf_Addr bias;
	if (dwfl_module_getdwarf(e->mod, &bias))
		*line = dwarf_getsrc_die(&e->cu_ranges[lo - 1].cu, address - bias);
	return 0;
}

/* Names `address` (libdwfl's) from the file's symbols and line table. */
static int tt_name_from_elf(struct tt_elf *e, Dwarf_Addr address, struct tt_sym_result *r)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *symbol = dwfl_module_addrinfo(e->mod, address, &off, &sym, NULL, NULL, NULL);
	if (!symbol) {
		if (tt_asprintf(&r->name, "%s+0x%" PRIx64, tt_basename(e->path),
				(uint64_t)(address - e->dwfl_bias)) < 0)
			return -1;
	} else if (!(r->name = tt__symbol_name(symbol))) {
		return -1;
	} else if (off) { /* inside a function: not an entry, but say where */
		char *name = r->name;
		int rc = tt_asprintf(&r->name, "%s+0x%" PRIx64, name, (uint64_t)off);
		free(name);
		if (rc < 0)
			return -1;
	}
	int lineno = 0;
	const char *src = NULL;
	Dwfl_Line *line = dwfl_module_getsrc(e->mod, address);
	Dwarf_Line *unit_line;
	if (line) {
		src = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	} else {
		if (tt_line_by_unit(e, address, &unit_line) < 0)
			return -1;
		if (unit_line && (src = dwarf_linesrc(unit_line, NULL, NULL)))
			dwarf_lineno(unit_line, &lineno);
	}
	if (src) {
		if (!(r->file = strdup(src)))
			return -1;
		r->line = lineno > 0 ? (uint32_t)lineno : 0;
	}
	return 0;
}

/* A file's module number i, its ELF file opened the first time; NULL when out of
 * memory. */
static struct tt_sym_module *tt_sym_module_at(struct tt_symbols *s, struct tt_sym_file *sf, size_t i)
{
	struct tt_sym_module *sm = &sf->modules[i];
	if (!sm->resolved) {
		const struct tt_module *m = &sf->file->modules[i];
		struct tt_elf *e = tt_elf_for(s, m);
		if (!e)
			return NULL;
		sm->resolved = true;
		uint32_t rva;
		if (e->mod && tt_module_bias(e, m, &sm->bias))
			sm->elf = e;
		else if (e->pe && tt_pe_section_rva(e->pe, m->file_offset, &rva)) {
			sm->bias = m->start - rva; /* a process address - this: the address in the image */
			sm->elf = e;
		} else if (e->pe)
			tt_warn("%s: no section at file offset 0x%" PRIx64 " as the program loaded it "
				"(the file changed since, stripped?): its functions there are named by offset",
				e->path, m->file_offset);
	}
	return sm;
}

/* The library the version of symbol `index` needs (its .gnu.version entry, found in
 * .gnu.version_r), or NULL. */
static const char *tt_symbol_library(Elf *elf, size_t index)
{
	GElf_Versym ver = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_versym && data)
			gelf_getversym(data, (int)index, &ver);
	}
	ver &= 0x7fff;
	for (Elf_Scn *scn = NULL; ver > 1 && (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_GNU_verneed || !data)
			continue;
		GElf_Verneed need;
		for (int at = 0, i = 0; i < (int)sh.sh_info && gelf_getverneed(data, at, &need); i++) {
			GElf_Vernaux aux;
			for (int a = at + (int)need.vn_aux, j = 0; j < need.vn_cnt && gelf_getvernaux(data, a, &aux);
			     j++, a += (int)aux.vna_next)
				if (aux.vna_other == ver)
					return elf_strptr(elf, sh.sh_link, need.vn_file);
			at += (int)need.vn_next;
		}
	}
	return NULL;
}

/* A library call (TT_FUNC_LIBRARY_CALL): the GOT slot at `address` (libdwfl's) of
 * the program or one of its libraries, named IMPORT@LIBRARY from its relocation (the
 * PLT's, or a -fno-plt call's GLOB_DAT), IMPORT@plt where no version names the
 * library; as any address where no relocation is there. */
static int tt_name_library_call(struct tt_elf *e, Dwarf_Addr address, struct tt_sym_result *r)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(e->mod, &bias);
	GElf_Addr vaddr = address - e->dwfl_bias;
	for (Elf_Scn *scn = NULL; elf && (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh, symsh;
		Elf_Data *data = elf_getdata(scn, NULL), *syms;
		Elf_Scn *symscn;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !data || !sh.sh_entsize ||
		    !(symscn = elf_getscn(elf, sh.sh_link)) || !gelf_getshdr(symscn, &symsh) ||
		    !(syms = elf_getdata(symscn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela rela;
			GElf_Sym sym;
			if (!gelf_getrela(data, (int)i, &rela) || rela.r_offset != vaddr ||
			    (GELF_R_TYPE(rela.r_info) != R_X86_64_JUMP_SLOT &&
			     GELF_R_TYPE(rela.r_info) != R_X86_64_GLOB_DAT) ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(rela.r_info), &sym))
				continue;
			const char *name = elf_strptr(elf, symsh.sh_link, sym.st_name);
			const char *library = tt_symbol_library(elf, GELF_R_SYM(rela.r_info));
			if (name)
				return tt_asprintf(&r->name, "%s@%s", name, library ? library : "plt");
		}
	}
	return tt_name_from_elf(e, address, r);
}

/* Names `address` from module `m` of the file (NULL: none holds it); `library_call`:
 * the GOT slot of one (TT_FUNC_LIBRARY_CALL). */
static int tt_resolve(struct tt_symbols *s, struct tt_sym_file *sf, uint64_t address,
		      const struct tt_module *m, bool library_call, struct tt_sym_result *r)
{
	const struct tt_file *f = sf->file;
	if (m) {
		struct tt_sym_module *sm = tt_sym_module_at(s, sf, (size_t)(m - f->modules));
		if (!sm)
			return -1;
		if (sm->elf && sm->elf->pe)
			return tt_pe_name(sm->elf->pe, sm->elf->path, address - sm->bias, &r->name, &r->file, &r->line);
		if (sm->elf)
			return (library_call ? tt_name_library_call : tt_name_from_elf)(sm->elf, address - sm->bias, r);
		/* The file that ran is not at hand: its offset in that file. */
		bool windows = m->path.len > 2 && m->path.ptr[1] == ':' && m->path.ptr[2] == '\\';
		const char *slash = memrchr(m->path.ptr, windows ? '\\' : '/', m->path.len);
		const char *base = slash ? slash + 1 : m->path.ptr;
		return tt_asprintf(&r->name, "%.*s+0x%" PRIx64, (int)(m->path.ptr + m->path.len - base), base,
				   address - m->start + m->file_offset);
	}
	return tt_asprintf(&r->name, "0x%" PRIx64, address);
}

int tt_symbols_lookup(void *ctx, const struct tt_file *file, uint64_t address, uint64_t tsc,
		      struct tt_symbol *out)
{
	struct tt_symbols *s = ctx;
	struct tt_sym_file *sf = tt_sym_file_for(s, file);
	if (!sf)
		return -1;
	/* an address is named once per library that held it (user-space addresses fit
	 * in 47 bits, a library call's tag is bit 47; the module's number goes above) */
	bool library_call = (address & TT_FUNC_LIBRARY_CALL) != 0;
	const struct tt_module *m = tt_file_module(file, address & ~TT_FUNC_LIBRARY_CALL, tsc);
	uint64_t key = address ^ (m ? (uint64_t)(m - file->modules + 1) << 48 : 0);
	uint32_t at;
	if (!tt_map_get(&sf->found, key, &at)) {
		struct tt_sym_result r = {0};
		if (s->nresults == s->results_cap) {
			size_t cap = s->results_cap ? 2 * s->results_cap : 64;
			struct tt_sym_result *grown = realloc(s->results, cap * sizeof(*grown));
			if (!grown)
				return -1;
			s->results = grown;
			s->results_cap = cap;
		}
		if (tt_resolve(s, sf, address & ~TT_FUNC_LIBRARY_CALL, m, library_call, &r) < 0 ||
		    tt_map_put(&sf->found, key, (uint32_t)s->nresults) < 0) {
			free(r.name);
			free(r.file);
			return -1;
		}
		at = (uint32_t)s->nresults;
		s->results[s->nresults++] = r;
	}
	const struct tt_sym_result *r = &s->results[at];
	*out = (struct tt_symbol){r->name, r->file, r->line};
	return 0;
}

/* ---- call sites the run had not described: read from their ELF files ---- */

/* The bytes of an ELF file at its virtual address `vaddr`: `n` of them, or up to a NUL
 * (n 0: a string); NULL where no section holds them. */
static const char *tt_elf_bytes(Elf *elf, GElf_Addr vaddr, size_t n)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !(sh.sh_flags & SHF_ALLOC) ||
		    vaddr < sh.sh_addr || vaddr >= sh.sh_addr + sh.sh_size)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		uint64_t at = vaddr - sh.sh_addr;
		if (!data || at >= data->d_size)
			return NULL;
		const char *p = (const char *)data->d_buf + at;
		size_t left = data->d_size - at;
		return (n ? n <= left : memchr(p, 0, left) != NULL) ? p : NULL;
	}
	return NULL;
}

/* A pointer the loader sets at `vaddr`: a position-independent file's is a relative
 * relocation's addend (the bytes there are 0); another's, the bytes. 0: none. */
static GElf_Addr tt_elf_pointer(Elf *elf, GElf_Addr vaddr)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela rela;
			if (gelf_getrela(data, (int)i, &rela) && rela.r_offset == vaddr &&
			    GELF_R_TYPE(rela.r_info) == R_X86_64_RELATIVE)
				return (GElf_Addr)rela.r_addend;
		}
	}
	const char *bytes = tt_elf_bytes(elf, vaddr, sizeof(uint64_t));
	uint64_t value = 0;
	if (bytes)
		memcpy(&value, bytes, sizeof value);
	return value;
}

/* Keeps a string read for a site until tt_symbols_free; NULL when out of memory. */
static const char *tt_keep(struct tt_symbols *s, const char *text)
{
	if (s->nresults == s->results_cap) {
		size_t cap = s->results_cap ? 2 * s->results_cap : 64;
		struct tt_sym_result *grown = realloc(s->results, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		s->results = grown;
		s->results_cap = cap;
	}
	char *copy = strdup(text);
	if (copy)
		s->results[s->nresults++] = (struct tt_sym_result){.name = copy};
	return copy;
}

/* The descriptor (struct tt_callsite, include/ticktrace.h) at `vaddr` of the file:
 * its name, file, function and line into the site; false where it is not one. */
static bool tt_describe_site(struct tt_symbols *s, Elf *elf, GElf_Addr vaddr, struct tt_site *site)
{
	enum { NAME = 0, FILE_ = 8, FUNC = 16, LINE = 24, SIZE = 28 };
	const char *desc = tt_elf_bytes(elf, vaddr, SIZE);
	if (!desc)
		return false;
	const char *text[3];
	static const unsigned at[3] = {NAME, FILE_, FUNC};
	for (int i = 0; i < 3; i++) {
		GElf_Addr p = tt_elf_pointer(elf, vaddr + at[i]);
		text[i] = p ? tt_elf_bytes(elf, p, 0) : "";
		if (!text[i] || !(text[i] = tt_keep(s, text[i])))
			return false;
	}
	uint32_t line;
	memcpy(&line, desc + LINE, sizeof line);
	site->name = (struct tt_str){text[0], (uint32_t)strnlen(text[0], TT_MAX_STRING)};
	site->file = (struct tt_str){text[1], (uint32_t)strnlen(text[1], TT_MAX_STRING)};
	site->func = (struct tt_str){text[2], (uint32_t)strnlen(text[2], TT_MAX_STRING)};
	site->line = line;
	site->undescribed = false;
	return true;
}

/* Names a file's undescribed sites from the ELF files its MODULES list: a descriptor
 * is static data of the binary that recorded it, which the module holding its address
 * during its span names (files that list only code segments: any module of the span
 * whose file has data there). */
void tt_symbols_describe_sites(struct tt_symbols *s, struct tt_file *f)
{
	struct tt_sym_file *sf = tt_sym_file_for(s, f);
	for (size_t k = 0; sf && k < f->nsites; k++) {
		struct tt_site *site = &f->sites[k];
		const struct tt_module *holder = site->undescribed ?
							 tt_file_module(f, site->address, site->until - 1) : NULL;
		for (size_t i = 0; site->undescribed && i < f->nmodules; i++) {
			if (holder ? &f->modules[i] != holder : f->modules[i].until != site->until)
				continue;
			struct tt_sym_module *sm = tt_sym_module_at(s, sf, i);
			if (!sm)
				return;
			GElf_Addr unused;
			Elf *elf = sm->elf ? dwfl_module_getelf(sm->elf->mod, &unused) : NULL;
			if (elf)
				tt_describe_site(s, elf, site->address - sm->bias - sm->elf->dwfl_bias, site);
		}
	}
}

int tt_symbols_file_address(struct tt_symbols *s, const struct tt_file *file, uint64_t address,
			    uint64_t tsc, uint64_t *out)
{
	const struct tt_module *m = tt_file_module(file, address, tsc);
	struct tt_sym_file *sf = m ? tt_sym_file_for(s, file) : NULL;
	struct tt_sym_module *sm = sf ? tt_sym_module_at(s, sf, (size_t)(m - file->modules)) : NULL;
	if (m && !sm)
		return -1;
	if (sm && sm->elf && sm->elf->pe)
		*out = tt_pe_image_base(sm->elf->pe) + (address - sm->bias);
	else
		*out = m ? address - m->start + m->file_offset : address;
	return 0;
}
