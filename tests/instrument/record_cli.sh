#!/bin/sh
# `ticktrace record` as a user meets it, beyond the patching (issue 23):
#   static     a statically linked program, static-pie, and a script whose interpreter
#              is one: said so, run untraced, the program's output and exit status;
#   children   follow by default: the shell and the program started by it traced too,
#              what the patcher says said once per program, one line naming every
#              file written, -c converting them all onto one timeline;
#   no_follow  --no-follow: the program alone (and its fork), its children untraced;
#   sanitized  a program built with -fsanitize=address, whose runtime must be the
#              first library loaded: it runs and is traced as without sanitizer;
#   help       the exit statuses --help promises are those given.
#   record_cli.sh CASE CC DETOUR_SOURCES SANITIZE   (TT_TEST_TOOL: the ticktrace command;
#   SANITIZE: the build's b_sanitize)
set -eu
case_=$1 cc=$2 src=$3 sanitize=${4:-none}
tool=${TT_TEST_TOOL:-ticktrace}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trap 'exit 1' HUP INT TERM
# record's own directory goes here, to check it is removed
mkdir "$dir/tmp"
export TMPDIR="$dir/tmp"
unset TICKTRACE TICKTRACE_OUT TICKTRACE_MODE
fail() { echo "FAIL: $*" >&2; exit 1; }
# In a sanitizer build the detour library needs its runtime loaded first: the test's
# programs get it as a user's preload (which record keeps before its own library).
if [ "$sanitize" != none ] && [ "$case_" != sanitized ]; then
	export LD_PRELOAD="$("$cc" -print-file-name=libasan.so)" ASAN_OPTIONS=detect_leaks=0
fi
# How many lines of file $1 match the fixed string $2.
count() { grep -cF -- "$2" "$1" || true; }
# The run's private directory is gone.
no_leftovers() { [ -z "$(ls -A "$dir/tmp")" ] || fail "record left $(ls -A "$dir/tmp") in TMPDIR"; }

case $case_ in
static)
	"$cc" -O1 -static -o "$dir/static" "$src/hello.c" 2>"$dir/cc.log" ||
		{ echo "skipped: no static C library here ($(head -1 "$dir/cc.log"))" >&2; exit 77; }
	"$cc" -O1 -static-pie -o "$dir/static-pie" "$src/hello.c" 2>>"$dir/cc.log" ||
		cp "$dir/static" "$dir/static-pie"
	printf '#!%s\n' "$dir/static" >"$dir/script"
	chmod +x "$dir/script"
	for prog in static static-pie script; do
		"$dir/$prog" >"$dir/plain.out" 2>"$dir/plain.err" && plain=0 || plain=$?
		[ "$plain" = 5 ] || fail "$prog exits $plain, not 5"
		(cd "$dir" && "$tool" record -f 'work_*' -c "$prog.json" -- "./$prog" >"$prog.out" \
			2>"$prog.err") && rc=0 || rc=$?
		[ "$rc" = 5 ] || { cat "$dir/$prog.err" >&2; fail "record $prog exits $rc, not the program's 5"; }
		cmp -s "$dir/plain.out" "$dir/$prog.out" || fail "record $prog changed its output"
		grep -q 'statically linked: nothing can be preloaded into it, so it runs untraced' \
			"$dir/$prog.err" || { cat "$dir/$prog.err" >&2; fail "record $prog: not said static"; }
		[ "$prog" != script ] || grep -qF "runs $dir/static, which is" "$dir/$prog.err" ||
			fail "record script: the interpreter not named"
		! grep -q 'wrote no trace' "$dir/$prog.err" || fail "record $prog: looked for a trace"
		[ ! -e "$dir/$prog.json" ] || fail "record $prog: converted something"
	done
	# Found through PATH as execvp finds it, an empty entry being the working directory.
	(cd "$dir" && PATH=":$PATH" "$tool" record -- static >/dev/null 2>path.err) && rc=0 || rc=$?
	[ "$rc" = 5 ] && grep -q 'static is statically linked' "$dir/path.err" ||
		{ cat "$dir/path.err" >&2; fail "record of a static program found in PATH: exit $rc"; }
	# A dynamic program is not taken for a static one.
	"$cc" -O1 -o "$dir/dynamic" "$src/hello.c"
	(cd "$dir" && "$tool" record -f 'work_*' -o dyn.ttr -- ./dynamic >/dev/null 2>dyn.err) && rc=0 || rc=$?
	[ "$rc" = 5 ] && [ -s "$dir/dyn.ttr" ] && ! grep -q statically "$dir/dyn.err" ||
		{ cat "$dir/dyn.err" >&2; fail "record of a dynamic program"; }
	no_leftovers
	echo "static programs and scripts: said so, run as they are, their status"
	;;
children|no_follow)
	"$cc" -O1 -o "$dir/spawn" "$src/spawn.c"
	"$dir/spawn" >"$dir/plain.out" && plain=0 || plain=$?
	[ "$plain" = 3 ] || fail "spawn exits $plain, not 3"
	flag=
	[ "$case_" = children ] || flag=--no-follow
	mkdir "$dir/run"
	(cd "$dir/run" && "$tool" record $flag -f 'work_*' -c all.json -- ../spawn >out 2>err) && rc=0 || rc=$?
	err=$dir/run/err
	[ "$rc" = 3 ] || { cat "$err" >&2; fail "record exits $rc, not the program's 3"; }
	sort "$dir/plain.out" >"$dir/plain.sorted"
	sort "$dir/run/out" >"$dir/run.sorted"
	cmp -s "$dir/plain.sorted" "$dir/run.sorted" || fail "the processes' output changed"
	[ "$(count "$err" 'ticktrace: patched 1 functions')" = 1 ] ||
		{ cat "$err" >&2; fail "the patch report is not said once"; }
	files=$(cd "$dir/run" && ls ticktrace-*.ttr | wc -l)
	[ "$(count "$err" 'ticktrace: recorded')" = 1 ] || fail "not one summary line"
	summary=$(grep 'ticktrace: recorded' "$err")
	for f in "$dir"/run/ticktrace-*.ttr; do
		case $summary in *"$f"*) ;; *) fail "the summary does not name $f: $summary" ;; esac
	done
	# The processes that called work_leaf, on the converted timeline.
	pids=$(python3 -c '
import json, sys
events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
print(len({e["pid"] for e in events if e.get("name") == "work_leaf"}))' "$dir/run/all.json")
	if [ "$case_" = children ]; then
		# the program, its four children through the shell, its fork; the shell,
		# which records nothing, writes nothing
		[ "$files" = 6 ] || fail "$files files written, not 6"
		[ "$pids" = 6 ] || fail "-c converted work_leaf of $pids processes, not 6"
		[ "$(count "$err" 'which the program started, is traced too')" = 1 ] ||
			{ cat "$err" >&2; fail "the shell's report is not said once"; }
		# Streamed files are listed when created (the shells' too: a streamed file
		# is there from the start): the summary names those the run left.
		mkdir "$dir/stream"
		(cd "$dir/stream" && TICKTRACE_MODE=stream "$tool" record -f 'work_*' -- ../spawn \
			>/dev/null 2>err) && rc=0 || rc=$?
		[ "$rc" = 3 ] || { cat "$dir/stream/err" >&2; fail "mode stream: exit $rc"; }
		named=$(grep 'ticktrace: recorded' "$dir/stream/err" | sed 's/; see them.*//' |
			grep -o 'ticktrace-[0-9]*\.ttr' | sort)
		left=$(cd "$dir/stream" && ls ticktrace-*.ttr | sort)
		[ "$named" = "$left" ] && [ "$(echo "$left" | wc -l)" -ge 6 ] ||
			fail "mode stream: the summary names $(echo $named), the run left $(echo $left)"
	else
		[ "$files" = 2 ] || fail "$files files written, not 2 (the program and its fork)"
		[ "$pids" = 2 ] || fail "-c converted work_leaf of $pids processes, not 2"
		! grep -q 'is traced too' "$err" || fail "--no-follow traced a child"
	fi
	no_leftovers
	echo "$case_: $files files, one summary, the patch report once"
	;;
sanitized)
	"$cc" -O1 -fsanitize=address -o "$dir/asan" "$src/hello.c" 2>"$dir/cc.log" ||
		{ echo "skipped: $cc cannot build with -fsanitize=address ($(head -1 "$dir/cc.log"))" >&2; exit 77; }
	unset LD_PRELOAD
	"$dir/asan" >"$dir/plain.out" 2>"$dir/plain.err" && plain=0 || plain=$?
	[ "$plain" = 5 ] || { cat "$dir/plain.err" >&2; fail "the plain run exits $plain, not 5"; }
	(cd "$dir" && "$tool" record -f 'work_*' -o asan.ttr -- ./asan >asan.out 2>asan.err) && rc=0 || rc=$?
	[ "$rc" = 5 ] || { cat "$dir/asan.err" >&2; fail "record of an ASan program exits $rc, not 5"; }
	cmp -s "$dir/plain.out" "$dir/asan.out" || fail "record of an ASan program changed its output"
	grep -q 'patched 1 functions' "$dir/asan.err" && [ -s "$dir/asan.ttr" ] ||
		{ cat "$dir/asan.err" >&2; fail "the ASan program was not traced"; }
	no_leftovers
	echo "a program built with ASan: its runtime first, traced, its status"
	;;
help)
	"$tool" record --help >"$dir/help"
	grep -q "as a shell's, 127 if" "$dir/help" && grep -q 'it was not found, 126 if it could not be run' \
		"$dir/help" || fail "--help does not say 127 and 126 for a program not run"
	"$tool" record -- "$dir/none" 2>"$dir/err" && rc=0 || rc=$?
	[ "$rc" = 127 ] && grep -q 'cannot run' "$dir/err" || fail "a program not found: exit $rc"
	printf 'not a program\n' >"$dir/noexec"
	"$tool" record -- "$dir/noexec" 2>"$dir/err" && rc=0 || rc=$?
	[ "$rc" = 126 ] && grep -q 'cannot run' "$dir/err" || fail "a file that cannot be run: exit $rc"
	# A program's own 126 and 127 are its exit statuses, its trace read.
	for status in 126 127; do
		(cd "$dir" && "$tool" record -o own.ttr -- sh -c "exit $status" 2>err) && rc=0 || rc=$?
		[ "$rc" = $status ] && ! grep -q 'cannot run' "$dir/err" ||
			fail "a program that exits $status: exit $rc"
	done
	grep -q '2 usage' "$dir/help" || fail "--help does not say 2 for usage"
	"$tool" record 2>/dev/null && rc=0 || rc=$?
	[ "$rc" = 2 ] || fail "usage: exit $rc"
	no_leftovers
	echo "record's exit statuses are those --help gives"
	;;
*) fail "no case $case_" ;;
esac
