#!/bin/sh
# bench/compare: a time that grew against the run's RDTSC, or a rate that fell,
# regresses (exit 3); a machine twice as slow throughout does not; bad input exits 1
# naming the file, usage errors 2.
#   bench_compare.sh bench/compare
set -eu
compare=$1
command -v python3 >/dev/null || { echo "skipped: no python3" >&2; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
expect() { # STATUS ARGS...: runs bench/compare and checks its exit status
	want=$1
	shift
	status=0
	python3 "$compare" "$@" > "$dir/out" 2> "$dir/err" || status=$?
	if [ "$status" -ne "$want" ]; then
		echo "bench/compare $*: exit $status, expected $want" >&2
		cat "$dir/out" "$dir/err" >&2
		exit 1
	fi
}
bench() { # FILE RDTSC WARM RATE BYTES PCT DROPPED
	printf '{"rdtsc_ns": %s, "event_warm_ns": %s, "report_events_per_s": %s, "bytes_per_event": %s, "sample_overhead_pct": %s, "stream_dropped": %s}\n' \
		"$2" "$3" "$4" "$5" "$6" "$7" > "$dir/$1"
}
bench old.json 8 9 20000000 16 1.0 0
bench same.json 8 9.4 19500000 16 1.5 0
bench slower_machine.json 16 18 10000000 16 1.0 0
bench warm.json 8 11 20000000 16 1.0 0
bench rate.json 8 9 15000000 16 1.0 0
bench bytes.json 8 9 20000000 20 1.0 0
bench pct.json 8 9 20000000 16 2.5 0
bench dropped.json 8 9 20000000 16 1.0 3
expect 0 "$dir/old.json" "$dir/same.json"
expect 0 "$dir/old.json" "$dir/slower_machine.json"
for worse in warm rate bytes pct dropped; do
	expect 3 "$dir/old.json" "$dir/$worse.json"
	grep -q REGRESSED "$dir/out" || { echo "$worse: no REGRESSED line" >&2; exit 1; }
done
# A time in milliseconds (snapshot_ms) is a time too: twice as long on a machine twice as
# slow is none.
printf '{"rdtsc_ns": 8, "snapshot_ms": 12}\n' > "$dir/ms_old.json"
printf '{"rdtsc_ns": 16, "snapshot_ms": 24}\n' > "$dir/ms_slower_machine.json"
printf '{"rdtsc_ns": 8, "snapshot_ms": 24}\n' > "$dir/ms_slower.json"
expect 0 "$dir/ms_old.json" "$dir/ms_slower_machine.json"
expect 3 "$dir/ms_old.json" "$dir/ms_slower.json"
expect 0 "$dir/warm.json" "$dir/old.json" # faster is no regression
expect 0 "$dir/old.json" "$dir/warm.json" --threshold 30
expect 0 "$dir/old.json" "$dir/warm.json" --ignore event_warm_ns
expect 1 "$dir/old.json" "$dir/missing.json"
grep -q missing.json "$dir/err" || { echo "the missing file is not named" >&2; exit 1; }
echo '{"rdtsc_ns": ' > "$dir/damaged.json"
expect 1 "$dir/damaged.json" "$dir/old.json"
grep -q damaged.json "$dir/err" || { echo "the damaged file is not named" >&2; exit 1; }
expect 2 "$dir/old.json"
expect 2 "$dir/old.json" "$dir/same.json" --threshold lots
echo "bench/compare: regressions found, machine speed and noise not taken for them"
