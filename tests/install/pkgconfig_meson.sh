#!/bin/sh
# A meson project that finds the installed library through its .pc files (as the README's
# prefix install leaves it): the build installed into a scratch root, then
# tests/consumers/meson's project, with no fallback, builds the three targets, which run
# and record. meson resolves a .pc's bare -l itself and drops its -L, so the -L that
# finds ticktrace inside the no-as-needed token must be there (outside recheck r42 N2:
# `ld: cannot find -lticktrace`).
#   pkgconfig_meson.sh BUILD_DIR SANITIZE  (TT_TEST_TOOL: the ticktrace command converts)
set -eu
command -v meson >/dev/null || { echo "skipped: no meson on PATH" >&2; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/scratch_install.sh"
. "$here/../consumers/check_use.sh"
scratch_install "$1" "${2:-none}"
unset ASAN_OPTIONS UBSAN_OPTIONS CMAKE_PREFIX_PATH
mkdir app
cp "$here/../consumers/meson/meson.build" "$here/../consumers/use.c" app/
# nofallback: the installed library or nothing (the project names a fallback).
meson setup build app --wrap-mode=nofallback >setup.log 2>&1 || { cat setup.log >&2; exit 1; }
for dep in ticktrace ticktrace-instrument ticktrace-wrap; do
	grep -q "Run-time dependency $dep found: YES" setup.log ||
		{ cat setup.log >&2; echo "$dep not found through pkg-config" >&2; exit 1; }
done
ninja -C build >build.log 2>&1 || { cat build.log >&2; exit 1; }
# (the scratch root is a DESTDIR: the .pc's rpath, where it has one, names the prefix)
check_use "$root/build" "$libdir"
echo "meson consumer of the installed .pc files: the three targets link, run and record"
