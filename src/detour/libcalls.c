/* The calls the program makes into shared libraries (fopen, fread, malloc), recorded
 * without naming each (TICKTRACE_LIBCALLS): each of the program's PLT slots in its GOT
 * (R_X86_64_JUMP_SLOT) is pointed at a stub of its own, which enters the trampolines
 * as a patched function's does and goes on to the function the slot would have
 * reached. The function itself is not touched, so the library's own calls of it (and
 * ticktrace's) are not recorded: only the program's. The record's word names the GOT
 * slot, with TT_FUNC_LIBRARY_CALL: the tools name it IMPORT@LIBRARY from the
 * program's relocation there (an IFUNC such as memcpy, or an alias such as fopen's
 * _IO_fopen, would be named otherwise by the address it reaches). Before main, while no
 * other thread runs (detour.c). */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "detour.h"

/* Functions whose calls are not hooked: they return twice, or on another stack, or
 * share the caller's (vfork), or never return (a scope left open until the end), or
 * unwind, or are the loader's and ticktrace's own business. */
static const char *const tt__libcalls_left[] = {
	"setjmp", "_setjmp", "sigsetjmp", "__sigsetjmp", "vfork", "getcontext", "setcontext",
	"swapcontext", "makecontext", "__libc_start_main", "__cxa_finalize", "dlopen", "dlclose",
	"dlsym", "dlvsym", "dladdr", "dladdr1", "dl_iterate_phdr", "__tls_get_addr",
	"exit", "_exit", "_Exit", "quick_exit", "abort", "pthread_exit", "longjmp", "_longjmp",
	"siglongjmp", "__longjmp_chk", "__stack_chk_fail", "__assert_fail", "__fortify_fail",
	"err", "errx", "verr", "verrx", "__cxa_throw", "__cxa_rethrow", "_Unwind_Resume",
	"_Unwind_RaiseException", "_Unwind_ForcedUnwind", "__cxa_end_catch", "__cxa_begin_catch",
};

/* Prefixes of the same: ticktrace's and the compiler's hooks, a sanitizer's runtime. */
static const char *const tt__libcalls_left_prefixes[] = {
	"tt_", "__cyg_profile_", "__asan_", "__ubsan_", "__tsan_", "__lsan_", "__msan_", "__sanitizer_",
};

static int tt__libcalls_hooked(const char *name)
{
	for (size_t i = 0; i < sizeof tt__libcalls_left_prefixes / sizeof tt__libcalls_left_prefixes[0]; i++)
		if (strncmp(name, tt__libcalls_left_prefixes[i], strlen(tt__libcalls_left_prefixes[i])) == 0)
			return 0;
	for (size_t i = 0; i < sizeof tt__libcalls_left / sizeof tt__libcalls_left[0]; i++)
		if (strcmp(name, tt__libcalls_left[i]) == 0)
			return 0;
	return 1;
}

struct tt__libcalls_program {
	uintptr_t base, low, high;     /* its load bias, and the range its segments span */
	uintptr_t relro, relro_end;    /* PT_GNU_RELRO: read-only once relocated */
	const ElfW(Dyn) *dynamic;
};

static int tt__libcalls_main(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct tt__libcalls_program *p = data;
	p->base = info->dlpi_addr;
	p->low = UINTPTR_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
		if (ph->p_type == PT_LOAD) {
			p->low = start < p->low ? start : p->low;
			p->high = end > p->high ? end : p->high;
		} else if (ph->p_type == PT_DYNAMIC) {
			p->dynamic = (const ElfW(Dyn) *)start;
		} else if (ph->p_type == PT_GNU_RELRO) {
			p->relro = start;
			p->relro_end = end;
		}
	}
	return 1; /* the first is the program */
}

/* A dynamic entry's address: the loader has relocated some of them in place. */
static uintptr_t tt__libcalls_ptr(const struct tt__libcalls_program *p, uintptr_t v)
{
	return v < p->base ? v + p->base : v;
}

/* The version of symbol `index` the program needs (memcpy@GLIBC_2.2.5 where it was
 * linked so), or NULL. */
static const char *tt__libcalls_version(uintptr_t strtab, uintptr_t versym, uintptr_t verneed,
					size_t verneednum, size_t index)
{
	if (!versym || !verneed)
		return NULL;
	ElfW(Half) ver = ((const ElfW(Versym) *)versym)[index] & 0x7fff;
	const char *at = (const char *)verneed;
	for (size_t i = 0; ver > 1 && i < verneednum; i++) {
		const ElfW(Verneed) *need = (const ElfW(Verneed) *)at;
		const char *aux_at = at + need->vn_aux;
		for (unsigned j = 0; j < need->vn_cnt; j++) {
			const ElfW(Vernaux) *aux = (const ElfW(Vernaux) *)aux_at;
			if (aux->vna_other == ver)
				return (const char *)strtab + aux->vna_name;
			aux_at += aux->vna_next;
		}
		at += need->vn_next;
	}
	return NULL;
}

/* Whether TICKTRACE_LIBCALLS asks for the library calls; by default, in the
 * zero-markup build (`every_sled`), which records every call, and not under record
 * -f, whose patterns say what to record. */
int tt__detour_libcalls_wanted(int every_sled)
{
	const char *env = getenv(TT_ENV_LIBCALLS);
	return env && *env ? strcmp(env, "0") != 0 : every_sled;
}

/* Points the program's PLT slots at stubs; how many, or -errno. */
int tt__detour_library_calls(struct tt__detour *d)
{
	struct tt__libcalls_program p = {0};
	dl_iterate_phdr(tt__libcalls_main, &p);
	uintptr_t jmprel = 0, strtab = 0, symtab = 0, versym = 0, verneed = 0;
	size_t pltrelsz = 0, verneednum = 0;
	for (const ElfW(Dyn) *dyn = p.dynamic; dyn && dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_JMPREL)
			jmprel = tt__libcalls_ptr(&p, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_PLTRELSZ)
			pltrelsz = dyn->d_un.d_val;
		else if (dyn->d_tag == DT_STRTAB)
			strtab = tt__libcalls_ptr(&p, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_SYMTAB)
			symtab = tt__libcalls_ptr(&p, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_VERSYM)
			versym = tt__libcalls_ptr(&p, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_VERNEED)
			verneed = tt__libcalls_ptr(&p, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_VERNEEDNUM)
			verneednum = dyn->d_un.d_val;
	}
	size_t n = jmprel && strtab && symtab ? pltrelsz / sizeof(ElfW(Rela)) : 0;
	if (!n)
		return 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t stub_size = (sizeof(struct tt__detour_stub) + 15) & ~(size_t)15;
	size_t area = (n * stub_size + page - 1) / page * page;
	uint8_t *stubs = mmap(NULL, area, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stubs == MAP_FAILED)
		return -errno;
	static const uint8_t code[12] = {
		0xff, 0x35, 0xda, 0xff, 0xff, 0xff, /* push qword [rip - 38]: self */
		0xff, 0x25, 0xec, 0xff, 0xff, 0xff, /* jmp [rip - 20]: entry */
	};
	size_t hooked = 0;
	const ElfW(Rela) *rela = (const ElfW(Rela) *)jmprel;
	const ElfW(Sym) *syms = (const ElfW(Sym) *)symtab;
	uintptr_t *slots[n];
	uintptr_t targets[n];
	if (!(d->libcalls = calloc(n, sizeof *d->libcalls))) {
		munmap(stubs, area);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (ELF64_R_TYPE(rela[i].r_info) != R_X86_64_JUMP_SLOT)
			continue;
		const ElfW(Sym) *sym = &syms[ELF64_R_SYM(rela[i].r_info)];
		const char *name = (const char *)strtab + sym->st_name;
		uintptr_t *slot = (uintptr_t *)(p.base + rela[i].r_offset);
		if (!*name || !tt__libcalls_hooked(name))
			continue;
		/* Bound already (-z now), or found as the loader would bind it: the version
		 * the program needs */
		uintptr_t target = *slot;
		if (target >= p.low && target < p.high) {
			size_t index = ELF64_R_SYM(rela[i].r_info);
			const char *version = tt__libcalls_version(strtab, versym, verneed, verneednum, index);
			target = (uintptr_t)(version ? dlvsym(RTLD_DEFAULT, name, version) : dlsym(RTLD_DEFAULT, name));
		}
		/* (a program not position-independent defines a function whose address it
		 * takes at its PLT entry, which dlsym finds: that goes through the slot, to the
		 * stub, and round again) */
		Dl_info where;
		if (!target || (target >= p.low && target < p.high) || !dladdr((void *)target, &where) ||
		    !where.dli_fname ||
		    strstr(where.dli_fname, "libticktrace"))
			continue; /* (ticktrace's own, such as pthread_create: its calls stay its own) */
		char *named; /* as the tools name it, and TT_ENV_EXCLUDE may */
		if (asprintf(&named, "%s@%s", name, tt__detour_base(where.dli_fname)) < 0)
			continue;
		if (tt__detour_excluded(d, named, NULL)) {
			free(named);
			continue;
		}
		d->libcalls[d->nlibcalls++] =
			(struct tt__patched_function){.address = (uintptr_t)slot | TT_FUNC_LIBRARY_CALL, .name = named};
		struct tt__detour_stub *stub = (struct tt__detour_stub *)(stubs + hooked * stub_size);
		*stub = (struct tt__detour_stub){
			.self = (uintptr_t)stub,
			.word = TT__DETOUR_ENTER_WORD((uintptr_t)slot | TT_FUNC_LIBRARY_CALL),
			.go_on = target,
			.entry = (uintptr_t)tt__detour_entry,
		};
		memcpy(stub->code, code, sizeof code);
		slots[hooked] = slot;
		targets[hooked++] = (uintptr_t)stub->code;
	}
	if (mprotect(stubs, area, PROT_READ | PROT_EXEC) != 0) {
		int err = errno;
		munmap(stubs, area);
		return -err;
	}
	if (d->listing) /* (record --list: nothing written) */
		return (int)hooked;
	for (size_t i = 0; i < hooked; i++) {
		uintptr_t at = (uintptr_t)slots[i] & ~(uintptr_t)(page - 1);
		int relro = (uintptr_t)slots[i] >= p.relro && (uintptr_t)slots[i] < p.relro_end;
		if (relro && mprotect((void *)at, page, PROT_READ | PROT_WRITE) != 0)
			return -errno;
		__atomic_store_n(slots[i], targets[i], __ATOMIC_RELEASE);
		if (relro)
			mprotect((void *)at, page, PROT_READ);
		const struct tt__detour_stub *stub = (const struct tt__detour_stub *)(stubs + i * stub_size);
		tt__detour_undoable(TT_RECORD_PAYLOAD(stub->word), (uintptr_t)slots[i], &stub->go_on,
				    sizeof stub->go_on, relro);
	}
	return (int)hooked;
}
