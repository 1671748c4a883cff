#!/bin/sh
# The zero-markup build tunes itself: a function whose calls TICKTRACE_MIN_DUR keeps
# erasing is turned off after TICKTRACE_TURN_OFF of them (its patch undone while the
# program runs), and what that left out is said: at exit, and in `report` (the calls
# filtered before, and when). tiny() is called short four million times by four threads
# at once (so it is turned off while other threads run its entry), then once long (3
# ms): not recorded, as said. slow() (2 us each) is never short: all its calls are kept,
# as many as the program made. Before, tiny's every call went through the trampoline
# (its calls erased, or once the buffer was full dropped) and nothing was turned off.
# (Its library calls are left out: TICKTRACE_LIBCALLS=0; libcalls.sh.)
#   zero_turn_off.sh BUILD_DIR SANITIZE  (TT_TEST_TOOL: the ticktrace command)
set -eu
. "$(dirname "$0")/scratch_install.sh"
scratch_install "$1" "${2:-none}"
cat >zero.c <<'PROG'
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <time.h>
static long since_ns(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000000L + t.tv_nsec - t0->tv_nsec;
}
__attribute__((noinline)) int tiny(int x, long spin_ns)
{
	__asm__ volatile("" : "+r"(x));
	if (spin_ns) {
		struct timespec t0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (since_ns(&t0) < spin_ns)
			;
	}
	return x + 1;
}
__attribute__((noinline)) int slow(int x)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (since_ns(&t0) < 2000)
		;
	return x;
}
static void *work(void *arg)
{
	long sum = 0;
	for (int i = 0; i < 1000000; i++)
		sum += tiny(i, 0) + (i % 1000 ? 0 : slow(i));
	*(long *)arg = sum;
	return NULL;
}
int main(void)
{
	pthread_t t[4];
	long sums[4], total = 0;
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, work, &sums[i]);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		total += sums[i];
	}
	printf("%ld %d\n", total, tiny(1, 3000000));
	return 0;
}
PROG
gcc -std=c11 -O2 -g -pthread -o zero zero.c $(pkg-config --cflags --libs ticktrace-instrument)
gcc -std=c11 -O2 -g -pthread -o plain zero.c
./plain >expected.out
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
LD_LIBRARY_PATH=$libdir TICKTRACE_LIBCALLS=0 TICKTRACE_OUT=$root/run.ttr ./zero >run.out 2>run.err ||
	{ cat run.err >&2; echo "FAIL: the program exits $?" >&2; exit 1; }
cat run.err
cmp -s run.out expected.out || fail "the program printed $(cat run.out), not $(cat expected.out)"
grep -q '^ticktrace: 1 function turned off after 1024 short calls each .*their later calls were not recorded nor counted' run.err ||
	fail "the run does not say at exit that it turned tiny off"
"$TT_TEST_TOOL" report run.ttr >report.out 2>report.err || { cat report.err >&2; fail "report fails"; }
cat report.out
grep -q 'run.ttr: 1 function turned off as the run went, each once a thread.s TICKTRACE_MIN_DUR had erased 1024 of its calls' report.out ||
	fail "report does not say that a function was turned off"
filtered=$(sed -n 's/^  tiny: filtered \([0-9]*\) calls before it was turned off at .*/\1/p' report.out)
[ -n "$filtered" ] || fail "report does not name tiny as turned off"
# each thread erased up to 1024 before one of them turned it off, and the others go on
# erasing theirs while it does (a few thousand quiet; 159,286 in a CI run at load, its
# turning thread preempted for 2 ms with the patch held): fewer than half the 4,000,001
# made, where nothing turned off (the defect) filters every one
[ "${filtered:-0}" -ge 1024 ] && [ "${filtered:-0}" -lt 2000000 ] ||
	fail "tiny's calls filtered before it was turned off: ${filtered:-none}, not 1024 to 2,000,000"
slow=$(awk '$1 == "slow" {print $2}' report.out)
[ "${slow:-0}" = 4000 ] || fail "slow's calls: ${slow:-none}, not the 4,000 the program made"
# the 3 ms call of tiny, main's, came after it was turned off: in no row of main's (a
# worker's short call that a loaded machine preempted for milliseconds is rightly kept)
main_tid=$("$TT_TEST_TOOL" info run.ttr | sed -n 's/^ *process: *\([0-9]*\) .*/\1/p' | head -n 1)
"$TT_TEST_TOOL" report --thread "${main_tid:-0}" run.ttr >main.report 2>&1 || fail "report --thread $main_tid fails"
grep -q '^main ' main.report || fail "main's own report (tid ${main_tid:-none}) has no main: $(cat main.report)"
! grep -q '^tiny ' main.report || fail "tiny's 3 ms call was recorded after it was turned off: $(cat main.report)"
# TICKTRACE_TURN_OFF=0: never turned off (each call erased, or dropped once the buffer is full)
LD_LIBRARY_PATH=$libdir TICKTRACE_LIBCALLS=0 TICKTRACE_TURN_OFF=0 TICKTRACE_OUT=$root/never.ttr ./zero \
	>never.out 2>never.err || fail "the run with TICKTRACE_TURN_OFF=0 exits $?"
! grep -q 'turned off' never.err || fail "TICKTRACE_TURN_OFF=0 turned something off"
"$TT_TEST_TOOL" report never.ttr >never.report 2>/dev/null || fail "report of the run that turned nothing off fails"
awk '$1 == "tiny" && $12 == "ms"' never.report | grep -q . || fail "with TICKTRACE_TURN_OFF=0, tiny's 3 ms call is not recorded"
! grep -q 'turned off' never.report || fail "report says a function was turned off where none was"
# a value that is no number is said, and the default used (zero_said.sh)
LD_LIBRARY_PATH=$libdir TICKTRACE_LIBCALLS=0 TICKTRACE_TURN_OFF=many TICKTRACE_OUT=$root/bad.ttr ./zero \
	>bad.out 2>bad.err || fail "the run with TICKTRACE_TURN_OFF=many exits $?"
grep -q 'TICKTRACE_TURN_OFF=many is not a number of calls (0: never); using the default (1024' bad.err &&
	grep -q '^ticktrace: 1 function turned off after 1024 short calls' bad.err ||
	{ cat bad.err >&2; fail "TICKTRACE_TURN_OFF=many is not said, or its default not used"; }
# Two short functions whose addresses agree in their low 14 bits (16 KiB apart) are both
# erased and turned off: before, the filter's table had one entry for both, and the
# second's calls were all recorded (the buffer soon full), never turned off.
cat >twins.c <<'PROG'
__attribute__((noinline, aligned(16384))) int one(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}
__attribute__((noinline, aligned(16384))) int two(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 2;
}
int main(void)
{
	int sum = 0;
	for (int i = 0; i < 3000000; i++)
		sum += one(i) + two(i);
	return sum == 0;
}
PROG
gcc -std=c11 -O2 -g -o twins twins.c $(pkg-config --cflags --libs ticktrace-instrument)
[ $(( $(nm twins | awk '$3 == "one" {print "0x" $1}') % 16384 )) = 0 ] ||
	fail "one() is not 16 KiB-aligned: the test does not test"
LD_LIBRARY_PATH=$libdir TICKTRACE_LIBCALLS=0 TICKTRACE_OUT=$root/twins.ttr ./twins 2>twins.err ||
	{ cat twins.err >&2; fail "twins exits $?"; }
"$TT_TEST_TOOL" report twins.ttr >twins.report 2>/dev/null || fail "report of twins fails"
for f in one two; do
	grep -q "^  $f: filtered 1024 calls before it was turned off" twins.report ||
		{ cat twins.err twins.report >&2; fail "$f was not turned off after 1024 calls"; }
done
[ "$failures" = 0 ] || exit 1
echo "tiny turned off after $filtered filtered calls on four threads, said at exit and by report; slow's 4000 calls kept"
