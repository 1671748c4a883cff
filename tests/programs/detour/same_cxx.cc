// One feature of C++ programs a tracer must leave as it is, chosen by argv[1], for
// record_same.sh (as same.c):
//   exceptions    thrown through functions with objects to destroy, and caught
//   pthread_exit  a thread leaving from nested calls: the destructors below run and
//                 its std::lock_guard is released
//   threads       std::thread workers
// Output is deterministic; the exit status is 0.
#include <pthread.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#define NOINLINE __attribute__((noinline))

struct Noisy {
	const char *name;
	~Noisy() { std::printf("destroyed %s\n", name); }
};

NOINLINE int thrower(int x)
{
	if (x % 3 == 0)
		throw std::runtime_error("multiple of three: " + std::to_string(x));
	return x * 2;
}

NOINLINE int middle(int x)
{
	Noisy noisy{"middle"};
	std::string padding(static_cast<size_t>(x), '.');
	return thrower(x) + static_cast<int>(padding.size());
}

static int run_exceptions()
{
	int sum = 0;
	for (int i = 0; i < 5; i++) {
		try {
			sum += middle(i);
		} catch (const std::exception &e) {
			std::printf("caught: %s\n", e.what());
		}
	}
	std::printf("sum: %d\n", sum);
	return 0;
}

static std::mutex lock;

NOINLINE void leave_locked(int depth)
{
	Noisy noisy{depth ? "inner" : "outer"};
	if (depth < 0)
		return;
	if (depth == 1) {
		std::lock_guard<std::mutex> guard(lock);
		pthread_exit(nullptr);
	}
	leave_locked(depth + 1);
}

static void *leaver(void *)
{
	leave_locked(0);
	return nullptr;
}

static int run_pthread_exit()
{
	pthread_t thread;
	if (pthread_create(&thread, nullptr, leaver, nullptr) != 0)
		return 1;
	pthread_join(thread, nullptr);
	bool free_now = lock.try_lock();
	std::printf("lock %s\n", free_now ? "released" : "still held");
	if (free_now)
		lock.unlock();
	return free_now ? 0 : 1;
}

NOINLINE long work(long x)
{
	long sum = 0;
	for (long i = 0; i < 1000; i++)
		sum += (x + i) % 7;
	return sum;
}

static int run_threads()
{
	std::vector<long> sums(4);
	std::vector<std::thread> threads;
	for (long i = 0; i < 4; i++)
		threads.emplace_back([i, &sums] { sums[static_cast<size_t>(i)] = work(i); });
	for (auto &t : threads)
		t.join();
	for (size_t i = 0; i < sums.size(); i++)
		std::printf("thread %zu: %ld\n", i, sums[i]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && std::strcmp(argv[1], "exceptions") == 0)
		return run_exceptions();
	if (argc == 2 && std::strcmp(argv[1], "pthread_exit") == 0)
		return run_pthread_exit();
	if (argc == 2 && std::strcmp(argv[1], "threads") == 0)
		return run_threads();
	std::fprintf(stderr, "usage: same_cxx exceptions|pthread_exit|threads\n");
	return 2;
}
