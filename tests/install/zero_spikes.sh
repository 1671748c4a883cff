#!/bin/sh
# The zero-markup build patches its functions with the spike detector on: the patcher
# runs after ticktrace's own threads start, and counts any thread it does not know as
# ticktrace's as the program's (then patches nothing). tt-spikes started without
# waiting to be known: lz4 built with ticktrace-instrument recorded nothing in about 1
# run of 4 with TICKTRACE_SNAPSHOTS set. Many short runs, each must patch and record.
#   zero_spikes.sh BUILD_DIR SANITIZE  (TT_TEST_TOOL: the ticktrace command converts)
set -eu
. "$(dirname "$0")/scratch_install.sh"
scratch_install "$1" "${2:-none}"
cat >zero.c <<'PROG'
__attribute__((noinline)) int crunch(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}
int main(void)
{
	return crunch(1) == 4 ? 0 : 1;
}
PROG
gcc -std=c11 -O2 -g -o zero zero.c $(pkg-config --cflags --libs ticktrace-instrument)
failures=0
for run in $(seq 40); do
	LD_LIBRARY_PATH=$libdir TICKTRACE_MIN_DUR=0 TICKTRACE_MODE=ring TICKTRACE_SNAPSHOTS=$root/snaps \
		TICKTRACE_SPIKE_THRESHOLD=1ms TICKTRACE_OUT=$root/run.ttr ./zero 2>run.err ||
		{ cat run.err >&2; echo "FAIL: run $run exits $?" >&2; failures=$((failures + 1)); continue; }
	if grep -q 'nothing patched' run.err; then
		cat run.err >&2
		echo "FAIL: run $run patched nothing" >&2
		failures=$((failures + 1))
		continue
	fi
	rm -f run.json
	"$TT_TEST_TOOL" convert run.ttr -o run.json -q
	grep -q '"ph":"X",[^}]*"name":"crunch"' run.json ||
		{ echo "FAIL: run $run: no crunch in its trace" >&2; failures=$((failures + 1)); }
done
[ "$failures" = 0 ] || { echo "$failures of 40 runs failed" >&2; exit 1; }
echo "zero-markup with spikes and snapshots: 40 of 40 runs patched and recorded crunch"
