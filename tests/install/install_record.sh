#!/bin/sh
# `ticktrace record` and `convert` as a user runs them from a prefix install
# (`meson setup build --prefix=$HOME/.local`, the README's): the library and the tools
# configured with --prefix and installed there (prefix_fixture.py's full/, its build
# directory removed), then the installed command, with no LD_LIBRARY_PATH, records a
# program it patches (the detour library finds libticktrace.so.0 beside itself) and
# converts the trace.
#   install_record.sh BUILD_ROOT SOURCE_ROOT CC
set -eu
src=$2 cc=$3
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
trap 'exit 1' HUP INT TERM
# The environment of a sanitizer build is not the installed tools'.
unset CFLAGS LDFLAGS ASAN_OPTIONS UBSAN_OPTIONS LD_LIBRARY_PATH LD_PRELOAD TICKTRACE_DETOUR_LIB \
	TICKTRACE_OUT
prefix=$("$src/tests/install/prefix_fixture.py" "$1" "$src")/full
tool=$prefix/bin/ticktrace
fail() { echo "FAIL: $*" >&2; exit 1; }

cd "$root"
"$tool" record -o true.ttr -- /bin/true 2>true.err && rc=0 || rc=$?
[ "$rc" = 0 ] || { cat true.err >&2; fail "installed record -- /bin/true exits $rc"; }
cat >prog.c <<'PROG'
#include <stdio.h>
__attribute__((noinline)) int work_leaf(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}
int main(void)
{
	int sum = 0;
	for (int i = 0; i < 3; i++)
		sum += work_leaf(i);
	printf("%d\n", sum);
	return 4;
}
PROG
"$cc" -O2 -o prog prog.c
"$tool" record -f 'work_*' -o run.ttr -- ./prog >out 2>err && rc=0 || rc=$?
[ "$rc" = 4 ] && [ "$(cat out)" = 12 ] || { cat err >&2; fail "installed record of prog: exit $rc"; }
# (said in the log beside the trace, stderr being no terminal, which record names)
grep -q 'patched 1 function' run.ttr.log && tail -1 err | grep -qF "lines are in $(pwd -P)/run.ttr.log" ||
	{ cat err run.ttr.log >&2; fail "installed record patched nothing"; }
"$tool" convert run.ttr -o run.json 2>conv.err || { cat conv.err >&2; fail "installed convert"; }
calls=$(python3 -c '
import json, sys
events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
print(sum(1 for e in events if e.get("name") == "work_leaf" and e.get("ph") in ("X", "B")))' run.json)
[ "$calls" = 3 ] || fail "the installed tools recorded $calls calls of work_leaf, not 3"
# CMake's ticktrace::instrument from an install with the tools: the detour library
# linked (the zero-markup build's, as pkg-config gives it), found without
# LD_LIBRARY_PATH, its functions recorded.
if command -v cmake >/dev/null; then
	mkdir cmake-src
	cp "$src/tests/consumers/cmake/CMakeLists.txt" "$src/tests/consumers/use.c" cmake-src/
	cmake -S cmake-src -B cmake -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_EXE_LINKER_FLAGS=-Wl,--as-needed >cmake.log 2>&1 &&
		cmake --build cmake >>cmake.log 2>&1 || { cat cmake.log >&2; fail "CMake's build against the prefix"; }
	TT_TEST_TOOL=$tool
	. "$src/tests/consumers/check_use.sh"
	check_use "$root/cmake"
fi
echo "prefix install: the installed record patches and records, convert converts, CMake's targets record, no LD_LIBRARY_PATH"
