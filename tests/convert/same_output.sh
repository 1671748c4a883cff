#!/bin/bash
# Whether a change to the tools leaves every output as it was, byte for byte: a manual
# check for refactorings (issue 31: "a conversion of the same raw files byte for byte
# before and after"), not a CI test (it needs the build from before the change).
#   tests/convert/same_output.sh BUILD_DIR OLD_TICKTRACE [NEW_TICKTRACE] [--skip FORMAT]
# BUILD_DIR's programs record the raw files once (the demo, with thread states and
# instrumented, names_program's runs, mode stream, mode ring with a small buffer,
# tt_longrun_prog's extremes, the converter benchmark's synthetic file with
# counters and arguments, two snapshots, the wrap and suggest programs), then both
# ticktraces (NEW: BUILD_DIR/tools/ticktrace) turn each into JSON (with -s, with
# --threshold's marks, clipped by two windows), .pftrace (the same), report (text
# and --json), spikes, flame (folded and SVG), three files merged; and the fuzz
# corpus's files into JSON, .pftrace and folded stacks. Standard output, standard
# error and exit status of each are compared too. `--skip pftrace` leaves out the
# .pftrace files (a change of that encoding is checked with
# tests/consumers/same_perfetto.py OLD NEW, file by file).
# report's figure for the recorder's own cost is measured at each run: it and the
# rows it marks (~, near_overhead) are left out of the comparison.
# Exit 0: the same; 1: a difference (listed); 2: usage.
set -u
build=${1:?usage: same_output.sh BUILD_DIR OLD_TICKTRACE [NEW_TICKTRACE] [--skip FORMAT]}
old=${2:?usage: same_output.sh BUILD_DIR OLD_TICKTRACE [NEW_TICKTRACE] [--skip FORMAT]}
new=$build/tools/ticktrace
skip=none
shift 2
while [ $# -gt 0 ]; do
	case $1 in
	--skip) skip=$2; shift 2 ;;
	*) new=$1; shift ;;
	esac
done
src=$(cd "$(dirname "$0")/../.." && pwd)
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
build=$(abs "$build") old=$(abs "$old") new=$(abs "$new")
for x in "$old" "$new" "$build/bench/ticktrace-demo"; do
	[ -x "$x" ] || { echo "same_output.sh: no $x: build first" >&2; exit 2; }
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
raw=$dir/raw
mkdir -p "$raw/snap" "$raw/i"

# The raw files.
prog=$build/tests/programs
(
	unset TICKTRACE_OUT
	cd "$raw" || exit 1
	TICKTRACE_SCHED=1 "$build/bench/ticktrace-demo" --out "$raw"
	mv "$raw/demo.ttr" "$raw/demo_sched.ttr"
	"$build/bench/ticktrace-demo" --out "$raw"
	"$build/bench/ticktrace-demo-instrumented" --out "$raw/i"
	mv "$raw/i/demo.ttr" "$raw/demo_instr.ttr"
	rm -f "$raw"/*.json "$raw/i"/*.json
	for a in "" --frames --conditional --recursion "--many 50"; do
		# shellcheck disable=SC2086 # $a: none or the option and its value
		TICKTRACE_OUT="$raw/names$(echo $a | tr -d ' -').ttr" "$prog/names_program" $a
	done
	TICKTRACE_MODE=stream TICKTRACE_OUT=$raw/stream.ttr "$prog/tt_longrun_prog" seq 4 20000
	TICKTRACE_MODE=ring TICKTRACE_BUFFER=65536 TICKTRACE_OUT=$raw/ring.ttr \
		"$prog/names_program" --recursion
	TICKTRACE_OUT=$raw/extremes.ttr "$prog/tt_longrun_prog" extremes 2
	"$build/bench/ticktrace-convert-bench" --events 300000 --threads 3 --repeats 1 \
		--dir "$raw" --keep
	TICKTRACE_MODE=ring TICKTRACE_SNAPSHOTS=$raw/snap TICKTRACE_OUT=$raw/snap/run.ttr \
		"$prog/snapshot_settings_prog" first second
	i=0
	for f in "$raw"/snap/trigger-*.ttr; do
		i=$((i + 1))
		mv "$f" "$raw/snapshot$i.ttr"
	done
	TICKTRACE_OUT=$raw/wrap.ttr "$prog/wrap_program_shared"
	TICKTRACE_OUT=$raw/suggest.ttr "$prog/suggest_program"
) > "$dir/record.log" 2>&1
rm -rf "$raw/snap" "$raw/i"
# Each program's file by name (a count once said 18 where the programs wrote 16, and the
# script refused every run).
missing=""
for f in demo_sched demo demo_instr names namesframes namesconditional namesrecursion namesmany50 \
	stream ring extremes snapshot1 snapshot2 wrap suggest; do
	[ -s "$raw/$f.ttr" ] || missing="$missing $f.ttr"
done
[ "$(ls "$raw" | wc -l)" -ge 16 ] || missing="$missing (the converter benchmark's file)"
if [ -n "$missing" ]; then
	cat "$dir/record.log" >&2
	echo "same_output.sh: the programs did not record:$missing" >&2
	exit 2
fi

convert_all() { # TICKTRACE OUTDIR
	local t=$1 o=$2 f b
	mkdir -p "$o"
	run() {
		local name=$1
		shift
		"$t" "$@" > "$o/$name.stdout" 2> "$o/$name.stderr"
		echo $? > "$o/$name.rc"
	}
	for f in "$raw"/*.ttr; do
		b=$(basename "$f" .ttr)
		for fmt in json pftrace; do
			[ "$fmt" = "$skip" ] && continue
			run "$b.$fmt" convert "$f" -o "$o/$b.$fmt" -f
			run "$b.th.$fmt" convert "$f" -o "$o/$b.th.$fmt" -f --threshold 20us
			run "$b.clip.$fmt" convert "$f" -o "$o/$b.clip.$fmt" -f --from 1ms --to 3ms --clip
			run "$b.clip2.$fmt" convert "$f" -o "$o/$b.clip2.$fmt" -f --from 20ms --to 60ms --clip
		done
		run "$b.src.json" convert "$f" -o "$o/$b.src.json" -f -s
		run "$b.report" report "$f"
		run "$b.reportj" report "$f" --json
		run "$b.spikes" spikes "$f" --threshold 20us
		run "$b.folded" flame "$f" -o -
		run "$b.svg" flame "$f" -o "$o/$b.svg" -f
	done
	for fmt in json pftrace; do
		[ "$fmt" = "$skip" ] && continue
		run "merged.$fmt" convert "$raw/demo.ttr" "$raw/names.ttr" "$raw/namesframes.ttr" \
			-o "$o/merged.$fmt" -f
	done
	for f in "$src"/tests/fuzz/corpus/*; do
		b=fuzz-$(basename "$f")
		for fmt in json pftrace; do
			[ "$fmt" = "$skip" ] && continue
			run "$b.$fmt" convert "$f" -o "$o/$b.$fmt" -f
		done
		run "$b.folded" flame "$f" -o -
	done
	# what names the output directory or varies from run to run
	sed -i "s#$o#OUT#g" "$o"/*.stdout "$o"/*.stderr "$o"/*.svg
	sed -i -E 's/"call_overhead_ns":[0-9]+/"call_overhead_ns":N/; s/\([0-9]+ ns, measured now\)/(N ns, measured now)/; s/ +~$//; s/"near_overhead":[a-z]+,//g; s/,"near_overhead":[a-z]+//g' \
		"$o"/*.report*.stdout
}
convert_all "$old" "$dir/old"
convert_all "$new" "$dir/new"
n=$(ls "$dir/new" | wc -l)
if diff -rq "$dir/old" "$dir/new"; then
	echo "same_output.sh: the same, $n files from $(ls "$raw" | wc -l) raw files and the fuzz corpus"
	exit 0
fi
exit 1
