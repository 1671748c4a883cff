#!/bin/sh
# Any link order records, or fails loudly: the build installed into a scratch root, and
# a program built through pkg-config (ticktrace-instrument, no markup; ticktrace, markup;
# ticktrace-wrap, a C program's malloc recorded: its static archive read before the
# objects took nothing from it, outside recheck r39 F8)
# with each compiler, --as-needed on and off (Debian's gcc has it on), and the three link
# lines Makefiles write: the flags before the objects (brotli's LDFLAGS), after them, and
# split into LDFLAGS (-L, -Wl) before and LDLIBS (-l) after. Each program must write a
# trace naming its function, or its link must fail with a message naming ticktrace:
# never run, record nothing and say nothing.
#   link_order.sh BUILD_DIR SANITIZE  (TT_TEST_TOOL: the ticktrace command converts)
set -eu
. "$(dirname "$0")/scratch_install.sh"
scratch_install "$1" "${2:-none}"
cat >zero.c <<'PROG'
__attribute__((noinline)) int crunch(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}
int main(void)
{
	int sum = 0;
	for (int i = 0; i < 3; i++)
		sum += crunch(i);
	return sum == 12 ? 0 : 1;
}
PROG
cat >markup.c <<'PROG'
#include <ticktrace.h>
__attribute__((noinline)) static int decode(int x)
{
	TT_SCOPE("decode");
	return x * 2;
}
int main(void)
{
	return decode(1) == 2 ? 0 : 1;
}
PROG
cat >heap.c <<'PROG'
#include <stdlib.h>
int main(void)
{
	char *volatile p = malloc(4096);
	if (!p)
		return 1;
	p[0] = 1;
	free(p);
	return 0;
}
PROG

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
compilers=gcc
command -v clang >/dev/null && compilers="gcc clang"
for compiler in $compilers; do
	for pkg in ticktrace-instrument ticktrace ticktrace-wrap; do
		case $pkg in
		ticktrace) kind=markup name=decode ph=X ;;
		ticktrace-wrap) kind=heap name=malloc ph=i ;;
		*) kind=zero name=crunch ph=X ;;
		esac
		# (no "ticktrace" in the files' names: the linker's messages name them)
		src=$kind.c obj=$compiler-$kind.o
		$compiler -std=c11 -O2 -g -c -o "$obj" "$src" $(pkg-config --cflags $pkg)
		libs=$(pkg-config --libs $pkg)
		ldflags="$(pkg-config --libs-only-L $pkg) $(pkg-config --libs-only-other $pkg)"
		ldlibs=$(pkg-config --libs-only-l $pkg)
		for needed in as-needed no-as-needed; do
			for order in first last split; do
				what="$compiler, $pkg, -Wl,--$needed, flags $order"
				prog=$compiler-$kind-$needed-$order
				case $order in
				first) set -- $libs "$obj" ;;
				last) set -- "$obj" $libs ;;
				split) set -- $ldflags "$obj" $ldlibs ;;
				esac
				if ! $compiler -Wl,--$needed -o "$prog" "$@" 2>"$prog.link"; then
					grep -q ticktrace "$prog.link" ||
						{ cat "$prog.link" >&2; fail "$what: the link fails without naming ticktrace"; }
					continue
				fi
				LD_LIBRARY_PATH=$libdir TICKTRACE_MIN_DUR=0 TICKTRACE_OUT=$root/$prog.ttr "./$prog" ||
					{ fail "$what: the program exits $?"; continue; }
				[ -s "$prog.ttr" ] || { fail "$what: links, runs, and writes no trace"; continue; }
				"$TT_TEST_TOOL" convert "$prog.ttr" -o "$prog.json" -q
				grep -q "\"ph\":\"$ph\",[^}]*\"name\":\"$name\"" "$prog.json" ||
					fail "$what: no $name in its trace"
			done
		done
	done
done
[ "$failures" = 0 ] || exit 1
echo "link order: every program records ($compilers; flags first, last, split; --as-needed on and off)"
