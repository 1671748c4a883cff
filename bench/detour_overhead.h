/* detour_call_overhead_ns and patchable_call_overhead_ns: what a function patched by
 * `ticktrace record -f` adds to a call (two events). */
#ifndef TT_BENCH_DETOUR_OVERHEAD_H
#define TT_BENCH_DETOUR_OVERHEAD_H

#include <stdint.h>

/* Calls a noinline function `calls` times; nanoseconds taken (detour_call.c). */
int64_t tt_bench_detour_loop_plain(int calls);
int64_t tt_bench_detour_loop_relocated(int calls);
int64_t tt_bench_detour_loop_patchable(int calls);
int tt_bench_detour_callee_relocated(int x);
int tt_bench_detour_callee_patchable(int x);

/* In a child process with the detour library preloaded, patching the relocated and
 * the patchable callee: nanoseconds each adds to a call; `rdtsc_ns` receives a bare
 * RDTSC timed in the same rounds. 0, or -1 (said on stderr). */
int tt_bench_detour_overhead(double *relocated_ns, double *patchable_ns, double *rdtsc_ns);
/* The child's side: prints the three figures; the exit status. */
int tt_bench_detour_child(void);
#define TT_BENCH_DETOUR_CHILD "--detour-child"

#endif
