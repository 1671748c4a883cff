#!/bin/sh
# What a setting's bad value does: said once on stderr, naming what was wrong and what
# is used instead (the default), never a feature turned off without a word. Before,
# TICKTRACE_MIN_DUR=1h or -5us turned the filter off (a zero-markup bzip2 dropped 7.56
# M events), TICKTRACE_TURN_OFF=x turned nothing off, and TICKTRACE=garbage and
# TICKTRACE_SCHED=weird were taken without a word. And a program compiled without
# ticktrace-instrument's cflags (given to the link alone, as LDFLAGS) recorded its
# library calls only, with no word that its code has no patchable entries.
#   zero_said.sh BUILD_DIR SANITIZE  (TT_TEST_TOOL: the ticktrace command)
set -eu
. "$(dirname "$0")/scratch_install.sh"
scratch_install "$1" "${2:-none}"
unset TICKTRACE TICKTRACE_SCHED TICKTRACE_BUFFER TICKTRACE_MODE TICKTRACE_MEMORY TICKTRACE_TURN_OFF \
	TICKTRACE_LIVE
cat >zero.c <<'PROG'
#include <stdio.h>
__attribute__((noinline)) int tiny(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}
int main(void)
{
	int sum = 0;
	for (int i = 0; i < 20000; i++)
		sum += tiny(i);
	FILE *f = fopen("/dev/null", "w");
	fprintf(f, "%d\n", sum);
	fclose(f);
	return 0;
}
PROG
gcc -std=c11 -O2 -g -o zero zero.c $(pkg-config --cflags --libs ticktrace-instrument)
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# run NAME VAR=VALUE...: the program with these settings; its stderr in NAME.err
run() {
	name=$1
	shift
	rm -f "$name.ttr"
	env LD_LIBRARY_PATH=$libdir TICKTRACE_OUT=$root/$name.ttr "$@" ./zero 2>"$name.err" ||
		{ cat "$name.err" >&2; fail "$name: the program exits $?"; }
}
# said NAME LINE: NAME.err holds LINE once (a grep pattern)
said() {
	[ "$(grep -c "$2" "$1.err")" = 1 ] || { cat "$1.err" >&2; fail "$1: not said once: $2"; }
}
# A MIN_DUR that is not a duration: said, and the zero-markup default (1us) used:
# tiny is erased and turned off, as with no setting.
for bad in 1h -5us; do
	run "min$bad" TICKTRACE_MIN_DUR=$bad
	said "min$bad" "^ticktrace: TICKTRACE_MIN_DUR=$bad is not a duration .*; using the default (1us in the zero-markup build"
	said "min$bad" '^ticktrace: 1 function turned off after 1024 short calls'
done
run turn TICKTRACE_TURN_OFF=x
said turn '^ticktrace: TICKTRACE_TURN_OFF=x is not a number of calls (0: never); using the default (1024'
said turn '^ticktrace: 1 function turned off after 1024 short calls'
run on TICKTRACE=garbage
said on '^ticktrace: TICKTRACE=garbage is not 0 (off) or 1 (on); recording on'
[ -s on.ttr ] || fail "TICKTRACE=garbage: no trace written"
run sched TICKTRACE_SCHED=weird
said sched '^ticktrace: TICKTRACE_SCHED=weird is not 0, 1, switches or schedstat; using the default'
run buffer TICKTRACE_BUFFER=lots
said buffer '^ticktrace: TICKTRACE_BUFFER=lots is not a number of events from 1 to 2^36; using 1048576'
run mode TICKTRACE_MODE=circle
said mode '^ticktrace: TICKTRACE_MODE=circle is not stop, stream or ring; using stop'
# TICKTRACE_LIVE=yes or 2 was taken as off without a word (outside test r49, F6)
for bad in yes 2; do
	run "live$bad" TICKTRACE_MODE=ring TICKTRACE_LIVE=$bad
	said "live$bad" "^ticktrace: TICKTRACE_LIVE=$bad is not 0 (off) or 1 (on); no live file"
done
run memory TICKTRACE_MEMORY=lots
said memory '^ticktrace: TICKTRACE_MEMORY=lots is not a size of 1M or more'
# good values say nothing of themselves
run good TICKTRACE=1 TICKTRACE_SCHED=1 TICKTRACE_MIN_DUR=2us TICKTRACE_TURN_OFF=0 TICKTRACE_LIVE=0
! grep -q 'is not' good.err || { cat good.err >&2; fail "good values are said to be bad"; }
# ticktrace-instrument's flags at the link alone: its library calls are recorded, and
# that its code has no patchable entries is said once.
gcc -std=c11 -O2 -g -c zero.c -o nocflags.o
gcc -o nocflags nocflags.o $(pkg-config --libs ticktrace-instrument)
LD_LIBRARY_PATH=$libdir TICKTRACE_OUT=$root/nocflags.ttr ./nocflags 2>nocflags.err ||
	{ cat nocflags.err >&2; fail "the program without the cflags exits $?"; }
said nocflags "^ticktrace: the program links libticktrace-detour (pkg-config ticktrace-instrument), but its code has no patchable entries .*were \`pkg-config --cflags ticktrace-instrument\` given to the compiler, not only to the link? Only its library calls are recorded"
"$TT_TEST_TOOL" report nocflags.ttr >nocflags.out 2>&1 || fail "report fails on nocflags.ttr"
grep -q '^fopen@libc' nocflags.out || { cat nocflags.out >&2; fail "its library calls are not recorded"; }
[ "$failures" = 0 ] || exit 1
echo "every bad value said once with the default it uses; a build without the cflags said"
