#!/bin/sh
# A meson project that takes this tree as a subproject, with the library alone:
# dependency('ticktrace', fallback : 'ticktrace'), 'ticktrace-instrument' and
# 'ticktrace-wrap' (meson.override_dependency), without cJSON, elfutils or cmocka.
#   subproject.sh SOURCE_ROOT  (TT_TEST_TOOL: the ticktrace command converts)
set -eu
src=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../consumers/check_use.sh"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
unset CFLAGS LDFLAGS ASAN_OPTIONS UBSAN_OPTIONS
mkdir -p "$root/app/subprojects"
cp "$here/../consumers/meson/meson.build" "$here/../consumers/use.c" "$root/app/"
ln -s "$src" "$root/app/subprojects/ticktrace"
meson setup "$root/build" "$root/app" >"$root/setup.log" 2>&1 || { cat "$root/setup.log" >&2; exit 1; }
ninja -C "$root/build" >"$root/build.log" 2>&1 || { cat "$root/build.log" >&2; exit 1; }
# The library alone needs none of the tools' dependencies.
for dep in libcjson libdw libelf cmocka; do
	if grep -q "Run-time dependency $dep found" "$root/build/meson-logs/meson-log.txt"; then
		echo "the subproject looked up $dep" >&2
		exit 1
	fi
done
check_use "$root/build"
echo "subproject: ticktrace, ticktrace-instrument and ticktrace-wrap build, run and record"
