#!/bin/sh
# Library calls recorded without naming each: a program that calls fopen, fread,
# malloc, free and fclose, built with ticktrace-instrument (the zero-markup build) and
# run, and built plainly and run under `TICKTRACE_LIBCALLS=1 ticktrace record -f work`
# (not unasked there): each call is a
# slice named fopen@libc.so.6 (the program's import and the library its version
# needs, not the alias _IO_fopen its address has), inside work; TICKTRACE_LIBCALLS=0
# leaves them out, TICKTRACE_EXCLUDE the one it names. The report at exit names them alike.
# The same calls from a program built with -fno-plt (through its GOT: `call
# *fopen@GOTPCREL(%rip)`), whose function addresses stay the library's, also where the
# program reads puts's address from the slot it calls through (the calls rewritten, the
# slot left: -fno-plt's, and ld's .plt.got entries, with -z ibtplt too; turned off,
# put back as they were); before, such calls were not recorded; and from the
# program's own library (libwork.so, its work recorded), built with ticktrace-instrument
# and plainly under record -f work; under record -f main, only with TICKTRACE_LIBCALLS=all.
# The program's call of work, recorded in the library, is not recorded again as a
# library call. TICKTRACE_LIBCALLS=all leaves out the libraries only ticktrace needs.
#   libcalls.sh BUILD_DIR SANITIZE  (TT_TEST_TOOL: the ticktrace command)
set -eu
. "$(dirname "$0")/scratch_install.sh"
scratch_install "$1" "${2:-none}"
cat >calls.c <<'PROG'
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) long work(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char *buf = malloc(4096);
	long n = (long)fread(buf, 1, 4096, f);
	free(buf);
	fclose(f);
	return n;
}
int main(int argc, char **argv)
{
	(void)argc;
	return work(argv[0]) == 4096 ? 0 : 1;
}
PROG
# A program not position-independent that takes a library function's address: the
# function is defined at its PLT entry, which goes through the slot (before: round
# and round, until the shadow stack was full, for ever).
cat >address.c <<'PROG'
#include <stdio.h>
int (*volatile say)(const char *);
int main(void)
{
	say = puts; /* (its address taken in code: the PLT entry is puts's address) */
	say("through the pointer");
	return puts("through the PLT") < 0;
}
PROG
gcc -std=c11 -O2 -g -o zero calls.c $(pkg-config --cflags --libs ticktrace-instrument)
gcc -std=c11 -O2 -g -fno-plt -o noplt calls.c $(pkg-config --cflags --libs ticktrace-instrument)
# -fno-plt, and the address of puts taken: the GOT slot read as a pointer is left alone
cat >equal.c <<'PROG'
#include <dlfcn.h>
#include <stdio.h>
int (*volatile say)(const char *);
int main(void)
{
	say = puts;
	return say != (int (*)(const char *))dlsym(RTLD_DEFAULT, "puts") || puts("called") < 0;
}
PROG
gcc -std=c11 -O2 -g -fno-plt -o equal equal.c $(pkg-config --cflags --libs ticktrace-instrument)
# the same with the PLT: ld calls puts through a .plt.got entry (`jmp *slot`), the slot
# the program reads puts's address from; and its layout with -z ibtplt (endbr64 first)
gcc -std=c11 -O2 -g -o pltgot equal.c $(pkg-config --cflags --libs ticktrace-instrument)
gcc -std=c11 -O2 -g -fcf-protection -Wl,-z,ibtplt -o pltgot_ibt equal.c $(pkg-config --cflags --libs ticktrace-instrument)
for prog in pltgot pltgot_ibt; do
	readelf -SW $prog | grep -q ' \.plt\.got ' || { echo "FAIL: ld made no .plt.got in $prog: nothing tested" >&2; exit 1; }
done
# -fno-plt, abs's address read, abs called short 100,000 times: recorded at its call
# site, which is put back once turned off (TICKTRACE_TURN_OFF=64) while the program
# runs, and still reaches abs
cat >often.c <<'PROG'
#include <dlfcn.h>
#include <stdlib.h>
int main(void)
{
	int (*volatile a)(int) = abs;
	long sum = 0;
	for (int i = 0; i < 100000; i++)
		sum += abs(-i);
	return a != (int (*)(int))dlsym(RTLD_DEFAULT, "abs") || sum != 4999950000L;
}
PROG
gcc -std=c11 -O2 -g -fno-plt -fno-builtin -o often often.c $(pkg-config --cflags --libs ticktrace-instrument)
# the work in the program's own library, the program only calls it
sed -n '/^#include/p; /^__attribute__/,/^}/p' calls.c >work.c
cat >main.c <<'PROG'
long work(const char *path);
int main(int argc, char **argv)
{
	(void)argc;
	return work(argv[0]) > 0 ? 0 : 1;
}
PROG
gcc -std=c11 -O2 -g -fPIC -shared -o libwork.so work.c $(pkg-config --cflags --libs ticktrace-instrument)
gcc -std=c11 -O2 -g -o sozero main.c -L. -lwork -Wl,-rpath,"$root" $(pkg-config --cflags --libs ticktrace-instrument)
# the same with -fcf-protection: work's endbr64 before its NOPs (before: the program's
# call of work recorded twice, as work and work@plt)
mkdir cf
gcc -std=c11 -O2 -g -fcf-protection -fPIC -shared -o cf/libwork.so work.c $(pkg-config --cflags --libs ticktrace-instrument)
gcc -std=c11 -O2 -g -fcf-protection -o sozero_cf main.c -Lcf -lwork -Wl,-rpath,"$root/cf" $(pkg-config --cflags --libs ticktrace-instrument)
mkdir plainlib
gcc -std=c11 -O2 -g -fPIC -shared -o plainlib/libwork.so work.c
gcc -std=c11 -O2 -g -o soplain main.c -Lplainlib -lwork -Wl,-rpath,"$root/plainlib"
gcc -std=c11 -O2 -g -fno-pie -no-pie -o address address.c $(pkg-config --cflags --libs ticktrace-instrument)
gcc -std=c11 -O2 -g -o plain calls.c
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# check JSON WHAT: each library call a slice of its own, inside work's
check() {
	for call in fopen@libc.so.6 fread@libc.so.6 malloc@libc.so.6 free@libc.so.6 fclose@libc.so.6; do
		python3 - "$1" "$call" <<'PY' || fail "$2: no $call inside work"
import json, sys
events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
slices = [e for e in events if e.get("ph") == "X"]
work = [e for e in slices if e["name"] == "work"]
calls = [e for e in slices if e["name"] == sys.argv[2]]
sys.exit(0 if len(work) == 1 and len(calls) == 1 and
         work[0]["ts"] <= calls[0]["ts"] and calls[0]["ts"] + calls[0]["dur"] <= work[0]["ts"] + work[0]["dur"]
         else 1)
PY
	done
}
LD_LIBRARY_PATH=$libdir TICKTRACE_MIN_DUR=0 TICKTRACE_REPORT=$root/report.txt TICKTRACE_OUT=$root/zero.ttr \
	./zero 2>zero.err || { cat zero.err >&2; fail "the zero-markup program exits $?"; }
# the program's own report at exit names them as the converter does
grep -q '^fopen@libc.so.6 ' report.txt || { cat report.txt >&2; fail "the report at exit does not name fopen@libc.so.6"; }
"$TT_TEST_TOOL" convert -q zero.ttr -o zero.json
check zero.json "the zero-markup build"
LD_LIBRARY_PATH=$libdir TICKTRACE_LIBCALLS=0 TICKTRACE_MIN_DUR=0 TICKTRACE_OUT=$root/off.ttr ./zero ||
	fail "the zero-markup program with TICKTRACE_LIBCALLS=0 exits $?"
"$TT_TEST_TOOL" convert -q off.ttr -o off.json
grep -q '"name":"work"' off.json || fail "TICKTRACE_LIBCALLS=0: no work"
! grep -q '@libc.so.6' off.json || fail "TICKTRACE_LIBCALLS=0: library calls recorded"
echo 'malloc@libc.so.6' >skip.txt
LD_LIBRARY_PATH=$libdir TICKTRACE_EXCLUDE=$root/skip.txt TICKTRACE_MIN_DUR=0 TICKTRACE_OUT=$root/skip.ttr ./zero 2>skip.err ||
	fail "the zero-markup program with TICKTRACE_EXCLUDE exits $?"
"$TT_TEST_TOOL" convert -q skip.ttr -o skip.json
grep -q '"name":"fopen@libc.so.6"' skip.json || fail "TICKTRACE_EXCLUDE=malloc@libc.so.6: no fopen"
! grep -q '"name":"malloc@libc.so.6"' skip.json || fail "TICKTRACE_EXCLUDE=malloc@libc.so.6: malloc recorded"
LD_LIBRARY_PATH=$libdir timeout 60 ./address >address.out 2>address.err && rc=0 || rc=$?
[ "$rc" = 0 ] || { cat address.err >&2; fail "the program not position-independent exits $rc (124: it hung)"; }
[ "$(cat address.out)" = "$(printf 'through the pointer\nthrough the PLT')" ] || fail "address.c printed otherwise"
LD_LIBRARY_PATH=$libdir TICKTRACE_MIN_DUR=0 TICKTRACE_OUT=$root/noplt.ttr ./noplt 2>noplt.err ||
	{ cat noplt.err >&2; fail "the -fno-plt program exits $?"; }
"$TT_TEST_TOOL" convert -q noplt.ttr -o noplt.json
check noplt.json "the zero-markup build with -fno-plt"
# the slot read for puts's address stays puts's (the calls through it are patched
# where they are), and the calls are recorded: -fno-plt's `call *slot`, .plt.got's jmp
for prog in equal pltgot pltgot_ibt; do
	LD_LIBRARY_PATH=$libdir TICKTRACE_MIN_DUR=0 TICKTRACE_OUT=$root/$prog.ttr ./$prog >$prog.out 2>$prog.err && rc=0 || rc=$?
	[ "$rc" = 0 ] || { cat $prog.err >&2; fail "$prog: puts's address read from the GOT is not puts's (exit $rc)"; }
	[ "$(cat $prog.out)" = called ] || fail "$prog printed $(cat $prog.out)"
	"$TT_TEST_TOOL" convert -q $prog.ttr -o $prog.json
	grep -q '"name":"puts@libc.so.6"' $prog.json ||
		fail "$prog: the call of puts through the GOT slot whose address the program reads is not recorded"
done
LD_LIBRARY_PATH=$libdir TICKTRACE_TURN_OFF=64 TICKTRACE_OUT=$root/often.ttr ./often 2>often.err ||
	{ cat often.err >&2; fail "-fno-plt, abs turned off at its call site: the program exits $?"; }
"$TT_TEST_TOOL" report often.ttr >often.txt 2>&1
grep -q 'abs@libc.so.6: filtered 64 calls before it was turned off' often.txt ||
	{ cat often.txt >&2; fail "-fno-plt, abs's address read: its calls not recorded, nor turned off"; }
# (sozero_cf: -fcf-protection)
for prog in sozero sozero_cf; do
	LD_LIBRARY_PATH=$libdir TICKTRACE_MIN_DUR=0 TICKTRACE_OUT=$root/$prog.ttr ./$prog 2>$prog.err ||
		{ cat $prog.err >&2; fail "$prog, its work in libwork.so, exits $?"; }
	"$TT_TEST_TOOL" convert -q $prog.ttr -o $prog.json
	check $prog.json "$prog: the zero-markup build, the calls made from libwork.so"
	grep -q '"name":"work"' $prog.json && ! grep -q '"name":"work@' $prog.json ||
		fail "$prog: the program's call of work, recorded in libwork.so itself, is recorded twice (as work@...)"
done
# under record -f, when asked (its patterns say what to record)
"$TT_TEST_TOOL" record -f work --min-dur 0 -o asked.ttr -- ./plain 2>asked.err ||
	{ cat asked.err >&2; fail "record exits $?"; }
"$TT_TEST_TOOL" convert -q asked.ttr -o asked.json
grep -q '"name":"work"' asked.json || fail "record -f work: no work"
! grep -q '@libc.so.6' asked.json || fail "record -f work: library calls recorded unasked"
TICKTRACE_LIBCALLS=1 "$TT_TEST_TOOL" record -f work --min-dur 0 -o record.ttr -- ./plain 2>record.err ||
	{ cat record.err >&2; fail "record exits $?"; }
grep -q 'calls of 5 library functions are recorded as FUNCTION@LIBRARY' record.err ||
	{ cat record.err >&2; fail "record does not say the library calls are recorded"; }
"$TT_TEST_TOOL" convert -q record.ttr -o record.json
check record.json "TICKTRACE_LIBCALLS=1 record -f work"
TICKTRACE_LIBCALLS=1 "$TT_TEST_TOOL" record -f work --min-dur 0 -o sorecord.ttr -- ./soplain 2>sorecord.err ||
	{ cat sorecord.err >&2; fail "record of the program with libwork.so exits $?"; }
"$TT_TEST_TOOL" convert -q sorecord.ttr -o sorecord.json
check sorecord.json "TICKTRACE_LIBCALLS=1 record -f work, work in libwork.so"
# its library's calls when asked for all: libwork.so's functions are not recorded
TICKTRACE_LIBCALLS=1 "$TT_TEST_TOOL" record -f main --min-dur 0 -o somain.ttr -- ./soplain 2>somain.err ||
	{ cat somain.err >&2; fail "record -f main exits $?"; }
"$TT_TEST_TOOL" convert -q somain.ttr -o somain.json
grep -q '"name":"main"' somain.json || fail "record -f main: no main"
! grep -q '"name":"fopen@libc.so.6"' somain.json || fail "TICKTRACE_LIBCALLS=1 record -f main: libwork.so's calls recorded"
TICKTRACE_LIBCALLS=all "$TT_TEST_TOOL" record -f main --min-dur 0 -o soall.ttr -- ./soplain 2>soall.err ||
	{ cat soall.err >&2; fail "TICKTRACE_LIBCALLS=all record -f main exits $?"; }
"$TT_TEST_TOOL" convert -q soall.ttr -o soall.json
grep -q '"name":"fopen@libc.so.6"' soall.json || fail "TICKTRACE_LIBCALLS=all record -f main: libwork.so's fopen not recorded"
# all: the program's libraries' calls, not those of the libraries only ticktrace's
# detour library (linked by the zero-markup build) needs: libdw's into libelf while
# it reads the symbols were recorded as the program's (gelf_getsymshndx@libelf.so.1)
LD_LIBRARY_PATH=$libdir TICKTRACE_LIBCALLS=all TICKTRACE_MIN_DUR=0 TICKTRACE_OUT=$root/all.ttr ./zero 2>all.err ||
	{ cat all.err >&2; fail "the zero-markup program with TICKTRACE_LIBCALLS=all exits $?"; }
"$TT_TEST_TOOL" convert -q all.ttr -o all.json
check all.json "the zero-markup build with TICKTRACE_LIBCALLS=all"
! grep -Eo '"name":"[^"]*@lib(elf|dw|z|lzma|bz2|zstd|Zy)[^"]*"' all.json | sort -u | grep . >&2 ||
	fail "TICKTRACE_LIBCALLS=all: ticktrace's own libraries' calls recorded as the program's"
[ "$failures" = 0 ] || exit 1
echo "library calls: fopen, fread, malloc, free and fclose as NAME@libc.so.6 inside work, built (-fno-plt too) and under record, from the program and from its library"
