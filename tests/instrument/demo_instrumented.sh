#!/bin/sh
# The demo built with -finstrument-functions: its converted trace names every one of
# its functions by its real name, never by an address.
set -eu
demo=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$demo" --items 100 --out "$dir" >"$dir/demo.out"
names=$(grep -o '"ph":"X",[^}]*"name":"[^"]*"' "$dir/demo.json" | sed 's/.*"name":"//; s/"$//' | sort -u)
status=0
for f in main tt_demo_producer tt_demo_worker tt_demo_consume tt_demo_push tt_demo_pop \
	tt_demo_spin tt_demo_count tt_demo_queue_init; do
	if ! echo "$names" | grep -qx "$f"; then
		echo "no slice named $f" >&2
		status=1
	fi
done
if echo "$names" | grep -E '^0x|\+0x'; then
	echo "functions named by address (above)" >&2
	status=1
fi
[ $status -eq 0 ] && echo "instrumented demo: every function named:" $names
exit $status
