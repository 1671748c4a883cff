/* The calibration routine of the self-profiling tests: two counted loops at known
 * offsets of section tt_prof_calib (tests/profile/test_profile_calib.c). */
#ifndef TT_TEST_PROFILE_CALIB_H
#define TT_TEST_PROFILE_CALIB_H

#include <stdint.h>

/* Loop A fills the 64 bytes at offset 0 of the section, loop B the 64 at offset 64.
 * Each runs n > 0 iterations of two instructions (dec, jnz): same code, so CPU time
 * and instructions both follow n. */
enum { TT_TEST_CALIB_A = 0, TT_TEST_CALIB_B = 64, TT_TEST_CALIB_SIZE = 128 };
void tt_test_calib_a(uint64_t n);
void tt_test_calib_b(uint64_t n);
extern const char tt_test_calib_begin[];

/* CPU time of the calling thread in ns. */
uint64_t tt_test_thread_cpu_ns(void);

/* Iterations of a loop that take about `ns` of CPU time here (measured once). */
uint64_t tt_test_calib_iterations(uint64_t ns);

#endif
