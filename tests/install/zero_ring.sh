#!/bin/sh
# TICKTRACE_MIN_DUR in mode ring with the spike detector and snapshots on, as in mode
# stop: short calls erased as they return, and a function that keeps being erased
# turned off. Before, TICKTRACE_SPIKES or TICKTRACE_SNAPSHOTS (their reader follows the
# buffers as they fill) turned the filter off: bzip2 recorded 13-30 M events a second
# in a ring at 2.2-2.8x CPU, its snapshots holding none of its events. The reader now
# leaves the calls a thread entered last (which it may still erase) to its next look:
# without that, it read an entry its thread then erased, and logged "tiny" spikes that
# span their thread's later calls (tiny's explained_ns, time in scopes inside, > 0).
# Mode stream alike: before, it kept every call (20.9 M events, 47 MB for bzip2).
#   zero_ring.sh BUILD_DIR SANITIZE  (TT_TEST_TOOL: the ticktrace command)
set -eu
. "$(dirname "$0")/scratch_install.sh"
scratch_install "$1" "${2:-none}"
# (zero_turn_off.sh's program: four threads call tiny() a million times each, slow(),
# 2 us, every thousandth; then main calls tiny once for 3 ms)
sed -n '/^cat >zero.c/,/^PROG$/p' "$(dirname "$0")/zero_turn_off.sh" | sed '1d;$d' >zero.c
grep -q 'int tiny' zero.c || { echo "FAIL: zero_turn_off.sh's program not found" >&2; exit 1; }
gcc -std=c11 -O2 -g -pthread -o zero zero.c $(pkg-config --cflags --libs ticktrace-instrument)
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ring() {
	LD_LIBRARY_PATH=$libdir TICKTRACE_LIBCALLS=0 TICKTRACE_MODE=ring TICKTRACE_SNAPSHOTS=$root/snaps \
		TICKTRACE_SPIKES=$root/spikes.jsonl TICKTRACE_OUT=$root/run.ttr "$@" ./zero >run.out 2>run.err ||
		{ cat run.err >&2; fail "the program exits $? in a ring"; }
}
ring env TICKTRACE_SPIKE_THRESHOLD=1ms
cat run.err
grep -q '^ticktrace: 1 function turned off after 1024 short calls each' run.err ||
	fail "a ring with spikes and snapshots does not turn tiny off"
"$TT_TEST_TOOL" report run.ttr >report.out 2>report.err || { cat report.err >&2; fail "report fails"; }
grep -q 'of the calls returned within TICKTRACE_MIN_DUR and were erased' report.out ||
	{ cat report.out >&2; fail "a ring with spikes and snapshots erases no call"; }
# Every short call erased (none turned off) while tt-spikes reads: no spike of tiny
# holds time in other scopes (tiny calls none: it took them in when the reader read an
# entry its thread erased). Three runs: the erase must race the reader.
for run in 1 2 3; do
	rm -f spikes.jsonl
	ring env TICKTRACE_SPIKE_THRESHOLD=100us TICKTRACE_TURN_OFF=0
	python3 - spikes.jsonl "$run" <<'PY' || failures=$((failures + 1))
import json, sys
path, run = sys.argv[1], sys.argv[2]
spikes = [s for s in map(json.loads, open(path)) if "dur_ns" in s]  # (a note has none: ticktrace(7))
bad = [s for s in spikes if s.get("name") == "tiny" and s["explained_ns"] > 0]
for s in bad[:5]:
    print("FAIL: run %s: a tiny spike made of an erased entry: %s" % (run, s), file=sys.stderr)
if not spikes:
    print("FAIL: run %s logged no spike" % run, file=sys.stderr)
print("run %s: %d spikes, %d of them tiny's, %d made of an erased entry" % (
    run, len(spikes), sum(s.get("name") == "tiny" for s in spikes), len(bad)))
sys.exit(1 if bad or not spikes else 0)
PY
done
# Mode stream alike: its drain writes what threads recorded as they go (every 200 ms
# the current chunk too), the calls a thread entered last left to its next pass; the
# erased calls' FILTERED sections and the TURNED_OFF one go into the streamed file.
LD_LIBRARY_PATH=$libdir TICKTRACE_LIBCALLS=0 TICKTRACE_MODE=stream TICKTRACE_OUT=$root/stream.ttr ./zero \
	>stream.out 2>stream.err || { cat stream.err >&2; fail "the program exits $? in mode stream"; }
grep -q '^ticktrace: 1 function turned off after 1024 short calls each' stream.err ||
	{ cat stream.err >&2; fail "mode stream does not turn tiny off"; }
"$TT_TEST_TOOL" report stream.ttr >stream.rep 2>&1 || { cat stream.rep >&2; fail "report fails on stream.ttr"; }
grep -q 'run.ttr\|stream.ttr: 1 function turned off' stream.rep && grep -q 'of the calls returned within TICKTRACE_MIN_DUR' stream.rep ||
	{ cat stream.rep >&2; fail "the streamed file does not count what was erased and turned off"; }
# tiny erased all along (never turned off) while the drain reads: no tiny call that
# holds others (a drained entry its thread then erased would), none unmatched
LD_LIBRARY_PATH=$libdir TICKTRACE_LIBCALLS=0 TICKTRACE_TURN_OFF=0 TICKTRACE_MODE=stream \
	TICKTRACE_OUT=$root/stream2.ttr ./zero >stream2.out 2>stream2.err ||
	{ cat stream2.err >&2; fail "the program exits $? in mode stream, nothing turned off"; }
"$TT_TEST_TOOL" report stream2.ttr >stream2.rep 2>&1 || { cat stream2.rep >&2; fail "report fails on stream2.ttr"; }
# (name, calls, total, self, children: 0 ns)
grep -Eq '^tiny +[0-9]+ +[0-9.]+ [a-z]+ +[0-9.]+ [a-z]+ +0 ns ' stream2.rep ||
	{ cat stream2.rep >&2; fail "a tiny call in the streamed file holds others"; }
grep -q ' 0 unmatched' stream2.rep || { cat stream2.rep >&2; fail "the streamed file has unmatched calls"; }
[ "$failures" = 0 ] || exit 1
echo "mode ring with spikes and snapshots: short calls erased, tiny turned off; the reader read no erased entry"
