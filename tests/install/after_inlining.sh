#!/bin/sh
# The recommended zero-markup build records real calls only: a program whose helpers
# are inlined at -O2, built with `pkg-config --cflags --libs ticktrace-instrument` by
# gcc and by clang, records each function that was called as a function, as often as
# it was, and nothing of the inlined helpers (-finstrument-functions calls its hooks for
# every inlined copy too: lz4 ran 9.85 times slower). The hooks keep working with the
# .pc's hooks_cflags, and record the inlined copies as before.
#   after_inlining.sh BUILD_DIR SANITIZE  (TT_TEST_TOOL: the ticktrace command converts)
set -eu
. "$(dirname "$0")/scratch_install.sh"
scratch_install "$1" "${2:-none}"
cat >inlined.c <<'PROG'
static int helper(int x)
{
	return x * 3 + 1;
}
static inline int twice(int x)
{
	return helper(x) + helper(x + 1);
}
__attribute__((noinline)) int work(int n)
{
	int sum = 0;
	for (int i = 0; i < n; i++)
		sum += twice(i);
	__asm__ volatile("" : "+r"(sum));
	return sum;
}
__attribute__((noinline)) int leaf(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x;
}
int main(void)
{
	int sum = 0;
	for (int i = 0; i < 10; i++)
		sum += work(i) + leaf(i);
	return sum == 990 ? 0 : 1;
}
PROG
fail() { echo "FAIL: $*" >&2; exit 1; }
# calls NAME: the slices named NAME in $json
calls() { grep -o "\"ph\":\"X\",[^}]*\"name\":\"$1\"" "$json" | wc -l; }
compilers=gcc
command -v clang >/dev/null && compilers="gcc clang"
hooks=$(pkg-config --variable=hooks_cflags ticktrace-instrument)
for compiler in $compilers; do
	for build_kind in recommended hooks; do
		prog=$compiler-$build_kind
		cflags=$(pkg-config --cflags ticktrace-instrument)
		[ $build_kind = recommended ] || cflags="$cflags $hooks"
		$compiler -std=c11 -O2 -g $cflags -o "$prog" inlined.c $(pkg-config --libs ticktrace-instrument)
		LD_LIBRARY_PATH=$libdir TICKTRACE_MIN_DUR=0 TICKTRACE_OUT=$root/$prog.ttr "./$prog" 2>"$prog.err" ||
			{ rc=$?; cat "$prog.err" >&2; fail "$prog exits $rc"; }
		[ ! -s "$prog.err" ] || { cat "$prog.err" >&2; fail "$prog: says something"; }
		json=$prog.json
		"$TT_TEST_TOOL" convert "$prog.ttr" -o "$json" -q
		got="main $(calls main) work $(calls work) leaf $(calls leaf)"
		[ "$got" = "main 1 work 10 leaf 10" ] || fail "$prog: $got, not main 1 work 10 leaf 10"
		inlined=$(($(calls helper) + $(calls twice)))
		case $build_kind in
		recommended) [ "$inlined" = 0 ] ||
			fail "$prog: $inlined calls of the inlined helpers recorded" ;;
		hooks) [ "$compiler" = clang ] || [ "$inlined" -gt 0 ] ||
			fail "$prog: -finstrument-functions recorded no inlined helper (this test shows nothing)" ;;
		esac
	done
	# The recommended build's default TICKTRACE_MIN_DUR (1 us): leaf's calls, a few
	# nanoseconds each, are erased as they return, and the flat profile counts them.
	prog=$compiler-recommended
	LD_LIBRARY_PATH=$libdir TICKTRACE_OUT=$root/$prog-filtered.ttr "./$prog"
	"$TT_TEST_TOOL" convert "$prog-filtered.ttr" -o "$prog-filtered.json" -q
	json=$prog-filtered.json
	[ "$(calls leaf)" -lt 10 ] || fail "$prog: all 10 calls of leaf recorded with the default filter"
	"$TT_TEST_TOOL" report "$prog-filtered.ttr" --csv -o "$prog.csv" -q
	grep -q '^"leaf",10,' "$prog.csv" || { cat "$prog.csv" >&2; fail "$prog: the profile has not leaf's 10 calls"; }
	"$TT_TEST_TOOL" report "$prog-filtered.ttr" -q | grep -q 'returned within TICKTRACE_MIN_DUR' ||
		fail "$prog: the profile does not say calls were erased"
done
echo "after inlining: $compilers record main, work and leaf alone with the recommended flags"
