/* A run without markup for `ticktrace spikes --suggest` (test_names): built with
 * -finstrument-functions. tick() takes 1.2 ms on every one of its 50 calls, over a
 * 1 ms threshold; main holds everything once; mem_read() is too short to measure and
 * makes most of the calls. */
#include <stdint.h>
#include <time.h>

__attribute__((no_instrument_function)) static void busy_us(long us)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static volatile uint64_t memory[64];

__attribute__((noinline)) static uint64_t mem_read(int i)
{
	return memory[i & 63];
}

__attribute__((noinline)) static void tick(void)
{
	busy_us(1200);
}

int main(void)
{
	uint64_t sum = 0;
	for (int frame = 0; frame < 50; frame++) {
		tick();
		for (int i = 0; i < 2000; i++)
			sum += mem_read(i);
	}
	return sum == 0 ? 0 : 1;
}
