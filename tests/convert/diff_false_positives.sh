#!/bin/sh
# How often `ticktrace diff` finds a change between two runs of the same build, at
# its default settings: a manual measurement, not a CI test (it takes a minute).
#   tests/convert/diff_false_positives.sh BUILD_DIR [PAIRS [RUNS]]  (default 30 pairs, 1 run a side)
# Runs tests/programs/diff_prog.c's build (tt_diff_prog_1: "steady", "noisy" +-30 %,
# "slowed" at its base speed) twice per pair and compares the two runs; prints
# the pairs in which a scope was marked regressed or improved (default 5 %,
# p < 0.001), and those that --fail-above 20% would have failed (exit 3).
set -eu
build=$1
pairs=${2:-30}
runs=${3:-1}
tool=$build/tools/ticktrace
prog=$build/tests/programs/tt_diff_prog_1
[ -x "$tool" ] && [ -x "$prog" ] || { echo "no $tool or $prog: build first" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
flagged=0 gated=0 scopes=0
i=0
while [ "$i" -lt "$pairs" ]; do
	i=$((i + 1))
	rm -rf "$dir/a" "$dir/b"
	mkdir "$dir/a" "$dir/b"
	r=0
	while [ "$r" -lt "$runs" ]; do # interleaved, as a CI job would
		r=$((r + 1))
		TICKTRACE_OUT="$dir/a/$r.ttr" "$prog"
		TICKTRACE_OUT="$dir/b/$r.ttr" "$prog"
	done
	"$tool" diff "$dir/a" "$dir/b" --json -q > "$dir/out.json"
	found=$(grep -cE '"(regressed|improved)":true' "$dir/out.json" || true)
	scopes=$((scopes + found))
	[ "$found" -eq 0 ] || { flagged=$((flagged + 1)); grep -E '"(regressed|improved)":true' "$dir/out.json" >&2; }
	status=0
	"$tool" diff "$dir/a" "$dir/b" --fail-above 20% -q > /dev/null || status=$?
	case $status in
	0) ;;
	3) gated=$((gated + 1)) ;;
	*) echo "diff failed: exit $status" >&2; exit 1 ;;
	esac
done
echo "same build, $pairs pairs of sides of $runs run(s) each, 3 scopes:"
echo "  pairs with a scope marked changed at the defaults (5 %, p < 0.001): $flagged ($scopes scopes)"
echo "  pairs that --fail-above 20% fails (exit 3): $gated"
