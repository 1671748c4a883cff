#!/bin/sh
# -fcf-protection (Ubuntu's and Fedora's default) puts an endbr64 before each
# function's -fpatchable-function-entry NOPs: the NOPs are still the function's entry,
# patched there with the endbr64 kept. Before, every function was refused ("it lies at
# +4 inside work") and printed a line, and nothing was recorded. `record -f` on the
# same program built without the NOPs moves the endbr64 with the first instructions.
# With gcc and with clang.
#   zero_cf_protection.sh BUILD_DIR SANITIZE  (TT_TEST_TOOL: the ticktrace command)
set -eu
. "$(dirname "$0")/scratch_install.sh"
scratch_install "$1" "${2:-none}"
cat >cf.c <<'PROG'
#include <stdio.h>
__attribute__((noinline)) int work(int i)
{
	__asm__ volatile("" : "+r"(i));
	return i * 3 + 1;
}
__attribute__((noinline)) int outer(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += work(i);
	return s;
}
int main(void)
{
	printf("%d\n", outer(10));
	return 0;
}
PROG
fail() { echo "FAIL: $*" >&2; exit 1; }
# calls NAME: the slices named NAME in $json
calls() { grep -o "\"ph\":\"X\",[^}]*\"name\":\"$1\"" "$json" | wc -l; }
endbr64_at() { objdump -d --no-show-raw-insn "$1" | grep -A1 "<$2>:" | grep -q endbr64; }
compilers=gcc
command -v clang >/dev/null && compilers="gcc clang"
for compiler in $compilers; do
	prog=$compiler-cf
	$compiler -std=c11 -O2 -g -fcf-protection $(pkg-config --cflags ticktrace-instrument) -o "$prog" cf.c \
		$(pkg-config --libs ticktrace-instrument)
	endbr64_at "$prog" work || fail "$prog: work does not start with endbr64: the test does not test"
	LD_LIBRARY_PATH=$libdir TICKTRACE_MIN_DUR=0 TICKTRACE_OUT=$root/$prog.ttr "./$prog" >"$prog.out" 2>"$prog.err" ||
		{ rc=$?; cat "$prog.err" >&2; fail "$prog exits $rc"; }
	[ "$(cat "$prog.out")" = 145 ] || fail "$prog printed $(cat "$prog.out"), not 145"
	[ ! -s "$prog.err" ] || { cat "$prog.err" >&2; fail "$prog: says something"; }
	json=$prog.json
	"$TT_TEST_TOOL" convert "$prog.ttr" -o "$json" -q
	got="main $(calls main) outer $(calls outer) work $(calls work)"
	[ "$got" = "main 1 outer 1 work 10" ] || fail "$prog: $got, not main 1 outer 1 work 10"
	# without the NOPs: `record -f` moves the endbr64 and what follows into the trampoline
	prog=$compiler-cf-plain
	$compiler -std=c11 -O2 -g -fcf-protection -o "$prog" cf.c
	endbr64_at "$prog" work || fail "$prog: work does not start with endbr64: the test does not test"
	"$TT_TEST_TOOL" record -o "$prog.ttr" -f work -f outer -- "./$prog" >"$prog.out" 2>"$prog.err" ||
		{ rc=$?; cat "$prog.err" >&2; fail "record -f $prog exits $rc"; }
	[ "$(cat "$prog.out")" = 145 ] || { cat "$prog.err" >&2; fail "$prog printed $(cat "$prog.out"), not 145"; }
	json=$prog.json
	"$TT_TEST_TOOL" convert "$prog.ttr" -o "$json" -q
	got="outer $(calls outer) work $(calls work)"
	[ "$got" = "outer 1 work 10" ] || { cat "$prog.err" >&2; fail "record -f $prog: $got, not outer 1 work 10"; }
done
echo "-fcf-protection: $compilers record main, outer and work through the NOPs after endbr64, and by record -f"
