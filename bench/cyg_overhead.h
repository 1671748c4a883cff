/* cyg_call_overhead_ns: what -finstrument-functions adds to a call. */
#ifndef TT_BENCH_CYG_OVERHEAD_H
#define TT_BENCH_CYG_OVERHEAD_H

#include <stdint.h>

/* Calls a noinline function `calls` times; nanoseconds taken (cyg_call.c). */
int64_t tt_bench_cyg_loop_plain(int calls);
int64_t tt_bench_cyg_loop_instrumented(int calls);

/* In a child process of its own (its thread's buffer holds all 20,000,000 events),
 * with the environment `env` added ("TICKTRACE=0": recording off): nanoseconds an
 * instrumented call adds, or -1 (said on stderr); `rdtsc_ns` receives a bare RDTSC timed the same way
 * (short rounds, the median). */
double tt_bench_cyg_overhead(const char *env, double *rdtsc_ns);
/* The calls go in rounds, each timed with and without instrumentation back to back,
 * short enough (under a millisecond) that most run within one time slice: the median
 * round is the figure, so that the moments when a shared machine takes the CPU away
 * spoil some rounds, not the result. */
#define TT_BENCH_CYG_ROUNDS 1000
/* The median of TT_BENCH_CYG_ROUNDS figures (sorts them). */
double tt_bench_cyg_median(double *v);
/* A bare RDTSC timed in the same rounds: rdtsc_ns, taken over a longer stretch, counts
 * more of the time a loaded machine gives to others. Nanoseconds per read. */
double tt_bench_cyg_rdtsc(int reads);

/* The child's side: prints that figure; the exit status. */
int tt_bench_cyg_child(void);
#define TT_BENCH_CYG_CHILD "--cyg-child"

#endif
