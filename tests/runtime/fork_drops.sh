#!/bin/sh
# A forked child's file counts only its own drops: the parent's events dropped before
# their thread had a buffer stay in the parent's file, the child's says none (it said
# the parent's count again). Usage: fork_drops.sh PROG TICKTRACE
set -eu
prog=$1 tool=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
child=$(TICKTRACE_MEMORY=1M TICKTRACE_OUT="$dir/run-%p.ttr" timeout 60 "$prog" 2>"$dir/err")
parent=$(ls "$dir" | sed -n 's/^run-\([0-9]*\)\.ttr$/\1/p' | grep -vx "$child")
"$tool" info "$dir/run-$parent.ttr" >"$dir/parent.txt"
"$tool" info "$dir/run-$child.ttr" >"$dir/child.txt"
if ! grep -q 'dropped before their thread had a buffer: 1000$' "$dir/parent.txt"; then
	echo "FAIL: the parent's file does not count its 1000 drops:"; cat "$dir/parent.txt"; exit 1
fi
if grep 'dropped before their thread had a buffer' "$dir/child.txt"; then
	echo "FAIL: the child's file counts its parent's drops"; exit 1
fi
echo "ok: parent $parent counts 1000, child $child none"
