#!/bin/sh
# The value macros refuse a floating-point value (it would be cut to an integer
# without a word: TT_COUNTER("load", 0.75) recorded 0), in C and C++, enabled and
# disabled, with a message that says so; integers, enums, pointers and bit-fields
# still compile without a warning.
#   integer_values.sh CC CXX INCLUDE_DIR
set -u
cc=$1 cxx=$2 inc=$3
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for lang in c cxx; do
	if [ $lang = c ]; then comp="$cc -std=c11" ext=c; else comp="$cxx -std=c++11" ext=cc; fi
	for disable in "" -DTT_DISABLE; do
		cat >"$dir/good.$ext" <<'SRC'
#include <stdint.h>
#include "ticktrace.h"
enum level { LOW, HIGH };
struct bits { unsigned small : 3; };
void f(int64_t depth, enum level l, struct bits b, const char *p, char *dyn)
{
	TT_COUNTER("depth", depth);
	TT_COUNTER_DYN(dyn, b.small);
	TT_INSTANT_ARG("level", l);
	TT_INSTANT_NAMED_ARG("at", "address", p);
	TT_BEGIN_ARG("bits", b.small);
	TT_SCOPE_VALUE(-1);
	TT_END();
}
SRC
		$comp -Wall -Wextra -Werror -pedantic $disable -c -I"$inc" "$dir/good.$ext" -o "$dir/good.o" ||
			fail "$lang $disable: integer values do not compile"
		for macro in 'TT_COUNTER("load", 0.75)' 'TT_COUNTER_DYN(dyn, 1.5f)' \
			'TT_INSTANT_ARG("ratio", depth * 0.5)' 'TT_BEGIN_NAMED_ARG("x", "y", (long double)1)' \
			'TT_SCOPE_VALUE(0.25)'; do
			sed "s/TT_COUNTER(\"depth\", depth)/$macro/" "$dir/good.$ext" >"$dir/bad.$ext"
			if $comp $disable -c -I"$inc" "$dir/bad.$ext" -o "$dir/bad.o" 2>"$dir/err"; then
				fail "$lang $disable: $macro compiled"
			fi
			grep -q 'the value must be an integer' "$dir/err" ||
				{ cat "$dir/err"; fail "$lang $disable: $macro: the error does not say why"; }
		done
	done
done
echo "ok: floating-point values are refused with the reason, integers compile"
