/* libticktrace-detour: the functions to patch, found by name or address in the
 * symbols and .eh_frame of every module mapped (detour.c patches them). */
#include <dlfcn.h>
#include <dwarf.h>
#include <errno.h>
#include <fnmatch.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "detour.h"

const char *tt__detour_base(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* The libraries whose functions are never patched: those the patching, the recording
 * and the unwinding run through (the sanitizers' runtimes intercept malloc and the
 * like for them, in a sanitizer build or program). */
static int tt__detour_untouchable(const char *path)
{
	static const char *const prefixes[] = {"ld-linux", "libc.so", "libticktrace", "libZydis",
					       "libZycore", "linux-vdso", "[vdso", "libgcc_s",
					       "libunwind", "libasan.", "libubsan.", "liblsan.",
					       "libtsan.", "libhwasan.", "libclang_rt."};
	const char *base = tt__detour_base(path);
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

/* The unwinders' entry points, watched wherever they are linked (unwinders.asm).
 * Not _Unwind_Resume: called at the end of a cleanup, it goes on with an unwind
 * whose frames were all entered before it began, so put back then; watching it would
 * scan the shadow stack again for every frame with a destructor. */
static const char *const tt__detour_unwinder_entries[] = {
	"_Unwind_RaiseException", "_Unwind_ForcedUnwind", "_Unwind_Resume_or_Rethrow",
	"_Unwind_Backtrace",
};

static int tt__detour_unwinder_entry(const char *name)
{
	for (size_t i = 0; i < sizeof tt__detour_unwinder_entries / sizeof tt__detour_unwinder_entries[0]; i++)
		if (strcmp(name, tt__detour_unwinder_entries[i]) == 0)
			return 1;
	return 0;
}

/* Whether a function is part of an unwinder (GCC's or LLVM's), wherever it is linked:
 * the unwinder walks the stack from its own frames, so none of them may have its
 * return address replaced. In a program with a static copy, its local functions are
 * known by the file symbol before them (`file`; NULL for a global). (The C++ runtime's
 * __cxa_* and personality routines may be patched: an unwind does not walk through
 * their return addresses before the unwinder puts them back.) */
static int tt__detour_part_of_unwinder(const char *name, const char *file)
{
	static const char *const prefixes[] = {"_Unwind_", "__register_frame", "__deregister_frame",
					       "__frame_state_for", "__libunwind", "__unw_", "unw_"};
	static const char *const files[] = {"unwind-dw2*", "unwind-sjlj.*", "Unwind*",
					    "libunwind.*"}; /* (.c, .cpp, or .o) */
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	for (size_t i = 0; file && i < sizeof files / sizeof files[0]; i++)
		if (fnmatch(files[i], tt__detour_base(file), 0) == 0)
			return 1;
	return 0;
}

static int tt__detour_add(struct tt__detour *d, uintptr_t addr, uint64_t size, const char *name,
			  size_t module, int watch)
{
	if (d->nfns == d->fns_cap) {
		size_t cap = d->fns_cap ? 2 * d->fns_cap : 64;
		struct tt__detour_fn *fns = realloc(d->fns, cap * sizeof(*fns));
		if (!fns)
			return -ENOMEM;
		d->fns = fns;
		d->fns_cap = cap;
	}
	char *copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	d->fns[d->nfns++] = (struct tt__detour_fn){addr, size, copy, module, watch, 0, addr};
	return 0;
}

static int tt__detour_cmp_addr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return (x > y) - (x < y);
}

/* By address; at one address, in the symbol table's order. */
static int tt__detour_cmp_sym(const void *a, const void *b)
{
	const struct tt__detour_sym *x = a, *y = b;
	int by_addr = tt__detour_cmp_addr(&x->addr, &y->addr);
	return by_addr ? by_addr : (x->index > y->index) - (x->index < y->index);
}

size_t tt__detour_first_sym_from(const struct tt__detour_module *m, uintptr_t addr)
{
	size_t lo = 0, hi = m->nsyms;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->syms[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* elfutils' order of preference among symbols (dwfl_module_addrsym). */
static int tt__detour_binding_value(const struct tt__detour_sym *s)
{
	switch (s->bind) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

/* elfutils' pick among the symbols that hold an address, taken in the table's order:
 * the nearest start, a stronger binding, a shorter extent at the same start. */
static const struct tt__detour_sym *tt__detour_pick(const struct tt__detour_sym *best,
						    const struct tt__detour_sym *s)
{
	if (!best || best->addr < s->addr || tt__detour_binding_value(best) < tt__detour_binding_value(s))
		return s;
	if (best->addr == s->addr && best->end - best->addr > s->end - s->addr &&
	    tt__detour_binding_value(best) <= tt__detour_binding_value(s))
		return s;
	return best;
}

/* The symbols holding `addr` are few (a function and its aliases, rarely one inside
 * another): more than this many are not all weighed. */
#define TT__DETOUR_HOLDERS 32

const struct tt__detour_sym *tt__detour_symbol_at(const struct tt__detour_module *m, uintptr_t addr)
{
	size_t below = tt__detour_first_sym_from(m, addr + 1); /* those starting at or before addr */
	const struct tt__detour_sym *holders[TT__DETOUR_HOLDERS];
	size_t n = 0;
	/* (`reach`: no symbol before one whose reach is at or below addr holds it) */
	for (size_t i = below; i-- > 0 && m->syms[i].reach > addr && n < TT__DETOUR_HOLDERS;)
		if (m->syms[i].end > addr && m->syms[i].name[0])
			holders[n++] = &m->syms[i];
	/* In the table's order, the globals first, the locals only when no global holds it */
	for (size_t a = 1; a < n; a++)
		for (size_t b = a; b > 0 && holders[b - 1]->index > holders[b]->index; b--) {
			const struct tt__detour_sym *t = holders[b];
			holders[b] = holders[b - 1];
			holders[b - 1] = t;
		}
	const struct tt__detour_sym *best = NULL;
	for (int locals = 0; locals < 2 && !best; locals++)
		for (size_t i = 0; i < n; i++)
			if ((holders[i]->bind == STB_LOCAL) == locals)
				best = tt__detour_pick(best, holders[i]);
	if (best || !below)
		return best;
	/* No symbol with a size holds it: a label (no size) there, if nothing before it
	 * reaches past it */
	uintptr_t label = m->syms[below - 1].reach;
	for (size_t i = tt__detour_first_sym_from(m, label); i < below && m->syms[i].addr == label; i++)
		if (m->syms[i].end == label && m->syms[i].name[0] &&
		    (!best || (best->bind == STB_LOCAL && m->syms[i].bind != STB_LOCAL) ||
		     ((best->bind == STB_LOCAL) == (m->syms[i].bind == STB_LOCAL) &&
		      tt__detour_binding_value(best) < tt__detour_binding_value(&m->syms[i]))))
			best = &m->syms[i];
	return best;
}

/* By address; at one address, a watched entry point first (it is the one kept). */
static int tt__detour_cmp_fn(const void *a, const void *b)
{
	const struct tt__detour_fn *x = a, *y = b;
	int by_addr = tt__detour_cmp_addr(&x->addr, &y->addr);
	return by_addr ? by_addr : y->watch - x->watch;
}

/* The loaded section `name` of a module's file, and its header; NULL when none. */
static Elf_Scn *tt__detour_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	size_t shstrndx;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		const char *sname;
		if (gelf_getshdr(scn, shdr) && (shdr->sh_flags & SHF_ALLOC) &&
		    (sname = elf_strptr(elf, shstrndx, shdr->sh_name)) && strcmp(sname, name) == 0)
			return scn;
	}
	return NULL;
}

/* The NOP areas the compiler listed in __patchable_function_entries: their run-time
 * addresses, read from memory, where the loader relocated them. */
static void tt__detour_find_sleds(Dwfl_Module *mod, struct tt__detour_module *m)
{
	GElf_Addr bias;
	GElf_Shdr shdr;
	if (!tt__detour_section(dwfl_module_getelf(mod, &bias), "__patchable_function_entries", &shdr))
		return;
	size_t n = shdr.sh_size / sizeof(uintptr_t);
	uintptr_t *sleds = malloc(n * sizeof(*sleds));
	if (!sleds)
		return;
	memcpy(sleds, (const void *)(uintptr_t)(shdr.sh_addr + bias), n * sizeof(*sleds));
	qsort(sleds, n, sizeof(*sleds), tt__detour_cmp_addr);
	m->sleds = sleds;
	m->nsleds = n;
}

/* A pointer of .eh_frame in DW_EH_PE encoding `enc` at `p` (before `end`), which is
 * at address `at`: its value and its bytes in *len; 0, or -1 for an encoding not
 * read here (GCC and LLVM write pcrel sdata4). libdw decodes FDEs but gives no
 * function's extent: dwarf_frame_info's is one CFA row's. */
static int tt__detour_eh_pointer(uint8_t enc, const uint8_t *p, const uint8_t *end, uint64_t at,
				 uint64_t *value, size_t *len)
{
	union {
		int16_t s2;
		int32_t s4;
		uint16_t u2;
		uint32_t u4;
		uint64_t u8;
	} raw;
	static const size_t sizes[16] = {[DW_EH_PE_absptr] = 8, [DW_EH_PE_udata2] = 2, [DW_EH_PE_udata4] = 4,
					 [DW_EH_PE_udata8] = 8, [DW_EH_PE_sdata2] = 2, [DW_EH_PE_sdata4] = 4,
					 [DW_EH_PE_sdata8] = 8};
	size_t n = sizes[enc & 0x0f];
	if (!n || (size_t)(end - p) < n || ((enc & 0x70) != DW_EH_PE_absptr && (enc & 0x70) != DW_EH_PE_pcrel))
		return -1;
	memcpy(&raw, p, n);
	switch (enc & 0x0f) {
	case DW_EH_PE_udata2: *value = raw.u2; break;
	case DW_EH_PE_udata4: *value = raw.u4; break;
	case DW_EH_PE_sdata2: *value = (uint64_t)(int64_t)raw.s2; break;
	case DW_EH_PE_sdata4: *value = (uint64_t)(int64_t)raw.s4; break;
	default: *value = raw.u8;
	}
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		*value += at;
	*len = n;
	return 0;
}

/* The encoding of the pointers of a CIE's FDEs (its augmentation's 'R'); -1 when it
 * cannot be read. */
static int tt__detour_fde_encoding(const Dwarf_CIE *cie)
{
	const uint8_t *p = cie->augmentation_data, *end = p + cie->augmentation_data_size;
	if (cie->augmentation[0] != 'z')
		return DW_EH_PE_absptr;
	for (const char *a = cie->augmentation + 1; *a; a++) {
		uint64_t personality;
		size_t len;
		switch (*a) {
		case 'R':
			return p < end ? *p : -1;
		case 'L':
			p++;
			break;
		case 'P': /* its encoding, then the personality routine's pointer */
			if (p >= end || tt__detour_eh_pointer(*p & 0x7f, p + 1, end, 0, &personality, &len) < 0)
				return -1;
			p += 1 + len;
			break;
		case 'S':
		case 'B':
			break;
		default:
			return -1;
		}
	}
	return DW_EH_PE_absptr;
}

/* A module's .eh_frame, to read with dwarf_next_cfi: its data, its file's ident and
 * its section header; NULL when it has none. */
static Elf_Data *tt__detour_eh_frame(Dwfl_Module *mod, const unsigned char **ident, GElf_Shdr *shdr)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = tt__detour_section(elf, ".eh_frame", shdr);
	*ident = elf ? (const unsigned char *)elf_getident(elf, NULL) : NULL;
	return scn && *ident ? elf_getdata(scn, NULL) : NULL;
}

/* Whether a module has code with a personality routine (C++, or C's cleanups), which
 * an unwinder enters: one of its CIEs names one. */
static int tt__detour_has_personality(Dwfl_Module *mod)
{
	const unsigned char *ident;
	GElf_Shdr shdr;
	Elf_Data *data = tt__detour_eh_frame(mod, &ident, &shdr);
	Dwarf_CFI_Entry entry;
	for (Dwarf_Off at = 0, next; data && dwarf_next_cfi(ident, data, 1, at, &next, &entry) == 0;
	     at = next)
		if (dwarf_cfi_cie_p(&entry) && entry.cie.augmentation[0] == 'z' &&
		    strchr(entry.cie.augmentation, 'P'))
			return 1;
	return 0;
}

/* Calls `each` with the start (an address of its file, as nm prints it) and the
 * length of every function an FDE of the module's .eh_frame covers, until it returns
 * non-zero; that value, or 0. */
static int tt__detour_each_fde(Dwfl_Module *mod, int (*each)(uint64_t, uint64_t, void *), void *arg)
{
	const unsigned char *ident;
	GElf_Shdr shdr;
	Elf_Data *data = tt__detour_eh_frame(mod, &ident, &shdr);
	if (!data)
		return 0;
	Dwarf_CFI_Entry entry, cie;
	for (Dwarf_Off at = 0, next, unused; dwarf_next_cfi(ident, data, 1, at, &next, &entry) == 0;
	     at = next) {
		if (dwarf_cfi_cie_p(&entry) ||
		    dwarf_next_cfi(ident, data, 1, entry.fde.CIE_pointer, &unused, &cie) != 0 ||
		    !dwarf_cfi_cie_p(&cie))
			continue;
		int enc = tt__detour_fde_encoding(&cie.cie);
		uint64_t begin, range;
		size_t len;
		const uint8_t *field = entry.fde.start;
		uint64_t field_at = shdr.sh_addr + (uint64_t)(field - (const uint8_t *)data->d_buf);
		int rc;
		if (enc >= 0 &&
		    tt__detour_eh_pointer((uint8_t)enc, field, entry.fde.end, field_at, &begin, &len) == 0 &&
		    tt__detour_eh_pointer((uint8_t)enc & 0x0f, field + len, entry.fde.end, 0, &range, &len) == 0 &&
		    range && (rc = each(begin, range, arg)) != 0)
			return rc;
	}
	return 0;
}

/* The function an FDE covers around an address of the file: its start and length. */
struct tt__detour_around {
	uint64_t vaddr, begin, range;
};

static int tt__detour_fde_around(uint64_t begin, uint64_t range, void *arg)
{
	struct tt__detour_around *a = arg;
	if (a->vaddr < begin || a->vaddr - begin >= range)
		return 0;
	a->begin = begin;
	a->range = range;
	return 1;
}

/* (libsupc++'s demangler, linked into this library (meson.build says why), declared in
 * symbol_name.h): C++ names match in their demangled form too, as the converter shows
 * them. */
/* Whether TT_ENV_EXCLUDE names the function: its symbol, or its demangled name with
 * or without its parameters (as `spikes --suggest` writes it); counted. */
int tt__detour_excluded(struct tt__detour *d, const char *name, const char *plain)
{
	size_t bare = plain ? strcspn(plain, "(") : 0;
	char *without = plain && plain[bare] ? strndup(plain, bare) : NULL;
	int hit = 0;
	for (size_t p = 0; !hit && p < d->nexcludes; p++)
		hit = fnmatch(d->excludes[p], name, 0) == 0 || (plain && fnmatch(d->excludes[p], plain, 0) == 0) ||
		      (without && fnmatch(d->excludes[p], without, 0) == 0);
	free(without);
	d->excluded += hit;
	return hit;
}

/* Whether `name` matches -f's patterns (or, with none, the zero-markup build's every
 * function: `every`) and no TT_ENV_EXCLUDE pattern. */
static int tt__detour_matches_any(struct tt__detour *d, const char *name, int every)
{
	int status = -1;
	char *plain = strncmp(name, "_Z", 2) == 0 ? __cxa_demangle(name, NULL, NULL, &status) : NULL;
	if (status != 0) {
		free(plain);
		plain = NULL;
	}
	int hit = every;
	for (size_t p = 0; p < d->npatterns; p++)
		if (strncmp(d->patterns[p], "0x", 2) != 0 &&
		    (fnmatch(d->patterns[p], name, 0) == 0 || (plain && fnmatch(d->patterns[p], plain, 0) == 0))) {
			d->pattern_hits[p]++;
			hit = 1;
		}
	hit = hit && !tt__detour_excluded(d, name, plain);
	free(plain);
	return hit;
}

static int tt__detour_matches(struct tt__detour *d, const char *name)
{
	return tt__detour_matches_any(d, name, 0);
}

/* One module's name for the loader and what it needs, from its dynamic section. */
static int tt__detour_link_cb(Dwfl_Module *mod, void **user, const char *name, Dwarf_Addr low,
			      void *arg)
{
	(void)user;
	(void)low;
	struct tt__detour *d = arg;
	struct tt__detour_link *links = realloc(d->links, (d->nlinks + 1) * sizeof(*links));
	if (!links)
		return DWARF_CB_ABORT;
	d->links = links;
	struct tt__detour_link *l = &links[d->nlinks++];
	*l = (struct tt__detour_link){.mod = mod, .soname = tt__detour_base(name)};
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	for (Elf_Scn *scn = NULL; elf && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr shdr;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNAMIC || !shdr.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		size_t n = shdr.sh_size / shdr.sh_entsize;
		if (!(l->needed = malloc(n * sizeof(*l->needed))))
			return DWARF_CB_ABORT;
		for (size_t i = 0; i < n; i++) {
			GElf_Dyn dyn;
			const char *str;
			if (!gelf_getdyn(data, (int)i, &dyn) ||
			    !(str = elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val)))
				continue;
			if (dyn.d_tag == DT_NEEDED)
				l->needed[l->nneeded++] = str;
			else if (dyn.d_tag == DT_SONAME)
				l->soname = str;
		}
	}
	return DWARF_CB_OK;
}

/* The address of the program's first segment: the loader's first object is the
 * program (also when it was run as `ld.so PROGRAM`). */
static int tt__detour_program_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			*(uintptr_t *)arg = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			break;
		}
	return 1;
}

/* Whether the module is ticktrace's own or one of its libraries: what it needs
 * (libdw, libelf and their decompressors) is not the program's for that. */
static int tt__detour_ticktraces(const struct tt__detour_link *l)
{
	static const char *const prefixes[] = {"libticktrace", "libZydis", "libZycore"};
	const char *file = dwfl_module_info(l->mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	const char *base = tt__detour_base(file ? file : l->soname);
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

/* (the zero-markup build links libticktrace-detour into the program: the walk stops
 * at it, else libdw's calls into libelf, made while the patcher reads the symbols,
 * would be taken for the program's) */
static void tt__detour_needs_too(struct tt__detour *d, struct tt__detour_link *l)
{
	if (l->program_needs)
		return;
	l->program_needs = 1;
	if (tt__detour_ticktraces(l))
		return;
	for (size_t i = 0; i < l->nneeded; i++)
		for (size_t j = 0; j < d->nlinks; j++)
			if (strcmp(d->links[j].soname, l->needed[i]) == 0)
				tt__detour_needs_too(d, &d->links[j]);
}

/* Whether `entry` of LD_PRELOAD (`len` bytes) names the module `l`: the same file
 * for a path, else its name. */
static int tt__detour_preloads(const char *entry, size_t len, const struct tt__detour_link *l)
{
	char path[PATH_MAX];
	const char *file = dwfl_module_info(l->mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	struct stat a, b;
	if (len >= sizeof path || !file)
		return 0;
	memcpy(path, entry, len);
	path[len] = 0;
	if (!strchr(path, '/'))
		return strcmp(path, l->soname) == 0 || strcmp(path, tt__detour_base(file)) == 0;
	return stat(path, &a) == 0 && stat(file, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Marks the modules the program needs: itself, the libraries of the user's preload
 * (but ticktrace's and the sanitizers' runtimes), and all they need; what is left the
 * detour library alone brought in. 0 or -errno. */
static int tt__detour_find_needed(struct tt__detour *d)
{
	if (dwfl_getmodules(d->dwfl, tt__detour_link_cb, d, 0) != 0)
		return -ENOMEM;
	uintptr_t program = 0;
	dl_iterate_phdr(tt__detour_program_cb, &program);
	const char *preload = getenv(TT_ENV_PRELOAD);
	for (size_t i = 0; i < d->nlinks; i++) {
		struct tt__detour_link *l = &d->links[i];
		Dwarf_Addr low, high;
		const char *file = dwfl_module_info(l->mod, NULL, &low, &high, NULL, NULL, NULL, NULL);
		int root = program >= low && program < high;
		/* (the loader splits LD_PRELOAD at spaces and colons; ticktrace's own and the
		 * sanitizers' runtimes, preloaded for the recording, are not the program's) */
		for (const char *p = preload; !root && file && !tt__detour_untouchable(file) && p && *p;) {
			size_t n = strcspn(p, ": ");
			root = n && tt__detour_preloads(p, n, l);
			p += n;
			p += *p != 0;
		}
		if (root)
			tt__detour_needs_too(d, l);
	}
	return 0;
}

static int tt__detour_program_needs(const struct tt__detour *d, Dwfl_Module *mod)
{
	for (size_t i = 0; i < d->nlinks; i++)
		if (d->links[i].mod == mod)
			return d->links[i].program_needs;
	return 1;
}

char *tt__detour_name_at(const struct tt__detour_module *m, uintptr_t addr, uint64_t vaddr)
{
	const struct tt__detour_sym *symbol = tt__detour_symbol_at(m, addr);
	char *name = NULL;
	if (symbol && symbol->addr == addr)
		return tt__symbol_name(symbol->name);
	return asprintf(&name, "%s+0x%" PRIx64, m->label, vaddr) < 0 ? NULL : name;
}

/* Whether a call enters the code at `vaddr` (of the module's file), by its CFI there:
 * the return address just pushed (CFA rsp+8, the return address saved). GCC's
 * NAME.cold parts, entered by a jump inside their function's frame, and the PLT have
 * FDEs of their own that say otherwise. */
static int tt__detour_called_there(Dwarf_CFI *cfi, uint64_t vaddr)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops, ra_ops[3];
	size_t nops;
	int called = cfi && dwarf_cfi_addrframe(cfi, vaddr, &frame) == 0 &&
		     dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops == 1 &&
		     ops[0].atom == DW_OP_bregx && ops[0].number == 7 /* rsp */ &&
		     ops[0].number2 == 8 &&
		     dwarf_frame_register(frame, 16 /* the return address */, ra_ops, &ops, &nops) == 0 &&
		     ops && nops > 0;
	free(frame);
	return called;
}

/* A module's functions that no symbol names (it is stripped, and no debug file or
 * MiniDebugInfo tells them): those its .eh_frame gives, named module+0xOFFSET as the
 * converter names them; matched and added as the named ones. */
struct tt__detour_unnamed {
	struct tt__detour *d;
	size_t index;
	GElf_Addr bias;
	uint64_t entry; /* _start, entered with no return address */
	Dwarf_CFI *cfi;
	Elf *elf;
};

/* Whether `vaddr` is in a PLT section (.plt, .plt.got, .plt.sec): stubs that jump on
 * to another module's function, which is the one to patch, by its name. */
static int tt__detour_in_plt(Elf *elf, uint64_t vaddr)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr shdr;
		const char *sname;
		if (gelf_getshdr(scn, &shdr) && vaddr - shdr.sh_addr < shdr.sh_size &&
		    (shdr.sh_flags & SHF_ALLOC) && (sname = elf_strptr(elf, shstrndx, shdr.sh_name)))
			return strncmp(sname, ".plt", 4) == 0;
	}
	return 0;
}

static int tt__detour_unnamed_cb(uint64_t begin, uint64_t range, void *arg)
{
	struct tt__detour_unnamed *u = arg;
	const struct tt__detour_module *m = &u->d->modules[u->index];
	if (begin == u->entry || tt__detour_symbol_at(m, begin + u->bias) || tt__detour_in_plt(u->elf, begin) ||
	    !tt__detour_called_there(u->cfi, begin))
		return 0;
	char *name = tt__detour_name_at(m, begin + u->bias, begin);
	int rc = name ? 0 : -ENOMEM;
	if (name && tt__detour_matches(u->d, name))
		rc = tt__detour_add(u->d, (uintptr_t)(begin + u->bias), range, name, u->index, 0);
	free(name);
	return rc;
}

static int tt__detour_unnamed(struct tt__detour *d, Dwfl_Module *mod, size_t index)
{
	struct tt__detour_unnamed u = {.d = d, .index = index};
	Elf *elf = u.elf = dwfl_module_getelf(mod, &u.bias);
	GElf_Ehdr ehdr;
	Dwarf_Addr cfi_bias;
	if (!elf || !gelf_getehdr(elf, &ehdr))
		return 0;
	u.entry = ehdr.e_entry;
	u.cfi = dwfl_module_eh_cfi(mod, &cfi_bias);
	return tt__detour_each_fde(mod, tt__detour_unnamed_cb, &u);
}

/* A module's label in the names module+0xOFFSET, the converter's: the name the loader
 * gave its file, which MODULES records (a library's soname link, liblzma.so.5, not the
 * file the link leads to, which the maps and libdwfl give; dladdr at its first byte
 * tells it); the program's, its file's. Malloc'd. */
static char *tt__detour_label(const char *path, uintptr_t low, int is_main)
{
	Dl_info info;
	int named = !is_main && dladdr((void *)low, &info) && info.dli_fname && *info.dli_fname;
	return strdup(tt__detour_base(named ? info.dli_fname : path));
}

/* Whether a pattern could name a function of the module `label` that no symbol names
 * (LABEL+0xOFFSET): one that matches such a name (-f '*', 'liblzma*'), or names an
 * offset ('*+0x1c40'); else a library's .eh_frame is not read for them. */
static int tt__detour_could_name_unnamed(const struct tt__detour *d, const char *label)
{
	char sample[PATH_MAX];
	snprintf(sample, sizeof sample, "%s+0x0", label);
	for (size_t p = 0; p < d->npatterns; p++)
		if (fnmatch(d->patterns[p], sample, 0) == 0 || strstr(d->patterns[p], "+0x"))
			return 1;
	return 0;
}

/* The functions of one module whose names match, and what it needs to know of it. */
static int tt__detour_module_cb(Dwfl_Module *mod, void **user, const char *name, Dwarf_Addr low,
				void *arg)
{
	(void)user;
	struct tt__detour *d = arg;
	int brought = 0; /* at a dlopen (d->later): one of the modules it brought, the program's */
	for (size_t i = 0; i < d->nbrought; i++)
		brought |= (uintptr_t)low >= d->brought[i].low && (uintptr_t)low < d->brought[i].high;
	if (d->later && !brought)
		return DWARF_CB_OK;
	struct tt__detour_module *modules =
		realloc(d->modules, (d->nmodules + 1) * sizeof(*modules));
	if (!modules)
		return DWARF_CB_ABORT;
	d->modules = modules;
	size_t index = d->nmodules++;
	struct tt__detour_module *m = &modules[index];
	Dwarf_Addr start, end;
	dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
	*m = (struct tt__detour_module){.mod = mod, .path = strdup(name), .low = (uintptr_t)low, .high = (uintptr_t)end};
	int untouchable = tt__detour_untouchable(name);
	int only_ours = !untouchable && !brought && !tt__detour_program_needs(d, mod);
	int is_main = d->main_path && strcmp(name, d->main_path) == 0;
	m->label = tt__detour_label(name, (uintptr_t)low, is_main);
	if (!m->path || !m->label)
		return DWARF_CB_ABORT;
	int nsyms = dwfl_module_getsymtab(mod);
	const char *file = NULL; /* of the local symbols that follow */
	int finds_frames = 0, watched = 0; /* what a static unwinder imports, what was found */
	int hooked = 0; /* built with -finstrument-functions: its hooks record its calls */
	if (!untouchable && nsyms > 1 && (!(m->syms = malloc((size_t)nsyms * sizeof(*m->syms))) ||
					  !(m->colds = malloc((size_t)nsyms * sizeof(*m->colds)))))
		return DWARF_CB_ABORT;
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *sname = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
		if (sname && GELF_ST_TYPE(sym.st_info) == STT_FILE)
			file = sname;
		else if (GELF_ST_BIND(sym.st_info) != STB_LOCAL)
			file = NULL;
		if (sname && shndx == SHN_UNDEF &&
		    (strcmp(sname, "_dl_find_object") == 0 || strcmp(sname, "dl_iterate_phdr") == 0))
			finds_frames = 1;
		if (sname && shndx == SHN_UNDEF && strcmp(sname, "__cyg_profile_func_enter") == 0)
			hooked = !untouchable && !only_ours;
		int type = sname ? GELF_ST_TYPE(sym.st_info) : STT_NOTYPE;
		if (m->syms && sname && shndx != SHN_UNDEF && shndx != SHN_ABS && type != STT_TLS &&
		    type != STT_SECTION && type != STT_FILE) {
			struct tt__detour_sym one = {.addr = (uintptr_t)addr,
						     .end = (uintptr_t)(addr + sym.st_size), .name = sname,
						     .index = (uint32_t)i, .bind = (uint8_t)GELF_ST_BIND(sym.st_info)};
			m->syms[m->nsyms++] = one;
			if (type == STT_FUNC && strstr(sname, ".cold"))
				m->colds[m->ncolds++] = one;
		}
		/* _start is entered with no return address, by the kernel's jump */
		if (!sname || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size == 0 ||
		    shndx == SHN_UNDEF || strstr(sname, ".cold") || strcmp(sname, "_start") == 0)
			continue;
		if (tt__detour_unwinder_entry(sname) &&
		    (++watched, tt__detour_add(d, (uintptr_t)addr, sym.st_size, sname, index, 1) < 0))
			return DWARF_CB_ABORT;
		if (!tt__detour_matches(d, sname))
			continue;
		if (only_ours)
			d->only_ours++;
		else if (untouchable || tt__detour_part_of_unwinder(sname, file))
			d->left_alone++;
		else if (tt__detour_add(d, (uintptr_t)addr, sym.st_size, sname, index, 0) < 0)
			return DWARF_CB_ABORT;
	}
	if (m->nsyms)
		qsort(m->syms, m->nsyms, sizeof(*m->syms), tt__detour_cmp_sym);
	for (size_t i = 0; i < m->nsyms; i++)
		m->syms[i].reach = i && m->syms[i - 1].reach > m->syms[i].end ? m->syms[i - 1].reach :
										  m->syms[i].end;
	/* A program that finds FDEs itself and enters personality routines carries an
	 * unwinder (static libgcc or LLVM's): when its symbols do not show it (stripped),
	 * it cannot be watched. */
	if (is_main && finds_frames && !watched && tt__detour_has_personality(mod))
		d->unseen_unwinder = 1;
	/* The functions no symbol names (stripped), from .eh_frame: the program's, and a
	 * library's that is the program's when a pattern could name them and it cannot be
	 * carrying an unwinder its symbols no longer show (without patterns, none would
	 * match: the zero-markup build patches its NOPs) */
	int unnamed = is_main || (!untouchable && !only_ours && tt__detour_could_name_unnamed(d, m->label) &&
				  !(finds_frames && !watched && tt__detour_has_personality(mod)));
	if (d->npatterns && unnamed && tt__detour_unnamed(d, mod, index) < 0)
		return DWARF_CB_ABORT;
	/* 0xADDR: an address of the program itself, its extent from .eh_frame */
	for (size_t p = 0; is_main && p < d->npatterns; p++) {
		char *tail;
		const char *pat = d->patterns[p];
		if (strncmp(pat, "0x", 2) != 0)
			continue;
		errno = 0;
		unsigned long long vaddr = strtoull(pat, &tail, 16);
		if (errno || *tail)
			continue;
		GElf_Addr bias;
		struct tt__detour_around at = {.vaddr = vaddr};
		if (!tt__detour_each_fde(mod, tt__detour_fde_around, &at) || !dwfl_module_getelf(mod, &bias))
			continue; /* said at the end: no match */
		if (at.begin != vaddr) { /* said at the end, with the function's start */
			char *name = tt__detour_name_at(m, at.begin + bias, at.begin);
			free(d->pattern_notes[p]);
			if (name && asprintf(&d->pattern_notes[p], "is inside %s, which starts at 0x%" PRIx64
					     " (-f 0x%" PRIx64 " patches it)", name, at.begin, at.begin) < 0)
				d->pattern_notes[p] = NULL;
			free(name);
			continue;
		}
		d->pattern_hits[p]++;
		if (tt__detour_add(d, (uintptr_t)(vaddr + bias), at.range, pat, index, 0) < 0)
			return DWARF_CB_ABORT;
	}
	tt__detour_find_sleds(mod, m);
	/* The zero-markup build (-fpatchable-function-entry, this library linked): each
	 * function's NOP area at its entry, named by its symbol where it has one; none in
	 * a module whose calls the hooks record (both flags given: each call once) */
	d->hooked |= hooked;
	m->programs = !untouchable && !only_ours;
	m->calls_hooks = hooked;
	for (size_t i = 0; d->every_sled && !untouchable && !only_ours && !hooked && i < m->nsleds; i++) {
		const struct tt__detour_sym *holder = tt__detour_symbol_at(m, m->sleds[i]);
		const char *fn = holder ? holder->name : NULL;
		if (fn && (tt__detour_part_of_unwinder(fn, NULL) || !tt__detour_matches_any(d, fn, 1)))
			continue;
		if (tt__detour_add(d, m->sleds[i], TT__DETOUR_SLED_MAX, fn ? fn : "(a function without a symbol)",
				   index, 0) < 0)
			return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

static int tt__detour_no_debuginfo(Dwfl_Module *mod, void **user, const char *name, Dwarf_Addr base,
				   const char *file, const char *debuglink, GElf_Word crc, char **path)
{
	(void)mod, (void)user, (void)name, (void)base, (void)file, (void)debuglink, (void)crc;
	*path = NULL;
	return -1;
}

/* The functions to patch, from every module mapped now; 0 or -errno. */
int tt__detour_collect(struct tt__detour *d)
{
	/* beside the file, in its .debug, under --debug-dir, then the system's */
	static char *debuginfo_path = NULL;
	const char *dir = getenv(TT_ENV_DETOUR_DEBUG_DIR);
	if (!debuginfo_path && dir && *dir &&
	    asprintf(&debuginfo_path, ":.debug:%s:/usr/lib/debug", dir) < 0)
		debuginfo_path = NULL;
	static const Dwfl_Callbacks callbacks = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &debuginfo_path,
	};
	/* Without patterns no name is looked for (the zero-markup build patches its NOPs,
	 * found in the loaded file): no debug file is searched, nor asked of a debuginfod
	 * server (DEBUGINFOD_URLS), as every such program starts */
	static const Dwfl_Callbacks own_symbols = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = tt__detour_no_debuginfo,
	};
	Dwfl *dwfl = d->dwfl = dwfl_begin(d->npatterns ? &callbacks : &own_symbols);
	if (!dwfl)
		return -ENOMEM;
	if (dwfl_linux_proc_report(dwfl, getpid()) != 0 || dwfl_report_end(dwfl, NULL, NULL) != 0 ||
	    tt__detour_find_needed(d) < 0)
		return -EIO;
	/* The zero-markup build links this library; `ticktrace record` preloads it (with
	 * no -f: the program runs as it is) */
	int linked = 0;
	for (size_t i = 0; i < d->nlinks; i++)
		linked |= d->links[i].program_needs &&
			  strncmp(d->links[i].soname, "libticktrace-detour.", 20) == 0;
	d->every_sled &= linked;
	if ((d->npatterns || d->every_sled) && dwfl_getmodules(dwfl, tt__detour_module_cb, d, 0) != 0)
		return -EIO;
	if (d->nfns) /* (none: fns is NULL, which qsort must not be given) */
		qsort(d->fns, d->nfns, sizeof(d->fns[0]), tt__detour_cmp_fn);
	size_t kept = 0; /* aliases: one patch per address */
	for (size_t i = 0; i < d->nfns; i++) {
		if (kept && d->fns[kept - 1].addr == d->fns[i].addr)
			free(d->fns[i].name);
		else
			d->fns[kept++] = d->fns[i];
	}
	d->nfns = kept;
	return 0;
}
