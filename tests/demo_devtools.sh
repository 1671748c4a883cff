#!/bin/sh
# End to end: the demo records a real multi-threaded run and converts it; the DevTools
# trace engine must load its JSON without an error or warning, with the pipeline's
# threads, flows and counters in it.
set -eu
demo=$1
checker=$2
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
# 300 items, each an arrow producer -> worker -> consumer; both queue counters.
echo "$report" | grep -q " 300 flows"
echo "$report" | grep -q " 2 counters"
for name in produce process parse transform consume; do
	echo "$report" | grep -q " $name [0-9]" || { echo "no $name slices" >&2; exit 1; }
done
