/* libticktrace-detour: records the calls of functions of a program that was not
 * built for it, by patching their entries before main (`ticktrace record -f`).
 *
 * TICKTRACE_DETOUR holds the patterns, one a line: shell globs over the symbol names
 * of the program and its libraries (as elfutils finds them, debug info by build-id
 * included), or 0xADDR, an address of the program as `nm` or the converter's
 * `module+0xOFFSET` print it, for a function with no name left (its extent comes
 * from .eh_frame). The constructor patches each function found with a jump to its
 * stub, near its module (trampoline.asm), if the process is still single-threaded
 * (tt__detour_others says why):
 *   - built with -fpatchable-function-entry=N[,M] (N - M >= 5; the compiler lists the
 *     NOPs in __patchable_function_entries): over its first five NOPs; nothing moves;
 *   - otherwise: over its first instructions, which move into the stub (relocate.c).
 * A function that cannot be patched safely is listed with the reason, and left as
 * it is: among them, one with another symbol inside the bytes its patch overwrites
 * (an alternate entry) or that lies inside another symbol's extent. Exits are caught
 * by replacing the return address (trampoline.asm says why and how). Code pages go
 * back to read-execute.
 *
 * Never patched: the libraries only this one needs (libdw, libelf...: not the
 * program's, tt__detour_find_needed), the dynamic loader, the C library, ticktrace's libraries, the
 * decoder's and the sanitizers' runtimes (the recording and the patching run through
 * them), the unwinders wherever they are linked (an unwind starts in them), the vDSO,
 * GCC's `.cold` parts of functions (entered by a jump, not a call), and _start
 * (entered with no return address). The unwinders' entry points are patched to be
 * watched instead (unwinders.asm says why). */
#include <dirent.h>
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fnmatch.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "detour.h"

__thread struct tt__detour_shadow tt__detour_shadow;
intptr_t tt__detour_shadow_offset;

/* Calls a thread's shadow stack holds: deeper ones are not recorded (counted). */
#define TT__DETOUR_SHADOW_FRAMES (1u << 20)

static uint64_t tt__detour_too_deep; /* calls not recorded: shadow stack full */
static pthread_key_t tt__detour_key;

static void tt__detour_thread_exit(void *base)
{
	munmap(base, (size_t)TT__DETOUR_SHADOW_FRAMES * sizeof(struct tt__detour_frame));
	tt__detour_shadow.top = tt__detour_shadow.end = NULL;
}

/* trampoline.asm, on a thread's first patched call and when its stack is full: the
 * new top, or NULL (the call is then not recorded). */
TT__DETOUR_HIDDEN struct tt__detour_frame *tt__detour_shadow_grow(void)
{
	struct tt__detour_shadow *sh = &tt__detour_shadow;
	if (sh->top) {
		__atomic_add_fetch(&tt__detour_too_deep, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	int saved = errno;
	size_t bytes = (size_t)TT__DETOUR_SHADOW_FRAMES * sizeof(struct tt__detour_frame);
	struct tt__detour_frame *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
					     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		errno = saved;
		__atomic_add_fetch(&tt__detour_too_deep, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	base[0] = (struct tt__detour_frame){.slot = UINTPTR_MAX}; /* the sentinel */
	pthread_setspecific(tt__detour_key, base);
	sh->end = base + TT__DETOUR_SHADOW_FRAMES;
	sh->top = base + 1;
	errno = saved;
	return sh->top;
}

/* A patched function returned to where no call of the thread's shadow stack left its
 * return address. */
_Noreturn void tt__detour_lost(uintptr_t slot)
{
	fprintf(stderr, "ticktrace: a patched function returned through 0x%" PRIxPTR ", where no "
		"recorded call of this thread was (did the program switch stacks?); aborting\n", slot);
	abort();
}

/* unwinders.asm, before any unwinder runs (an exception, a forced unwind, a
 * backtrace): the unwinder must see the real return addresses (it finds no unwind
 * information for tt__detour_exit). They are put back for the thread's every
 * recorded call; the calls the unwind ends are found stale later, and those it does
 * not end lose their exit hook, so their FUNC_EXIT is recorded when a later patched
 * call or return finds them stale. A forced unwind (`ends_calls`) ends them all, and
 * the thread with them: they end now, when it starts. */
TT__DETOUR_HIDDEN void tt__detour_put_back_returns(uint64_t ends_calls)
{
	struct tt__detour_shadow *sh = &tt__detour_shadow;
	if (!sh->top)
		return;
	for (struct tt__detour_frame *f = sh->top - 1; f->slot != UINTPTR_MAX; f--) {
		if (*(uintptr_t *)f->slot == (uintptr_t)tt__detour_exit)
			*(uintptr_t *)f->slot = f->ret;
		if (ends_calls) {
			sh->top = f;
			tt__detour_func_exit(f->word);
		}
	}
}

/* One function to patch. */
struct tt__detour_fn {
	uintptr_t addr;
	uint64_t size;
	char *name;
	size_t module; /* index in the module table */
	int watch;     /* an unwinder's entry point, watched rather than recorded */
};

/* A symbol of a module, for the check that no other entry lies inside a patch. */
struct tt__detour_sym {
	uintptr_t addr, end;
	uintptr_t reach; /* the highest `end` of this symbol and all before it */
	const char *name; /* elfutils' (valid until dwfl_end) */
};

struct tt__detour_module {
	char *path;
	uintptr_t low, high;
	struct tt__detour_sym *syms; /* every symbol with an address, sorted */
	size_t nsyms;
	struct tt__detour_sym *colds; /* GCC's NAME.cold parts */
	size_t ncolds;
	uintptr_t *sleds; /* -fpatchable-function-entry NOP areas, sorted */
	size_t nsleds;
	uint8_t *stubs;   /* the module's stubs, near it; NULL: none yet */
	size_t stubs_size, stubs_used;
};

/* A module as the loader linked it in, to tell the libraries the program needs from
 * those only the detour library does (libdw, libelf and what they need): those are not
 * the program's, and -f '*' leaves them alone. */
struct tt__detour_link {
	Dwfl_Module *mod;
	const char *soname;   /* its DT_SONAME, else its file's name */
	const char **needed;  /* its DT_NEEDED (strings of its Elf, valid until dwfl_end) */
	size_t nneeded;
	int program_needs;    /* the program, a library of the user's preload, or one they need */
};

struct tt__detour {
	Dwfl *dwfl; /* kept while patching: the symbols' names are its */
	char **patterns;
	size_t npatterns;
	size_t *pattern_hits;
	struct tt__detour_module *modules;
	size_t nmodules;
	struct tt__detour_fn *fns;
	size_t nfns, fns_cap;
	size_t left_alone; /* matches in libraries never patched */
	struct tt__detour_link *links; /* every module, as the loader linked it */
	size_t nlinks;
	size_t only_ours; /* matches in libraries only the detour library needs */
	int unseen_unwinder; /* the program's own, which its symbols no longer show */
	size_t patched_relocated, patched_patchable, refused;
	const char *main_path;
};

static const char *tt__detour_base(const char *path)
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
	d->fns[d->nfns++] = (struct tt__detour_fn){addr, size, copy, module, watch};
	return 0;
}

static int tt__detour_cmp_addr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return (x > y) - (x < y);
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

/* The size of the function whose FDE in the module's .eh_frame starts at `vaddr` (an
 * address of its file, as nm prints it): its FDE's whole range; 0 when no FDE starts
 * there. */
static uint64_t tt__detour_fde_size(Dwfl_Module *mod, uint64_t vaddr)
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
		if (enc >= 0 &&
		    tt__detour_eh_pointer((uint8_t)enc, field, entry.fde.end, field_at, &begin, &len) == 0 &&
		    begin == vaddr &&
		    tt__detour_eh_pointer((uint8_t)enc & 0x0f, field + len, entry.fde.end, 0, &range, &len) == 0)
			return range;
	}
	return 0;
}

/* libsupc++'s demangler, linked into this library (meson.build says why): C++ names
 * match in their demangled form too, as the converter shows them. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static int tt__detour_matches(struct tt__detour *d, const char *name)
{
	int status = -1;
	char *plain = strncmp(name, "_Z", 2) == 0 ? __cxa_demangle(name, NULL, NULL, &status) : NULL;
	int hit = 0;
	for (size_t p = 0; p < d->npatterns; p++)
		if (strncmp(d->patterns[p], "0x", 2) != 0 &&
		    (fnmatch(d->patterns[p], name, 0) == 0 ||
		     (plain && status == 0 && fnmatch(d->patterns[p], plain, 0) == 0))) {
			d->pattern_hits[p]++;
			hit = 1;
		}
	free(plain);
	return hit;
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

static void tt__detour_needs_too(struct tt__detour *d, struct tt__detour_link *l)
{
	if (l->program_needs)
		return;
	l->program_needs = 1;
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
	const char *preload = getenv("LD_PRELOAD");
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

/* The functions of one module whose names match, and what it needs to know of it. */
static int tt__detour_module_cb(Dwfl_Module *mod, void **user, const char *name, Dwarf_Addr low,
				void *arg)
{
	(void)user;
	struct tt__detour *d = arg;
	struct tt__detour_module *modules =
		realloc(d->modules, (d->nmodules + 1) * sizeof(*modules));
	if (!modules)
		return DWARF_CB_ABORT;
	d->modules = modules;
	size_t index = d->nmodules++;
	struct tt__detour_module *m = &modules[index];
	Dwarf_Addr start, end;
	dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
	*m = (struct tt__detour_module){.path = strdup(name), .low = (uintptr_t)low, .high = (uintptr_t)end};
	if (!m->path)
		return DWARF_CB_ABORT;
	int untouchable = tt__detour_untouchable(name);
	int only_ours = !untouchable && !tt__detour_program_needs(d, mod);
	int is_main = d->main_path && strcmp(name, d->main_path) == 0;
	int nsyms = dwfl_module_getsymtab(mod);
	const char *file = NULL; /* of the local symbols that follow */
	int finds_frames = 0, watched = 0; /* what a static unwinder imports, what was found */
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
		int type = sname ? GELF_ST_TYPE(sym.st_info) : STT_NOTYPE;
		if (m->syms && sname && shndx != SHN_UNDEF && shndx != SHN_ABS && type != STT_TLS &&
		    type != STT_SECTION && type != STT_FILE) {
			struct tt__detour_sym one = {.addr = (uintptr_t)addr,
						     .end = (uintptr_t)(addr + sym.st_size), .name = sname};
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
	/* A program that finds FDEs itself and enters personality routines carries an
	 * unwinder (static libgcc or LLVM's): when its symbols do not show it (stripped),
	 * it cannot be watched. */
	if (is_main && finds_frames && !watched && tt__detour_has_personality(mod))
		d->unseen_unwinder = 1;
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
		uint64_t size = tt__detour_fde_size(mod, vaddr);
		if (!size || !dwfl_module_getelf(mod, &bias))
			continue; /* said at the end: no match */
		d->pattern_hits[p]++;
		if (tt__detour_add(d, (uintptr_t)(vaddr + bias), size, pat, index, 0) < 0)
			return DWARF_CB_ABORT;
	}
	tt__detour_find_sleds(mod, m);
	if (m->nsyms)
		qsort(m->syms, m->nsyms, sizeof(*m->syms), tt__detour_cmp_addr);
	for (size_t i = 0; i < m->nsyms; i++)
		m->syms[i].reach = i && m->syms[i - 1].reach > m->syms[i].end ? m->syms[i - 1].reach :
										  m->syms[i].end;
	return DWARF_CB_OK;
}

/* The functions to patch, from every module mapped now; 0 or -errno. */
static int tt__detour_collect(struct tt__detour *d)
{
	static char *debuginfo_path = NULL;
	static const Dwfl_Callbacks callbacks = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &debuginfo_path,
	};
	Dwfl *dwfl = d->dwfl = dwfl_begin(&callbacks);
	if (!dwfl)
		return -ENOMEM;
	if (dwfl_linux_proc_report(dwfl, getpid()) != 0 || dwfl_report_end(dwfl, NULL, NULL) != 0 ||
	    tt__detour_find_needed(d) < 0 || dwfl_getmodules(dwfl, tt__detour_module_cb, d, 0) != 0)
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

/* Memory for a module's stubs within 32-bit reach of all of it; 0 or -errno. */
static int tt__detour_stub_area(struct tt__detour_module *m, size_t nfns)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size = (nfns * TT__DETOUR_STUB_MAX + page - 1) / page * page;
	const uintptr_t step = 1u << 20, reach = (uintptr_t)1 << 31;
	for (uintptr_t off = step; off < reach - (m->high - m->low) - size; off += step) {
		uintptr_t tries[2] = {m->low > off + size ? (m->low - off - size) & ~(page - 1) : 0,
				      (m->high + off + page - 1) & ~(page - 1)};
		for (int t = 0; t < 2; t++) {
			if (!tries[t])
				continue;
			void *p = mmap((void *)tries[t], size, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (p == MAP_FAILED)
				continue;
			if ((uintptr_t)p != tries[t]) { /* an old kernel took it as a hint */
				munmap(p, size);
				continue;
			}
			m->stubs = p;
			m->stubs_size = size;
			return 0;
		}
	}
	return -ENOMEM;
}

/* Writes `len` bytes over code, the page(s) writable only meanwhile; 0 or -errno. */
static int tt__detour_write_code(uintptr_t at, const uint8_t *bytes, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t first = at & ~(page - 1), last = (at + len + page - 1) & ~(page - 1);
	if (mprotect((void *)first, last - first, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
		return -errno;
	memcpy((void *)at, bytes, len);
	if (mprotect((void *)first, last - first, PROT_READ | PROT_EXEC) != 0)
		return -errno;
	__builtin___clear_cache((char *)at, (char *)at + len);
	return 0;
}

/* Whether another entry of the module makes a patch of `len` bytes unsafe: a symbol
 * starting inside them (an alternate entry, which would land inside the jump), or
 * one whose extent holds the function (its code runs into what the patch overwrites);
 * -1 with the reason, or 0. */
static size_t tt__detour_first_sym_from(const struct tt__detour_module *m, uintptr_t addr)
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

static int tt__detour_overlaps(const struct tt__detour_module *m, const struct tt__detour_fn *fn,
			       int len, char *why, size_t cap)
{
	size_t lo = tt__detour_first_sym_from(m, fn->addr);
	for (size_t i = lo; i < m->nsyms && m->syms[i].addr < fn->addr + (uintptr_t)len; i++)
		if (m->syms[i].addr != fn->addr) {
			snprintf(why, cap, "the symbol %s is at +%" PRIuPTR ", inside the %d bytes the "
				 "patch overwrites", m->syms[i].name, m->syms[i].addr - fn->addr, len);
			return -1;
		}
	if (lo == 0 || m->syms[lo - 1].reach <= fn->addr)
		return 0;
	size_t outer = lo - 1;
	while (m->syms[outer].end <= fn->addr)
		outer--;
	snprintf(why, cap, "it lies at +%" PRIuPTR " inside %s, whose code runs through the bytes the "
		 "patch overwrites", fn->addr - m->syms[outer].addr, m->syms[outer].name);
	return -1;
}

/* Whether the function's cold part (GCC's NAME.cold, for NAME any of its symbols), which
 * jumps back into it, jumps into the `len` bytes the patch overwrites: -1 with the
 * reason, or 0. */
static int tt__detour_cold_jumps(const struct tt__detour_module *m, const struct tt__detour_fn *fn,
				 int len, char *why, size_t cap)
{
	size_t first = tt__detour_first_sym_from(m, fn->addr);
	for (size_t c = 0; c < m->ncolds; c++) {
		const struct tt__detour_sym *cold = &m->colds[c];
		size_t stem = (size_t)(strstr(cold->name, ".cold") - cold->name);
		for (size_t i = first; i < m->nsyms && m->syms[i].addr == fn->addr; i++)
			if (strlen(m->syms[i].name) == stem &&
			    strncmp(m->syms[i].name, cold->name, stem) == 0 &&
			    tt__detour_no_jump_into((const uint8_t *)cold->addr, cold->end - cold->addr,
						    cold->addr, cold->name, fn->addr, len, why, cap) < 0)
				return -1;
	}
	return 0;
}

/* Patches one function; 0, or -1 with the reason in `why`. */
static int tt__detour_patch(struct tt__detour *d, const struct tt__detour_fn *fn, char *why,
			    size_t cap)
{
	struct tt__detour_module *m = &d->modules[fn->module];
	const uint8_t *code_at = (const uint8_t *)fn->addr;
	uint8_t patch[32];
	int len;
	uintptr_t *sled = NULL;
	if (m->nsleds) { /* the nearest NOP area at or before the function */
		size_t lo = 0, hi = m->nsleds;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (m->sleds[mid] <= fn->addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		sled = lo ? &m->sleds[lo - 1] : NULL;
	}
	size_t in_module = 0; /* functions to patch in it: the stubs it needs at most */
	for (size_t i = 0; !m->stubs && i < d->nfns; i++)
		in_module += d->fns[i].module == fn->module;
	if (!m->stubs && tt__detour_stub_area(m, in_module) < 0) {
		snprintf(why, cap, "no memory for its trampoline within 2 GB of %s", m->path);
		return -1;
	}
	if (m->stubs_used + TT__DETOUR_STUB_MAX > m->stubs_size) {
		snprintf(why, cap, "its module's trampolines are full");
		return -1;
	}
	struct tt__detour_stub *stub = (struct tt__detour_stub *)(m->stubs + m->stubs_used);
	static const uint8_t code[sizeof stub->code] = {
		0xff, 0x35, 0xda, 0xff, 0xff, 0xff, /* push qword [rip - 38]: self */
		0xff, 0x25, 0xec, 0xff, 0xff, 0xff, /* jmp [rip - 20]: entry */
	};
	uint64_t ends_calls = strcmp(fn->name, "_Unwind_ForcedUnwind") == 0 ? TT__DETOUR_ENDS_CALLS : 0;
	*stub = fn->watch ? (struct tt__detour_stub){.self = (uintptr_t)stub, .word = ends_calls,
						     .entry = (uintptr_t)tt__detour_unwinding} :
			    (struct tt__detour_stub){.self = (uintptr_t)stub,
						     .word = TT__DETOUR_ENTER_WORD(fn->addr),
						     .entry = (uintptr_t)tt__detour_entry};
	memcpy(stub->code, code, sizeof code);
	int nops = sled && fn->addr - *sled < 64 ? tt__detour_nops(code_at, fn->size) : 0;
	if (nops >= TT__DETOUR_PATCH) {
		/* -fpatchable-function-entry: the function goes on after the jump */
		len = TT__DETOUR_PATCH;
		stub->go_on = fn->addr + TT__DETOUR_PATCH;
	} else {
		len = tt__detour_plan(code_at, fn->size, fn->addr, why, cap);
		if (len < 0 || tt__detour_cold_jumps(m, fn, len, why, cap) < 0)
			return -1;
		size_t room = TT__DETOUR_STUB_MAX - sizeof(*stub);
		if (tt__detour_relocate(code_at, fn->addr, len, stub->moved, (uintptr_t)stub->moved,
					room, why, cap) < 0)
			return -1;
		stub->go_on = (uintptr_t)stub->moved;
	}
	if (tt__detour_overlaps(m, fn, len, why, cap) < 0)
		return -1;
	int32_t disp;
	if (!tt__detour_reach((uintptr_t)stub->code, fn->addr + TT__DETOUR_PATCH, &disp)) {
		snprintf(why, cap, "its trampoline is out of 32-bit reach");
		return -1;
	}
	patch[0] = 0xe9;
	memcpy(patch + 1, &disp, sizeof disp);
	memset(patch + 5, 0xcc, (size_t)len - 5); /* never run: no jump lands there */
	m->stubs_used += TT__DETOUR_STUB_MAX;
	int err = tt__detour_write_code(fn->addr, patch, (size_t)len);
	if (err) {
		snprintf(why, cap, "its code cannot be made writable: %s", strerror(-err));
		return -1;
	}
	if (fn->watch)
		return 0;
	if (nops >= TT__DETOUR_PATCH)
		d->patched_patchable++;
	else
		d->patched_relocated++;
	return 0;
}

static void tt__detour_free(struct tt__detour *d)
{
	for (size_t i = 0; i < d->nfns; i++)
		free(d->fns[i].name);
	for (size_t i = 0; i < d->nmodules; i++) {
		free(d->modules[i].path);
		free(d->modules[i].sleds);
		free(d->modules[i].syms);
		free(d->modules[i].colds);
	}
	for (size_t i = 0; i < d->nlinks; i++)
		free(d->links[i].needed);
	free(d->links);
	if (d->dwfl)
		dwfl_end(d->dwfl);
	free(d->fns);
	free(d->modules);
	free(d->patterns);
	free(d->pattern_hits);
}

/* Threads of the program running now besides this one (ticktrace's own run none of
 * its code), or -1 when they cannot be counted. Patching is safe only when there are
 * none: another thread may be running the code a patch overwrites, and the write of
 * its bytes cannot be made safe for it. Writing them in an order a concurrent executor
 * survives (int3 first, then the rest, then the first byte, with a SIGTRAP handler,
 * as the kernel's text_poke_bp) serves one instruction replaced by one; here several
 * move, and a thread stopped between two of them would resume inside the jump, which
 * only stopping every thread and moving its rip into the stub mends, and a thread may
 * block the signal that would stop it, or be inside a handler of its own whose
 * interrupted rip cannot be seen. A library's constructor that starts threads (it runs
 * before this one) leaves the program unpatched, said so; while this one runs, no
 * other code of the program does, so none can start a thread meanwhile. */
static int tt__detour_others(void)
{
	DIR *dir = opendir("/proc/self/task");
	if (!dir)
		return -1;
	pid_t self = gettid();
	int others = 0;
	for (struct dirent *e; (e = readdir(dir));) {
		pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);
		others += tid > 0 && tid != self && !tt__own_thread(tid);
	}
	closedir(dir);
	return others;
}

static void tt__detour_at_exit(void)
{
	uint64_t lost = __atomic_load_n(&tt__detour_too_deep, __ATOMIC_RELAXED);
	if (lost)
		fprintf(stderr, "ticktrace: %" PRIu64 " calls of patched functions were not recorded: "
			"deeper than a thread's %u on its shadow stack\n", lost, TT__DETOUR_SHADOW_FRAMES);
}

__attribute__((constructor)) static void tt__detour_start(void)
{
	tt__detour_no_follow();
	const char *env = getenv("TICKTRACE_DETOUR");
	const char *off = getenv("TICKTRACE");
	if (!env || !*env || (off && strcmp(off, "0") == 0))
		return;
	struct tt__detour d = {0};
	char *text = strdup(env);
	char exe[PATH_MAX];
	uintptr_t thread_pointer;
	__asm__("mov %%fs:0, %0" : "=r"(thread_pointer));
	tt__detour_shadow_offset = (intptr_t)((uintptr_t)&tt__detour_shadow - thread_pointer);
	tt__detour_know_own_stack();
	if (!text || pthread_key_create(&tt__detour_key, tt__detour_thread_exit) != 0)
		goto fail;
	if (realpath("/proc/self/exe", exe))
		d.main_path = exe;
	/* glibc loads libgcc_s at the first pthread_exit or pthread_cancel, to unwind the
	 * thread: loaded now, its unwinder is watched like the others (never closed). */
	dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
	for (char *save = NULL, *p = strtok_r(text, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		char **patterns = realloc(d.patterns, (d.npatterns + 1) * sizeof(*patterns));
		if (!patterns)
			goto fail;
		d.patterns = patterns;
		d.patterns[d.npatterns++] = p;
	}
	d.pattern_hits = calloc(d.npatterns + 1, sizeof(*d.pattern_hits));
	if (!d.pattern_hits || tt__detour_collect(&d) < 0)
		goto fail;
	size_t to_record = 0; /* the unwinders need watching only when some are */
	for (size_t i = 0; i < d.nfns; i++)
		to_record += !d.fns[i].watch;
	int says = tt__detour_says();
	int others = d.nfns ? tt__detour_others() : 0;
	if (others < 0)
		fprintf(stderr, "ticktrace: nothing patched: the program's threads cannot be counted "
			"(/proc/self/task), and a patch is safe only while no other thread runs\n");
	else if (others > 0)
		fprintf(stderr, "ticktrace: nothing patched: the program already runs %d other thread%s "
			"(a library's constructor started them), which may be running the code a patch "
			"overwrites\n", others, others > 1 ? "s" : "");
	else if (to_record && d.unseen_unwinder)
		fprintf(stderr, "ticktrace: %s carries its own unwinder, which cannot be found with its "
			"symbols stripped: an unwind through a patched function would stop there "
			"(ending the program); nothing patched\n", d.main_path);
	int patching = !others && !(to_record && d.unseen_unwinder);
	if (!patching)
		d.refused = to_record;
	for (size_t i = 0; patching && i < d.nfns; i++) {
		char why[256];
		const struct tt__detour_fn *fn = &d.fns[i];
		if ((fn->watch && !to_record) || tt__detour_patch(&d, fn, why, sizeof why) == 0)
			continue;
		d.refused += !fn->watch;
		if (says)
			fprintf(stderr, fn->watch ? "ticktrace: the unwinder's %s (%s) cannot be watched: %s; an "
						    "unwind through a patched function there stops at it\n" :
						    "ticktrace: not patched: %s (%s): %s\n",
				fn->name, tt__detour_base(d.modules[fn->module].path), why);
	}
	for (size_t i = 0; i < d.nmodules; i++)
		if (d.modules[i].stubs && mprotect(d.modules[i].stubs, d.modules[i].stubs_size,
						   PROT_READ | PROT_EXEC) != 0)
			fprintf(stderr, "ticktrace: the trampolines of %s stay writable: %s\n",
				d.modules[i].path, strerror(errno));
	for (size_t p = 0; says && p < d.npatterns; p++)
		if (!d.pattern_hits[p])
			fprintf(stderr, "ticktrace: -f %s %s\n", d.patterns[p],
				strncmp(d.patterns[p], "0x", 2) == 0 ?
					"is where no function of the program starts (by its .eh_frame)" :
					"matches no function");
	if (says && d.left_alone)
		fprintf(stderr, "ticktrace: %zu matching functions of the C library, the loader, the "
			"unwinders or ticktrace's own libraries left alone (the recording and the "
			"unwinding run through them)\n", d.left_alone);
	if (says && d.only_ours)
		fprintf(stderr, "ticktrace: %zu matching functions of libraries the program does not "
			"load, which only ticktrace's detour library needs, left alone\n", d.only_ours);
	if (says)
		fprintf(stderr, "ticktrace: patched %zu functions (%zu by moving their first instructions, "
			"%zu at their patchable NOPs); %zu could not be\n",
			d.patched_relocated + d.patched_patchable, d.patched_relocated,
			d.patched_patchable, d.refused);
	atexit(tt__detour_at_exit);
	tt__detour_free(&d);
	free(text);
	return;
fail:
	fprintf(stderr, "ticktrace: TICKTRACE_DETOUR: could not read the program's symbols; "
		"nothing patched\n");
	tt__detour_free(&d);
	free(text);
}
