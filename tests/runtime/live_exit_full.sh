#!/bin/sh
# TICKTRACE_LIVE=1, and the trace cannot be written at exit (a file size limit, as a
# full disk): the exit line says the events are in the live file, which says the run
# exited (it said "crashed or was killed", and the exit line did not name it: outside
# recheck r37 N7); under record, record says the write failed and why (r43 R3).
# Usage: live_exit_full.sh PROG TICKTRACE
set -eu
prog=$1 tool=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }
rc=0
TICKTRACE_LIVE=1 TICKTRACE_OUT="$dir/run.ttr" timeout 60 "$prog" 2>"$dir/err" || rc=$?
[ "$rc" = 0 ] || { cat "$dir/err"; fail "the program failed ($rc)"; }
[ ! -e "$dir/run.ttr" ] || fail "a trace was written: the limit did not stop it"
grep -q "could not write the trace at exit to $dir/run.ttr: File too large; its events are in the live file $dir/run.ttr.live" "$dir/err" ||
	{ cat "$dir/err"; fail "the exit line does not name the live file"; }
"$tool" info "$dir/run.ttr.live" >"$dir/info" 2>&1 || { cat "$dir/info"; fail "info cannot read the live file"; }
grep -q 'ended:    the run exited, but its trace could not be written at exit' "$dir/info" ||
	{ cat "$dir/info"; fail "the live file does not say the run exited"; }
if grep -q 'crashed or was killed' "$dir/info"; then cat "$dir/info"; fail "said crashed or killed"; fi
"$tool" spikes --threshold 1ms "$dir/run.ttr.live" >"$dir/spikes" 2>&1 || { cat "$dir/spikes"; fail "spikes failed"; }
grep -q 'spike: slow took' "$dir/spikes" || { cat "$dir/spikes"; fail "the slow scope is not there"; }
# Under record (a live file always): record says the write failed, and why, not that
# the program left by _exit (r43 R3: ".live: PROG left by _exit before its trace was
# written" of a program that returned from main).
rc=0
timeout 60 "$tool" record -o "$dir/rec.ttr" -- "$prog" 2>"$dir/rec.err" || rc=$?
[ "$rc" = 0 ] || { cat "$dir/rec.err"; fail "record exits $rc, not the program's 0"; }
if grep -q 'left by _exit' "$dir/rec.err"; then cat "$dir/rec.err"; fail "record says the program left by _exit"; fi
grep -qF "1 .live of a process that exited but could not write its trace" "$dir/rec.err" &&
	grep -qF "could not write its trace at exit, the write failed (its line said more): $dir/rec.ttr (File too large)" "$dir/rec.err" ||
	{ cat "$dir/rec.err"; fail "record does not say the write failed, and why"; }
echo "ok: the exit named the live file, which says the run exited and holds its events; record says the write failed"
