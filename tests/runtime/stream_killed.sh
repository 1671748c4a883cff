#!/bin/sh
# A stream run killed: at its start, it leaves a file the tools read (it left one of
# 0 bytes: "truncated file header"), or none; later, its calls TICKTRACE_MIN_DUR erased
# (written as a thread exits, and at the end) are said to be missing, by info and by
# report, not undercounted silently. Usage: stream_killed.sh PROG TICKTRACE
set -eu
prog=$1 tool=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }
run() { # OUT MODE [KILL_WHEN_NAMED]
	rc=0
	TT_TEST_KILL_WHEN_NAMED=${3:-0} TICKTRACE_MODE=stream TICKTRACE_MIN_DUR=1ms TICKTRACE_OUT="$dir/$1" timeout 60 "$prog" "$2" \
		2>"$dir/err" || rc=$?
	[ "$rc" = 137 ] || { cat "$dir/err"; fail "$2: exit $rc, not killed (137)"; }
}

run named.ttr named 1
[ -e "$dir/named.ttr" ] || fail "named: no file named (the program was killed as it was)"
"$tool" info "$dir/named.ttr" >"$dir/info" 2>&1 || { cat "$dir/info"; fail "named: info cannot read it"; }
grep -q 'ended:    NO: the run crashed or was killed' "$dir/info" || { cat "$dir/info"; fail "named: not said killed"; }
"$tool" report "$dir/named.ttr" >"$dir/report" 2>&1 || { cat "$dir/report"; fail "named: report cannot read it"; }
[ "$(ls "$dir" | grep -c ttr)" = 1 ] || fail "named: files left: $(ls "$dir")"
echo "ok: killed as it was named, $(stat -c %s "$dir/named.ttr") bytes, read"

run erased.ttr erased
missing='calls TICKTRACE_MIN_DUR erased on threads that had not exited are not counted'
"$tool" info "$dir/erased.ttr" >"$dir/info" 2>&1 || { cat "$dir/info"; fail "erased: info failed"; }
grep -q "$missing" "$dir/info" || { cat "$dir/info"; fail "erased: info does not say the erased calls are missing"; }
"$tool" report "$dir/erased.ttr" >"$dir/report" 2>"$dir/report_err" || { cat "$dir/report_err"; fail "erased: report failed"; }
grep -q "$missing" "$dir/report_err" || { cat "$dir/report" "$dir/report_err"; fail "erased: report does not say it"; }
# (ticktrace's own drain thread, described in the file, is not shown as one of the
# program's: outside tester r50 #5)
"$tool" convert -q -o "$dir/erased.json" "$dir/erased.ttr" || fail "erased: convert failed"
! grep -q tt-drain "$dir/info" "$dir/erased.json" || fail "erased: tt-drain shown as a thread of the program's"
# (its second wall clock, written as the file began, is not said as the file's writing: r51)
grep -q 'wall clock as the file began:' "$dir/info" && ! grep -q 'wall clock as written' "$dir/info" ||
	fail "erased: the stream's second wall clock said as written: $(grep 'wall clock' "$dir/info")"
echo "ok: killed later, the erased calls said missing, no tt-drain shown"
