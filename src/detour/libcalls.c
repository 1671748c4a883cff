/* The calls the program makes into shared libraries (fopen, fread, malloc), recorded
 * without naming each (TICKTRACE_LIBCALLS): each GOT slot the program calls through,
 * its PLT's (R_X86_64_JUMP_SLOT) and, built with -fno-plt, those its code calls
 * (R_X86_64_GLOB_DAT, `call *fopen@GOTPCREL(%rip)`), is pointed at a stub of its own,
 * which enters the trampolines as a patched function's does and goes on to the
 * function the slot would have reached. A GOT slot the code also reads the function's
 * address from (`mov puts@GOTPCREL(%rip)`: a pointer the program may compare with the
 * library's) keeps it: the calls through it are rewritten instead, each `call *slot`
 * and `jmp *slot` (-fno-plt's, and the .plt.got entries ld makes for a function both
 * called and whose address is taken) made a direct call or jump to the stub. So are the slots of the program's own
 * libraries whose functions are recorded (a program whose work is in its .so), or of
 * all its libraries but the C runtime's when asked. The function itself is not
 * touched, so the calls from elsewhere (the C library's own, ticktrace's) are not
 * recorded. The record's word names the GOT slot, with TT_FUNC_LIBRARY_CALL: the
 * tools name it IMPORT@LIBRARY from the relocation there (an IFUNC such as memcpy, or
 * an alias such as fopen's _IO_fopen, would be named otherwise by the address it
 * reaches). Before main, while no other thread runs (detour.c), and for a library
 * loaded later as dlopen returns (dlopen.c). */
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

/* A module as the loader mapped it. */
struct tt__libcalls_object {
	uintptr_t base, low, high;     /* its load bias, and the range its segments span */
	uintptr_t relro, relro_end;    /* PT_GNU_RELRO: read-only once relocated */
	const ElfW(Dyn) *dynamic;
	const ElfW(Phdr) *phdr;
	int phnum;
};

struct tt__libcalls_objects {
	struct tt__libcalls_object *at;
	size_t n;
	int out_of_memory;
};

static int tt__libcalls_object_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct tt__libcalls_objects *all = data;
	struct tt__libcalls_object *grown = realloc(all->at, (all->n + 1) * sizeof *grown);
	if (!grown)
		return all->out_of_memory = 1;
	all->at = grown;
	struct tt__libcalls_object *o = &grown[all->n++];
	*o = (struct tt__libcalls_object){.base = info->dlpi_addr, .low = UINTPTR_MAX,
					  .phdr = info->dlpi_phdr, .phnum = info->dlpi_phnum};
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
		if (ph->p_type == PT_LOAD) {
			o->low = start < o->low ? start : o->low;
			o->high = end > o->high ? end : o->high;
		} else if (ph->p_type == PT_DYNAMIC) {
			o->dynamic = (const ElfW(Dyn) *)start;
		} else if (ph->p_type == PT_GNU_RELRO) {
			o->relro = start;
			o->relro_end = end;
		}
	}
	return 0;
}

/* A dynamic entry's address: the loader has relocated some of them in place. */
static uintptr_t tt__libcalls_ptr(const struct tt__libcalls_object *o, uintptr_t v)
{
	return v < o->base ? v + o->base : v;
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

/* What TICKTRACE_LIBCALLS asks for; by default, in the zero-markup build
 * (`every_sled`), which records every call, the calls of the modules recorded, and
 * none under record -f, whose patterns say what to record. */
int tt__detour_libcalls_wanted(int every_sled)
{
	const char *env = getenv(TT_ENV_LIBCALLS);
	if (!env || !*env)
		return every_sled ? TT__LIBCALLS_RECORDED : TT__LIBCALLS_NONE;
	if (strcmp(env, "0") == 0)
		return TT__LIBCALLS_NONE;
	if (strcmp(env, "all") == 0)
		return TT__LIBCALLS_ALL;
	if (strcmp(env, "1") != 0)
		fprintf(tt__log(), "ticktrace: %s=%s is not 0, 1 or all: taken as 1\n", TT_ENV_LIBCALLS, env);
	return TT__LIBCALLS_RECORDED;
}

/* Libraries of the C and C++ runtimes beside the C library: their calls are the
 * runtime's business (operator new's malloc), not the program's. */
static int tt__libcalls_runtime(const char *path)
{
	static const char *const prefixes[] = {"libm.so", "libmvec.", "libpthread.", "libdl.", "librt.",
					       "libresolv.", "libutil.", "libanl.", "libstdc++.", "libc++.",
					       "libc++abi.", "libatomic."};
	const char *base = tt__detour_base(path);
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

/* Whether the calls out of object `o` are hooked: the program's always; a library's
 * when it is the program's (not the loader's, the C runtime's, ticktrace's, nor one
 * only ticktrace needs) and `wanted` takes it: every such library, or those whose
 * functions are recorded (patched, or calling -finstrument-functions' hooks). */
static int tt__libcalls_chosen(const struct tt__detour *d, const struct tt__libcalls_object *o,
			       int program, int wanted)
{
	if (program)
		return 1;
	for (size_t i = 0; i < d->nmodules; i++) {
		const struct tt__detour_module *m = &d->modules[i];
		if (o->low < m->low || o->low >= m->high)
			continue;
		if (!m->programs || tt__libcalls_runtime(m->path))
			return 0;
		if (wanted == TT__LIBCALLS_ALL || m->calls_hooks)
			return 1;
		for (size_t f = 0; f < d->nfns; f++)
			if (d->fns[f].module == i && !d->fns[f].watch)
				return 1;
		return 0;
	}
	return 0;
}

static int tt__libcalls_cmp_fn(const void *key, const void *fn)
{
	uintptr_t a = *(const uintptr_t *)key, b = ((const struct tt__detour_fn *)fn)->addr;
	return (a > b) - (a < b);
}

/* Whether `target` is where a function to be patched starts (d->fns: sorted by
 * address, one a place; with -fcf-protection, its NOPs after its endbr64), or one
 * patched before this dlopen: its own record names the call. */
static int tt__libcalls_recorded(const struct tt__detour *d, uintptr_t target)
{
	static const uint8_t endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
	uintptr_t nops = memcmp((const void *)target, endbr64, sizeof endbr64) == 0 ? target + sizeof endbr64 : target;
	for (int i = 0; i < 2; i++) {
		uintptr_t at = i ? nops : target;
		const struct tt__detour_fn *fn =
			d->nfns ? bsearch(&at, d->fns, d->nfns, sizeof *d->fns, tt__libcalls_cmp_fn) : NULL;
		if ((fn && !fn->watch) || tt__detour_patched_before(at))
			return 1;
	}
	return 0;
}


/* What the code of `o` does with a GOT slot: calls or jumps through it (ff 15 / ff 25
 * and a rip-relative slot: a -fno-plt call, a .plt.got entry), reads it otherwise (the
 * function's address loaded: mov, push, cmp), or both. */
enum { TT__GOT_CALLED = 1, TT__GOT_READ = 2 };

/* A call or jump through a GOT slot: the ff of `call *slot(%rip)` / `jmp *slot(%rip)`. */
struct tt__libcalls_site {
	uintptr_t at;
	uintptr_t segment; /* where its code's segment starts */
	size_t slot; /* its index among the slots asked about */
};

struct tt__libcalls_uses {
	uint8_t *uses; /* TT__GOT_*, for each slot asked about */
	struct tt__libcalls_site *sites; /* by address */
	size_t nsites;
};

/* How the code of `o` uses each of `slots` (`n`), into `u`; 0 or -ENOMEM. The code is
 * read byte by byte, not decoded: a site is checked before it is patched
 * (tt__libcalls_sure). */
static int tt__libcalls_uses(const struct tt__libcalls_object *o, uintptr_t *const *slots, size_t n,
			     struct tt__libcalls_uses *u)
{
	*u = (struct tt__libcalls_uses){.uses = calloc(n + 1, 1)};
	if (!u->uses)
		return -ENOMEM;
	uintptr_t first = UINTPTR_MAX, last = 0;
	for (size_t i = 0; i < n; i++) {
		first = (uintptr_t)slots[i] < first ? (uintptr_t)slots[i] : first;
		last = (uintptr_t)slots[i] > last ? (uintptr_t)slots[i] : last;
	}
	if (!n)
		return 0;
	/* by slot (GOT entries are 8 bytes apart): its uses, and which of `slots` it is */
	size_t span = (last - first) / sizeof(uintptr_t) + 1, cap = 0;
	uint8_t *seen = calloc(span, 1);
	size_t *index = calloc(span, sizeof *index);
	if (!seen || !index) {
		free(seen), free(index), free(u->uses);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		index[((uintptr_t)slots[i] - first) / sizeof(uintptr_t)] = i;
	for (int p = 0; p < o->phnum; p++) {
		const ElfW(Phdr) *ph = &o->phdr[p];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || !(ph->p_flags & PF_R) || ph->p_filesz < 6)
			continue;
		const uint8_t *code = (const uint8_t *)(o->base + ph->p_vaddr);
		for (size_t at = 2; at + 4 <= ph->p_filesz; at++) {
			int32_t disp;
			memcpy(&disp, code + at, sizeof disp);
			uintptr_t next = (uintptr_t)(code + at + 4), target = next + (intptr_t)disp;
			if (target - (first - 4) > last - (first - 4))
				continue; /* (nearly every place: one test) */
			/* (an immediate after the displacement moves the target on: 1, 2 or 4) */
			for (uintptr_t imm = 0; imm <= 4; imm += imm == 2 ? 2 : 1) {
				uintptr_t slot = target + imm;
				if (slot < first || slot > last || (slot - first) % sizeof(uintptr_t))
					continue;
				size_t k = (slot - first) / sizeof(uintptr_t);
				int call = !imm && code[at - 2] == 0xff && (code[at - 1] == 0x15 || code[at - 1] == 0x25);
				seen[k] |= call ? TT__GOT_CALLED : TT__GOT_READ;
				if (!call)
					continue;
				if (u->nsites == cap) {
					cap = cap ? 2 * cap : 64;
					struct tt__libcalls_site *more = realloc(u->sites, cap * sizeof *more);
					if (!more) {
						free(seen), free(index), free(u->sites), free(u->uses);
						return -ENOMEM;
					}
					u->sites = more;
				}
				u->sites[u->nsites++] = (struct tt__libcalls_site){(uintptr_t)(code + at - 2),
										   (uintptr_t)code, index[k]};
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		u->uses[i] = seen[((uintptr_t)slots[i] - first) / sizeof(uintptr_t)];
	free(seen), free(index);
	return 0;
}

struct tt__libcalls_slot {
	uintptr_t *slot;
	size_t sym;      /* its symbol's index */
	int by_sites;    /* the code also reads it: its call sites are patched, not it */
	uintptr_t stub;  /* its stub (struct tt__detour_stub), 0: not hooked */
};

/* The slots of `o` to hook: its PLT's (R_X86_64_JUMP_SLOT), and those of its GOT a
 * -fno-plt call or a .plt.got entry goes through (R_X86_64_GLOB_DAT of a function,
 * called; when the code also reads its address, `by_sites`); how many, into `*out`
 * (malloc'd), and the calls through GOT slots into `*uses`; or -ENOMEM. */
static ssize_t tt__libcalls_slots(const struct tt__libcalls_object *o, uintptr_t jmprel, size_t pltrelsz,
				  uintptr_t rel, size_t relsz, const ElfW(Sym) *syms, uintptr_t strtab,
				  struct tt__libcalls_slot **out, struct tt__libcalls_uses *uses)
{
	size_t nplt = jmprel ? pltrelsz / sizeof(ElfW(Rela)) : 0, ngot = rel ? relsz / sizeof(ElfW(Rela)) : 0;
	struct tt__libcalls_slot *slots = malloc((nplt + ngot + 1) * sizeof *slots);
	uintptr_t **got = malloc((ngot + 1) * sizeof *got);
	size_t *got_sym = malloc((ngot + 1) * sizeof *got_sym);
	size_t n = 0, ncandidates = 0;
	if (!slots || !got || !got_sym) {
		free(slots), free(got), free(got_sym);
		return -ENOMEM;
	}
	const ElfW(Rela) *plt = (const ElfW(Rela) *)jmprel, *dyn = (const ElfW(Rela) *)rel;
	for (size_t i = 0; i < nplt; i++)
		if (ELF64_R_TYPE(plt[i].r_info) == R_X86_64_JUMP_SLOT)
			slots[n++] = (struct tt__libcalls_slot){.slot = (uintptr_t *)(o->base + plt[i].r_offset),
								 .sym = ELF64_R_SYM(plt[i].r_info)};
	for (size_t i = 0; i < ngot; i++) {
		size_t sym = ELF64_R_SYM(dyn[i].r_info);
		int type = ELF64_ST_TYPE(syms[sym].st_info);
		uintptr_t *slot = (uintptr_t *)(o->base + dyn[i].r_offset);
		/* (left alone before the code is read: most programs' are only the weak
		 * references the C runtime's start files make, unbound or never hooked) */
		if (ELF64_R_TYPE(dyn[i].r_info) != R_X86_64_GLOB_DAT || syms[sym].st_shndx != SHN_UNDEF ||
		    type == STT_OBJECT || type == STT_TLS || type == STT_COMMON || !*slot ||
		    !tt__libcalls_hooked((const char *)strtab + syms[sym].st_name))
			continue;
		got[ncandidates] = slot;
		got_sym[ncandidates++] = sym;
	}
	if (tt__libcalls_uses(o, got, ncandidates, uses) < 0) {
		free(slots), free(got), free(got_sym);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ncandidates; i++) {
		size_t kept = uses->uses[i] & TT__GOT_CALLED ? n : SIZE_MAX;
		if (kept != SIZE_MAX)
			slots[n++] = (struct tt__libcalls_slot){
				.slot = got[i], .sym = got_sym[i], .by_sites = uses->uses[i] & TT__GOT_READ};
		got_sym[i] = kept; /* (now: the candidate's index among `slots`) */
	}
	for (size_t s = 0; s < uses->nsites; s++)
		uses->sites[s].slot = got_sym[uses->sites[s].slot];
	free(got), free(got_sym);
	*out = slots;
	return (ssize_t)n;
}

/* Whether the call or jump through a GOT slot at `one` (its ff) may be rewritten:
 * an instruction of a function of module `m` (decoded from the function's start:
 * not bytes inside another instruction, nor after a prefix of its own), or the jump of
 * a .plt.got entry, which no symbol covers (its layout checked: ld's, without and with
 * -z ibt). */
static int tt__libcalls_sure(const struct tt__detour_module *m, const struct tt__libcalls_site *one)
{
	uintptr_t site = one->at;
	size_t lo = 0, hi = m ? m->nsyms : 0;
	while (lo < hi) { /* (the first symbol after the site) */
		size_t mid = (lo + hi) / 2;
		if (m->syms[mid].addr <= site)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i > 0 && m->syms[i - 1].reach > site; i--) {
		const struct tt__detour_sym *s = &m->syms[i - 1];
		if (s->end > site)
			return tt__detour_starts_instruction((const uint8_t *)s->addr, s->end - s->addr,
							     site - s->addr);
	}
	static const uint8_t endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
	const uint8_t *at = (const uint8_t *)site;
	return at[1] == 0x25 && site >= one->segment + 5 &&
	       ((site % 8 == 0 && at[6] == 0x66 && at[7] == 0x90) ||                   /* jmp; xchg ax, ax */
		((site - 4) % 16 == 0 && memcmp(at - 4, endbr64, sizeof endbr64) == 0) || /* endbr64; jmp */
		((site - 5) % 16 == 0 && at[-1] == 0xf2 && memcmp(at - 5, endbr64, sizeof endbr64) == 0));
}

/* Rewrites the call or jump through a GOT slot at `site` into a direct one to `stub`,
 * as ld relaxes a -fno-plt call it binds locally (`addr32 call`: one instruction of the
 * same six bytes, so the return address stays; `jmp; nop`); 0, or -1 when the stub is
 * out of reach or the code cannot be written. The bytes it held into `was`. */
static int tt__libcalls_rewrite(uintptr_t site, uintptr_t stub, int listing, uint8_t was[6])
{
	int call = ((const uint8_t *)site)[1] == 0x15;
	uint8_t now[6];
	int32_t disp;
	if (!tt__detour_reach(stub, site + (call ? 6 : 5), &disp))
		return -1;
	memcpy(was, (const void *)site, 6);
	now[0] = call ? 0x67 : 0xe9;
	now[1] = call ? 0xe8 : 0;
	memcpy(now + (call ? 2 : 1), &disp, sizeof disp);
	if (!call)
		now[5] = 0x90;
	return listing || tt__detour_write_code(site, now, sizeof now) == 0 ? 0 : -1;
}

/* Points slot `s` of `o` at its stub, or (`by_sites`) its call sites `sites` at it;
 * each remembered to be undone. Whether any was. */
static int tt__libcalls_point(const struct tt__detour *d, const struct tt__libcalls_object *o,
			      const struct tt__libcalls_slot *s, size_t index,
			      const struct tt__libcalls_uses *uses, const struct tt__detour_stub *stub)
{
	unsigned later = d->later ? TT__UNDO_LATER : 0;
	uint64_t payload = TT_RECORD_PAYLOAD(stub->word);
	if (s->by_sites) {
		const struct tt__detour_module *m = NULL;
		for (size_t i = 0; i < d->nmodules && !m; i++)
			m = o->low >= d->modules[i].low && o->low < d->modules[i].high ? &d->modules[i] : NULL;
		int any = 0;
		for (size_t i = 0; i < uses->nsites; i++) {
			uint8_t was[6];
			if (uses->sites[i].slot != index || !tt__libcalls_sure(m, &uses->sites[i]) ||
			    tt__libcalls_rewrite(uses->sites[i].at, (uintptr_t)stub->code, d->listing, was) < 0)
				continue;
			any = 1;
			if (!d->listing)
				tt__detour_undoable(payload, uses->sites[i].at, was, sizeof was, later);
		}
		return any;
	}
	if (d->listing) /* (record --list: nothing written) */
		return 1;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), at = (uintptr_t)s->slot & ~(page - 1);
	int relro = (uintptr_t)s->slot >= o->relro && (uintptr_t)s->slot < o->relro_end;
	if (relro && mprotect((void *)at, page, PROT_READ | PROT_WRITE) != 0)
		return 0;
	__atomic_store_n(s->slot, (uintptr_t)stub->code, __ATOMIC_RELEASE);
	if (relro)
		mprotect((void *)at, page, PROT_READ);
	tt__detour_undoable(payload, (uintptr_t)s->slot, &stub->go_on, sizeof stub->go_on,
			    TT__UNDO_SLOT | (relro ? TT__UNDO_RELRO : 0) | later);
	return 1;
}

/* Points the chosen slots of object `o`, or their call sites, at stubs; how many, or
 * -errno. */
static int tt__libcalls_object(struct tt__detour *d, const struct tt__libcalls_object *o)
{
	uintptr_t jmprel = 0, rel = 0, strtab = 0, symtab = 0, versym = 0, verneed = 0;
	size_t pltrelsz = 0, relsz = 0, verneednum = 0;
	for (const ElfW(Dyn) *dyn = o->dynamic; dyn && dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_JMPREL)
			jmprel = tt__libcalls_ptr(o, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_PLTRELSZ)
			pltrelsz = dyn->d_un.d_val;
		else if (dyn->d_tag == DT_RELA)
			rel = tt__libcalls_ptr(o, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_RELASZ)
			relsz = dyn->d_un.d_val;
		else if (dyn->d_tag == DT_STRTAB)
			strtab = tt__libcalls_ptr(o, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_SYMTAB)
			symtab = tt__libcalls_ptr(o, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_VERSYM)
			versym = tt__libcalls_ptr(o, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_VERNEED)
			verneed = tt__libcalls_ptr(o, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_VERNEEDNUM)
			verneednum = dyn->d_un.d_val;
	}
	if (!strtab || !symtab || (!jmprel && !rel))
		return 0;
	const ElfW(Sym) *syms = (const ElfW(Sym) *)symtab;
	struct tt__libcalls_slot *found;
	struct tt__libcalls_uses uses;
	ssize_t n = tt__libcalls_slots(o, jmprel, pltrelsz, rel, relsz, syms, strtab, &found, &uses);
	if (n <= 0) {
		if (n == 0)
			free(found), free(uses.uses), free(uses.sites);
		return (int)n;
	}
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t stub_size = (sizeof(struct tt__detour_stub) + 15) & ~(size_t)15;
	size_t area = ((size_t)n * stub_size + page - 1) / page * page;
	/* (near the object: a call site rewritten reaches its stub with 32 bits) */
	uint8_t *stubs = tt__detour_near(o->low, o->high, area);
	if (!stubs) /* (the slots can still be pointed at them) */
		stubs = mmap(NULL, area, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	stubs = stubs == MAP_FAILED ? NULL : stubs;
	struct tt__patched_function *named = realloc(d->libcalls, (d->nlibcalls + (size_t)n) * sizeof *named);
	if (named)
		d->libcalls = named;
	if (!stubs || !named || tt__detour_keep_area(d, o->low, stubs, area) < 0) {
		if (stubs)
			munmap(stubs, area);
		free(found), free(uses.uses), free(uses.sites);
		return -ENOMEM;
	}
	static const uint8_t code[12] = {
		0xff, 0x35, 0xda, 0xff, 0xff, 0xff, /* push qword [rip - 38]: self */
		0xff, 0x25, 0xec, 0xff, 0xff, 0xff, /* jmp [rip - 20]: entry */
	};
	size_t hooked = 0;
	for (ssize_t i = 0; i < n; i++) {
		const char *name = (const char *)strtab + syms[found[i].sym].st_name;
		uintptr_t *slot = found[i].slot;
		if (!*name || !tt__libcalls_hooked(name))
			continue;
		/* Bound already (-z now, or a GOT slot), or found as the loader would bind it:
		 * the version the object needs */
		uintptr_t target = *slot;
		if (target >= o->low && target < o->high) {
			const char *version = tt__libcalls_version(strtab, versym, verneed, verneednum, found[i].sym);
			target = (uintptr_t)(version ? dlvsym(RTLD_DEFAULT, name, version) : dlsym(RTLD_DEFAULT, name));
		}
		/* (a program not position-independent defines a function whose address it
		 * takes at its PLT entry, which dlsym finds: that goes through the slot, to the
		 * stub, and round again; a library's call of its own exported function is its
		 * own business; a function patched records its calls itself) */
		/* (its module by _dl_find_object: dladdr reads all its symbols, 40 us in the C
		 * library, a zstd start-up's 86 of them 3.5 ms; dladdr names the program argv[0]) */
		struct dl_find_object where;
		const char *file = NULL;
		if (target && _dl_find_object((void *)target, &where) == 0)
			file = where.dlfo_link_map->l_name[0] ? where.dlfo_link_map->l_name : program_invocation_name;
		if (!target || (target >= o->low && target < o->high) || tt__libcalls_recorded(d, target) ||
		    !file || strstr(file, "libticktrace"))
			continue; /* (ticktrace's own, such as pthread_create: its calls stay its own) */
		char *as_named; /* as the tools name it, and TT_ENV_EXCLUDE may */
		if (asprintf(&as_named, "%s@%s", name, tt__detour_base(file)) < 0)
			continue;
		if (tt__detour_excluded(d, as_named, NULL)) {
			free(as_named);
			continue;
		}
		d->libcalls[d->nlibcalls++] = (struct tt__patched_function){
			.address = (uintptr_t)slot | TT_FUNC_LIBRARY_CALL, .name = as_named};
		struct tt__detour_stub *stub = (struct tt__detour_stub *)(stubs + hooked * stub_size);
		*stub = (struct tt__detour_stub){
			.self = (uintptr_t)stub,
			.word = TT__DETOUR_ENTER_WORD((uintptr_t)slot | TT_FUNC_LIBRARY_CALL),
			.go_on = target,
			.entry = (uintptr_t)tt__detour_entry,
		};
		memcpy(stub->code, code, sizeof code);
		found[i].stub = (uintptr_t)stub;
		hooked++;
	}
	int pointed = 0;
	if (hooked && mprotect(stubs, area, PROT_READ | PROT_EXEC) == 0)
		for (ssize_t i = 0; i < n; i++)
			pointed += found[i].stub &&
				   tt__libcalls_point(d, o, &found[i], (size_t)i, &uses,
						      (const struct tt__detour_stub *)found[i].stub);
	free(found), free(uses.uses), free(uses.sites);
	return pointed;
}

ssize_t tt__detour_objects(struct tt__detour_object **out)
{
	struct tt__libcalls_objects all = {0};
	dl_iterate_phdr(tt__libcalls_object_cb, &all);
	*out = all.out_of_memory ? NULL : calloc(all.n + 1, sizeof **out);
	for (size_t i = 0; *out && i < all.n; i++)
		(*out)[i] = (struct tt__detour_object){.dynamic = all.at[i].dynamic,
						       .range = {all.at[i].low, all.at[i].high}};
	free(all.at);
	return *out ? (ssize_t)all.n : -ENOMEM;
}

/* Points the PLT and GOT slots of the program, and of the libraries `wanted` takes, at
 * stubs (at a dlopen, d->later: of the libraries it brought alone); how many, or
 * -errno. */
int tt__detour_library_calls(struct tt__detour *d, int wanted)
{
	struct tt__libcalls_objects all = {0};
	dl_iterate_phdr(tt__libcalls_object_cb, &all);
	int hooked = all.out_of_memory ? -ENOMEM : 0;
	for (size_t i = 0; i < all.n && hooked >= 0; i++) {
		/* (the first is the program) */
		if (!tt__libcalls_chosen(d, &all.at[i], i == 0 && !d->later, wanted))
			continue;
		int n = tt__libcalls_object(d, &all.at[i]);
		hooked = n < 0 ? n : hooked + n;
	}
	free(all.at);
	return hooked;
}
