#!/bin/sh
# bench's C++ script VM runs, and its spike log names the slow script function, made
# at run time, with the frame it was in, in PET's words; report --frames finds it.
# Where Perfetto's trace processor is ($TICKTRACE_TRACE_PROCESSOR, or where
# build-trace-processor.sh puts it), its trace, frames and descriptions included,
# loads the same from JSON as from protobuf.
#   script_vm.sh PROGRAM TICKTRACE CHECK_TRACE_PROCESSOR.py
set -u
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
TICKTRACE_OUT=/dev/null "$1" --frames 30 --out "$dir" >"$dir/out" 2>&1 || { cat "$dir/out"; exit 1; }
for want in 'spike: script.path_find @ frame 20 took ' 'description: entity 202' \
	'frames: 30 frames of "frame"' '  frame 20 took ' "$dir/script_vm.pftrace"; do
	grep -qF "$want" "$dir/out" || { echo "FAIL: no \"$want\" in:"; cat "$dir/out"; exit 1; }
done
echo "ok: the script VM's spike log and frame report"
processor=${TICKTRACE_TRACE_PROCESSOR:-$HOME/.cache/ticktrace/trace_processor_shell}
if [ ! -x "$processor" ]; then
	echo "(no trace processor at $processor: its check left out)"
	exit 0
fi
mv "$dir/script_vm.pftrace" "$dir/vm.pftrace"
"$2" convert "$dir/script_vm.ttr" -o "$dir/vm.json" -q &&
	"$2" report "$dir/script_vm.ttr" --json -q >"$dir/vm.report.json" &&
	python3 "$3" "$processor" "$dir" vm:-1
