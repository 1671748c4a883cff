// pthread_exit, pthread_cancel and an exception through patched functions
// (test_detour.c): the unwind must run every destructor below them, as without
// ticktrace: the lock_guard is released, and main can take the lock again.
#include <pthread.h>
#include <unistd.h>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#define W __attribute__((noinline))
static std::mutex held;
static int destroyed;
static int never_written[2];
struct Counted {
	~Counted() { destroyed++; }
};
enum How { EXIT, CANCEL, THROW, RETURN };
W void work_leave(int how)
{
	if (how == EXIT)
		pthread_exit(nullptr);
	if (how == THROW)
		throw std::runtime_error("thrown");
	char c;
	if (how == CANCEL && read(never_written[0], &c, 1) >= 0) // a cancellation point
		std::puts("read returned");
}
W void work_hold(int how)
{
	std::lock_guard<std::mutex> guard(held);
	Counted counted;
	work_leave(how);
	asm volatile("");
}
static void *thread_main(void *how)
{
	if ((long)how != THROW) {
		work_hold((int)(long)how);
		return nullptr;
	}
	try {
		work_hold(THROW);
	} catch (const std::exception &e) {
		std::printf("caught: %s\n", e.what());
	}
	work_hold(RETURN); // (ends the calls the exception left, as they are found)
	return nullptr;
}
int main()
{
	if (pipe(never_written) != 0)
		return 1;
	static const char *const names[] = {"exit", "cancel", "throw"};
	for (long how = EXIT; how <= THROW; how++) {
		pthread_t t;
		void *result;
		pthread_create(&t, nullptr, thread_main, (void *)how);
		if (how == CANCEL)
			pthread_cancel(t); // deferred: it acts in read
		pthread_join(t, &result);
		bool released = held.try_lock();
		if (released)
			held.unlock();
		std::printf("%s: %s, lock %s, %d destructors run\n", names[how],
			    result == PTHREAD_CANCELED ? "cancelled" : "exited",
			    released ? "released" : "still held", destroyed);
	}
}
