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
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

struct tt__patched_module {
	uint64_t base;    /* its base (tt_os_address_module's: the load bias) */
	const char *name; /* and the loader's name for it */
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
	struct tt_os_address at;
	char loaded_as[1024];
	/* (each module asked twice: its name's length, then the name kept) */
	for (size_t i = 0; i < n; i++)
		if (tt_os_address_module((void *)modules[i], &at, loaded_as, sizeof loaded_as))
			bytes += strlen(at.loaded_as) + 1;
	struct tt__patched_namers *t = malloc(bytes);
	if (!t)
		return -ENOMEM;
	char *strings = (char *)(t->modules + n), *end = (char *)t + bytes;
	*t = (struct tt__patched_namers){.namer = namer};
	for (size_t i = 0; i < n; i++) {
		/* (in no module the loader knows, or none it knew a moment ago: left out) */
		if (!tt_os_address_module((void *)modules[i], &at, loaded_as, sizeof loaded_as))
			continue;
		size_t len = strlen(at.loaded_as) + 1;
		if (len > (size_t)(end - strings))
			continue;
		t->modules[t->n++] = (struct tt__patched_module){.base = at.base, .name = strings};
		strings = (char *)memcpy(strings, at.loaded_as, len) + len;
	}
	struct tt__patched_namers *none = NULL;
	if (!__atomic_compare_exchange_n(&tt__patched, &none, t, false, __ATOMIC_RELEASE,
					 __ATOMIC_RELAXED)) {
		free(t);
		return -EALREADY;
	}
	return 0;
}

size_t tt__patched_name(uint64_t address, const struct tt_os_address *module, char *buf, size_t cap)
{
	const struct tt__patched_namers *t = __atomic_load_n(&tt__patched, __ATOMIC_ACQUIRE);
	for (size_t i = 0; t && i < t->n; i++)
		if (t->modules[i].base == module->base && strcmp(t->modules[i].name, module->loaded_as) == 0)
			return t->namer(address, buf, cap);
	return 0;
}
