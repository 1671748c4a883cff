/* libticktrace-detour internals: the patcher (detour.c), the functions it patches
 * (symbols.c), the instruction relocator (relocate.c) and the trampolines
 * (trampoline.asm). */
#ifndef TT_DETOUR_H
#define TT_DETOUR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <elfutils/libdwfl.h>
#include <ticktrace/format.h>

#include "common.h" /* (tt_read_small_file alone) */
#include "record_protocol.h"
#include "symbol_name.h"

#define TT__DETOUR_HIDDEN __attribute__((visibility("hidden")))

/* Bytes a jump (e9 rel32) or a call (e8 rel32) takes: what a patch overwrites. */
#define TT__DETOUR_PATCH 5
/* Bytes of a -fpatchable-function-entry NOP area read at most (the compiler's N). */
#define TT__DETOUR_SLED_MAX 64

/* The word of a patched function's FUNC_ENTER record (its FUNC_EXIT's is the same with
 * the kind's low bit set: trampoline.asm). */
#define TT__DETOUR_ENTER_WORD(fn) ((uint64_t)(fn) | (uint64_t)TT_REC_FUNC_ENTER << TT_KIND_SHIFT)

/* One call of a patched function on the thread's shadow stack (trampoline.asm). */
struct tt__detour_frame {
	uintptr_t ret;  /* where the function returns to */
	uintptr_t slot; /* where its return address is on the stack */
	uint64_t word;  /* TT__DETOUR_ENTER_WORD of the function */
};
_Static_assert(sizeof(struct tt__detour_frame) == 24 &&
		       offsetof(struct tt__detour_frame, slot) == 8 &&
		       offsetof(struct tt__detour_frame, word) == 16,
	       "trampoline.asm ENTRY, E_SLOT, E_WORD");

/* The thread's shadow stack: the next free frame and the end; both NULL until the
 * thread's first patched call, which sets `hot`, the thread's entry in libticktrace's
 * table of threads (as the emitters find it: trampoline.asm). And where the thread's
 * own stack is (shadow.c; 0, 0 when not known). */
struct tt__detour_shadow {
	struct tt__detour_frame *top, *end;
	void *hot;
	uintptr_t stack_low, stack_high;
};
_Static_assert(offsetof(struct tt__detour_shadow, end) == 8 &&
		       offsetof(struct tt__detour_shadow, hot) == 16,
	       "trampoline.asm SH_END, SH_HOT");
extern __thread struct tt__detour_shadow tt__detour_shadow
	__attribute__((tls_model("initial-exec"))) TT__DETOUR_HIDDEN;
/* Its address less the thread pointer (%fs:0): the same in every thread. */
extern intptr_t tt__detour_shadow_offset TT__DETOUR_HIDDEN;

/* children.c: with TT_ENV_DETOUR_FOLLOW=0, the preload taken out of the
 * environment the program's children inherit; whether this process says what the
 * patcher found (TT_ENV_DETOUR_ONCE: the first process of each program alone). */
void tt__detour_no_follow(void) TT__DETOUR_HIDDEN;
int tt__detour_says(void) TT__DETOUR_HIDDEN;

/* The zero-markup build's TICKTRACE_MIN_DUR: calls shorter are erased as they return,
 * and counted (the flat profile adds them up); uftrace's --time-filter does the same,
 * asked for. */
#define TT__DETOUR_MIN_DUR_NS 1000

/* turn_off.c: a patch that can be undone while the program runs, remembered as it is
 * made (before main, or at a dlopen: TT__UNDO_LATER): the function its records name
 * (`payload`), where the patch is (its entry, a call site of a library call, or its GOT
 * slot: TT__UNDO_SLOT, TT__UNDO_RELRO when read-only) and the bytes it overwrote (a
 * slot's: its target). A library call patched at several call sites has one for each. */
#define TT__DETOUR_UNDO_MAX 24
enum { TT__UNDO_RELRO = 1, TT__UNDO_SLOT = 2, TT__UNDO_LATER = 4 };
void tt__detour_undoable(uint64_t payload, uintptr_t at, const void *was, size_t len, unsigned how)
	TT__DETOUR_HIDDEN;
/* A dlclose begins (1) or has returned (0): meanwhile no patch made at a dlopen is
 * undone (its library may be going). */
void tt__detour_unloading(int begins) TT__DETOUR_HIDDEN;
/* A library unloaded: its patches, in [low, high), forgotten, so that none is undone
 * into what is mapped there next. */
void tt__detour_forget(uintptr_t low, uintptr_t high) TT__DETOUR_HIDDEN;
/* After patching: TT_ENV_TURN_OFF, or the zero-markup build's default (`every_sled`):
 * a bad value is said, and the default used. */
void tt__detour_turn_off_start(int every_sled) TT__DETOUR_HIDDEN;

/* trampoline.asm */
void tt__detour_entry(void) TT__DETOUR_HIDDEN;
void tt__detour_exit(void) TT__DETOUR_HIDDEN;
/* unwinders.asm: where a watched unwinder's entry point goes (the stub's `entry`);
 * its stub's word is TT__DETOUR_ENDS_CALLS for one that ends every call of the
 * thread, 0 for the others. */
void tt__detour_unwinding(void) TT__DETOUR_HIDDEN;
#define TT__DETOUR_ENDS_CALLS 1
/* libticktrace's hooks (asm/record.asm), called as C functions: record FUNC_ENTER
 * and FUNC_EXIT for the function of a frame's `word`. */
void tt__detour_func_enter(uint64_t word);
void tt__detour_func_exit(uint64_t word);

/* detour.c: a return found no frame of the thread's for its slot: says so, aborts. */
_Noreturn void tt__detour_lost(uintptr_t slot) TT__DETOUR_HIDDEN;
/* shadow.c, for trampoline.asm's rare paths. A call whose slot is `slot` found the top
 * frame at or below it (and not a tail call's): ends the frames abandoned below it. */
void tt__detour_settle_entry(uintptr_t slot) TT__DETOUR_HIDDEN;
/* A return through `slot` whose frame is not the top one: ends the frames abandoned
 * below it, and puts its frame on top (or aborts: tt__detour_lost). */
void tt__detour_settle_exit(uintptr_t slot) TT__DETOUR_HIDDEN;
/* Learns the calling thread's own stack (detour.c's constructor, for the first
 * thread; shadow.c's pthread_create, for the others). */
void tt__detour_know_own_stack(void) TT__DETOUR_HIDDEN;

/* A patched function's stub (trampoline.asm says why each part is there): a header,
 * then `push qword [rip - 38]` (the stub's address) and `jmp [rip - 20]` (the entry),
 * then, for a function patched by moving its first instructions, those instructions
 * and a jump back. The patch is a jump to `code`. */
struct tt__detour_stub {
	uintptr_t self;  /* this stub's address */
	uint64_t word;   /* TT__DETOUR_ENTER_WORD of the function */
	uintptr_t go_on; /* where the function goes on after the entry */
	uintptr_t entry; /* tt__detour_entry */
	uint8_t code[12];
	uint8_t moved[];  /* the relocated instructions */
};
_Static_assert(offsetof(struct tt__detour_stub, word) == 8 &&
		       offsetof(struct tt__detour_stub, go_on) == 16 &&
		       offsetof(struct tt__detour_stub, code) == 32 &&
		       offsetof(struct tt__detour_stub, moved) == 44,
	       "trampoline.asm STUB_WORD, STUB_GO_ON, and the rip offsets in `code`");
#define TT__DETOUR_STUB_MAX 128 /* bytes a stub may take */

/* relocate.c. `code` is the function's bytes at run-time address `addr`, `size` long
 * (its symbol's size). Each returns -1 with the reason in `why` when it cannot. */

/* How many bytes of whole instructions from the start cover a patch (>= 5): when
 * none of the function's jumps lands inside them and each can be moved. */
int tt__detour_plan(const uint8_t *code, uint64_t size, uintptr_t addr, char *why, size_t cap)
	TT__DETOUR_HIDDEN;
/* Whether no jump among the instructions of `code` (`size` bytes at run-time address
 * `code_addr`: the function's own, or its `part` elsewhere) lands inside the first `len`
 * bytes of the function at `addr`; 0, or -1 with the reason. */
int tt__detour_no_jump_into(const uint8_t *code, uint64_t size, uintptr_t code_addr,
			    const char *part, uintptr_t addr, int len, char *why, size_t cap)
	TT__DETOUR_HIDDEN;
/* Writes the first `len` bytes' instructions, relocated to run at `out_addr`, and a
 * jump back to addr + len, into `out` (`cap` bytes); the bytes written. */
int tt__detour_relocate(const uint8_t *code, uintptr_t addr, int len, uint8_t *out,
			uintptr_t out_addr, size_t cap, char *why, size_t whycap) TT__DETOUR_HIDDEN;
/* Whether `target` is reachable with 32 bits from an instruction ending at `next`,
 * and the displacement. */
int tt__detour_reach(uintptr_t target, uintptr_t next, int32_t *disp) TT__DETOUR_HIDDEN;
/* Bytes of NOP instructions at `code` (at most `size`). */
int tt__detour_nops(const uint8_t *code, uint64_t size) TT__DETOUR_HIDDEN;
/* Whether an instruction starts `at` bytes into `code` (a function's `size` bytes,
 * decoded one instruction after another from its start). */
int tt__detour_starts_instruction(const uint8_t *code, uint64_t size, uint64_t at) TT__DETOUR_HIDDEN;

/* One function to patch. */
struct tt__detour_fn {
	uintptr_t addr; /* where it is patched */
	uint64_t size;
	char *name;
	size_t module; /* index in the module table */
	int watch;     /* an unwinder's entry point, watched rather than recorded */
	int patched;   /* recorded from now on */
	uintptr_t entry; /* its start, which its calls record: addr, or its endbr64 before */
};

/* A symbol of a module: for the check that no other entry lies inside a patch, and
 * for the names of what is patched. */
struct tt__detour_sym {
	uintptr_t addr, end;
	uintptr_t reach; /* the highest `end` of this symbol and all before it */
	const char *name; /* elfutils' (valid until dwfl_end) */
	uint32_t index;   /* in the module's symbol table */
	uint8_t bind;     /* STB_* */
};

struct tt__detour_module {
	Dwfl_Module *mod; /* (valid until dwfl_end) */
	char *path;
	char *label; /* in the names module+0xOFFSET: the loader's name for its file */
	uintptr_t low, high;
	struct tt__detour_sym *syms; /* every symbol with an address, sorted */
	size_t nsyms;
	struct tt__detour_sym *colds; /* GCC's NAME.cold parts */
	size_t ncolds;
	uintptr_t *sleds; /* -fpatchable-function-entry NOP areas, sorted */
	size_t nsleds;
	int programs;     /* the program's: not the loader's, the C library's, ticktrace's, nor
	                   * one only the detour library needs */
	int calls_hooks;  /* built with -finstrument-functions: its hooks record its calls */
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

/* Memory the patcher mapped for the stubs of the module at `owner`: at a dlopen,
 * unmapped when that library goes. */
struct tt__detour_area {
	uintptr_t owner, at;
	size_t size;
};

struct tt__detour_range {
	uintptr_t low, high;
};

/* A library call hooked (libcalls.c): its records' address (its slot's, with
 * TT_FUNC_LIBRARY_CALL) and its name as the tools give it. */
struct tt__patched_function {
	uintptr_t address;
	const char *name;
};

struct tt__detour {
	Dwfl *dwfl; /* kept while patching: the symbols' names are its */
	char **patterns;
	size_t npatterns;
	size_t *pattern_hits;
	char **pattern_notes; /* 0xADDR inside a function: which, and where it starts */
	struct tt__detour_module *modules;
	size_t nmodules;
	struct tt__detour_fn *fns;
	size_t nfns, fns_cap;
	size_t left_alone; /* matches in libraries never patched */
	struct tt__detour_link *links; /* every module, as the loader linked it */
	size_t nlinks;
	size_t only_ours; /* matches in libraries only the detour library needs */
	int unseen_unwinder; /* the program's own, which its symbols no longer show */
	int out_of_fds; /* descriptors ran out (EMFILE): modules unread, or threads uncounted */
	size_t patched_relocated, patched_patchable, refused;
	int every_sled; /* the zero-markup build: every function with a NOP area is patched */
	int hooked;     /* a module of the program's calls -finstrument-functions' hooks */
	const char *main_path;
	int listing; /* record --list (TT_ENV_DETOUR_LIST): said, nothing patched, then exit */
	struct tt__patched_function *libcalls; /* the library calls hooked (libcalls.c): named
	                                        * for the runtime */
	size_t nlibcalls;
	char **excludes; /* TT_ENV_EXCLUDE's patterns: never patched */
	size_t nexcludes;
	size_t excluded; /* functions left unpatched for them */
	int later; /* at a dlopen (dlopen.c): other threads may run */
	const struct tt__detour_range *brought; /* then: the modules it brought, the only ones */
	size_t nbrought;
	struct tt__detour_area *areas; /* the stubs' */
	size_t nareas;
};

/* children.c: tells record that this process matched d's -f patterns against its
 * functions and said what each missed (TT_DETOUR_LOOKED_MARKER), and that one matched
 * (TT_DETOUR_MATCHED_MARKER), when one did. */
void tt__detour_mark_patterns(const struct tt__detour *d) TT__DETOUR_HIDDEN;

/* code.c. Memory (`size` bytes, read-write) within 32-bit reach of all of
 * [low, high), or NULL. */
void *tt__detour_near(uintptr_t low, uintptr_t high, size_t size) TT__DETOUR_HIDDEN;
/* Adds the mapping, for the module at `owner`, to d->areas; 0 or -ENOMEM. */
int tt__detour_keep_area(struct tt__detour *d, uintptr_t owner, void *at, size_t size) TT__DETOUR_HIDDEN;
/* Writes `len` bytes over code, the page(s) writable only meanwhile (and executable
 * throughout); 0 or -errno. */
int tt__detour_write_code(uintptr_t at, const uint8_t *bytes, size_t len) TT__DETOUR_HIDDEN;
/* Adds the functions of `d` that were patched to those patched so far; whether
 * `target` is where one starts (its entry, or its patch); those in [low, high)
 * forgotten (a library unloaded). */
void tt__detour_add_patched(const struct tt__detour *d) TT__DETOUR_HIDDEN;
int tt__detour_patched_before(uintptr_t target) TT__DETOUR_HIDDEN;
void tt__detour_forget_patched(uintptr_t low, uintptr_t high) TT__DETOUR_HIDDEN;

/* detour.c. Frees what `d` holds (not the stubs). */
void tt__detour_free(struct tt__detour *d) TT__DETOUR_HIDDEN;
/* Patches d->fns (watching the unwinders' when `trampolines`), listed with
 * d->listing, refusals said when `says`; the stubs made read-only and executable. */
void tt__detour_patch_all(struct tt__detour *d, int trampolines, int says) TT__DETOUR_HIDDEN;

/* A module as dl_iterate_phdr shows it: which it is (its dynamic section and where it
 * lies), and the stubs made for it at a dlopen. */
struct tt__detour_object {
	const void *dynamic;
	struct tt__detour_range range;
	struct tt__detour_area *areas;
	size_t nareas;
};
/* libcalls.c. The modules loaded now, into *out (malloc'd): how many, or -ENOMEM. */
ssize_t tt__detour_objects(struct tt__detour_object **out) TT__DETOUR_HIDDEN;

/* What the constructor leaves for the libraries dlopen loads later (dlopen.c), once
 * it patched (`on`): its settings (the patterns in `text`, which they point into) and
 * the modules loaded then, taken from its `struct tt__detour`. */
struct tt__detour_later {
	int on, every_sled, libcalls, trampolines, says;
	char *text, *main_path;
	char **patterns, **excludes;
	size_t npatterns, nexcludes;
	struct tt__detour_object *objects; /* and those loaded since (under dlopen.c's lock) */
	size_t nobjects;
};
extern struct tt__detour_later tt__detour_later TT__DETOUR_HIDDEN;

/* symbols.c. Whether TT_ENV_EXCLUDE names the function: its symbol `name`, or its
 * demangled name `plain` (or NULL) with or without its parameters; counted. */
int tt__detour_excluded(struct tt__detour *d, const char *name, const char *plain) TT__DETOUR_HIDDEN;

/* libcalls.c. Which calls into shared libraries TICKTRACE_LIBCALLS asks for (unset:
 * in the zero-markup build, `every_sled`): none, those of the program and of the
 * libraries whose functions are recorded, or of every library of the program's; and
 * their PLT and GOT slots pointed at stubs that record them (with d->listing, counted
 * only): how many, or -errno. Before the functions are patched (their code is read). */
enum { TT__LIBCALLS_NONE, TT__LIBCALLS_RECORDED, TT__LIBCALLS_ALL };
int tt__detour_libcalls_wanted(int every_sled) TT__DETOUR_HIDDEN;
int tt__detour_library_calls(struct tt__detour *d, int wanted) TT__DETOUR_HIDDEN;

/* symbols.c. The last part of a path (a module's file name). */
const char *tt__detour_base(const char *path) TT__DETOUR_HIDDEN;
/* The functions to patch, from every module mapped now (with `every_sled`, that of
 * the zero-markup build, left set only when the program links this library); 0 or
 * -errno. */
int tt__detour_collect(struct tt__detour *d) TT__DETOUR_HIDDEN;
/* The first of a module's symbols (m->syms) that starts at or after `addr`. */
size_t tt__detour_first_sym_from(const struct tt__detour_module *m, uintptr_t addr) TT__DETOUR_HIDDEN;
/* The symbol that names `addr` of a module, the one the converter's elfutils
 * (dwfl_module_addrinfo) gives, but found by a binary search of the module's sorted
 * symbols where elfutils reads its whole table for each address; NULL: none. */
const struct tt__detour_sym *tt__detour_symbol_at(const struct tt__detour_module *m, uintptr_t addr)
	TT__DETOUR_HIDDEN;
/* The name the converter gives the function of `m` that starts at `addr` (`vaddr`
 * in its file): its symbol's, else module+0xOFFSET; malloc'd, NULL: no memory. */
char *tt__detour_name_at(const struct tt__detour_module *m, uintptr_t addr, uint64_t vaddr)
	TT__DETOUR_HIDDEN;

#endif
