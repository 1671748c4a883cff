/* The names of the functions `ticktrace record -f` patched, handed over by the patcher
 * (libticktrace-detour) before main (common/record_protocol.h): the dynamic symbols
 * dladdr reads know nothing of a static function, nor of any in a program built
 * without -rdynamic, which the live spike log, the snapshots and the report at exit
 * would name module+0xOFFSET while the converter names them from the file's symbols.
 * Each name holds for its module as loaded then (its link map's name and bias): a
 * library unloaded since, and another loaded at its addresses, is not named after
 * it. The table is made once, whole, then published: the threads that name
 * (tt-spikes among them, which may already run) read it without a lock. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

struct tt__patched_entry {
	uint64_t address;
	const char *name;
	uintptr_t bias;     /* its module's l_addr */
	const char *module; /* and l_name */
};

struct tt__patched_table {
	size_t n;
	struct tt__patched_entry entries[]; /* by address; their names follow them */
};

static struct tt__patched_table *tt__patched;

static int tt__patched_cmp(const void *a, const void *b)
{
	const struct tt__patched_entry *x = a, *y = b;
	return (x->address > y->address) - (x->address < y->address);
}

int tt__patched_names(const struct tt__patched_function *fns, size_t n)
{
	if (__atomic_load_n(&tt__patched, __ATOMIC_ACQUIRE))
		return -EALREADY;
	size_t bytes = sizeof(struct tt__patched_table) + n * sizeof(struct tt__patched_entry);
	struct link_map **modules = calloc(n + 1, sizeof *modules);
	if (!modules)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		Dl_info info;
		/* (a library call's: the program's GOT slot, TT_FUNC_LIBRARY_CALL) */
		if (dladdr1((void *)(fns[i].address & ~TT_FUNC_LIBRARY_CALL), &info, (void **)&modules[i],
			    RTLD_DL_LINKMAP) && modules[i])
			bytes += strlen(fns[i].name) + strlen(modules[i]->l_name) + 2;
		else
			modules[i] = NULL; /* (in no module the loader knows: left out) */
	}
	struct tt__patched_table *t = malloc(bytes);
	if (!t) {
		free(modules);
		return -ENOMEM;
	}
	char *strings = (char *)(t->entries + n);
	t->n = 0;
	for (size_t i = 0; i < n; i++) {
		if (!modules[i])
			continue;
		struct tt__patched_entry *e = &t->entries[t->n++];
		*e = (struct tt__patched_entry){.address = fns[i].address, .bias = modules[i]->l_addr};
		e->name = strings;
		strings = stpcpy(strings, fns[i].name) + 1;
		e->module = strings;
		strings = stpcpy(strings, modules[i]->l_name) + 1;
	}
	free(modules);
	n = t->n;
	if (n)
		qsort(t->entries, n, sizeof t->entries[0], tt__patched_cmp);
	struct tt__patched_table *none = NULL;
	if (!__atomic_compare_exchange_n(&tt__patched, &none, t, false, __ATOMIC_RELEASE,
					 __ATOMIC_RELAXED)) {
		free(t);
		return -EALREADY;
	}
	return 0;
}

const char *tt__patched_name(uint64_t address, const struct link_map *module)
{
	const struct tt__patched_table *t = __atomic_load_n(&tt__patched, __ATOMIC_ACQUIRE);
	size_t lo = 0, hi = t ? t->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->entries[mid].address < address)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!t || lo == t->n || t->entries[lo].address != address)
		return NULL;
	const struct tt__patched_entry *e = &t->entries[lo];
	return e->bias == module->l_addr && strcmp(e->module, module->l_name) == 0 ? e->name : NULL;
}
