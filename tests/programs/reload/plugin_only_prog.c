/* plugin_only_prog PLUGIN.so: a program that does not use ticktrace itself loads a
 * plugin that does (reload_lib.c built as alpha), calls it a thousand times, unloads
 * it and goes on running while ticktrace's threads would: they must not run in a
 * library the dlclose unmapped. */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	int (*run)(int) = lib ? (int (*)(int))dlsym(lib, "alpha_run") : NULL;
	if (!run) {
		fprintf(stderr, "plugin_only_prog: %s\n", dlerror());
		return 1;
	}
	for (int i = 0; i < 1000; i++)
		run(i);
	dlclose(lib);
	struct timespec rest = {0, 50000000};
	nanosleep(&rest, NULL);
	return 0;
}
