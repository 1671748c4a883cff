#!/bin/sh
# One round of `spikes --suggest --exclude-list` on a zero-markup program: functions
# ranked by the whole run's calls (those TICKTRACE_MIN_DUR erased and those dropped
# once the buffer was used up, not only the first events the buffer kept), merged into
# the user's list (their lines kept, what it added said), and the next run, with
# TICKTRACE_EXCLUDE, leaves them unpatched. The program calls tiny() two million times
# and slow() (2 us, kept) every twentieth: tiny's calls are erased as they return
# (TICKTRACE_MIN_DUR's default) until slow's fill the small buffer, and dropped after.
# Before, --suggest saw tiny in neither: it ranked only the calls the trace kept.
# (Its library calls, clock_gettime's, are left out: TICKTRACE_LIBCALLS=0; libcalls.sh.)
# (tiny is kept patched, TICKTRACE_TURN_OFF=0: turned off, it is not dropped; zero_turn_off.sh.)
# A function turned off is suggested whatever its share (its own program, below).
#   zero_suggest.sh BUILD_DIR SANITIZE  (TT_TEST_TOOL: the ticktrace command)
set -eu
. "$(dirname "$0")/scratch_install.sh"
scratch_install "$1" "${2:-none}"
cat >zero.c <<'PROG'
#define _POSIX_C_SOURCE 200809L
#include <time.h>
__attribute__((noinline)) int tiny(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}
__attribute__((noinline)) int slow(int x)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 2000);
	return x;
}
int main(void)
{
	int sum = 0;
	for (int i = 0; i < 2000000; i++)
		sum += tiny(i) + (i % 20 ? 0 : slow(i));
	return sum == 0;
}
PROG
gcc -std=c11 -O2 -g -o zero zero.c $(pkg-config --cflags --libs ticktrace-instrument)
# 65,536 records: slow's first 32,000 calls or so
LD_LIBRARY_PATH=$libdir TICKTRACE_LIBCALLS=0 TICKTRACE_TURN_OFF=0 TICKTRACE_BUFFER=65536 TICKTRACE_OUT=$root/run.ttr ./zero 2>run.err ||
	{ cat run.err >&2; echo "FAIL: the program exits $?" >&2; exit 1; }
grep -q 'events dropped' run.err || { cat run.err >&2; echo "FAIL: the buffer was not used up" >&2; exit 1; }
printf '# mine\nuser_fn   # kept as it is\n' >exclude.txt
"$TT_TEST_TOOL" spikes -q --suggest --exclude-list exclude.txt run.ttr >suggest.out
cat suggest.out
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
calls=$(sed -n 's/^  tiny: \([0-9]*\) calls.*/\1/p' suggest.out)
[ -n "$calls" ] || fail "tiny is not suggested"
[ "${calls:-0}" -ge 1990000 ] || fail "tiny's calls counted $calls, not the run's 2,000,000 (within a dropped chunk)"
grep -q '^  exclude.txt: added 1 of them (tiny); 0 it named already' suggest.out ||
	fail "what it added to exclude.txt is not said"
[ "$(sed -n 1,2p exclude.txt)" = "$(printf '# mine\nuser_fn   # kept as it is')" ] ||
	fail "the user's lines of exclude.txt are not kept as they were"
grep -qx tiny exclude.txt || fail "tiny is not in exclude.txt"
# a second round adds nothing, and keeps the file
cp exclude.txt before.txt
"$TT_TEST_TOOL" spikes -q --suggest --exclude-list exclude.txt run.ttr >again.out
grep -q 'exclude.txt: added 0 of them; 1 it named already' again.out || { cat again.out >&2; fail "the second round added something"; }
cmp -s before.txt exclude.txt || fail "the second round changed exclude.txt"
# the next run leaves tiny unpatched and records the rest
LD_LIBRARY_PATH=$libdir TICKTRACE_LIBCALLS=0 TICKTRACE_EXCLUDE=$root/exclude.txt TICKTRACE_BUFFER=65536 \
	TICKTRACE_OUT=$root/next.ttr ./zero 2>next.err || fail "the second run exits $?"
grep -q 'ticktrace: 1 function left unpatched, as TICKTRACE_EXCLUDE=.*exclude.txt names them' next.err ||
	{ cat next.err >&2; fail "the second run does not say what it left unpatched"; }
"$TT_TEST_TOOL" convert -q next.ttr -o next.json
grep -q '"name":"slow"' next.json || fail "slow is not in the second run's trace"
! grep -q '"name":"tiny"' next.json || fail "tiny is in the second run's trace"
# a list that opens but does not read (a directory): said, as a file that does not open is
LD_LIBRARY_PATH=$libdir TICKTRACE_LIBCALLS=0 TICKTRACE_EXCLUDE=$root TICKTRACE_BUFFER=65536 \
	TICKTRACE_OUT=$root/dir.ttr ./zero 2>dir.err || fail "the run with a directory for a list exits $?"
grep -q "TICKTRACE_EXCLUDE=$root: not a regular file .*: no function left out" dir.err ||
	{ cat dir.err >&2; fail "a directory for TICKTRACE_EXCLUDE is not said"; }
# A device or a FIFO for a list: never read, said (a file larger than 16 MiB too), and the program runs. Before, the
# list of /dev/zero grew without end (1.2 to 4 GB in 6 s; here, capped, until its
# allocation failed) and a FIFO with no writer held the program before main for ever.
mkfifo fifo
truncate -s 17M big.txt
for list in /dev/zero "$root/fifo" "$root/big.txt"; do
	(ulimit -v 2000000 2>/dev/null || true
	 LD_LIBRARY_PATH=$libdir TICKTRACE_LIBCALLS=0 TICKTRACE_EXCLUDE=$list TICKTRACE_BUFFER=65536 \
		TICKTRACE_OUT=$root/dev.ttr timeout 60 ./zero 2>dev.err) && rc=0 || rc=$?
	[ "$rc" = 0 ] || { cat dev.err >&2; fail "the run with $list for a list exits $rc (124: held for 60 s)"; }
	case $list in *big.txt) why='larger than .* (16 MiB)' ;; *) why='not a regular file .*' ;; esac
	grep -q "TICKTRACE_EXCLUDE=$list: $why: no function left out" dev.err ||
		{ cat dev.err >&2; fail "$list for TICKTRACE_EXCLUDE is not said"; }
done
# A function the run turned off is left out too, whatever its share of the calls the
# trace counts: tiny, turned off after TICKTRACE_TURN_OFF's 1,024 calls erased, beside
# slow's 4,000 kept. Before, --suggest saw 1,024 short calls of some 5,000 (not most of
# them) and suggested nothing: the next run patched tiny again, and paid for it until
# it was turned off again.
sed 's/i < 2000000/i < 200000/; s/i % 20/i % 50/' zero.c >off.c
gcc -std=c11 -O2 -g -o off off.c $(pkg-config --cflags --libs ticktrace-instrument)
LD_LIBRARY_PATH=$libdir TICKTRACE_LIBCALLS=0 TICKTRACE_OUT=$root/off.ttr ./off 2>off.err ||
	fail "the program turning tiny off exits $?"
grep -q '^ticktrace: 1 function turned off' off.err || { cat off.err >&2; fail "the run did not turn tiny off"; }
"$TT_TEST_TOOL" spikes -q --suggest --exclude-list off.txt off.ttr >off.out
cat off.out
grep -q '^leave out, as the run turned them off' off.out || fail "--suggest does not say what the run turned off"
# (tiny's calls: the 1,024 erased and those kept, longer than TICKTRACE_MIN_DUR: one
# interrupted or preempted on a loaded machine; a fresh-clone CI run kept 2)
grep -qE '^  tiny: 10(2[4-9]|[3-9][0-9]) calls, 1024 erased as they returned before it was turned off$' off.out ||
	fail "--suggest does not list tiny, turned off, with its calls"
# (patched, not hooked: GCC's exclude flag would do nothing for it)
! grep -q -- '-finstrument-functions' off.out || fail "a gcc flag is suggested for a patched build"
grep -qx tiny off.txt || fail "tiny, turned off, is not in the exclude list"
! grep -q '^  slow' off.out || fail "slow, whose calls were kept, is suggested"
LD_LIBRARY_PATH=$libdir TICKTRACE_LIBCALLS=0 TICKTRACE_EXCLUDE=$root/off.txt TICKTRACE_OUT=$root/off2.ttr \
	./off 2>off2.err || fail "the run with tiny left out exits $?"
grep -q 'ticktrace: 1 function left unpatched' off2.err && ! grep -q 'turned off' off2.err ||
	{ cat off2.err >&2; fail "the next run patched tiny again"; }
# A patched build's short library calls: left out by TICKTRACE_EXCLUDE (which names
# them FUNCTION@LIBRARY), never in a compiler flag, which does nothing for a build
# patched at its -fpatchable-function-entry NOPs. Before, --suggest printed
# -finstrument-functions-exclude-function-list=...,ferror@libc.so.6 for bzip2.
cat >lib.c <<'PROG'
#include <stdio.h>
int main(void)
{
	int sum = 0;
	for (int i = 0; i < 200000; i++)
		sum += ferror(stdout);
	return sum;
}
PROG
gcc -std=c11 -O2 -g -o lib lib.c $(pkg-config --cflags --libs ticktrace-instrument)
LD_LIBRARY_PATH=$libdir TICKTRACE_TURN_OFF=0 TICKTRACE_OUT=$root/lib.ttr ./lib 2>lib.err ||
	{ cat lib.err >&2; fail "the program calling ferror exits $?"; }
"$TT_TEST_TOOL" spikes -q --suggest lib.ttr >lib.out
cat lib.out
grep -q '^  ferror@libc.so.6: ' lib.out || fail "ferror@libc.so.6 is not suggested"
grep -q '^  leave them unpatched with TICKTRACE_EXCLUDE=FILE' lib.out ||
	fail "TICKTRACE_EXCLUDE is not suggested for a patched build"
! grep -q -- '-finstrument-functions' lib.out || fail "a gcc flag is suggested for a patched build"
"$TT_TEST_TOOL" spikes -q --suggest --exclude-list lib.txt lib.ttr >lib2.out
grep -qx 'ferror@libc.so.6' lib.txt || { cat lib2.out >&2; fail "ferror@libc.so.6 is not in the exclude list"; }
LD_LIBRARY_PATH=$libdir TICKTRACE_EXCLUDE=$root/lib.txt TICKTRACE_OUT=$root/lib2.ttr ./lib 2>lib2.err ||
	fail "the run leaving ferror out exits $?"
"$TT_TEST_TOOL" report lib2.ttr >lib2.rep 2>&1
! grep -q 'ferror@' lib2.rep || { cat lib2.err lib2.rep >&2; fail "ferror is recorded with the list"; }
# The hooks of -finstrument-functions (no patching): GCC's flag is what leaves tiny out.
gcc -std=c11 -O2 -g -finstrument-functions -o hooked zero.c $(pkg-config --cflags --libs ticktrace)
LD_LIBRARY_PATH=$libdir TICKTRACE_MIN_DUR=1us TICKTRACE_OUT=$root/hooked.ttr ./hooked 2>hooked.err ||
	{ cat hooked.err >&2; fail "the hooked program exits $?"; }
"$TT_TEST_TOOL" spikes -q --suggest hooked.ttr >hooked.out
cat hooked.out
grep -q -- '^  -finstrument-functions-exclude-function-list=tiny$' hooked.out ||
	fail "the hooked build is not given GCC's flag naming tiny"
! grep -q 'TICKTRACE_EXCLUDE' hooked.out || fail "TICKTRACE_EXCLUDE is suggested for a hooked build"
[ "$failures" = 0 ] || exit 1
echo "one round: tiny ranked by its $calls calls, added to the user's list, left unpatched in the next run"
