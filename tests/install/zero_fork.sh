#!/bin/sh
# A forked child of a zero-markup program: its file starts inside the parent's call of
# fork, which returns in it too, and after the parent turned tiny off. Before, the
# child's fork@libc.so.6 was hooked and its exit, the child's first record, was said as
# "1 function exits with no entry"; and report said tiny "turned off at -24.404 ms"
# (the parent's time, before the child's start anchor). Now the child's run starts
# inside the calls open when it was forked (main, fork@libc.so.6: entered at its
# start), and a function turned off before the child began is said so.
#   zero_fork.sh BUILD_DIR SANITIZE  (TT_TEST_TOOL: the ticktrace command)
set -eu
. "$(dirname "$0")/scratch_install.sh"
scratch_install "$1" "${2:-none}"
cat >forks.c <<'PROG'
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
__attribute__((noinline)) int tiny(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}
__attribute__((noinline)) int slow(int x)
{
	struct timespec t = {0, 1000000};
	nanosleep(&t, NULL);
	return x;
}
int main(void)
{
	long sum = 0;
	for (int i = 0; i < 100000; i++)
		sum += tiny(i);
	pid_t child = fork();
	if (child < 0)
		return 2;
	sum += slow(1) + tiny(1);
	if (child == 0)
		return sum == 0;
	int status;
	return waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status);
}
PROG
gcc -std=c11 -O2 -g -o forks forks.c $(pkg-config --cflags --libs ticktrace-instrument)
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
LD_LIBRARY_PATH=$libdir TICKTRACE_OUT=$root/run.ttr timeout 120 ./forks 2>run.err ||
	{ cat run.err >&2; echo "FAIL: the program exits $?" >&2; exit 1; }
set -- run.ttr.*
[ $# = 1 ] && [ -f "$1" ] || { ls >&2; echo "FAIL: no file of the forked child (run.ttr.PID)" >&2; exit 1; }
child=$1
"$TT_TEST_TOOL" report "$child" >child.report 2>child.err || { cat child.err >&2; fail "report of the child fails"; }
cat child.err child.report
! grep -q 'exits with no entry' child.err || fail "the child's file has a function exit with no entry"
"$TT_TEST_TOOL" convert -q "$child" -o child.json
for name in main slow; do
	grep -q "\"name\":\"$name\"" child.json || fail "the child's file has no $name"
done
# (fork's return in the child, short: erased by TICKTRACE_MIN_DUR, counted)
[ "$(awk '$1 == "fork@libc.so.6" {print $2}' child.report)" = 1 ] || fail "the child's report has no call of fork@libc.so.6"
grep -q '^  tiny: filtered [0-9]* calls before it was turned off before this process began$' child.report ||
	fail "the child's report does not say tiny was turned off before it began"
! grep -q 'turned off at -' child.report || fail "the child's report says a negative time"
"$TT_TEST_TOOL" report run.ttr >parent.report 2>parent.err || { cat parent.err >&2; fail "report of the parent fails"; }
grep -q '^  tiny: filtered [0-9]* calls before it was turned off at [0-9]' parent.report ||
	{ cat parent.report >&2; fail "the parent's report does not say when tiny was turned off"; }
[ "$failures" = 0 ] || exit 1
echo "the forked child's file: no exit without entry, tiny turned off before it began"
