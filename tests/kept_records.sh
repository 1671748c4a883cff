#!/bin/bash
# Issue 24 item 18: a full buffer's exit line says how many records each thread kept.
# TICKTRACE_BUFFER is rounded up to whole chunks, and the line once said the number
# asked for (1000) where 4,094 records of events were kept. The number it says must be
# what the file holds: 2 records for each "seq" instant kept, and at most a record more.
#   kept_records.sh PROGRAM   (tt_longrun_prog; TT_TEST_TOOL: the command)
set -euo pipefail
prog=$1
dir=$(mktemp -d /tmp/tt-test-kept-XXXXXX)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "kept_records: $*" >&2; exit 1; }

TICKTRACE_BUFFER=1000 TICKTRACE_OUT="$dir/run.ttr" timeout 60 "$prog" seq 1 100000 2>"$dir/err"
said=$(sed -n 's/.*each thread kept its first \([0-9]*\) records.*/\1/p' "$dir/err")
[ -n "$said" ] || fail "no line about the records kept: $(cat "$dir/err")"
uses=$(timeout 60 "$TT_TEST_TOOL" info "$dir/run.ttr" 2>/dev/null | awk '$1 ~ /^0x/ && $3 == "seq" {print $2; exit}')
[ -n "$uses" ] || fail "info lists no seq site: $("$TT_TEST_TOOL" info "$dir/run.ttr")"
[ "$said" -ge $((2 * uses)) ] && [ "$said" -le $((2 * uses + 1)) ] ||
	fail "it says $said records were kept; the file holds $uses seq instants, $((2 * uses)) records"
echo "kept_records: $said records said, $uses instants kept"
