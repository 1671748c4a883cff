#!/bin/sh
# Installs the build into a scratch root and builds a small program out of tree
# against it through pkg-config, linked shared and static; runs both and converts
# their traces with the installed command; and one with ticktrace-instrument's flags
# and ticktrace-wrap's link line.
set -eu
build=$1
source_file=$2
. "$(dirname "$0")/scratch_install.sh"
scratch_install "$build" "${3:-none}"
tool=$(find "$root" -type f -name ticktrace -perm -u+x | head -n 1)
cc -std=c11 -Wall -Werror -o use-shared "$source_file" $(pkg-config --cflags --libs ticktrace)
cc -std=c11 -Wall -Werror -o use-static "$source_file" $(pkg-config --static --cflags ticktrace) \
	"$libdir/libticktrace.a" $(pkg-config --static --libs-only-l ticktrace | sed 's/-lticktrace//')
for kind in shared static; do
	LD_LIBRARY_PATH=$libdir TICKTRACE_OUT=$root/$kind.ttr ./use-$kind
	"$tool" convert "$root/$kind.ttr" -o "$root/$kind.json" -q
	grep -q '"name":"decode"' "$root/$kind.json"
done
# Zero-markup: every function recorded, named from symbols; the malloc wrappers linked.
cc -std=c11 -Wall -Werror -g -o use-instrumented "$source_file" \
	$(pkg-config --cflags --libs ticktrace-instrument ticktrace-wrap)
LD_LIBRARY_PATH=$libdir TICKTRACE_OUT=$root/instrumented.ttr ./use-instrumented
"$tool" convert "$root/instrumented.ttr" -o "$root/instrumented.json" -q
grep -q '"ph":"X",[^}]*"name":"main"' "$root/instrumented.json"
if ldd ./use-static | grep -q libticktrace; then
	echo "use-static is linked to the shared library" >&2
	exit 1
fi
echo "pkg-config: shared, static and instrumented builds record and convert"
