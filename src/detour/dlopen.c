/* The libraries the program loads with dlopen after start (a plugin, and what it
 * needs), patched as they load by the rules the constructor followed (detour.c): in
 * the zero-markup build their functions with NOPs at their entry, under record -f
 * those the patterns name, and their library calls as TICKTRACE_LIBCALLS takes them
 * (libcalls.c). So a plugin's functions are recorded when the program calls them
 * through dlsym's pointers, and its calls into the C library as FUNCTION@LIBRARY.
 *
 * Other threads may run meanwhile, but none runs a library's code before dlopen
 * returns it (but what its constructors, which have run, started): its code and its
 * GOT are written as at start. A GOT slot is written with one store; the loader's
 * lazy binding may write it too, and then that slot's calls go unrecorded.
 *
 * dlclose: while it runs, no patch of a library loaded later is undone (turn_off.c);
 * once a library is gone, its patches are forgotten (none is undone into what is
 * mapped there next) and its stubs unmapped: they are entered only from its own code
 * (its slots, its call sites, its functions' entries), which is gone too. The
 * functions a program or library patched at start calls stay as they are: a library
 * loaded later binds no slot of theirs (its symbols come after theirs).
 *
 * Not followed: dlmopen's namespaces, and the libraries the C library loads itself
 * (NSS, iconv: its business, as its own calls are). */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "detour.h"

/* A module known to be loaded, and the stubs made for it. */
struct tt__later_object {
	const void *dynamic; /* with its name: which it is */
	char *name;
	struct tt__detour_range range;
	struct tt__detour_area *areas;
	size_t nareas;
};

/* The constructor's settings, and what is loaded; changed under `lock`. */
static struct {
	int on, every_sled, libcalls, trampolines, says;
	char *text; /* the patterns' */
	char **patterns;
	size_t npatterns;
	char **excludes;
	size_t nexcludes;
	char *main_path;
	uintptr_t *patched; /* where the functions patched start (entry and patch), sorted */
	size_t npatched;
	struct tt__later_object *objects;
	size_t nobjects;
	pthread_mutex_t lock;
} tt__later = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* A dlopen of ticktrace's own (libdw's, as it looks for debug files) is passed on. */
static __thread int tt__later_inside;

static int tt__later_cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return (x > y) - (x < y);
}

int tt__detour_patched_before(uintptr_t target)
{
	return tt__later.npatched &&
	       bsearch(&target, tt__later.patched, tt__later.npatched, sizeof *tt__later.patched, tt__later_cmp);
}

/* Adds the functions of `d` that were patched to tt__later.patched. */
static void tt__later_add_patched(const struct tt__detour *d)
{
	uintptr_t *more = realloc(tt__later.patched, (tt__later.npatched + 2 * d->nfns + 1) * sizeof *more);
	if (!more)
		return; /* (a call into one may then be recorded twice) */
	tt__later.patched = more;
	for (size_t i = 0; i < d->nfns; i++)
		if (d->fns[i].patched) {
			more[tt__later.npatched++] = d->fns[i].addr;
			if (d->fns[i].entry != d->fns[i].addr)
				more[tt__later.npatched++] = d->fns[i].entry;
		}
	qsort(more, tt__later.npatched, sizeof *more, tt__later_cmp);
}

struct tt__later_scan {
	struct tt__detour_range *fresh; /* loaded, not known before */
	size_t nfresh;
	unsigned char *present; /* for each known object: still loaded (and none added) */
	int out_of_memory;
};

static int tt__later_known(const struct dl_phdr_info *info, const void *dynamic)
{
	for (size_t i = 0; i < tt__later.nobjects; i++)
		if (tt__later.objects[i].dynamic == dynamic && strcmp(tt__later.objects[i].name, info->dlpi_name) == 0)
			return (int)i;
	return -1;
}

/* Each loaded object: marked present if known, else (not asked which are present)
 * added to the known and to the fresh ones. */
static int tt__later_scan_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct tt__later_scan *scan = arg;
	const void *dynamic = NULL;
	struct tt__detour_range range = {UINTPTR_MAX, 0};
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
		if (ph->p_type == PT_DYNAMIC)
			dynamic = (const void *)start;
		if (ph->p_type == PT_LOAD) {
			range.low = start < range.low ? start : range.low;
			range.high = end > range.high ? end : range.high;
		}
	}
	int known = tt__later_known(info, dynamic);
	if (known >= 0 || scan->present) {
		if (known >= 0 && scan->present)
			scan->present[known] = 1;
		return 0;
	}
	struct tt__later_object *objects = realloc(tt__later.objects, (tt__later.nobjects + 1) * sizeof *objects);
	struct tt__detour_range *fresh = realloc(scan->fresh, (scan->nfresh + 1) * sizeof *fresh);
	char *name = strdup(info->dlpi_name);
	if (objects)
		tt__later.objects = objects;
	if (fresh)
		scan->fresh = fresh;
	if (!objects || !fresh || !name) {
		free(name);
		scan->out_of_memory = 1;
		return 1;
	}
	objects[tt__later.nobjects++] = (struct tt__later_object){.dynamic = dynamic, .name = name, .range = range};
	fresh[scan->nfresh++] = range;
	return 0;
}

/* fork: no other thread holds the lock while the process is copied */
static void tt__later_hold(void)
{
	pthread_mutex_lock(&tt__later.lock);
}

static void tt__later_let_go(void)
{
	pthread_mutex_unlock(&tt__later.lock);
}

char *tt__detour_later_start(struct tt__detour *d, int libcalls, int trampolines, int says, char *text)
{
	tt__later_add_patched(d);
	struct tt__later_scan scan = {0};
	dl_iterate_phdr(tt__later_scan_cb, &scan);
	free(scan.fresh);
	if (scan.out_of_memory || (d->main_path && !(tt__later.main_path = strdup(d->main_path))))
		return text; /* (the libraries loaded later are left as they are) */
	tt__later.every_sled = d->every_sled;
	tt__later.libcalls = libcalls;
	tt__later.trampolines = trampolines;
	tt__later.says = says;
	tt__later.text = text;
	tt__later.patterns = d->patterns;
	tt__later.npatterns = d->npatterns;
	tt__later.excludes = d->excludes;
	tt__later.nexcludes = d->nexcludes;
	d->patterns = d->excludes = NULL;
	d->npatterns = d->nexcludes = 0;
	pthread_atfork(tt__later_hold, tt__later_let_go, tt__later_let_go);
	__atomic_store_n(&tt__later.on, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Patches the objects dlopen brought (`fresh`) as the constructor patched the
 * program's; the stubs kept with their objects. Under the lock. */
static void tt__later_patch(const struct tt__detour_range *fresh, size_t nfresh)
{
	struct tt__detour d = {
		.later = 1, .brought = fresh, .nbrought = nfresh, .every_sled = tt__later.every_sled,
		.patterns = tt__later.patterns, .npatterns = tt__later.npatterns,
		.excludes = tt__later.excludes, .nexcludes = tt__later.nexcludes,
		.main_path = tt__later.main_path,
		.pattern_hits = calloc(tt__later.npatterns + 1, sizeof *d.pattern_hits),
		.pattern_notes = calloc(tt__later.npatterns + 1, sizeof *d.pattern_notes),
	};
	if (d.pattern_hits && d.pattern_notes && tt__detour_collect(&d) == 0) {
		/* (before the patches: the code is read for the GOT slots it calls through) */
		int hooked = tt__later.libcalls ? tt__detour_library_calls(&d, tt__later.libcalls) : 0;
		tt__detour_patch_all(&d, tt__later.trampolines, tt__later.says);
		if (hooked < 0)
			fprintf(stderr, "ticktrace: the library calls of a library loaded with dlopen are "
				"not all recorded: %s\n", strerror(-hooked));
		tt__later_add_patched(&d);
	} else {
		fprintf(stderr, "ticktrace: could not read the symbols of a library loaded with dlopen: "
			"its functions are not recorded\n");
	}
	for (size_t a = 0; a < d.nareas; a++)
		for (size_t i = 0; i < tt__later.nobjects; i++) {
			struct tt__later_object *o = &tt__later.objects[i];
			if (d.areas[a].owner < o->range.low || d.areas[a].owner >= o->range.high)
				continue;
			struct tt__detour_area *more = realloc(o->areas, (o->nareas + 1) * sizeof *more);
			if (more) /* (else never unmapped) */
				(o->areas = more)[o->nareas++] = d.areas[a];
			break;
		}
	d.patterns = d.excludes = NULL; /* (kept for the next) */
	d.npatterns = d.nexcludes = 0;
	tt__detour_free(&d);
}

__attribute__((visibility("default"))) void *dlopen(const char *file, int mode)
{
	static void *(*next)(const char *, int);
	if (!next)
		next = (void *(*)(const char *, int))(uintptr_t)dlsym(RTLD_NEXT, "dlopen");
	void *handle = next ? next(file, mode) : NULL;
	if (!handle || tt__later_inside || !__atomic_load_n(&tt__later.on, __ATOMIC_ACQUIRE))
		return handle;
	tt__later_inside = 1;
	tt__later_hold();
	struct tt__later_scan scan = {0};
	dl_iterate_phdr(tt__later_scan_cb, &scan);
	if (scan.nfresh)
		tt__later_patch(scan.fresh, scan.nfresh);
	free(scan.fresh);
	tt__later_let_go();
	tt__later_inside = 0;
	return handle;
}

/* Forgets the known objects no longer loaded: their patches, their stubs, their
 * patched functions. Under the lock. */
static void tt__later_gone(void)
{
	struct tt__later_scan scan = {.present = calloc(tt__later.nobjects + 1, 1)};
	if (!scan.present)
		return; /* (kept: a library loaded at its addresses later is then taken as known) */
	dl_iterate_phdr(tt__later_scan_cb, &scan);
	size_t kept = 0;
	for (size_t i = 0; i < tt__later.nobjects; i++) {
		struct tt__later_object *o = &tt__later.objects[i];
		if (scan.present[i]) {
			tt__later.objects[kept++] = *o;
			continue;
		}
		tt__detour_forget(o->range.low, o->range.high);
		for (size_t a = 0; a < o->nareas; a++)
			munmap((void *)o->areas[a].at, o->areas[a].size);
		size_t still = 0;
		for (size_t p = 0; p < tt__later.npatched; p++)
			if (tt__later.patched[p] < o->range.low || tt__later.patched[p] >= o->range.high)
				tt__later.patched[still++] = tt__later.patched[p];
		tt__later.npatched = still;
		free(o->areas);
		free(o->name);
	}
	tt__later.nobjects = kept;
	free(scan.present);
}

__attribute__((visibility("default"))) int dlclose(void *handle)
{
	static int (*next)(void *);
	if (!next)
		next = (int (*)(void *))(uintptr_t)dlsym(RTLD_NEXT, "dlclose");
	if (!next)
		return -1;
	if (tt__later_inside || !__atomic_load_n(&tt__later.on, __ATOMIC_ACQUIRE))
		return next(handle);
	tt__detour_unloading(1);
	int rc = next(handle);
	tt__later_inside = 1;
	tt__later_hold();
	tt__later_gone();
	tt__later_let_go();
	tt__later_inside = 0;
	tt__detour_unloading(0);
	return rc;
}
