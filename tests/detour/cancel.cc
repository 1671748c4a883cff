// pthread_exit and pthread_cancel through patched functions (test_detour.c):
// the unwind that ends the thread must run every destructor below them, as without
// ticktrace: the lock_guard is released, and main can take the lock again.
#include <pthread.h>
#include <unistd.h>
#include <cstdio>
#include <mutex>
#define W __attribute__((noinline))
static std::mutex held;
static int destroyed;
static int never_written[2];
struct Counted {
	~Counted() { destroyed++; }
};
// how 0: pthread_exit; 1: cancelled in read(2), a cancellation point
W void work_leave(int how)
{
	if (how == 0)
		pthread_exit(nullptr);
	char c;
	if (read(never_written[0], &c, 1) >= 0)
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
	work_hold((int)(long)how);
	return nullptr;
}
int main()
{
	if (pipe(never_written) != 0)
		return 1;
	for (long how = 0; how < 2; how++) {
		pthread_t t;
		void *result;
		pthread_create(&t, nullptr, thread_main, (void *)how);
		if (how == 1)
			pthread_cancel(t); // deferred: it acts in read
		pthread_join(t, &result);
		bool released = held.try_lock();
		if (released)
			held.unlock();
		std::printf("%s: %s, lock %s, %d destructors run\n", how ? "cancel" : "exit",
			    result == PTHREAD_CANCELED ? "cancelled" : "exited",
			    released ? "released" : "still held", destroyed);
	}
}
