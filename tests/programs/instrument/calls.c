/* Instrumented with -finstrument-functions by test_instrument: recursion, manual
 * scopes inside instrumented functions, a function in a shared library, one in a
 * library loaded with dlopen (its path is argv[1]) and unloaded before the dump, and
 * one called from two threads. */
#define _GNU_SOURCE /* pthread_setname_np */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <ticktrace.h>

#include "shared.h"

static volatile int sink;

__attribute__((noinline)) static int fact(int n)
{
	return n <= 1 ? 1 : n * fact(n - 1);
}

__attribute__((noinline)) static void inner(void)
{
	sink++;
}

/* Macro scopes nest inside the function's slice and around its calls. */
__attribute__((noinline)) static void mixed(void)
{
	TT_SCOPE("manual_scope");
	inner();
	TT_BEGIN("manual_pair");
	inner();
	TT_END();
}

__attribute__((noinline)) static void crunch(void)
{
	sink += 2;
}

static void *worker(void *name)
{
	pthread_setname_np(pthread_self(), name);
	crunch();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	sink = fact(3);
	mixed();
	sink += shared_add(1, 2);
	void *plugin = dlopen(argv[1], RTLD_NOW);
	int (*entry)(int) = plugin ? (int (*)(int))dlsym(plugin, "plugin_entry") : NULL;
	if (!entry) {
		fprintf(stderr, "calls: %s\n", dlerror());
		return 1;
	}
	sink += entry(4);
	dlclose(plugin); /* unloaded before the trace is written */
	pthread_t threads[2];
	char *names[2] = {"worker-a", "worker-b"};
	for (int i = 0; i < 2; i++)
		pthread_create(&threads[i], NULL, worker, names[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
