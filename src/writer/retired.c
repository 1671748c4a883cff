/* Libraries unloaded while the program runs (dlclose: lifecycle/unload.c): their
 * modules, copies of their call-site descriptors that records name and the symbols of
 * their functions, kept for the file, and the generation that tells their records
 * from those of a library loaded at the same addresses since. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/writer.h"

/* A copy of a call-site descriptor whose memory goes with its library. */
struct tt__retired_site {
	uint64_t address;
	struct tt_callsite site; /* the strings are copies */
};

struct tt__retired_func {
	uint64_t address;
	char *symbol;
};

/* What a library closed with dlclose leaves for the file: its module entries, copies
 * of its call-site descriptors that records name, and when it was unloaded. Records
 * made before then at its addresses are its; later ones, of a library loaded there
 * since. */
struct tt__retired_lib {
	uintptr_t base;
	char *name;
	uint64_t until; /* TSC once dlclose returned; 0 while it runs */
	struct tt__ranges ranges; /* its loadable segments; none: it stayed loaded */
	struct tt_os_module_list modules;
	struct tt__retired_site *sites;
	size_t nsites, sites_cap;
	/* its functions that records name and their dynamic symbols (NULL: none, a
	 * static function) for the runtime's report and spike log */
	struct tt__retired_func *funcs;
	size_t nfuncs, funcs_cap;
};

/* Held while the libraries' copies are read or added to. */
struct tt__lock tt__retired_lock = TT__LOCK_INIT(TT__LOCK_RETIRED);
/* In the order they began unloading; an entry never moves or changes once its
 * until is set. */
static struct tt__retired_lib *tt__retired[TT__RETIRED_MAX];
static size_t tt__nretired; /* retired mutex */
/* The first this many have their until (atomic): generations are told apart by them. */
static size_t tt__retired_published;

/* A site whose library is unloaded and was not retired (unloaded by other means than
 * dlclose, or recorded by its destructors): named so, never read. */
static const struct tt_callsite tt__unloaded_site = {"(unloaded library)", "", "", 0, 0, NULL};

/* The generation of a record at `address` made at `tsc`, among the first `limit`
 * libraries unloaded: k when the k-th was loaded there then, 0 when none was. (A
 * library call's address is its GOT slot's, tagged.) */
size_t tt__generation(uint64_t address, uint64_t tsc, size_t limit)
{
	for (size_t k = 0; k < limit; k++) {
		const struct tt__retired_lib *lib = tt__retired[k];
		if (tsc < lib->until && tt__ranges_hold(&lib->ranges, address & ~TT_FUNC_LIBRARY_CALL))
			return k + 1;
	}
	return 0;
}

uint64_t tt__run_count_entry(uint64_t address, size_t seen)
{
	uint64_t entry = address | TT__FUNC_TAG;
	void *at = (void *)(uintptr_t)(address & ~TT_FUNC_LIBRARY_CALL);
	const char *symbol;
	for (size_t k = seen; k-- > 0;)
		if (tt__ranges_hold(&tt__retired[k]->ranges, (uint64_t)(uintptr_t)at))
			return tt_os_address_loaded(at, &symbol) ? entry : entry | (uint64_t)(k + 1) << TT__GEN_SHIFT;
	return entry;
}

uint64_t tt__retired_until(size_t gen)
{
	return gen ? tt__retired[gen - 1]->until : 0;
}

/* The library's copy of its descriptor at `address`. Retired mutex held. */
static const struct tt_callsite *tt__lib_site(const struct tt__retired_lib *lib, uint64_t address)
{
	for (size_t i = 0; i < lib->nsites; i++)
		if (lib->sites[i].address == address)
			return &lib->sites[i].site;
	return &tt__unloaded_site;
}

const struct tt_callsite *tt__site_descriptor(uint64_t address, const struct tt__names_view *v)
{
	if (v->gen)
		return tt__lib_site(tt__retired[v->gen - 1], address);
	/* A library that began unloading after these records were told apart was loaded
	 * when they were made, and its memory may be gone: its copies. */
	for (size_t k = v->seen; k < tt__nretired; k++)
		if (tt__ranges_hold(&tt__retired[k]->ranges, address))
			return tt__lib_site(tt__retired[k], address);
	/* names made at run time live in names.c's memory, not in a module */
	return !v->loaded || tt__ranges_hold(v->loaded, address) || tt__names_hold(address) ?
		       (const struct tt_callsite *)(uintptr_t)address :
		       &tt__unloaded_site;
}

/* The module being unloaded (by its base and the loader's name for it): its ranges. */
static int tt__is_loaded(const struct tt_os_module *module, void *data)
{
	const struct tt__retired_lib *lib = data;
	return module->base == lib->base && strcmp(module->loaded_as, lib->name) == 0;
}

static int tt__find_retiring(const struct tt_os_module *module, void *data)
{
	struct tt__retired_lib *lib = data;
	if (tt__is_loaded(module, lib)) {
		tt_os_module_list_add(module, &lib->modules);
		tt__add_loaded(module, &lib->ranges);
	}
	return 0;
}

static char *tt__copy(const char *s)
{
	size_t n = s ? strnlen(s, UINT32_MAX / 4) : 0;
	char *copy = s ? malloc(n + 1) : NULL;
	if (copy) {
		memcpy(copy, s, n);
		copy[n] = 0;
	}
	return copy;
}

/* Room in the array at *p (cap elements of `size` bytes) for one more than count. */
static int tt__grow(void **p, size_t *cap, size_t count, size_t size)
{
	if (count < *cap)
		return 0;
	size_t grown_cap = *cap ? 2 * *cap : 16;
	void *grown = realloc(*p, grown_cap * size);
	if (!grown)
		return -ENOMEM;
	*p = grown;
	*cap = grown_cap;
	return 0;
}

static const struct tt__retired_func *tt__lib_func(const struct tt__retired_lib *lib, uint64_t address)
{
	for (size_t i = 0; i < lib->nfuncs; i++)
		if (lib->funcs[i].address == address)
			return &lib->funcs[i];
	return NULL;
}

/* Keeps the dynamic symbol of a function of the retiring library. */
static int tt__retire_func(struct tt__retired_lib *lib, uint64_t address)
{
	if (tt__lib_func(lib, address))
		return 0;
	if (tt__grow((void **)&lib->funcs, &lib->funcs_cap, lib->nfuncs, sizeof *lib->funcs) < 0)
		return -ENOMEM;
	const char *symbol = NULL;
	bool named = tt_os_address_loaded((void *)(uintptr_t)address, &symbol) && symbol;
	lib->funcs[lib->nfuncs++] = (struct tt__retired_func){address, named ? tt__copy(symbol) : NULL};
	return 0;
}

/* Copies the descriptors in the retiring library that the thread's records name
 * (not those of a library unloaded before it from the same addresses), and the
 * symbols of its functions. */
static int tt__retire_sites(const struct tt__thread_snapshot *snap, struct tt__retired_lib *lib,
			    size_t published)
{
	for (size_t c = 0; c < snap->chunks; c++) {
		for (const struct tt_record *r = snap->extents[c].begin; r < snap->extents[c].end; r++) {
			uint64_t address = TT_RECORD_PAYLOAD(r->word);
			unsigned kind = TT_RECORD_KIND(r->word);
			if ((!TT_RECORD_HAS_SITE(kind) && kind != TT_REC_FUNC_ENTER) ||
			    !tt__ranges_hold(&lib->ranges, address) ||
			    tt__generation(address, r->tsc, published))
				continue;
			if (kind == TT_REC_FUNC_ENTER) {
				if (tt__retire_func(lib, address) < 0)
					return -ENOMEM;
				continue;
			}
			if (tt__lib_site(lib, address) != &tt__unloaded_site)
				continue;
			if (tt__grow((void **)&lib->sites, &lib->sites_cap, lib->nsites, sizeof *lib->sites) < 0)
				return -ENOMEM;
			const struct tt_callsite *site = (const struct tt_callsite *)(uintptr_t)address;
			lib->sites[lib->nsites++] = (struct tt__retired_site){
				.address = address,
				.site = {tt__copy(site->name), tt__copy(site->file), tt__copy(site->func),
					 site->line, site->flags, tt__copy(tt__arg_name(site))},
			};
		}
	}
	return 0;
}

static void tt__retired_free(struct tt__retired_lib *lib)
{
	if (!lib)
		return;
	for (size_t i = 0; i < lib->nsites; i++) {
		const struct tt_callsite *site = &lib->sites[i].site;
		free((char *)site->name);
		free((char *)site->file);
		free((char *)site->func);
		free((char *)site->arg_name);
	}
	free(lib->sites);
	for (size_t i = 0; i < lib->nfuncs; i++)
		free(lib->funcs[i].symbol);
	free(lib->funcs);
	free(lib->ranges.range);
	free(lib->modules.data);
	free(lib->name);
	free(lib);
}

/* What keeping an unloaded library's copies met, said (-errno; 0: nothing). */
static void tt__retire_said(int err, const char *name)
{
	if (err == -ENOSPC)
		fprintf(tt__err, "ticktrace: more than %d libraries unloaded: call sites and functions "
			"of %s may be named after a library loaded later at its addresses\n",
			TT__RETIRED_MAX, name);
	else if (err)
		fprintf(tt__err, "ticktrace: no memory to keep the call sites of %s, which is being "
			"unloaded: they are named \"(unloaded library)\"\n", name);
}

/* The copies the threads' records need of `lib` (its ranges, and its modules, found
 * by `find` where set: Linux's, in the loader's list), kept among the retired: 0, or
 * -errno (-ENOSPC: too many), said of `name`. */
static int tt__retire_keep(struct tt__retired_lib *lib, const char *name,
			   int (*find)(const struct tt_os_module *module, void *data))
{
	int err = 0;
	tt__hold_chunks(1);
	tt__lock(&tt__retired_lock);
	if (tt__nretired == TT__RETIRED_MAX)
		err = -ENOSPC;
	else if (find)
		tt_os_modules(find, lib);
	err = err ? err : lib->ranges.err ? lib->ranges.err : lib->modules.err;
	size_t published = __atomic_load_n(&tt__retired_published, __ATOMIC_ACQUIRE);
	for (struct tt__slot *slot = tt__registry_head(); slot && lib->ranges.count && !err;
	     slot = __atomic_load_n(&slot->next, __ATOMIC_ACQUIRE)) {
		struct tt__thread_snapshot snap;
		err = tt__snapshot_thread(&snap, slot);
		if (!err)
			err = tt__retire_sites(&snap, lib, published);
		free(snap.extents);
	}
	if (!err && lib->ranges.count) {
		tt__retired[tt__nretired] = lib;
		__atomic_store_n(&tt__nretired, tt__nretired + 1, __ATOMIC_RELEASE);
	}
	tt__unlock(&tt__retired_lock);
	tt__hold_chunks(0);
	tt__retire_said(err, name);
	return err;
}

struct tt__retired_lib *tt__retire_library(uintptr_t base, const char *name)
{
	struct tt__retired_lib *lib = calloc(1, sizeof *lib);
	if (lib && !(lib->name = tt__copy(name))) {
		free(lib);
		lib = NULL;
	}
	int err = lib ? 0 : -ENOMEM;
	if (lib) {
		lib->base = base;
		err = tt__retire_keep(lib, name, tt__find_retiring);
	} else {
		tt__retire_said(err, name);
	}
	if (err || !lib->ranges.count) {
		tt__retired_free(lib);
		return NULL;
	}
	return lib;
}

/* Its until set (retired lock held), and the retired published up to the first that
 * has none. */
static void tt__retired_until_set(struct tt__retired_lib *lib, uint64_t until)
{
	lib->until = until;
	size_t published = tt__retired_published;
	while (published < tt__nretired && tt__retired[published]->until)
		published++;
	__atomic_store_n(&tt__retired_published, published, __ATOMIC_RELEASE);
}

void tt__module_unloaded(struct tt_os_module_list *ranges, uint64_t low, uint64_t high, uint64_t tsc)
{
	struct tt__retired_lib *lib = calloc(1, sizeof *lib);
	if (!lib) {
		free(ranges->data);
		tt__retire_said(-ENOMEM, "a module");
		return;
	}
	lib->base = (uintptr_t)low;
	lib->modules = *ranges;
	/* (its whole image: its descriptors wherever they are in it) */
	tt__add_loaded(&(struct tt_os_module){.start = low, .end = high}, &lib->ranges);
	if (tt__retire_keep(lib, "a module", NULL) || !lib->ranges.count) {
		tt__retired_free(lib);
		return;
	}
	tt__lock(&tt__retired_lock);
	tt__retired_until_set(lib, tsc);
	tt__unlock(&tt__retired_lock);
}

void tt__library_unloaded(struct tt__retired_lib *lib)
{
	if (!lib)
		return;
	/* after its destructors, which may have recorded too */
	uint64_t now = __builtin_ia32_rdtsc();
	tt__lock(&tt__retired_lock);
	/* Still loaded (opened more than once, or RTLD_NODELETE): nothing was unloaded. */
	if (tt_os_modules(tt__is_loaded, lib)) {
		lib->ranges.count = 0;
		lib->modules.count = 0;
		lib->modules.len = 0;
	}
	tt__retired_until_set(lib, now);
	tt__unlock(&tt__retired_lock);
}

/* The modules of libraries [from, to) of those unloaded. Retired mutex held. */
static void tt__out_retired_modules(struct tt__out *out, size_t from, size_t to)
{
	for (size_t k = from; k < to; k++)
		if (tt__retired[k]->modules.count)
			tt__out_module_list(out, &tt__retired[k]->modules, tt__retired[k]->until);
}

int tt__out_modules(struct tt__out *out)
{
	/* the unloaded first: an UNLOADED MODULES ends the span of what was described of
	 * its addresses before it, and a library loaded there since comes after */
	tt__lock(&tt__retired_lock);
	tt__out_retired_modules(out, 0, __atomic_load_n(&tt__retired_published, __ATOMIC_ACQUIRE));
	tt__unlock(&tt__retired_lock);
	return tt__out_loaded_modules(out);
}

/* tt__out_modules_since's UNLOADED part. */
static int tt__out_unloaded(struct tt__out *out, struct tt__site_set *set)
{
	size_t published = __atomic_load_n(&tt__retired_published, __ATOMIC_ACQUIRE);
	if (published == set->retired_seen)
		return 0;
	struct tt__site_set told = {.retired_seen = published};
	int err = 0;
	tt__lock(&tt__retired_lock);
	tt__out_retired_modules(out, set->retired_seen, published);
	/* What was described of their addresses was theirs: it is not described again
	 * when their records come, and a library loaded there since gets its own. */
	for (size_t i = 0; i < set->cap && !err; i++) {
		uint64_t entry = set->slots[i];
		if (!entry)
			continue;
		for (size_t k = set->retired_seen; k < published && !TT__GEN(entry); k++)
			if (tt__ranges_hold(&tt__retired[k]->ranges, entry & TT__ADDRESS_MASK))
				entry |= (uint64_t)(k + 1) << TT__GEN_SHIFT;
		err = tt__site_set_add(&told, entry) < 0 ? -ENOMEM : 0;
	}
	tt__unlock(&tt__retired_lock);
	if (err) {
		free(told.slots); /* (its UNLOADED sections are written again next time) */
		return err;
	}
	free(set->slots);
	*set = told;
	return 0;
}

int tt__out_modules_since(struct tt__out *out, struct tt__site_set *set, uint64_t *changes)
{
	int err = tt__out_unloaded(out, set);
	uint64_t now = tt_os_modules_changes();
	if (err || now == *changes)
		return err;
	*changes = now;
	return tt__out_loaded_modules(out);
}

size_t tt__retired_count(void)
{
	return __atomic_load_n(&tt__retired_published, __ATOMIC_ACQUIRE);
}

uint64_t tt__record_key(uint64_t address, uint64_t tsc)
{
	size_t published = __atomic_load_n(&tt__retired_published, __ATOMIC_ACQUIRE);
	return address | (uint64_t)tt__generation(address, tsc, published) << TT__GEN_SHIFT;
}

static size_t tt__name_out(size_t cap, int n)
{
	return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}

size_t tt__unloaded_name(uint64_t address, size_t gen, bool func, char *buf, size_t cap)
{
	const char *symbol;
	if (!gen && (!__atomic_load_n(&tt__nretired, __ATOMIC_ACQUIRE) ||
		     tt_os_address_loaded((void *)(uintptr_t)address, &symbol) || (!func && tt__names_hold(address))))
		return 0;
	char name[TT__NAME_MAX];
	size_t n;
	tt__lock(&tt__retired_lock);
	const struct tt__retired_lib *lib = gen ? tt__retired[gen - 1] : NULL;
	/* none loaded there now: the last one that was (its key was made before it went) */
	for (size_t k = tt__nretired; !gen && k-- > 0 && !lib;)
		if (tt__ranges_hold(&tt__retired[k]->ranges, address))
			lib = tt__retired[k];
	if (!func)
		n = tt__name_out(cap, snprintf(buf, cap, "%s", tt_site_name(lib ? tt__lib_site(lib, address) :
										   &tt__unloaded_site, name, sizeof name)));
	else if (lib && tt__lib_func(lib, address) && tt__lib_func(lib, address)->symbol)
		n = tt__name_out(cap, snprintf(buf, cap, "%s", tt__lib_func(lib, address)->symbol));
	else if (lib) /* as for a static function (report.c): for addr2line -e */
		n = tt__name_out(cap, snprintf(buf, cap, "%s+0x%" PRIx64,
						    strrchr(lib->name, '/') ? strrchr(lib->name, '/') + 1 : lib->name,
						    address - lib->base));
	else
		n = tt__name_out(cap, snprintf(buf, cap, "0x%" PRIx64, address));
	tt__unlock(&tt__retired_lock);
	return n;
}
