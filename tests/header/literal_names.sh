#!/bin/sh
# In C++ the literal macros refuse a name that is not a string literal (it would be
# recorded by address and read after it is gone), with a message that names the
# macros for names made at run time; a literal still compiles.
#   literal_names.sh CXX INCLUDE_DIR
set -u
cxx=$1 inc=$2
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
cat >"$dir/bad.cc" <<'SRC'
#include <string>
#include "ticktrace.h"
void f(const std::string &name) { TT_SCOPE(name.c_str()); }
SRC
cat >"$dir/good.cc" <<'SRC'
#include <string>
#include "ticktrace.h"
void f(const std::string &name) { TT_SCOPE("literal"); TT_SCOPE_DYN(name); TT_FUNC(); }
SRC
for macro in 'TT_INSTANT(name.c_str())' 'TT_BEGIN_ARG(name.c_str(), 1)'; do
	sed "s/TT_SCOPE(name.c_str())/$macro/" "$dir/bad.cc" >"$dir/bad2.cc"
	if $cxx -std=c++11 -c -I"$inc" "$dir/bad2.cc" -o "$dir/bad2.o" 2>"$dir/err2"; then
		echo "FAIL: $macro with a non-literal compiled"; exit 1
	fi
	grep -q 'use TT_SCOPE_DYN' "$dir/err2" || { echo "FAIL: $macro: no TT_SCOPE_DYN in:"; cat "$dir/err2"; exit 1; }
done
if $cxx -std=c++11 -c -I"$inc" "$dir/bad.cc" -o "$dir/bad.o" 2>"$dir/err"; then
	echo "FAIL: TT_SCOPE(name.c_str()) compiled"; exit 1
fi
grep -q 'use TT_SCOPE_DYN' "$dir/err" || { echo "FAIL: the error does not name TT_SCOPE_DYN:"; cat "$dir/err"; exit 1; }
$cxx -std=c++11 -Wall -Wextra -Werror -pedantic -c -I"$inc" "$dir/good.cc" -o "$dir/good.o" ||
	{ echo "FAIL: literals and TT_SCOPE_DYN do not compile"; exit 1; }
echo "ok: the literal macros refuse a non-literal and name TT_SCOPE_DYN"
