#!/bin/sh
# A meson project that takes this tree as a subproject, with the library alone:
# dependency('ticktrace', fallback : 'ticktrace'), 'ticktrace-instrument' and
# 'ticktrace-wrap' (meson.override_dependency), without cJSON, elfutils or cmocka.
# This tree's, whatever the user has installed: an installed ticktrace (PKG_CONFIG_PATH,
# or CMake's search through PATH) would be taken, or taken in part, before the fallback
# (outside recheck r42 N3), so the fallback is forced and the programs must load the
# subproject's library.
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
meson setup "$root/build" "$root/app" --force-fallback-for=ticktrace,ticktrace-instrument,ticktrace-wrap \
	>"$root/setup.log" 2>&1 || { cat "$root/setup.log" >&2; exit 1; }
ninja -C "$root/build" >"$root/build.log" 2>&1 || { cat "$root/build.log" >&2; exit 1; }
build=$(cd "$root/build" && pwd -P)
for prog in use-markup use-instrument use-wrap; do
	lib=$(env -u LD_LIBRARY_PATH ldd "$root/build/$prog" | awk '/libticktrace\.so/ { print $3 }')
	case $lib in
	"$build"/subprojects/*) ;;
	*) echo "$prog loads libticktrace from ${lib:-nowhere}, not the subproject's" >&2; exit 1 ;;
	esac
done
# The library alone needs none of the tools' dependencies.
for dep in libcjson libdw libelf cmocka; do
	if grep -q "Run-time dependency $dep found" "$root/build/meson-logs/meson-log.txt"; then
		echo "the subproject looked up $dep" >&2
		exit 1
	fi
done
check_use "$root/build"
echo "subproject: ticktrace, ticktrace-instrument and ticktrace-wrap build, run and record"
