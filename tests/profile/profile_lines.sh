#!/bin/sh
# A self-profile written by tt_profile_write, named by `ticktrace lines`: most samples
# on the hot loop's source line, in its function, at addresses addr2line agrees with.
#   profile_lines.sh PROGRAM   (TT_TEST_TOOL: the ticktrace command)
set -eu
prog=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
TICKTRACE_OUT=/dev/null "$prog" "$dir/profile.txt"
head -n 1 "$dir/profile.txt" | grep -qx "ticktrace profile 1"
"$TT_TEST_TOOL" lines "$dir/profile.txt" >"$dir/lines.txt"
cat "$dir/lines.txt"
line=$(grep -n 'the line where the time goes' "$(dirname "$0")/../programs/profile_lines_prog.c" | cut -d: -f1)
# the rows of that line hold most of the samples, in lines_hot_loop
total=$(awk 'NR > 2 { s += $1 } END { print s }' "$dir/lines.txt")
on_line=$(awk -v at="profile_lines_prog.c:$line" 'NR > 2 && index($4, at) { s += $1 } END { print s + 0 }' "$dir/lines.txt")
[ "$total" -gt 0 ] && [ $((on_line * 2)) -gt "$total" ] || {
	echo "profile_lines_prog.c:$line has $on_line of $total samples" >&2
	exit 1
}
grep -q " lines_hot_loop+0x" "$dir/lines.txt" || { echo "no bucket named lines_hot_loop+0x..." >&2; exit 1; }
# the address column is the file's: addr2line finds the same line
addr=$(awk -v at="profile_lines_prog.c:$line" 'NR > 2 && index($4, at) { print $3; exit }' "$dir/lines.txt")
if command -v addr2line >/dev/null; then
	addr2line -e "$prog" "$addr" | grep -q "profile_lines_prog.c:$line" ||
		{ echo "addr2line -e $prog $addr: $(addr2line -e "$prog" "$addr")" >&2; exit 1; }
fi
"$TT_TEST_TOOL" lines "$prog" 2>"$dir/err" && exit 1
grep -q "not a profile" "$dir/err"
echo "lines: $on_line of $total samples on profile_lines_prog.c:$line"
