/* The clock anchors, one for both systems on the platform's clocks: a TSC reading and
 * the clocks taken together, which the tools interpolate between; and what the CPU
 * says of its TSC. */
#include <cpuid.h>
#include <x86intrin.h>

#include "platform/platform.h"

/* The TSC at the middle of the tightest of a few (tsc, clock, tsc) brackets. */
void tt_os_anchor(struct tt_anchor *anchor)
{
	uint64_t best_gap = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t before = __rdtsc();
		int64_t mono = tt_os_monotonic_ns();
		uint64_t after = __rdtsc();
		if (after - before < best_gap) {
			best_gap = after - before;
			anchor->tsc = before + (after - before) / 2;
			anchor->monotonic_ns = mono;
		}
	}
	/* The other clocks as offsets from monotonic, read back to back. */
	int64_t mono = tt_os_monotonic_ns();
	anchor->boottime_ns = anchor->monotonic_ns + (tt_os_boottime_ns() - mono);
	anchor->realtime_ns = anchor->monotonic_ns + (tt_os_realtime_ns() - mono);
}

uint64_t tt_os_anchor_hz(const struct tt_anchor *from, const struct tt_anchor *to)
{
	int64_t ns = to->monotonic_ns - from->monotonic_ns;
	uint64_t ticks = to->tsc - from->tsc;
	return ns > 0 ? (uint64_t)((unsigned __int128)ticks * 1000000000 / (uint64_t)ns) : 0;
}

uint64_t tt_os_ns_in_ticks(uint64_t ns)
{
	struct tt_anchor from, to;
	tt_os_anchor(&from);
	do
		tt_os_anchor(&to);
	while (to.monotonic_ns - from.monotonic_ns < 100000);
	return (uint64_t)((double)ns * (double)tt_os_anchor_hz(&from, &to) / 1e9 + 0.5);
}

int tt_os_invariant_tsc(void)
{
	/* (asked once: CPUID is a trip to the hypervisor in a virtual machine, and each
	 * snapshot's header asks) */
	static int invariant = -1;
	int known = __atomic_load_n(&invariant, __ATOMIC_RELAXED);
	if (known >= 0)
		return known;
	unsigned eax, ebx, ecx, edx;
	known = __get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx) ? (edx >> 8) & 1 : 0;
	__atomic_store_n(&invariant, known, __ATOMIC_RELAXED);
	return known;
}
