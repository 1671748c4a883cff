/* Time: TSC readings are converted offline to CLOCK_MONOTONIC nanoseconds. The file
 * carries anchors (a TSC reading and the clocks, taken together) from start and from
 * dump; the tools interpolate between them. No sleeping calibration at start-up.
 * (The kernel's own factors in the perf mmap page were considered: on virtual
 * machines cap_user_time is often 0, and perf_event_open cost 9 ms here.) */
#include <cpuid.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"

struct tt_anchor tt__start_anchor;

static uint64_t tt__rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

int64_t tt__clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The TSC at the middle of the tightest of a few (tsc, clock, tsc) brackets. */
void tt__anchor_now(struct tt_anchor *anchor)
{
	uint64_t best_gap = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t before = tt__rdtsc();
		int64_t mono = tt__clock_ns(CLOCK_MONOTONIC);
		uint64_t after = tt__rdtsc();
		if (after - before < best_gap) {
			best_gap = after - before;
			anchor->tsc = before + (after - before) / 2;
			anchor->monotonic_ns = mono;
		}
	}
	/* The other clocks as offsets from monotonic, read back to back. */
	int64_t mono = tt__clock_ns(CLOCK_MONOTONIC);
	anchor->boottime_ns = anchor->monotonic_ns + (tt__clock_ns(CLOCK_BOOTTIME) - mono);
	anchor->realtime_ns = anchor->monotonic_ns + (tt__clock_ns(CLOCK_REALTIME) - mono);
}

static int tt__invariant_tsc(void)
{
	unsigned eax, ebx, ecx, edx;
	if (!__get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx))
		return 0;
	return (edx >> 8) & 1;
}

static int tt__kernel_uses_tsc(void)
{
	char name[32] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	if (!f)
		return 0;
	int ok = fgets(name, sizeof name, f) && strncmp(name, "tsc", 3) == 0;
	fclose(f);
	return ok;
}

void tt__clock_fill_header(struct tt_file_header *header)
{
	header->start = tt__start_anchor;
	tt__anchor_now(&header->end);
	header->flags = 0;
	if (tt__invariant_tsc())
		header->flags |= TT_FILE_INVARIANT_TSC;
	if (tt__kernel_uses_tsc())
		header->flags |= TT_FILE_TSC_RELIABLE;
	header->tsc_source = TT_TSC_ANCHORS;
	header->tsc_hz = tt__anchor_hz(&header->start, &header->end);
}

uint64_t tt__anchor_hz(const struct tt_anchor *from, const struct tt_anchor *to)
{
	int64_t ns = to->monotonic_ns - from->monotonic_ns;
	uint64_t ticks = to->tsc - from->tsc;
	return ns > 0 ? (uint64_t)((unsigned __int128)ticks * 1000000000 / (uint64_t)ns) : 0;
}
