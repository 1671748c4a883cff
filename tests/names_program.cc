// Names made at run time and C++'s TT_FUNC, for test_names: a script loop that names
// its steps with std::string, and threads that intern many names at once.
//
//   names_program            the script loop (main thread "main")
//   names_program --many N   4 threads, each recording N distinct names twice
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#include "ticktrace.h"

struct Queue {
	int pop()
	{
		TT_FUNC();
		return 1;
	}
};

template <class T> static T checksum(const T *p, int n)
{
	TT_FUNC();
	T sum = 0;
	for (int i = 0; i < n; i++)
		sum += p[i];
	return sum;
}

static void run_script(const std::string &function)
{
	TT_SCOPE_DYN(function);
	TT_COUNTER_DYN(function + ".calls", function.size());
}

static int many;

static void *many_names(void *arg)
{
	long id = (long)arg;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < many; i++) {
			char name[32];
			snprintf(name, sizeof name, "name_%d", i); /* the same on every thread */
			TT_BEGIN_DYN(name);
			TT_END();
		}
	(void)id;
	return NULL;
}

int main(int argc, char **argv)
{
	tt_thread_name("main");
	if (argc == 3 && strcmp(argv[1], "--many") == 0) {
		many = atoi(argv[2]);
		pthread_t t[4];
		for (long i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, many_names, (void *)i);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	for (int i = 0; i < 5; i++) {
		std::string name = "script_" + std::to_string(i % 3);
		run_script(name);
		TT_INSTANT_DYN("step " + std::to_string(i));
	}
	Queue q;
	int values[3] = {1, 2, 3};
	return q.pop() + checksum(values, 3) == 7 ? 0 : 1;
}
