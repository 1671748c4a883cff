/* dlclose, interposed: a library unloaded before the dump would take with it the
 * call-site descriptors its records point to (reading them would fault) and its
 * place in the module map (its functions could not be named). The runtime keeps
 * both (writer/retired.c: tt__retire_library), then the C library's dlclose unloads it,
 * and the time it returned tells its records from those of a library loaded at the
 * same addresses later. */
#include <dlfcn.h>
#include <link.h>

#include "lifecycle/lifecycle.h"

TT_API int dlclose(void *handle);

int dlclose(void *handle)
{
	static int (*next_dlclose)(void *);
	if (!next_dlclose)
		next_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	if (!next_dlclose)
		return -1;
	struct link_map *map;
	struct tt__retired_lib *lib = NULL;
	tt__init();
	if (!tt__config.off && dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map->l_name)
		lib = tt__retire_library(map->l_addr, map->l_name);
	int rc = next_dlclose(handle);
	tt__library_unloaded(lib);
	return rc;
}
