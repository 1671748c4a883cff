/* libticktrace-detour: records the calls of functions of a program that was not
 * built for it, by patching their entries before main (`ticktrace record -f`).
 *
 * TICKTRACE_DETOUR holds the patterns, one a line: shell globs over the symbol names
 * of the program and its libraries (as elfutils finds them, debug info by build-id
 * included; a stripped program's functions no symbol names as `prog+0xOFFSET`, from
 * its .eh_frame), or 0xADDR, an address of the program as `nm` or the converter's
 * `module+0xOFFSET` print it (its extent comes from .eh_frame; symbols.c finds
 * them). Without patterns, in a program that links this library (the zero-markup
 * build: ticktrace-instrument.pc), every function with -fpatchable-function-entry NOPs
 * at its entry, in modules not built with -finstrument-functions (whose hooks record).
 * TT_ENV_DETOUR_LIST: what would be patched is printed, nothing patched. The constructor patches each function found
 * with a jump to its stub, near its module (trampoline.asm), if the process is still
 * single-threaded (tt__detour_others says why):
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
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "detour.h"

__thread struct tt__detour_shadow tt__detour_shadow;
intptr_t tt__detour_shadow_offset;

/* Bytes a patch overwrites at most (whole instructions covering TT__DETOUR_PATCH). */
#define TT__DETOUR_PATCH_MAX 32

/* Calls a thread's shadow stack holds: deeper ones are not recorded (counted). Under
 * an address-space limit (ulimit -v), fewer: a thread's takes at most
 * 1/TT__DETOUR_SHADOW_ROOM_PART of the room left, so that the program keeps it. */
#define TT__DETOUR_SHADOW_FRAMES (1u << 20)
#define TT__DETOUR_SHADOW_ROOM_PART 64
#define TT__DETOUR_SHADOW_FRAMES_MIN 256u

static uint64_t tt__detour_too_deep; /* calls not recorded: shadow stack full */
static uint32_t tt__detour_fewest_frames; /* the smallest shadow stack given, in calls */
static uint64_t tt__detour_no_room; /* calls not recorded: no shadow stack to be had */
static pthread_key_t tt__detour_key;

static void tt__detour_thread_exit(void *base)
{
	munmap(base, (size_t)((char *)tt__detour_shadow.end - (char *)base));
	tt__detour_shadow.top = tt__detour_shadow.end = NULL;
}

/* The calls a new shadow stack holds: fewer under an address-space limit, 0 when not
 * even TT__DETOUR_SHADOW_FRAMES_MIN fit its share. */
static uint32_t tt__detour_shadow_frames(void)
{
	uint64_t room = tt__address_room();
	if (room == UINT64_MAX)
		return TT__DETOUR_SHADOW_FRAMES;
	uint64_t frames = room / TT__DETOUR_SHADOW_ROOM_PART / sizeof(struct tt__detour_frame);
	return frames >= TT__DETOUR_SHADOW_FRAMES ? TT__DETOUR_SHADOW_FRAMES :
	       frames >= TT__DETOUR_SHADOW_FRAMES_MIN ? (uint32_t)frames : 0;
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
	uint32_t frames = tt__detour_shadow_frames();
	size_t bytes = (size_t)frames * sizeof(struct tt__detour_frame);
	struct tt__detour_frame *base = frames ? mmap(NULL, bytes, PROT_READ | PROT_WRITE,
						      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) :
						 MAP_FAILED;
	if (base == MAP_FAILED) {
		errno = saved;
		__atomic_add_fetch(&tt__detour_no_room, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	uint32_t fewest = __atomic_load_n(&tt__detour_fewest_frames, __ATOMIC_RELAXED);
	while ((!fewest || frames < fewest) &&
	       !__atomic_compare_exchange_n(&tt__detour_fewest_frames, &fewest, frames, 0,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	base[0] = (struct tt__detour_frame){.slot = UINTPTR_MAX}; /* the sentinel */
	pthread_setspecific(tt__detour_key, base);
	sh->end = base + frames;
	sh->top = base + 1;
	errno = saved;
	return sh->top;
}

/* A patched function returned to where no call of the thread's shadow stack left its
 * return address. */
_Noreturn void tt__detour_lost(uintptr_t slot)
{
	fprintf(tt__log(), "ticktrace: a patched function returned through 0x%" PRIxPTR ", where no "
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

/* Memory for a module's stubs within 32-bit reach of all of it; 0 or -errno. */
static int tt__detour_stub_area(struct tt__detour *d, struct tt__detour_module *m, size_t nfns)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size = (nfns * TT__DETOUR_STUB_MAX + page - 1) / page * page;
	void *p = tt__detour_near(m->low, m->high, size);
	if (!p || tt__detour_keep_area(d, m->low, p, size) < 0) {
		if (p)
			munmap(p, size);
		return -ENOMEM;
	}
	m->stubs = p;
	m->stubs_size = size;
	return 0;
}

/* The code pages writable while the constructor patches, [first, last): made so at the
 * first patch in an executable segment, as far as the segment's last function to patch
 * reaches (the functions are patched in address order), and read-execute again once a
 * patch falls outside them, or all are made (tt__detour_code_written): a few mprotect
 * calls a module rather than two a function (zstd's 1,000 functions took 6 ms of its
 * start-up so). */
static uintptr_t tt__detour_writable_first, tt__detour_writable_last;

/* The writable pages back to read-execute; 0 or -errno. */
static int tt__detour_code_written(void)
{
	uintptr_t first = tt__detour_writable_first, last = tt__detour_writable_last;
	tt__detour_writable_first = tt__detour_writable_last = 0;
	return first == last || mprotect((void *)first, last - first, PROT_READ | PROT_EXEC) == 0 ? 0 : -errno;
}

/* The executable segment that holds `address` (dl_iterate_phdr's callback). */
struct tt__detour_segment {
	uintptr_t address, low, high;
};

static int tt__detour_segment_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct tt__detour_segment *s = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t low = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && s->address - low < ph->p_memsz) {
			s->low = low;
			s->high = low + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/* Writes `len` bytes over the code of `fn` (one of d->fns), its pages writable until
 * tt__detour_code_written or the next write past them; 0 or -errno. */
static int tt__detour_write_patch(const struct tt__detour *d, const struct tt__detour_fn *fn,
				  const uint8_t *bytes, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), at = fn->addr;
	if (at < tt__detour_writable_first || at + len > tt__detour_writable_last) {
		int err = tt__detour_code_written();
		if (err)
			return err;
		/* (pages between two of the segment's functions are the segment's: read-execute) */
		struct tt__detour_segment seg = {.address = at, .low = at, .high = at + len};
		dl_iterate_phdr(tt__detour_segment_cb, &seg);
		uintptr_t reach = at + len;
		for (const struct tt__detour_fn *next = fn + 1; next < d->fns + d->nfns && next->addr < seg.high; next++)
			reach = next->addr + TT__DETOUR_PATCH_MAX < seg.high ? next->addr + TT__DETOUR_PATCH_MAX : seg.high;
		uintptr_t first = at & ~(page - 1), last = (reach + page - 1) & ~(page - 1);
		if (mprotect((void *)first, last - first, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
			return -errno;
		tt__detour_writable_first = first;
		tt__detour_writable_last = last;
	}
	memcpy((void *)at, bytes, len);
	__builtin___clear_cache((char *)at, (char *)at + len);
	return 0;
}

/* -fcf-protection puts an endbr64 at a function's start, before its
 * -fpatchable-function-entry NOPs (gcc and clang): where `sled`, the NOPs, follow
 * one at the start of a symbol, that start, which calls enter and the converter
 * names; otherwise `sled`. */
static uintptr_t tt__detour_entry_of(const struct tt__detour_module *m, uintptr_t sled)
{
	static const uint8_t endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
	uintptr_t start = sled - sizeof endbr64;
	size_t at = tt__detour_first_sym_from(m, start);
	return at < m->nsyms && m->syms[at].addr == start &&
			       memcmp((const void *)start, endbr64, sizeof endbr64) == 0 ?
		       start :
		       sled;
}

/* Whether another symbol starts inside the `len` bytes the patch overwrites, or the
 * function lies inside another's extent (other than its own, from `entry` on, where
 * that is before its NOPs): -1 with the reason, or 0. */
static int tt__detour_overlaps(const struct tt__detour_module *m, const struct tt__detour_fn *fn,
			       uintptr_t entry, int len, char *why, size_t cap)
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
	if (m->syms[outer].addr == entry)
		return 0;
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

/* Bytes of NOP instructions at a function's entry, enough of them to patch: GCC's
 * and clang's -fpatchable-function-entry NOPs are one-byte ones, counted without
 * decoding each (two decodes a function were a tenth of a zero-markup start-up's
 * patching); others are decoded. */
static int tt__detour_sled_nops(const uint8_t *code, uint64_t size)
{
	uint64_t ones = 0;
	while (ones < size && ones < TT__DETOUR_PATCH && code[ones] == 0x90)
		ones++;
	return ones == TT__DETOUR_PATCH ? (int)ones : tt__detour_nops(code, size);
}

/* Patches one function; 0, or -1 with the reason in `why`. */
static int tt__detour_patch(struct tt__detour *d, struct tt__detour_fn *fn, char *why, size_t cap)
{
	struct tt__detour_module *m = &d->modules[fn->module];
	const uint8_t *code_at = (const uint8_t *)fn->addr;
	uint8_t patch[TT__DETOUR_PATCH_MAX];
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
	if (!m->stubs && tt__detour_stub_area(d, m, in_module) < 0) {
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
	int nops = sled && fn->addr - *sled < 64 ? tt__detour_sled_nops(code_at, fn->size) : 0;
	fn->entry = nops >= TT__DETOUR_PATCH ? tt__detour_entry_of(m, fn->addr) : fn->addr;
	uint64_t ends_calls = strcmp(fn->name, "_Unwind_ForcedUnwind") == 0 ? TT__DETOUR_ENDS_CALLS : 0;
	*stub = fn->watch ? (struct tt__detour_stub){.self = (uintptr_t)stub, .word = ends_calls,
						     .entry = (uintptr_t)tt__detour_unwinding} :
			    (struct tt__detour_stub){.self = (uintptr_t)stub,
						     .word = TT__DETOUR_ENTER_WORD(fn->entry),
						     .entry = (uintptr_t)tt__detour_entry};
	memcpy(stub->code, code, sizeof code);
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
	if (tt__detour_overlaps(m, fn, fn->entry, len, why, cap) < 0)
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
	if (d->listing)
		return 0; /* (record --list: what would be patched, nothing written) */
	uint8_t was[TT__DETOUR_PATCH_MAX];
	memcpy(was, code_at, (size_t)len);
	int err = tt__detour_write_patch(d, fn, patch, (size_t)len);
	if (err) {
		snprintf(why, cap, "its code cannot be made writable: %s", strerror(-err));
		return -1;
	}
	if (fn->watch)
		return 0;
	tt__detour_undoable(fn->entry, fn->addr, was, (size_t)len, d->later ? TT__UNDO_LATER : 0);
	fn->patched = 1;
	if (nops >= TT__DETOUR_PATCH)
		d->patched_patchable++;
	else
		d->patched_relocated++;
	return 0;
}

/* What the runtime may ask to be named while the program runs (tt__detour_name): each
 * patched function's entry with its symbol's name (copied: elfutils' strings go with
 * dwfl_end), each hooked library call's slot with its name; sorted by address. Made
 * as the constructor ends, then never changed nor freed: any thread reads it. */
struct tt__detour_named {
	uint64_t address;
	const char *name;
	int symbol; /* a symbol, named by tt__symbol_name when asked; else the name itself */
};
static struct tt__detour_named *tt__detour_names;
static size_t tt__detour_nnames;

static int tt__detour_cmp_named(const void *a, const void *b)
{
	const struct tt__detour_named *x = a, *y = b;
	return (x->address > y->address) - (x->address < y->address);
}

/* (tt__patched_namer_fn) */
static size_t tt__detour_name(uint64_t address, char *buf, size_t cap)
{
	size_t lo = 0, hi = tt__detour_nnames;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tt__detour_names[mid].address < address)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == tt__detour_nnames || tt__detour_names[lo].address != address || !cap)
		return 0;
	const struct tt__detour_named *e = &tt__detour_names[lo];
	char *demangled = e->symbol ? tt__symbol_name(e->name) : NULL;
	int n = snprintf(buf, cap, "%s", demangled ? demangled : e->name);
	free(demangled);
	return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}

/* The index of the module that holds `address`, or d->nmodules. */
static size_t tt__detour_module_of(const struct tt__detour *d, uintptr_t address)
{
	for (size_t i = 0; i < d->nmodules; i++)
		if (address >= d->modules[i].low && address < d->modules[i].high)
			return i;
	return d->nmodules;
}

/* Hands the runtime tt__detour_name, which names the functions patched as the converter
 * shows them (the symbol at the address, tt__symbol_name), so that the running
 * program's spike log and snapshots name them as the converter will, where the dynamic
 * symbols cannot. Each symbol is found by a binary search of its module's sorted
 * symbols and nothing is named now: most runs never ask. Those with no symbol (patched
 * by address) are left out: module+0xOFFSET names them. */
static void tt__detour_hand_names(const struct tt__detour *d)
{
	size_t n = 0, bytes = 0;
	const struct tt__detour_sym **symbols = calloc(d->nfns + 1, sizeof *symbols);
	for (size_t i = 0; symbols && i < d->nfns; i++) {
		const struct tt__detour_fn *fn = &d->fns[i];
		const struct tt__detour_sym *sym = fn->patched ?
			tt__detour_symbol_at(&d->modules[fn->module], fn->entry) : NULL;
		if (sym && sym->addr == fn->entry) {
			symbols[i] = sym;
			n++;
			bytes += strlen(sym->name) + 1;
		}
	}
	for (size_t i = 0; i < d->nlibcalls; i++)
		bytes += strlen(d->libcalls[i].name) + 1;
	n += d->nlibcalls;
	struct tt__detour_named *named = symbols ? malloc(n * sizeof *named + bytes + 1) : NULL;
	/* one address in each module with a name in it, for the runtime to know the module by */
	uint8_t *in_module = calloc(d->nmodules + 1, 1);
	uintptr_t *modules = calloc(d->nmodules + 1, sizeof *modules);
	size_t nmodules = 0;
	int err = named && in_module && modules ? 0 : -ENOMEM;
	char *strings = named ? (char *)(named + n) : NULL;
	n = 0;
	for (size_t i = 0; !err && i < d->nfns + d->nlibcalls; i++) {
		const char *name = i < d->nfns ? (symbols[i] ? symbols[i]->name : NULL) :
						 d->libcalls[i - d->nfns].name;
		uint64_t address = i < d->nfns ? d->fns[i].entry : d->libcalls[i - d->nfns].address;
		size_t module = i < d->nfns ? d->fns[i].module :
					      tt__detour_module_of(d, address & ~(uint64_t)TT_FUNC_LIBRARY_CALL);
		if (!name)
			continue;
		named[n++] = (struct tt__detour_named){.address = address, .name = strings, .symbol = i < d->nfns};
		strings = stpcpy(strings, name) + 1;
		if (module < d->nmodules && !in_module[module]) {
			in_module[module] = 1;
			modules[nmodules++] = (uintptr_t)(address & ~(uint64_t)TT_FUNC_LIBRARY_CALL);
		}
	}
	if (!err && n)
		qsort(named, n, sizeof *named, tt__detour_cmp_named);
	tt__detour_names = named;
	tt__detour_nnames = n;
	if (!err)
		err = tt__patched_namer(tt__detour_name, modules, nmodules);
	if (err)
		fprintf(tt__log(), "ticktrace: the patched functions' names were not handed to the runtime "
			"(%s): while the program runs, the spike log and snapshots name them "
			"module+0xOFFSET\n", strerror(-err));
	if (err) {
		free(named);
		tt__detour_names = NULL;
		tt__detour_nnames = 0;
	}
	free(symbols);
	free(in_module);
	free(modules);
}

/* record --list: one function that would be patched, as the converter names it, its
 * module, its address in the module's file (as nm prints it) and its size; or why
 * it would not be. */
static void tt__detour_list(const struct tt__detour *d, const struct tt__detour_fn *fn, const char *why)
{
	const struct tt__detour_module *m = &d->modules[fn->module];
	GElf_Addr bias = 0;
	dwfl_module_getelf(m->mod, &bias);
	char *name = tt__detour_name_at(m, fn->addr, fn->addr - bias);
	printf("%s\t%s\t0x%" PRIx64 "\t%" PRIu64 "%s%s\n", name ? name : fn->name, tt__detour_base(m->path),
	       (uint64_t)(fn->addr - bias), fn->size, why ? "\tnot patched: " : "", why ? why : "");
	free(name);
}

void tt__detour_patch_all(struct tt__detour *d, int trampolines, int says)
{
	for (size_t i = 0; i < d->nfns; i++) {
		char why[256];
		struct tt__detour_fn *fn = &d->fns[i];
		if ((fn->watch && !trampolines) || tt__detour_patch(d, fn, why, sizeof why) == 0) {
			if (d->listing && !fn->watch)
				tt__detour_list(d, fn, NULL);
			continue;
		}
		d->refused += !fn->watch;
		if (d->listing && !fn->watch)
			tt__detour_list(d, fn, why);
		else if (says)
			fprintf(tt__log(), fn->watch ? "ticktrace: the unwinder's %s (%s) cannot be watched: %s; an "
						    "unwind through a patched function there stops at it\n" :
						    "ticktrace: not patched: %s (%s): %s\n",
				fn->name, tt__detour_base(d->modules[fn->module].path), why);
	}
	int err = tt__detour_code_written();
	if (err)
		fprintf(tt__log(), "ticktrace: the patched code stays writable: %s\n", strerror(-err));
	for (size_t i = 0; i < d->nmodules; i++)
		if (d->modules[i].stubs && mprotect(d->modules[i].stubs, d->modules[i].stubs_size,
						    PROT_READ | PROT_EXEC) != 0)
			fprintf(tt__log(), "ticktrace: the trampolines of %s stay writable: %s\n",
				d->modules[i].path, strerror(errno));
}

/* An exclude list is a few hundred names: a file much larger was not meant. */
#define TT__DETOUR_EXCLUDE_MAX (16u << 20)

/* TT_ENV_EXCLUDE's patterns, one a line (# starts a comment), into d->excludes. A
 * regular file alone is read (tt_read_small_file: a device or a FIFO named by mistake would
 * hold the program before main); one that cannot be is said, and nothing is left
 * out. */
static void tt__detour_read_excludes(struct tt__detour *d)
{
	const char *path = getenv(TT_ENV_EXCLUDE);
	if (!path || !*path)
		return;
	char *text;
	size_t len;
	int err = tt_read_small_file(path, TT__DETOUR_EXCLUDE_MAX, &text, &len);
	if (err) {
		fprintf(tt__log(), "ticktrace: %s=%s: %s%s: no function left out\n", TT_ENV_EXCLUDE, path,
			tt_read_small_file_problem(err), err == -EFBIG ? " (16 MiB)" : "");
		return;
	}
	for (char *line = text, *next; line < text + len; line = next) {
		next = line + strcspn(line, "\n");
		*next++ = 0;
		line[strcspn(line, "#\r")] = 0;
		char *start = line + strspn(line, " \t");
		size_t n = strlen(start);
		while (n && (start[n - 1] == ' ' || start[n - 1] == '\t'))
			start[--n] = 0;
		char **more = n ? realloc(d->excludes, (d->nexcludes + 1) * sizeof(*more)) : NULL;
		if (more && (more[d->nexcludes] = strdup(start))) {
			d->excludes = more;
			d->nexcludes++;
		} else if (more) {
			d->excludes = more;
		}
	}
	free(text);
}

void tt__detour_free(struct tt__detour *d)
{
	free(d->areas);
	for (size_t i = 0; i < d->nlibcalls; i++)
		free((char *)d->libcalls[i].name);
	free(d->libcalls);
	for (size_t i = 0; i < d->nexcludes; i++)
		free(d->excludes[i]);
	free(d->excludes);
	for (size_t i = 0; i < d->nfns; i++)
		free(d->fns[i].name);
	for (size_t i = 0; i < d->nmodules; i++) {
		free(d->modules[i].path);
		free(d->modules[i].label);
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
	for (size_t p = 0; d->pattern_notes && p < d->npatterns; p++)
		free(d->pattern_notes[p]);
	free(d->pattern_notes);
}

/* Whether the program's table of descriptors is full (EMFILE) now. */
static int tt__detour_table_full(void)
{
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == EMFILE;
	close(fd);
	return 0;
}

/* The reason a module went unread or the threads uncounted, and what to do. */
static void tt__detour_say_out_of_fds(void)
{
	struct rlimit nofile = {0};
	getrlimit(RLIMIT_NOFILE, &nofile);
	fprintf(tt__log(), "ticktrace: the patcher ran out of file descriptors (EMFILE: ulimit -n "
		"is %llu) as it read the program's modules' files (it holds one for each, before the "
		"program opens any) or counted its threads: raise the limit (ulimit -n 1024) to patch "
		"them all\n",
		(unsigned long long)nofile.rlim_cur);
}

/* Threads of the program running now besides this one (ticktrace's own run none of
 * its code), or -errno when they cannot be counted. Patching is safe only when there are
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
		return -errno;
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
	uint32_t frames = __atomic_load_n(&tt__detour_fewest_frames, __ATOMIC_RELAXED);
	if (lost)
		fprintf(tt__log(), "ticktrace: %" PRIu64 " calls of patched functions were not recorded: "
			"deeper than a thread's %u on its shadow stack%s\n", lost, frames,
			frames < TT__DETOUR_SHADOW_FRAMES ? " (fewer than 1048576: the address-space "
			"limit, ulimit -v, left less room)" : "");
	uint64_t no_room = __atomic_load_n(&tt__detour_no_room, __ATOMIC_RELAXED);
	if (no_room)
		fprintf(tt__log(), "ticktrace: %" PRIu64 " calls of patched functions were not recorded: "
			"their threads found no address space for a shadow stack (%s)\n", no_room,
			tt__address_room() == UINT64_MAX ? "mmap refused it" :
			"the address-space limit, ulimit -v, leaves too little room");
}

/* In a forked child (after libticktrace's own handler, registered before: its new
 * file and start anchor): the forking thread's recorded calls are still open in it
 * (fork@libc.so.6, main), and its first records would be their exits, with no entry
 * in its file. Its run starts inside them: each entered again now, outermost first. */
static void tt__detour_after_fork_in_child(void)
{
	struct tt__detour_shadow *sh = &tt__detour_shadow;
	if (!sh->top)
		return;
	struct tt__detour_frame *f = sh->top - 1;
	while (f->slot != UINTPTR_MAX) /* (the sentinel, under the thread's first call) */
		f--;
	for (f++; f < sh->top; f++)
		tt__detour_func_enter(f->word);
}

/* Leaves the libraries dlopen loads later what patching them as the program was
 * needs (tt__detour_later), taken from `d`; the text kept (NULL returned), or given
 * back when the modules loaded now cannot be listed (those are then left as they are). */
static char *tt__detour_hand_over(struct tt__detour *d, int libcalls, int trampolines, int says, char *text)
{
	struct tt__detour_later *later = &tt__detour_later;
	tt__detour_add_patched(d);
	ssize_t n = tt__detour_objects(&later->objects);
	if (n < 0 || (d->main_path && !(later->main_path = strdup(d->main_path))))
		return text;
	*later = (struct tt__detour_later){
		.every_sled = d->every_sled, .libcalls = libcalls, .trampolines = trampolines, .says = says,
		.text = text, .main_path = later->main_path, .patterns = d->patterns, .npatterns = d->npatterns,
		.excludes = d->excludes, .nexcludes = d->nexcludes, .objects = later->objects, .nobjects = (size_t)n};
	d->patterns = d->excludes = NULL;
	d->npatterns = d->nexcludes = 0;
	__atomic_store_n(&later->on, 1, __ATOMIC_RELEASE);
	return NULL;
}

__attribute__((constructor)) static void tt__detour_start(void)
{
	tt__detour_no_follow();
	const char *env = getenv(TT_ENV_DETOUR);
	const char *off = getenv("TICKTRACE");
	if (off && strcmp(off, "0") == 0)
		return;
	/* No patterns: the zero-markup build's every function, if the program links this
	 * library (tt__detour_collect finds out) */
	struct tt__detour d = {.every_sled = !env || !*env};
	char *text = strdup(env ? env : "");
	char exe[PATH_MAX];
	uintptr_t thread_pointer;
	__asm__("mov %%fs:0, %0" : "=r"(thread_pointer));
	tt__detour_shadow_offset = (intptr_t)((uintptr_t)&tt__detour_shadow - thread_pointer);
	tt__detour_know_own_stack();
	if (!text || pthread_key_create(&tt__detour_key, tt__detour_thread_exit) != 0)
		goto fail;
	d.listing = getenv(TT_ENV_DETOUR_LIST) != NULL;
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
	tt__detour_read_excludes(&d);
	d.pattern_hits = calloc(d.npatterns + 1, sizeof(*d.pattern_hits));
	d.pattern_notes = calloc(d.npatterns + 1, sizeof(*d.pattern_notes));
	/* The threads counted first: the modules' files libdwfl holds after (one each) may
	 * leave no descriptor for /proc/self/task under a small limit (no code of the
	 * program's runs meanwhile to start one). */
	int counted = d.npatterns || d.every_sled ? tt__detour_others() : 0;
	int collected = d.pattern_hits && d.pattern_notes ? tt__detour_collect(&d) : -ENOMEM;
	/* (libdwfl holds a descriptor of each module's file it read: none left, the rest
	 * went unread) */
	d.out_of_fds = collected == -EMFILE || tt__detour_table_full();
	if (collected < 0)
		goto fail;
	if (!d.npatterns && !d.every_sled) { /* preloaded by `record` with no -f */
		tt__detour_free(&d);
		free(text);
		return;
	}
	if (d.every_sled)
		tt__min_dur_default(TT__DETOUR_MIN_DUR_NS);
	size_t to_record = 0; /* (the unwinders are watched, not recorded) */
	for (size_t i = 0; i < d.nfns; i++)
		to_record += !d.fns[i].watch;
	/* The unwinders need watching only when some calls go through the trampolines:
	 * patched functions, or the program's library calls. */
	int libcalls = tt__detour_libcalls_wanted(d.every_sled);
	if (d.every_sled && !to_record && !d.hooked)
		fprintf(tt__log(), "ticktrace: the program links libticktrace-detour (pkg-config "
			"ticktrace-instrument), but its code has no patchable entries (the NOPs that "
			"-fpatchable-function-entry=5 puts at a function's entry): were `pkg-config "
			"--cflags ticktrace-instrument` given to the compiler, not only to the link? "
			"%s\n", libcalls ? "Only its library calls are recorded" : "Nothing is recorded");
	int trampolines = to_record || libcalls;
	int says = tt__detour_says();
	int others = d.nfns || libcalls ? counted : 0;
	d.out_of_fds |= others == -EMFILE;
	if (others < 0)
		fprintf(tt__log(), "ticktrace: nothing patched: the program's threads cannot be counted "
			"(/proc/self/task: %s), and a patch is safe only while no other thread runs\n",
			strerror(-others));
	else if (others > 0)
		fprintf(tt__log(), "ticktrace: nothing patched: the program already runs %d other thread%s "
			"(a library's constructor started them), which may be running the code a patch "
			"overwrites\n", others, others > 1 ? "s" : "");
	else if (trampolines && d.unseen_unwinder)
		fprintf(tt__log(), "ticktrace: %s carries its own unwinder, which cannot be found with its "
			"symbols stripped: an unwind through a patched function would stop there "
			"(ending the program); nothing patched\n", d.main_path);
	int patching = !others && !(trampolines && d.unseen_unwinder);
	if (!patching)
		d.refused = to_record;
	/* (before the patches: the code is read for the GOT slots it calls through) */
	int hooked = patching && libcalls ? tt__detour_library_calls(&d, libcalls) : 0;
	if (patching)
		tt__detour_patch_all(&d, trampolines, says);
	if (patching && (to_record || d.nlibcalls))
		tt__detour_hand_names(&d);
	if (hooked < 0)
		fprintf(tt__log(), "ticktrace: the program's library calls are not all recorded: %s\n",
			strerror(-hooked));
	else if (hooked && ((says && !d.every_sled) || d.listing)) /* (record's, or --list) */
		fprintf(tt__log(), "ticktrace: the program's calls of %d library functions %s recorded as "
			"FUNCTION@LIBRARY (%s=0: not)\n", hooked, d.listing ? "would be" : "are",
			TT_ENV_LIBCALLS);
	tt__detour_mark_patterns(&d);
	for (size_t p = 0; says && p < d.npatterns; p++)
		if (!d.pattern_hits[p])
			fprintf(tt__log(), "ticktrace: -f %s %s%s\n", d.patterns[p],
				d.pattern_notes[p] ? d.pattern_notes[p] :
				strncmp(d.patterns[p], "0x", 2) == 0 ?
					"is where no function of the program starts (by its .eh_frame)" :
					"matches no function",
				d.out_of_fds ? " that could be read" : "");
	if (d.out_of_fds)
		tt__detour_say_out_of_fds();
	if (says && d.left_alone)
		fprintf(tt__log(), "ticktrace: %zu matching functions of the C library, the loader, the "
			"unwinders or ticktrace's own libraries left alone (the recording and the "
			"unwinding run through them)\n", d.left_alone);
	if (says && d.only_ours)
		fprintf(tt__log(), "ticktrace: %zu matching functions of libraries the program does not "
			"load, which only ticktrace's detour library needs, left alone\n", d.only_ours);
	if (d.excluded)
		fprintf(tt__log(), "ticktrace: %zu function%s left unpatched, as %s=%s names them\n",
			d.excluded, d.excluded == 1 ? "" : "s", TT_ENV_EXCLUDE, getenv(TT_ENV_EXCLUDE));
	if (d.listing) {
		/* (the image named: through a wrapper record cannot see past, as `sh -c`,
		 * the wrapper's is the one read) */
		fprintf(tt__log(), "ticktrace: --list: %zu function%s would be patched; %zu could not be "
			"(in %s and its libraries: a program it execs is not read)\n",
			to_record - d.refused, to_record - d.refused == 1 ? "" : "s", d.refused,
			d.main_path ? d.main_path : "the program");
		/* the list is record --list's output: a failed write fails it (>/dev/full) */
		if (fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(tt__log(), "ticktrace: --list: the list not written to stdout: %s\n",
				strerror(errno));
			_exit(1);
		}
		_exit(0);
	}
	if (says && !d.every_sled)
		fprintf(tt__log(), "ticktrace: patched %zu function%s (%zu by moving their first instructions, "
			"%zu at their patchable NOPs); %zu could not be\n", d.patched_relocated + d.patched_patchable,
			d.patched_relocated + d.patched_patchable == 1 ? "" : "s", d.patched_relocated,
			d.patched_patchable, d.refused);
	if (patching)
		tt__detour_turn_off_start(d.every_sled);
	if (patching && (to_record || d.nlibcalls))
		pthread_atfork(NULL, NULL, tt__detour_after_fork_in_child);
	atexit(tt__detour_at_exit);
	if (patching) /* (the libraries loaded later: as these) */
		text = tt__detour_hand_over(&d, libcalls, trampolines, says, text);
	tt__detour_free(&d);
	free(text);
	return;
fail:
	fprintf(tt__log(), "ticktrace: TICKTRACE_DETOUR: could not read the program's symbols; "
		"nothing patched\n");
	if (d.out_of_fds)
		tt__detour_say_out_of_fds();
	tt__detour_mark_patterns(&d); /* (what missed: all, as said) */
	tt__detour_free(&d);
	free(text);
}
