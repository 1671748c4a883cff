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
 * (its slots, its call sites, its functions' entries), which is gone too.
 *
 * The lock is held across the C library's dlopen and dlclose and what follows: else
 * a library one thread's dlclose unloaded, and another's dlopen loaded again at the
 * same addresses before the first forgot it, would be taken as known and not patched.
 * It adds no wait the loader's own lock did not (held there too), but for a thread
 * that holds the loader's lock outside these (a dlopen of the C library's own, a
 * dlmopen) and calls dlopen from a constructor. What constructors and destructors
 * load and unload (a dlopen inside the C library's) is passed on, and taken as the
 * outer dlopen or dlclose looks, once the C library's returns. The
 * functions a program or library patched at start calls stay as they are: a library
 * loaded later binds no slot of theirs (its symbols come after theirs).
 *
 * Not followed: dlmopen's namespaces, and the libraries the C library loads itself
 * (NSS, iconv: its business, as its own calls are). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "detour.h"

struct tt__detour_later tt__detour_later;

/* Held while the known modules change, and patching. */
static pthread_mutex_t tt__later_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t tt__later_once = PTHREAD_ONCE_INIT;
/* A dlopen of ticktrace's own (libdw's, as it looks for debug files), or one inside
 * the C library's dlopen or dlclose, is passed on. */
static __thread int tt__later_inside;
/* The lock taken for a fork by this thread (not by one that forks from a constructor,
 * which holds it already). */
static __thread int tt__later_held_for_fork;

static void tt__later_hold(void)
{
	pthread_mutex_lock(&tt__later_lock);
}

static void tt__later_let_go(void)
{
	pthread_mutex_unlock(&tt__later_lock);
}

static void tt__later_before_fork(void)
{
	if (!tt__later_inside) {
		tt__later_hold();
		tt__later_held_for_fork = 1;
	}
}

static void tt__later_after_fork(void)
{
	if (tt__later_held_for_fork) {
		tt__later_held_for_fork = 0;
		tt__later_let_go();
	}
}

/* fork: no other thread holds the lock while the process is copied */
static void tt__later_at_fork(void)
{
	pthread_atfork(tt__later_before_fork, tt__later_after_fork, tt__later_after_fork);
}

/* Where `o` is among `all` (`n`), or -1. */
static ssize_t tt__later_find(const struct tt__detour_object *all, size_t n, const struct tt__detour_object *o)
{
	for (size_t i = 0; i < n; i++)
		if (all[i].dynamic == o->dynamic && all[i].range.low == o->range.low)
			return (ssize_t)i;
	return -1;
}

/* Patches the modules dlopen brought (`fresh`) as the constructor patched the
 * program's; their stubs kept with them. Under the lock. */
static void tt__later_patch(const struct tt__detour_range *fresh, size_t nfresh)
{
	struct tt__detour_later *later = &tt__detour_later;
	struct tt__detour d = {
		.later = 1, .brought = fresh, .nbrought = nfresh, .every_sled = later->every_sled,
		.patterns = later->patterns, .npatterns = later->npatterns,
		.excludes = later->excludes, .nexcludes = later->nexcludes, .main_path = later->main_path,
		.pattern_hits = calloc(later->npatterns + 1, sizeof *d.pattern_hits),
		.pattern_notes = calloc(later->npatterns + 1, sizeof *d.pattern_notes),
	};
	if (d.pattern_hits && d.pattern_notes && tt__detour_collect(&d) == 0) {
		tt__detour_mark_patterns(&d);
		/* (before the patches: the code is read for the GOT slots it calls through) */
		int hooked = later->libcalls ? tt__detour_library_calls(&d, later->libcalls) : 0;
		tt__detour_patch_all(&d, later->trampolines, later->says);
		if (hooked < 0)
			fprintf(tt__log(), "ticktrace: the library calls of a library loaded with dlopen are "
				"not all recorded: %s\n", strerror(-hooked));
		tt__detour_add_patched(&d);
	} else {
		fprintf(tt__log(), "ticktrace: could not read the symbols of a library loaded with dlopen: "
			"its functions are not recorded\n");
	}
	for (size_t a = 0; a < d.nareas; a++)
		for (size_t i = 0; i < later->nobjects; i++) {
			struct tt__detour_object *o = &later->objects[i];
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

/* The modules loaded since they were last looked at: known from now on, and patched.
 * Under the lock. */
static void tt__later_loaded(void)
{
	struct tt__detour_later *later = &tt__detour_later;
	struct tt__detour_object *now;
	ssize_t n = tt__detour_objects(&now);
	struct tt__detour_object *known = n > 0 ? realloc(later->objects, (later->nobjects + (size_t)n) * sizeof *known) : NULL;
	struct tt__detour_range *fresh = n > 0 ? calloc((size_t)n, sizeof *fresh) : NULL;
	size_t nfresh = 0;
	if (known)
		later->objects = known;
	for (ssize_t i = 0; known && fresh && i < n; i++)
		if (tt__later_find(known, later->nobjects, &now[i]) < 0) {
			known[later->nobjects++] = now[i];
			fresh[nfresh++] = now[i].range;
		}
	if (n > 0 && (!known || !fresh))
		fprintf(tt__log(), "ticktrace: no memory to patch a library loaded with dlopen: its "
			"functions are not recorded\n");
	if (nfresh)
		tt__later_patch(fresh, nfresh);
	free(fresh);
	free(n > 0 ? now : NULL);
}

/* Forgets the known modules no longer loaded: their patches, their stubs, their
 * patched functions. Under the lock. */
static void tt__later_gone(void)
{
	struct tt__detour_later *later = &tt__detour_later;
	struct tt__detour_object *now;
	ssize_t n = tt__detour_objects(&now);
	if (n < 0)
		return; /* (kept: a library loaded at their addresses later is then taken as known) */
	size_t kept = 0;
	for (size_t i = 0; i < later->nobjects; i++) {
		struct tt__detour_object *o = &later->objects[i];
		if (tt__later_find(now, (size_t)n, o) >= 0) {
			later->objects[kept++] = *o;
			continue;
		}
		tt__detour_forget(o->range.low, o->range.high);
		tt__detour_forget_patched(o->range.low, o->range.high);
		for (size_t a = 0; a < o->nareas; a++)
			munmap((void *)o->areas[a].at, o->areas[a].size);
		free(o->areas);
	}
	later->nobjects = kept;
	free(now);
}

__attribute__((visibility("default"))) void *dlopen(const char *file, int mode)
{
	static void *(*next)(const char *, int);
	if (!next)
		next = (void *(*)(const char *, int))(uintptr_t)dlsym(RTLD_NEXT, "dlopen");
	if (!next)
		return NULL;
	if (tt__later_inside || !__atomic_load_n(&tt__detour_later.on, __ATOMIC_ACQUIRE))
		return next(file, mode);
	pthread_once(&tt__later_once, tt__later_at_fork);
	tt__later_inside = 1;
	tt__later_hold();
	void *handle = next(file, mode);
	if (handle)
		tt__later_loaded();
	tt__later_let_go();
	tt__later_inside = 0;
	return handle;
}

__attribute__((visibility("default"))) int dlclose(void *handle)
{
	static int (*next)(void *);
	if (!next)
		next = (int (*)(void *))(uintptr_t)dlsym(RTLD_NEXT, "dlclose");
	if (!next)
		return -1;
	if (tt__later_inside || !__atomic_load_n(&tt__detour_later.on, __ATOMIC_ACQUIRE))
		return next(handle);
	pthread_once(&tt__later_once, tt__later_at_fork);
	tt__later_inside = 1;
	tt__later_hold();
	tt__detour_unloading(1);
	int rc = next(handle);
	tt__later_gone();
	tt__later_loaded(); /* (what its destructors loaded) */
	tt__detour_unloading(0);
	tt__later_let_go();
	tt__later_inside = 0;
	return rc;
}
