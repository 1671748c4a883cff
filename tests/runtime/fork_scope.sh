#!/bin/sh
# A scope open as the program forks ends in the child's file: there it is flagged
# unbegun (begun in the parent), not "1 unmatched" with a warning of ends with no open
# scope, converted alone or with the parent's file. Usage: fork_scope.sh PROG TICKTRACE
set -eu
prog=$1 tool=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }
child=$(TICKTRACE_OUT="$dir/run-%p.ttr" timeout 60 "$prog" 2>"$dir/err") || { cat "$dir/err"; fail "the program failed"; }
parent=$(ls "$dir" | sed -n 's/^run-\([0-9]*\)\.ttr$/\1/p' | grep -vx "$child")
"$tool" convert -o "$dir/child.json" "$dir/run-$child.ttr" 2>"$dir/child.err"
grep -q ' 0 unmatched,' "$dir/child.err" || { cat "$dir/child.err"; fail "the child's file alone: unmatched"; }
grep -q '"unbegun":true' "$dir/child.json" || fail "the child's file: no unbegun slice"
! grep -q 'no open scope' "$dir/child.err" || { cat "$dir/child.err"; fail "the child's end warned of"; }
"$tool" convert -o "$dir/both.json" "$dir/run-$parent.ttr" "$dir/run-$child.ttr" 2>"$dir/both.err"
grep -q ' 0 unmatched,' "$dir/both.err" || { cat "$dir/both.err"; fail "both files: unmatched"; }
"$tool" report "$dir/run-$child.ttr" >"$dir/report" 2>"$dir/report.err"
grep -q '^in_child ' "$dir/report" || { cat "$dir/report"; fail "report of the child lacks in_child"; }
! grep -q ' [1-9][0-9]* unmatched\|no open scope' "$dir/report.err" || { cat "$dir/report.err"; fail "report: unmatched"; }
echo "ok: parent $parent, child $child: the scope open across fork unbegun in the child's file"
