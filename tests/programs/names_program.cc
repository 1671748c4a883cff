// Names made at run time and C++'s TT_FUNC, for test_names: a script loop that names
// its steps with std::string, and threads that intern many names at once.
//
//   names_program            the script loop (main thread "main")
//   names_program --many N   4 threads, each recording N distinct names twice
//   names_program --frames   a game loop of frames, one of them slow
//   names_program --conditional   TT_SCOPE_IF and TT_PARENTS_THRESHOLD_NS
//   names_program --recursion     fib inside a scope, and scopes too short to measure
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* Spins for about `us` microseconds (a sleep could take much longer). */
static void busy_us(long us)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

/* A game loop of 10 frames: frame 6's script takes 30 ms, the others 1 ms. */
static void frames(void)
{
	for (int frame = 1; frame <= 10; frame++) {
		TT_FRAME_MARK();
		TT_SCOPE("tick");
		TT_SCOPE_VALUE(frame * 100);
		std::string script = frame == 6 ? "slow_script" : "script";
		TT_SCOPE_DYN(script);
		TT_DESCRIBE("frame %d runs %s", frame, script.c_str());
		busy_us(frame == 6 ? 30000 : 1000);
	}
	TT_FRAME_MARK();
}

/* Markup that steers the detector: a scope recorded only when its condition holds,
 * a thread paused when one holds, a scope ignored when one holds, and a threshold for
 * every enclosing scope. */
static void conditional(void)
{
	for (int i = 0; i < 4; i++) {
		TT_PAUSE_IF(i == 1); /* iteration 1 records nothing */
		TT_SCOPE("outer");
		TT_SCOPE_IF(i % 2 == 0, "even");
		{
			TT_SCOPE("inner");
			if (i == 2) {
				TT_PARENTS_THRESHOLD_NS(500000);
				busy_us(2000);
			}
		}
		if (i == 2)
			busy_us(2000); /* in "even" itself: it spikes too */
		TT_SCOPE("maybe_ignored");
		TT_THRESHOLD_NS(100000);
		TT_IGNORE_IF(i == 3);
		busy_us(300);
	}
}

static int fib(int n)
{
	TT_FUNC();
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* Recursion inside a scope, calls too short to measure, and one that is not. */
static int recursion(void)
{
	TT_SCOPE("run");
	int sum = fib(12);
	for (int i = 0; i < 1000; i++) {
		TT_SCOPE("tiny");
		sum += i;
	}
	{
		TT_SCOPE("phase"); /* two call sites of one name, one inside the other */
		busy_us(100);
		TT_SCOPE("phase");
		busy_us(100);
	}
	TT_SCOPE("slow");
	busy_us(2000);
	return sum;
}

int main(int argc, char **argv)
{
	tt_thread_name("main");
	if (argc == 2 && strcmp(argv[1], "--frames") == 0) {
		frames();
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "--recursion") == 0)
		return recursion() > 0 ? 0 : 1;
	if (argc == 2 && strcmp(argv[1], "--conditional") == 0) {
		conditional();
		return 0;
	}
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
	TT_INSTANT_NAMED_ARG("loaded", "bytes", 4096);
	Queue q;
	int values[3] = {1, 2, 3};
	return q.pop() + checksum(values, 3) == 7 ? 0 : 1;
}
