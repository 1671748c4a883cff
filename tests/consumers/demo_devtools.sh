#!/bin/sh
# End to end: the demo records a real multi-threaded run and converts it; the DevTools
# trace engine must load its JSON without an error or warning, with the pipeline's
# threads, flows and counters in it; and the raw file it leaves, converted to Perfetto
# protobuf, must hold the same slices, counters and flows as that JSON.
set -eu
demo=$1
checker=$2
tool=$3
perfetto_checker=$4
schema=$5
if [ ! -d "$(dirname "$checker")/node_modules" ] || ! command -v node >/dev/null; then
	echo "skipped: the DevTools trace engine is not installed (npm ci --prefix tests/consumers)" >&2
	exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$demo" --items 300 --out "$dir" >"$dir/demo.out"
report=$(node "$checker" "$dir/demo.json")
echo "$report"
echo "$report" | grep -q "^ok: "
# 300 items, each an arrow producer -> worker and one worker -> consumer (one id
# passed on: an arrow per hop); both queue counters.
echo "$report" | grep -q " 600 flows"
echo "$report" | grep -q " 2 counters"
# Every slice has its place in the engine's tree: none dropped, none put inside the
# one that ends where it begins (parse, then transform).
slices=$(grep -c '"ph":"X"' "$dir/demo.json")
echo "$report" | grep -q "^devtools trace engine: $slices slices " ||
	{ echo "the engine did not place all $slices slices" >&2; exit 1; }
echo "$report" | grep -q " transform 1 " || { echo "transform is not a child of process" >&2; exit 1; }
echo "$report" | grep -q " transform 2 " && { echo "a transform went inside a parse" >&2; exit 1; }
for name in produce process parse transform consume; do
	echo "$report" | grep -q " $name [0-9]" || { echo "no $name slices" >&2; exit 1; }
done
# the slow transforms (items 0, 97, 194, 291 at least) are marked as spikes
grep -q '"name":"spike: transform took ' "$dir/demo.json" || { echo "no spike marks" >&2; exit 1; }
if command -v protoc >/dev/null && command -v python3 >/dev/null; then
	"$tool" convert "$dir/demo.ttr" -o "$dir/demo.pftrace" -q --spikes
	if ! python3 "$perfetto_checker" "$dir/demo.pftrace" "$schema" "$dir/demo.json" >"$dir/perfetto.out"; then
		cat "$dir/perfetto.out" >&2
		exit 1
	fi
	grep -v '^  tid' "$dir/perfetto.out"
fi
