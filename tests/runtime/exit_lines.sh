#!/bin/bash
# What the runtime says at exit (issue 24 item 18). A trace it cannot write: the line
# names the file. A full buffer: the line says how many records each thread kept.
# TICKTRACE_BUFFER is rounded up to whole chunks, and the line once said the number
# asked for (1000) where 4,094 records of events were kept. The number it says must be
# what the file holds: 2 records for each "seq" instant kept, and at most a record more.
# A program merely linked with ticktrace that records nothing (its --help) leaves no
# empty ticktrace-PID.ttr in the working directory, and says so once at a terminal,
# nothing where its stderr is read by a script (before: a file each run, ~25 a day in
# the repository's root); one told TICKTRACE_OUT writes it.
# Two runs at once with one TICKTRACE_OUT and TICKTRACE_LOG: the second appends to the
# log the first writes (before: it emptied it, and the first's lines were lost).
#   exit_lines.sh PROGRAM   (tt_longrun_prog; TT_TEST_TOOL: the command)
set -euo pipefail
prog=$(realpath "$1")
dir=$(mktemp -d /tmp/tt-test-exit-XXXXXX)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "exit_lines: $*" >&2; exit 1; }

# A TICKTRACE_OUT whose directory is not there: the trace at the default name in the
# directory the run began in, said where it went, in every mode (outside test ot30 F7:
# stop and ring lost it, said at start and at exit; stream recorded nothing; the form
# "DIR/" fell back already). A file the default name cannot take either: said, naming it.
tool=${TT_TEST_TOOL:-ticktrace}
mkdir "$dir/fb"
for setting in "TICKTRACE_MODE=stop" "TICKTRACE_MODE=ring" "TICKTRACE_MODE=stream" "TICKTRACE_LIVE=1"; do
	(cd "$dir/fb" && env $setting TICKTRACE_OUT="$dir/no-such-dir/run.ttr" timeout 60 "$prog" seq 1 10 \
		>/dev/null 2>"$dir/err") || fail "$setting: the run failed: $(cat "$dir/err")"
	went=$(ls "$dir/fb")
	case "$went" in ticktrace-[0-9]*.ttr) ;; *) fail "$setting: not one trace at the default name: $went: $(cat "$dir/err")";; esac
	grep -q "^ticktrace: TICKTRACE_OUT=$dir/no-such-dir/run.ttr: the \(trace\|stream\|live file\) cannot be made there (No such file or directory): the trace goes to $dir/fb/$went, the default name, instead$" "$dir/err" ||
		fail "$setting: where it went not said: $(cat "$dir/err")"
	! grep -q "could not write" "$dir/err" || fail "$setting: said lost: $(cat "$dir/err")"
	"$tool" info "$dir/fb/$went" >/dev/null 2>&1 || fail "$setting: $went unreadable"
	rm -f "$dir/fb/"*
done
chmod 500 "$dir/fb"
if ! touch "$dir/fb/x" 2>/dev/null; then
	(cd "$dir/fb" && TICKTRACE_OUT="$dir/no-such-dir/run.ttr" timeout 60 "$prog" seq 1 10 2>"$dir/err") || true
	grep -q "could not write the trace at exit to $dir/fb/ticktrace-[0-9]*.ttr: Permission denied" "$dir/err" ||
		fail "neither place: the error does not name the file: $(cat "$dir/err")"
fi
chmod 700 "$dir/fb"
echo "exit_lines: TICKTRACE_OUT in a directory not there: the trace at the default name, said, in modes stop, ring, stream and with a live file"

# A file the kernel makes and nobody writes: each output there says it is refused, with
# its path (before: "No such file or directory", /proc's answer to the file ticktrace
# makes beside it to rename into place; outside finding 7 of issue 35).
for setting in "TICKTRACE_SPIKES=/proc/self/status TICKTRACE_OUT=$dir/run.ttr" \
	"TICKTRACE_REPORT=/proc/self/status TICKTRACE_OUT=$dir/run.ttr" "TICKTRACE_OUT=/proc/self/status" \
	"TICKTRACE_MODE=stream TICKTRACE_OUT=/proc/self/status" "TICKTRACE_LIVE=1 TICKTRACE_OUT=/proc/self/status"; do
	env $setting timeout 60 "$prog" seq 1 10 2>"$dir/err" || true
	grep "/proc/self/status" "$dir/err" | grep -q "Permission denied" && ! grep -q "No such file" "$dir/err" ||
		fail "$setting: the line does not say the file is refused, with its path: $(cat "$dir/err")"
done
echo "exit_lines: a file nobody writes refused, said with its path"

# A directory at an output's name: said as one (before: "." said "Device or resource
# busy", another user's directory in /tmp "Operation not permitted", and a stream to
# "." was written beside it, as "..PID"; outside recheck r36 F6). TICKTRACE_OUT's: the
# trace in it at the default name, ticktrace-PID.ttr, nothing said (before: "Is a
# directory", no trace; outside recheck r40 F5; shared_process.py outdir has the rest).
mkdir "$dir/cwd" "$dir/cwd/adir"
for name in . adir; do
	for setting in "TICKTRACE_SPIKES=$name TICKTRACE_OUT=$dir/run.ttr" \
		"TICKTRACE_REPORT=$name TICKTRACE_OUT=$dir/run.ttr"; do
		(cd "$dir/cwd" && env $setting timeout 60 "$prog" seq 1 10 2>"$dir/err") || true
		grep -q "$name.*Is a directory" "$dir/err" ||
			fail "$setting: the line does not say the name is a directory: $(cat "$dir/err")"
		[ "$(ls -A "$dir/cwd")" = adir ] || fail "$setting: a file beside it: $(ls -A "$dir/cwd")"
	done
	for setting in "TICKTRACE_OUT=$name" "TICKTRACE_MODE=stream TICKTRACE_OUT=$name"; do
		(cd "$dir/cwd" && env $setting timeout 60 "$prog" seq 1 10 2>"$dir/err") || true
		written=$(cd "$dir/cwd/$name" && ls -A | grep -x 'ticktrace-[0-9]*\.ttr') || true
		[ -n "$written" ] && [ "$(echo "$written" | wc -l)" = 1 ] && [ ! -s "$dir/err" ] &&
			timeout 60 "$TT_TEST_TOOL" info "$dir/cwd/$name/$written" >/dev/null ||
			fail "$setting: no trace in it at the default name, or a line said: $(ls -A "$dir/cwd/$name"): $(cat "$dir/err")"
		rm "$dir/cwd/$name/$written"
		[ "$(ls -A "$dir/cwd")" = adir ] || fail "$setting: a file beside it: $(ls -A "$dir/cwd")"
	done
done
echo "exit_lines: a directory at an output's name said as one; TICKTRACE_OUT's: the trace in it"

TICKTRACE_BUFFER=1000 TICKTRACE_OUT="$dir/run.ttr" timeout 60 "$prog" seq 1 100000 2>"$dir/err"
said=$(sed -n 's/.*each thread kept its first \([0-9]*\) records.*/\1/p' "$dir/err")
[ -n "$said" ] || fail "no line about the records kept: $(cat "$dir/err")"
uses=$(timeout 60 "$TT_TEST_TOOL" info "$dir/run.ttr" 2>/dev/null | awk '$1 ~ /^0x/ && $3 == "seq" {print $2; exit}')
[ -n "$uses" ] || fail "info lists no seq site: $("$TT_TEST_TOOL" info "$dir/run.ttr")"
[ "$said" -ge $((2 * uses)) ] && [ "$said" -le $((2 * uses + 1)) ] ||
	fail "it says $said records were kept; the file holds $uses seq instants, $((2 * uses)) records"
echo "exit_lines: $said records said, $uses instants kept"

mkdir "$dir/help"
for mode in stop stream; do
	(cd "$dir/help" && env -u TICKTRACE_OUT -u TICKTRACE_PROGRAM_PID TICKTRACE_MODE=$mode \
		timeout 60 "$prog" --help 2>"$dir/err") && fail "--help exited 0"
	[ -z "$(ls -A "$dir/help")" ] || fail "--help ($mode) recorded nothing and left: $(ls -A "$dir/help")"
	! grep -q "^ticktrace:" "$dir/err" ||
		fail "--help's stderr ($mode), not a terminal, has ticktrace's line: $(cat "$dir/err")"
	# At a terminal (script's), said once.
	(cd "$dir/help" && env -u TICKTRACE_OUT -u TICKTRACE_PROGRAM_PID TICKTRACE_MODE=$mode \
		timeout 60 script -qec "$prog --help" /dev/null >"$dir/tty" 2>&1) || true
	[ -z "$(ls -A "$dir/help")" ] || fail "--help ($mode) at a terminal left: $(ls -A "$dir/help")"
	[ "$(grep -c "^ticktrace: no event recorded: no trace written" "$dir/tty")" = 1 ] ||
		fail "--help ($mode) at a terminal does not say once that no trace was written: $(cat "$dir/tty")"
done
TICKTRACE_OUT="$dir/help/named.ttr" timeout 60 "$prog" --help 2>"$dir/err" && fail "--help exited 0"
timeout 60 "$TT_TEST_TOOL" info "$dir/help/named.ttr" >/dev/null ||
	fail "a TICKTRACE_OUT named and nothing recorded: no trace there ($(cat "$dir/err"))"
echo "exit_lines: nothing recorded, no file but the one named"

# Events recorded by threads all gone before the end, none by the thread that exits: a
# run that recorded, its trace written under the default name in every mode (before:
# mode stream removed the file it had streamed, its exited threads' slots recycled and no
# longer listed; outside tester r50 #1).
for mode in stop ring stream; do
	mkdir "$dir/gone-$mode"
	(cd "$dir/gone-$mode" && env -u TICKTRACE_OUT -u TICKTRACE_PROGRAM_PID TICKTRACE_MODE=$mode \
		timeout 60 "$prog" churn 20 >/dev/null 2>"$dir/err") || fail "churn ($mode) failed: $(cat "$dir/err")"
	written=$(cd "$dir/gone-$mode" && ls -A | grep -x 'ticktrace-[0-9]*\.ttr') ||
		fail "mode $mode: threads recorded and exited, no trace written: $(cat "$dir/err")"
	uses=$(timeout 60 "$TT_TEST_TOOL" info "$dir/gone-$mode/$written" | awk '$1 ~ /^0x/ && $3 == "churn" {print $2; exit}')
	[ "$uses" = 20 ] || fail "mode $mode: the trace holds ${uses:-no} churn events of 20: $("$TT_TEST_TOOL" info "$dir/gone-$mode/$written")"
done
echo "exit_lines: events by exited threads alone, written in every mode"

# A user at its limit of processes (ulimit -u, a pids cgroup): ticktrace's threads cannot
# start, and the line says so, not "no memory" (an outside check was sent looking at
# memory). As nobody: root is not held to RLIMIT_NPROC.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$dir"
	mkdir -m 777 "$dir/nproc"
	(cd "$dir/nproc" && TICKTRACE_OUT="$dir/nproc/run.ttr" setpriv --reuid=nobody --regid=nogroup \
		--clear-groups bash -c "ulimit -u 1; exec $prog seq 0 1" 2>"$dir/nproc/err") || true
	grep -q "^ticktrace: no thread for the trace buffers (Resource temporarily unavailable: the limit of processes" \
		"$dir/nproc/err" || fail "no thread at the limit of processes, not said: $(cat "$dir/nproc/err")"
	echo "exit_lines: at the limit of processes, said: $(cat "$dir/nproc/err")"
fi

shared=(env -u TICKTRACE_PROGRAM_PID TICKTRACE_OUT="$dir/shared.ttr" TICKTRACE_LOG="$dir/shared.log")
"${shared[@]}" TICKTRACE_SCHED=run-a "$prog" seconds 1 30000 >/dev/null 2>&1 & # ($!: env, which execs it)
first=$!
trap 'kill $first 2>/dev/null || true; rm -rf "$dir"' EXIT INT TERM
for _ in $(seq 300); do grep -q run-a "$dir/shared.log" 2>/dev/null && break; sleep 0.1; done
grep -q run-a "$dir/shared.log" || fail "the first run said nothing into its log"
"${shared[@]}" TICKTRACE_SCHED=run-b timeout 60 "$prog" seq 1 10 >/dev/null 2>&1
kill -TERM $first; wait $first || true
grep -q "TICKTRACE_SCHED=run-a" "$dir/shared.log" && grep -q "TICKTRACE_SCHED=run-b" "$dir/shared.log" ||
	fail "the shared log lost a run's lines: $(cat "$dir/shared.log")"
echo "exit_lines: two runs at once, one log: both runs' lines in it"
