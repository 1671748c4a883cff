#!/bin/sh
# A new user's prefix install: the library alone (-Dtools=false ...: no cJSON, elfutils
# or cmocka), configured with --prefix and installed there (prefix_fixture.py's lib/,
# which install_record.sh's build shares); then
#  - a program built through pkg-config runs without LD_LIBRARY_PATH (the .pc's rpath),
#  - a CMake project finds it with find_package(ticktrace) and builds one program per
#    target (ticktrace::ticktrace, ::instrument, ::wrap), which record what they must;
#    another with pkg_check_modules, likewise.
#   install_prefix.sh BUILD_ROOT SOURCE_ROOT  (TT_TEST_TOOL: the ticktrace command converts)
set -eu
command -v cmake >/dev/null || { echo "skipped: no cmake" >&2; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../consumers/check_use.sh"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
trap 'exit 1' HUP INT TERM
# The environment of a sanitizer build is not the library's.
unset CFLAGS LDFLAGS ASAN_OPTIONS UBSAN_OPTIONS
prefix=$("$here/prefix_fixture.py" "$1" "$2")/lib

# pkg-config, as ticktrace(3) says (BUILDING); nothing set but where the .pc files are.
pcdir=$(dirname "$(find "$prefix" -name ticktrace.pc)")
export PKG_CONFIG_PATH=$pcdir
mkdir "$root/pc"
cc -std=c11 -o "$root/pc/use-markup" "$here/../consumers/use.c" $(pkg-config --cflags --libs ticktrace)
cc -std=c11 -g -o "$root/pc/use-instrument" "$here/../consumers/use.c" \
	$(pkg-config --cflags --libs ticktrace-instrument)
cc -std=c11 -DUSE_HEAP -o "$root/pc/use-wrap" "$here/../consumers/use.c" \
	$(pkg-config --cflags --libs ticktrace-wrap)
check_use "$root/pc"

# CMake: tests/consumers/cmake's project built in $root/NAME and checked.
#   cmake_use NAME [CMAKE_ARGS...]
cmake_use() {
	name=$1
	shift
	mkdir "$root/$name-src"
	cp "$here/../consumers/cmake/CMakeLists.txt" "$here/../consumers/use.c" "$root/$name-src/"
	cmake -S "$root/$name-src" -B "$root/$name" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" \
		>"$root/$name.log" 2>&1 || { cat "$root/$name.log" >&2; exit 1; }
	cmake --build "$root/$name" >>"$root/$name.log" 2>&1 || { cat "$root/$name.log" >&2; exit 1; }
	check_use "$root/$name"
}
# find_package, found through CMAKE_PREFIX_PATH as a user would point it at the prefix;
# and pkg_check_modules, through the same PKG_CONFIG_PATH (its link line kept no -L
# for the .pc's token: `cannot find -lticktrace`, as meson's, outside recheck r42 N2).
cmake_use cmake -DCMAKE_PREFIX_PATH="$prefix"
cmake_use cmake-pkgconfig -DTT_PKG_CONFIG=ON
echo "prefix install: pkg-config, CMake find_package and pkg_check_modules programs build," \
	"run without LD_LIBRARY_PATH, record"
