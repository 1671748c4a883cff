#!/bin/sh
# bench's C++ script VM runs, and its spike log names the slow script function, made
# at run time, with the frame it was in, in PET's words; report --frames finds it.
#   script_vm.sh PROGRAM
set -u
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
TICKTRACE_OUT=/dev/null "$1" --frames 30 --out "$dir" >"$dir/out" 2>&1 || { cat "$dir/out"; exit 1; }
for want in 'spike: script.path_find @ frame 20 took ' 'description: entity 202' \
	'frames: 30 frames of "frame"' '  frame 20 took ' "$dir/script_vm.pftrace"; do
	grep -qF "$want" "$dir/out" || { echo "FAIL: no \"$want\" in:"; cat "$dir/out"; exit 1; }
done
echo "ok: the script VM's spike log and frame report"
