/* sched_late_prog PLUGIN.so: a thread started before ticktrace (the program does not
 * use it; the plugin it loads later does, reload_lib.c built as alpha) records through
 * the plugin, its switches asked for at its first event (tt-sched, which the run
 * counts at exit); then the thread sleeps 30 ms in the plugin's calls, with states.
 * Prints {"late": TID}. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t loaded;
static int (*run)(int);

static void *late(void *unused)
{
	(void)unused;
	pthread_barrier_wait(&loaded);
	for (int i = 0; i < 30; i++) {
		run(i);
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	printf("{\"late\": %d}\n", (int)gettid());
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	pthread_t thread;
	pthread_barrier_init(&loaded, NULL, 2);
	if (pthread_create(&thread, NULL, late, NULL)) /* (the C library's: no ticktrace yet) */
		return 1;
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	run = lib ? (int (*)(int))dlsym(lib, "alpha_run") : NULL;
	if (!run) {
		fprintf(stderr, "sched_late_prog: %s\n", dlerror());
		return 1;
	}
	pthread_barrier_wait(&loaded);
	pthread_join(thread, NULL);
	return 0;
}
