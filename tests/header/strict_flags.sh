#!/bin/sh
# The public header compiles clean under the strict warnings users turn into errors
# (-Wold-style-cast, -Wconversion, -Wzero-as-null-pointer-constant ...), as C and C++
# of each standard, enabled and with -DTT_DISABLE, with every compiler found here (the
# build's, clang, mingw-w64's g++); C99 and C++98 get a clear #error, not a syntax error.
#   strict_flags.sh CC CXX INCLUDE_DIR compile_use.c
set -u
cc=$1 cxx=$2 inc=$3 src=$4
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cp "$src" "$dir/use.c" && cp "$src" "$dir/use.cc" || exit 1
common='-Wall -Wextra -Werror -Wpedantic -Wconversion -Wsign-conversion -Wshadow'
# -Wuseless-cast is g++'s alone; clang spells -Wold-style-cast's and -Wzero-as-null's the same.
has() { echo 'int x;' | $1 "$2" -Werror -x "$3" -c - -o /dev/null 2>/dev/null; }
try() { # compiler lang std flags...
	comp=$1 lang=$2 std=$3; shift 3
	for disable in "" -DTT_DISABLE; do
		$comp -std="$std" $common "$@" $disable -I"$inc" -c "$dir/use.$lang" -o "$dir/use.o" \
			2>"$dir/err" || { cat "$dir/err"; fail "$comp -std=$std $disable: $*"; }
	done
	ran=$((ran + 1))
}
# The compiler's first error is the header's own: what to do, before any other.
first_error() {
	grep -m1 'error' "$dir/err" | grep -q 'ticktrace.h is C11 or C++11' ||
		{ cat "$dir/err"; fail "$1: the first error is not the header's"; }
}
ran=0
compilers_c=$cc compilers_cxx=$cxx
command -v clang >/dev/null && compilers_c="$compilers_c clang"
command -v clang++ >/dev/null && compilers_cxx="$compilers_cxx clang++"
for c in $compilers_c; do
	for std in c11 gnu11 c17 gnu17; do try "$c" c "$std"; done
	if $c -std=c99 -I"$inc" -c "$dir/use.c" -o "$dir/use.o" 2>"$dir/err"; then
		fail "$c -std=c99 compiled"
	fi
	first_error "$c -std=c99"
done
cxx_tests() { # compiler [extra flags]
	comp=$1; shift
	extra='-Wold-style-cast -Wzero-as-null-pointer-constant'
	has "$comp" -Wuseless-cast c++ && extra="$extra -Wuseless-cast"
	for std in c++11 c++14 c++17 c++20; do try "$comp" cc "$std" $extra "$@"; done
	if $comp -std=c++98 -I"$inc" -c "$dir/use.cc" -o "$dir/use.o" 2>"$dir/err"; then
		fail "$comp -std=c++98 compiled"
	fi
	first_error "$comp -std=c++98"
}
for c in $compilers_cxx; do cxx_tests "$c"; done
# Windows' declarations (dllimport, and TT_STATIC's): compiled, as a user's code would be.
if command -v x86_64-w64-mingw32-g++ >/dev/null; then
	cxx_tests x86_64-w64-mingw32-g++
	cxx_tests x86_64-w64-mingw32-g++ -DTT_STATIC
fi
echo "ok: $ran compiler/standard pairs (C: $compilers_c; C++: $compilers_cxx)"
