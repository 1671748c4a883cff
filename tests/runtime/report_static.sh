#!/bin/sh
# TICKTRACE_REPORT names a static function (not in the dynamic symbols) as convert does,
# module+0xOFFSET, which addr2line -f -e MODULE takes back to the function; it is
# never a bare runtime address, which ASLR makes useless.
#   report_static.sh PROGRAM   (built from report_static_prog.c)
set -eu
prog=$1
command -v addr2line >/dev/null || { echo "skipped: no addr2line (binutils)" >&2; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
TICKTRACE_OUT=/dev/null TICKTRACE_REPORT="$dir/report.txt" "$prog"
base=$(basename "$prog")
row=$(grep -E "^$base\+0x[0-9a-f]+ +100 " "$dir/report.txt") || {
	echo "no row '$base+0xOFFSET' with 100 calls in the report:" >&2
	cat "$dir/report.txt" >&2
	exit 1
}
offset=${row%% *}
offset=${offset#"$base+"}
name=$(addr2line -f -e "$prog" "$offset" | head -n 1)
[ "$name" = report_static_step ] || { echo "addr2line -e $base $offset: $name" >&2; exit 1; }
if grep -qE '^0x[0-9a-f]+ ' "$dir/report.txt"; then
	echo "a function named by its runtime address:" >&2
	cat "$dir/report.txt" >&2
	exit 1
fi
echo "TICKTRACE_REPORT: $base+$offset is report_static_step"
