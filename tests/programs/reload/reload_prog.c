/* reload_prog ALPHA.so GAMMA.so exit|wait|kill: loads alpha, calls it, unloads it,
 * loads gamma (at the address alpha had: exit 77 when the loader put it elsewhere),
 * calls it, and exits. With wait, it gives the background thread (a stream's drain,
 * a live file's) time to see each library loaded, and alpha's events while alpha is
 * loaded; with kill, it then dies of SIGKILL with its trace in the live file only,
 * gamma's call sites never described: they are named from its ELF file. */
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ticktrace.h>

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	/* The program uses ticktrace itself, so it stays loaded when the plugins go (a
	 * linker that drops unused libraries would have only the plugins load it). */
	tt_thread_name("reload_prog");
	int kill = strcmp(argv[3], "kill") == 0, wait = kill || strcmp(argv[3], "wait") == 0;
	static const char *const entries[] = {"alpha_run", "gamma_run"};
	uintptr_t base[2];
	for (int i = 0; i < 2; i++) {
		void *lib = dlopen(argv[1 + i], RTLD_NOW | RTLD_LOCAL);
		struct link_map *map;
		int (*run)(int) = lib ? (int (*)(int))dlsym(lib, entries[i]) : NULL;
		if (!run || dlinfo(lib, RTLD_DI_LINKMAP, &map) != 0) {
			fprintf(stderr, "reload_prog: %s\n", dlerror());
			return 1;
		}
		base[i] = map->l_addr;
		if (wait) /* a live file lists the libraries loaded since its last look */
			usleep(500000);
		if (run(3) != 10)
			return 1;
		if (i == 0) {
			if (wait) /* alpha's events are written, its call sites described */
				usleep(500000);
			dlclose(lib);
		}
	}
	if (base[0] != base[1]) {
		fprintf(stderr, "reload_prog: gamma was loaded at %#lx, not where alpha was (%#lx)\n",
			(unsigned long)base[1], (unsigned long)base[0]);
		return 77;
	}
	if (kill)
		raise(SIGKILL);
	return 0;
}
