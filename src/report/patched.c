/* The names of the functions `ticktrace record -f` (or the zero-markup build's patcher)
 * patched, asked of the patcher (libticktrace-detour) when the runtime names one
 * (common/record_protocol.h): the dynamic symbols dladdr reads know nothing of a
 * static function, nor of any in a program built without -rdynamic, which the live
 * spike log, the snapshots and the report at exit would name module+0xOFFSET while the
 * converter names them from the file's symbols. The patcher names them only when
 * asked, so that a process that never names one pays nothing for it before main.
 * Each name holds for its module as loaded when it was patched (its link map's name
 * and bias): a library unloaded since, and another loaded at its addresses, is not
 * named after it. The modules are noted once, whole, then published: the threads that
 * name (tt-spikes among them, which may already run) read them without a lock. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

struct tt__patched_module {
	uintptr_t bias;   /* its l_addr */
	const char *name; /* and l_name */
};

struct tt__patched_namers {
	tt__patched_namer_fn namer;
	size_t n;
	struct tt__patched_module modules[]; /* their names follow them */
};

static struct tt__patched_namers *tt__patched;

int tt__patched_namer(tt__patched_namer_fn namer, const uintptr_t *modules, size_t n)
{
	if (__atomic_load_n(&tt__patched, __ATOMIC_ACQUIRE))
		return -EALREADY;
	size_t bytes = sizeof(struct tt__patched_namers) + n * sizeof(struct tt__patched_module);
	struct link_map **maps = calloc(n + 1, sizeof *maps);
	if (!maps)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		Dl_info info;
		if (dladdr1((void *)modules[i], &info, (void **)&maps[i], RTLD_DL_LINKMAP) && maps[i])
			bytes += strlen(maps[i]->l_name) + 1;
		else
			maps[i] = NULL; /* (in no module the loader knows: left out) */
	}
	struct tt__patched_namers *t = malloc(bytes);
	if (!t) {
		free(maps);
		return -ENOMEM;
	}
	char *strings = (char *)(t->modules + n);
	*t = (struct tt__patched_namers){.namer = namer};
	for (size_t i = 0; i < n; i++) {
		if (!maps[i])
			continue;
		t->modules[t->n++] = (struct tt__patched_module){.bias = maps[i]->l_addr, .name = strings};
		strings = stpcpy(strings, maps[i]->l_name) + 1;
	}
	free(maps);
	struct tt__patched_namers *none = NULL;
	if (!__atomic_compare_exchange_n(&tt__patched, &none, t, false, __ATOMIC_RELEASE,
					 __ATOMIC_RELAXED)) {
		free(t);
		return -EALREADY;
	}
	return 0;
}

size_t tt__patched_name(uint64_t address, const struct link_map *module, char *buf, size_t cap)
{
	const struct tt__patched_namers *t = __atomic_load_n(&tt__patched, __ATOMIC_ACQUIRE);
	for (size_t i = 0; t && i < t->n; i++)
		if (t->modules[i].bias == module->l_addr && strcmp(t->modules[i].name, module->l_name) == 0)
			return t->namer(address, buf, cap);
	return 0;
}
