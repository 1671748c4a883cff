#!/bin/bash
# The default name, ticktrace-PID.ttr, never over another run's (outside recheck r43
# R5): a pid repeats (a container's first process is 1 in every run, Wine's 32 with
# each new wineserver, Linux's after wrap-around), and a second run replaced the first
# one's trace without a word. Each run here is pid 1 in a pid namespace of its own.
#   again:   three runs, three files (ticktrace-1.ttr, -1-1, -1-2), the first unchanged,
#            each later one's name said (before: one file, replaced, nothing said);
#   live:    the live file of a run while a killed run's is there, and its trace, one
#            name (ticktrace-1-1.ttr.live, ticktrace-1-1.ttr; before: the live file
#            beside as ticktrace-1.1.ttr.live, the trace over ticktrace-1.ttr), the
#            killed run's live file named as the file there (ticktrace-1.ttr was, which
#            is not there: outside recheck r45 N2);
#   planted: a file from before the run put at its name after it began (as another
#            container's run that ended) kept, this one's at -1, said (before: replaced);
#   given:   TICKTRACE_OUT=run-%p.ttr, the user's name, as before: an older file there
#            replaced;
#   record:  record with no -o (its program is pid 2 in each run): the second run's
#            trace numbered, named in record's summary, the first's kept;
#   snapshots: two runs of pid 1 into one TICKTRACE_SNAPSHOTS: the first's files kept,
#            unchanged, the second's spike-1.1-N-NAME.ttr, said (before: the second's
#            spike-1-N-NAME.ttr replaced the first's).
#   spike log: TICKTRACE_SPIKES, a name given, placed as TICKTRACE_OUT's given name is
#            (outside test ot30 F5: a second run of pid 1 replaced the log a first was
#            still writing, its spikes lost, nothing said): a second run of pid 1 while
#            the first logs keeps the first's log whole and writes its own beside it,
#            log.1.jsonl, said; a third, after both, replaces the older log, as a trace
#            at a name given replaces an older file.
#   default_name.sh PROGRAM   (tt_longrun_prog; TT_TEST_TOOL: the command)
set -euo pipefail
prog=$(realpath "$1")
tool=${TT_TEST_TOOL:-ticktrace}
dir=$(mktemp -d /tmp/tt-test-name-XXXXXX)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "default_name: $*" >&2; exit 1; }
ns() { unshare --pid --fork --mount-proc --map-root-user --kill-child "$@"; }
ns true 2>/dev/null || { echo "default_name: no pid namespace here (unshare --pid --mount-proc --map-root-user)" >&2; exit 77; }
unset TICKTRACE_OUT TICKTRACE_LIVE TICKTRACE_MODE
cd "$dir"

# (the gate: spiky waits until the file says "go", quoted)
gated() { rm -f gate; : > gate; ns env "$@" "$prog" spiky gate go 2>>err & gated_pid=$!; }
wait_for() { for _ in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.1; done; fail "no $1 in 60 s: $(ls)"; }

for i in 0 1 2; do
	ns "$prog" seq 1 10 2>err."$i"
	[ "$i" = 0 ] && sum=$(md5sum < ticktrace-1.ttr)
done
[ "$(ls | grep -c '\.ttr$')" = 3 ] && [ -f ticktrace-1-1.ttr ] && [ -f ticktrace-1-2.ttr ] ||
	fail "again: three runs of pid 1 left $(ls | grep '\.ttr$' | tr '\n' ' ')"
[ "$(md5sum < ticktrace-1.ttr)" = "$sum" ] || fail "again: the first run's trace was replaced"
for n in 1 2; do
	grep -q "ticktrace-1.ttr: a file of a run before this one is there .*kept: this one's is $dir/ticktrace-1-$n.ttr" err."$n" ||
		fail "again: run $n's name not said: $(cat err."$n")"
	"$tool" info "ticktrace-1-$n.ttr" > /dev/null || fail "again: ticktrace-1-$n.ttr unreadable"
done
echo "default_name: again: three runs of pid 1, three traces, the later ones' names said"

rm -f ./*
: > ticktrace-1.ttr.live # (a killed run's)
gated TICKTRACE_LIVE=1
wait_for ticktrace-1-1.ttr.live
ls | grep -q '^ticktrace-1\.1\.' && fail "live: a live file beside: $(ls)"
echo '"go"' > gate
wait "$gated_pid" || fail "live: the run failed: $(cat err)"
[ -f ticktrace-1-1.ttr ] && [ ! -e ticktrace-1-1.ttr.live ] && [ ! -s ticktrace-1.ttr.live ] && [ ! -e ticktrace-1.ttr ] ||
	fail "live: files $(ls | tr '\n' ' '), not ticktrace-1-1.ttr with the killed run's live file kept"
grep -q "^ticktrace: $dir/ticktrace-1\.ttr\.live: a file of a run before this one is there .*this one's is $dir/ticktrace-1-1\.ttr$" err ||
	fail "live: the killed run's live file not named as the file there: $(cat err)"
echo "default_name: live: the live file and the trace one name, the killed run's live file kept and named"

rm -f ./*
gated TICKTRACE_LIVE=1
wait_for ticktrace-1.ttr.live # (the run has begun, nothing at its name then)
echo "another run's" > ticktrace-1.ttr
touch -d '1 hour ago' ticktrace-1.ttr
echo '"go"' > gate
wait "$gated_pid" || fail "planted: the run failed: $(cat err)"
[ "$(cat ticktrace-1.ttr)" = "another run's" ] && [ -f ticktrace-1-1.ttr ] ||
	fail "planted: files $(ls | tr '\n' ' '): the older file at the default name not kept"
grep -q "ticktrace-1.ttr: a file of a run before this one is there .*this one's is $dir/ticktrace-1-1.ttr" err ||
	fail "planted: not said: $(cat err)"
echo "default_name: planted: another run's older file kept, this one's beside it numbered, said"

rm -f ./*
echo "older" > run-1.ttr
touch -d '1 hour ago' run-1.ttr
ns env TICKTRACE_OUT=run-%p.ttr "$prog" seq 1 10 2>err
[ "$(ls | grep '\.ttr' | tr '\n' ' ')" = "run-1.ttr " ] && "$tool" info run-1.ttr > /dev/null ||
	fail "given: files $(ls | tr '\n' ' '): TICKTRACE_OUT's older file not replaced as before"
echo "default_name: given: TICKTRACE_OUT's name as before, an older file replaced"

rm -f ./*
for i in 0 1; do
	ns "$tool" record -- "$prog" seq 1 10 2>err."$i" || fail "record: exit $?: $(cat err."$i")"
done
first=$(ls | grep '^ticktrace-[0-9]*\.ttr$') || fail "record: no first trace: $(ls)"
second=${first%.ttr}-1.ttr
[ -f "$second" ] && grep -q "ticktrace: recorded $dir/$second" err.1 ||
	fail "record: files $(ls | tr '\n' ' '), second run said: $(cat err.1)"
echo "default_name: record: the second run's trace numbered, named in record's summary"

rm -rf ./*
for i in 0 1; do
	ns env TICKTRACE_SNAPSHOTS="$dir/snaps" TICKTRACE_SPIKES="$dir/log.$i.jsonl" TICKTRACE_SPIKE_THRESHOLD=10ms \
		"$prog" spiky "$dir/log.$i.jsonl" >/dev/null 2>err."$i" || fail "snapshots: run $i failed: $(cat err."$i")"
	[ "$i" = 0 ] && { (cd snaps && md5sum -- *) > sums || fail "snapshots: the first run wrote none: $(cat err.0)"; }
done
(cd snaps && md5sum -c --quiet ../sums) || fail "snapshots: the first run's files replaced: $(ls snaps)"
first=$(wc -l < sums)
[ "$first" -gt 0 ] && [ "$(ls snaps | grep -c '^spike-1-')" = "$first" ] &&
	[ "$(ls snaps | grep -c '^spike-1\.1-[0-9]*-.*\.ttr$')" -gt 0 ] && [ "$(ls snaps | wc -l)" -gt "$first" ] ||
	fail "snapshots: files $(ls snaps | tr '\n' ' '), not the first run's spike-1-* and the second's spike-1.1-*"
grep -q "^ticktrace: $dir/snaps: snapshots of a run before this one are there (.*), spike-1-\* or trigger-1-\*, kept: this one's are spike-1\.1-N-NAME\.ttr" err.1 ||
	fail "snapshots: the second run's names not said: $(cat err.1)"
"$tool" info "snaps/$(ls snaps | grep '^spike-1\.1-' | head -1)" > /dev/null || fail "snapshots: the second run's unreadable"
echo "default_name: snapshots: a second run of pid 1 kept the first's, its own numbered, said"

rm -rf ./*
gated TICKTRACE_OUT=/dev/null TICKTRACE_SPIKES="$dir/log.jsonl" TICKTRACE_SPIKE_THRESHOLD=10ms
for _ in $(seq 600); do grep -q '"slow"' log.jsonl 2>/dev/null && break; sleep 0.1; done
grep -q '"slow"' log.jsonl || fail "spike log: the first run logged no slow spike in 60 s: $(cat err)"
ns env TICKTRACE_OUT=/dev/null TICKTRACE_SPIKES="$dir/log.jsonl" TICKTRACE_SPIKE_THRESHOLD=10ms "$prog" seq 1 10 2>err.second ||
	fail "spike log: the second run failed: $(cat err.second)"
echo '"go"' > gate
wait "$gated_pid" || fail "spike log: the first run failed: $(cat err)"
grep -q '"slow"' log.jsonl && [ -f log.1.jsonl ] && ! grep -q '"slow"' log.1.jsonl ||
	fail "spike log: files $(ls | tr '\n' ' '): the first run's log not kept whole, the second's not beside it"
grep -q "^ticktrace: $dir/log.jsonl: another process put its spike log there since this one started (the same TICKTRACE_SPIKES, without %p): this one's is $dir/log.1.jsonl$" err.second ||
	fail "spike log: the second run's not said: $(cat err.second)"
ns env TICKTRACE_OUT=/dev/null TICKTRACE_SPIKES="$dir/log.jsonl" TICKTRACE_SPIKE_THRESHOLD=10ms "$prog" seq 1 10 2>err.third ||
	fail "spike log: the third run failed: $(cat err.third)"
# (its log not put beside, nothing said of it; a sanitizer build says tt-spikes' cost)
! grep -q '"slow"' log.jsonl && ! grep -q 'log\.' err.third ||
	fail "spike log: the third run did not replace the older log as a trace's given name is: $(cat err.third)"
echo "default_name: spike log: a second run of pid 1 while the first logs: the first's kept, its own beside it, said"
