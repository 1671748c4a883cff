#!/bin/sh
# `ticktrace record` as a user meets it, beyond the patching (issue 23):
#   static     a statically linked program, static-pie, a script whose interpreter
#              is one, directly or through `#!/usr/bin/env`: said so, run untraced
#              (env too: no trace left), the program's output and exit status;
#   children   follow by default: the shell and the program started by it traced too,
#              what the patcher says said once per program, one line naming every
#              file written, -c converting them all onto one timeline;
#   no_follow  --no-follow: the program alone (and its fork), its children untraced;
#   sanitized  a program built with -fsanitize=address, whose runtime must be the
#              first library loaded: it runs and is traced as without sanitizer;
#   help       the exit statuses --help promises are those given;
#   own_libraries  -f '*' patches the program and the libraries it loads (its own
#              DT_NEEDED, the user's preload), never those only the detour library
#              needs (libdw, libelf, liblzma...);
#   signals    SIGTERM to record goes on to the program; a program killed (SIGTERM,
#              SIGKILL), which writes no trace, leaves its live buffers, named and
#              converted; nothing left in TMPDIR; one stopped (Ctrl-C) before its
#              live file's header is written leaves none (record removes it, said);
#   deep       a recursion deeper than record's shadow stack (1,048,576 calls): the
#              calls beyond it counted, the program's result the same, the trace
#              converted (the converter takes what record records);
#   exec       a process that execs: the old image's trace and the new one's both
#              kept, both named;
#   shell_fork bash under -f '*' (its own getenv patched, reached by the runtime's
#              reset of a forked child): the command substitution's fork writes its
#              trace, live buffers on (record's default), no .live left.
#   starts     -o t.ttr (a name with no %p): every process of the run, however it
#              started (fork, fork and exec, posix_spawn, vfork and exec, a shell's
#              `A; B`, an exec chain; make's recipes), writes a file of its own, the
#              program's under t.ttr, and the summary names them all, in modes stop,
#              ring and stream (issue 30 item 10: each child took itself for the run
#              and replaced t.ttr); -o a FIFO: written in place by all, nothing made
#              beside it.
#   names      a program built without -rdynamic (dladdr names none of its static
#              functions), in mode ring with snapshots and TICKTRACE_SPIKES: the live
#              log, each snapshot's file name and its mark name the patched functions
#              as the converter does (issue 35 item 6: they said slow+0x11c9), C++'s
#              demangled; the program stripped and a function patched by address: slow+0xOFFSET in
#              both; record's summary counts the snapshots and names the worst three.
#   keeps_all  a program whose one thread makes 1,400,000 events (more than a thread's
#              TICKTRACE_BUFFER by default) loses none under record, which keeps every
#              call by default (issue 32 item 7); a TICKTRACE_BUFFER the user sets holds.
#   relative   a program run with LD_LIBRARY_PATH=. (bzip2's `make test`) whose library
#              lies in its directory, and a plugin it dlopens as ./libplug.so and
#              closes, then changes directory: reported from another directory, their
#              functions are named
#              (the MODULES paths are from the root; before, ./libwork.so: "cannot
#              read it", every function libwork.so+0xOFFSET);
#   stderr_pipe  a program's stderr through a pipe (xz's test_scripts.sh compares
#              xzgrep's 2>&1) byte for byte as without ticktrace: the processes' lines
#              in logs beside their traces, which record's last line names;
#   many       a run of 21 processes: record's summary names 16 files, counts them,
#              and gives a pattern of the shell's for them all (said where it names
#              another run's file too), which its suggested command takes;
#   images     a program killed, or whose trace could not be written, named by its last
#              image (sleep, not the env that exec'd it), and every .live named counted;
#   daemon     a program that forks twice (its child works 200 ms, forks the daemon and
#              exits): record names the daemon's live file, not the middle process's,
#              which becomes its trace (RECHECK39 F10: the middle one's named, the
#              daemon's not there yet; its suggested convert failed on a missing file);
#              the daemon writes its trace when it ends;
#   unmatched  patterns never matched (the program's loader failed, TICKTRACE=0): not
#              said to have missed (issue 35's tester: "said above", nothing above);
#              a pattern that misses said, one that matches not;
#   descriptors  a program run under `ulimit -n 12`, where the patcher runs out of
#              descriptors (EMFILE) as it reads the modules' files or counts the
#              threads: said so, with what to do, and record exits with the program's
#              0 (r40's F4: "-f matches no function", "ended before the patterns were
#              matched", exit 1: the markers that tell record could not be made); the
#              image that ran out named, m under env (r45 N1: env alone was);
#   chdir      -o relative, a file's name and a directory's, while the run's processes
#              change directory first (`make -C`, `cd dir; prog`): every trace where -o
#              said, from record's directory (RECHECK42 N1: those after the chdir were
#              lost, ENOENT, or written outside the directory); a process that cannot
#              write its trace (its directory removed) counted in record's summary
#              (said nowhere but in its own line before); a directory with a space: the
#              convert command record prints runs as printed (N7: unquoted, it failed);
#              -o naming a directory the runtime refuses (0777 without the sticky
#              bit) said on record's own stderr, not only in a log (N7);
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
unset TICKTRACE TICKTRACE_OUT TICKTRACE_MODE TICKTRACE_BUFFER TICKTRACE_MIN_DUR
fail() { echo "FAIL: $*" >&2; exit 1; }
# In a sanitizer build the detour library needs its runtime loaded first: the test's
# programs get it as a user's preload (which record keeps before its own library).
if [ "$sanitize" != none ] && [ "$case_" != sanitized ]; then
	export LD_PRELOAD="$TT_ASAN_RUNTIME" ASAN_OPTIONS=detect_leaks=0
fi
# The compiler without it: it loads none of ticktrace's code (with it a compile took 4
# times the CPU time).
compile() { env -u LD_PRELOAD "$cc" "$@"; }
# How many lines of file $1 match the fixed string $2.
count() { grep -cF -- "$2" "$1" || true; }
# The processes $1 started (pgrep hangs with a sanitizer's runtime preloaded).
children() { env -u LD_PRELOAD pgrep -P "$1"; }
# How many processes called work_leaf on the converted timeline $1.
leaf_pids() {
	python3 -c '
import json, sys
events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
print(len({e["pid"] for e in events if e.get("name") == "work_leaf"}))' "$1"
}
# Record's stderr ($1) with the logs its last line names appended: what ticktrace
# said in the run's processes, whose stderr is no terminal here (every one named).
with_logs() {
	last=$(tail -1 "$1")
	case $last in "ticktrace: record: ticktrace's lines are in "*) ;; *) return 0 ;; esac
	case $last in *" more") fail "record named some of the logs: $last" ;; esac
	for log in $(echo "$last" | tr ' ' '\n' | grep '^/.*\.log$'); do
		cat "$log" >>"$1"
	done
}
# The run's private directory is gone.
no_leftovers() { [ -z "$(ls -A "$dir/tmp")" ] || fail "record left $(ls -A "$dir/tmp") in TMPDIR"; }

case $case_ in
chdir)
	compile -O1 -o "$dir/leaf" "$src/leaf.c"
	leaf=$dir/leaf w=$dir/w
	mkdir -p "$w/out" "$w/other" "$w/rr" "$w/sp ace" "$w/gone" "$w/ww"
	traces() { ls "$1" | grep -v '\.log$' | wc -l; }
	(cd "$w" && "$tool" record -f work_b -o out/rel.ttr -- sh -c "cd other && '$leaf' && '$leaf'; true" \
		>/dev/null 2>file.err) && rc=0 || rc=$?
	[ "$rc" = 0 ] && [ "$(traces "$w/out")" = 3 ] && [ "$(traces "$w/other")" = 0 ] ||
		{ cat "$w/file.err" >&2; ls -R "$w" >&2; fail "-o out/rel.ttr, cd first: exit $rc, $(traces "$w/out") traces in out/, not 3"; }
	! grep -q 'could not write' "$w/file.err" || { cat "$w/file.err" >&2; fail "-o out/rel.ttr: a trace lost"; }
	(cd "$w" && "$tool" record -f work_b -o rr/ -- sh -c "'$leaf'; cd other && '$leaf'; true" \
		>/dev/null 2>dir.err) && rc=0 || rc=$?
	[ "$rc" = 0 ] && [ "$(traces "$w/rr")" = 3 ] && [ "$(traces "$w/other")" = 0 ] ||
		{ cat "$w/dir.err" >&2; ls -R "$w" >&2; fail "-o rr/, cd between: exit $rc, $(traces "$w/rr") traces in rr/, not 3"; }
	# The processes whose -o directory went (the shell, rm): their traces at the default
	# name in the directory they began in, named in record's summary (outside test ot30
	# F7: lost; their own lines went to their logs, in the directory gone). Where that
	# one went too: counted, named, each with why its write failed, in record's own
	# summary.
	(cd "$w" && "$tool" record -f work_b -o gone/run.ttr -- sh -c "'$leaf'; rm -rf '$w/gone'; true" \
		>/dev/null 2>gone.err) && rc=0 || rc=$?
	[ "$rc" = 0 ] && grep -q "^ticktrace: recorded .*$w/ticktrace-[0-9]*\.ttr .*$w/ticktrace-[0-9]*\.ttr" "$w/gone.err" &&
		! grep -q "could not write" "$w/gone.err" && [ "$(ls "$w" | grep -c '^ticktrace-[0-9]*\.ttr$')" = 2 ] ||
		{ cat "$w/gone.err" >&2; ls "$w" >&2; fail "-o gone/run.ttr, gone: the traces not at the default name, said"; }
	rm -f "$w"/ticktrace-*.ttr "$w"/ticktrace-*.ttr.log
	mkdir "$w/gone"
	(cd "$w/gone" && "$tool" record -f work_b -o run.ttr -- sh -c "'$leaf'; rm -rf '$w/gone'; true" \
		>/dev/null 2>"$w/gone.err") && rc=0 || rc=$?
	grep -q "^ticktrace: record: 2 processes of the run could not write their traces at exit, the write failed (their lines said more): $w/gone/ticktrace-[0-9]*.ttr (No such file or directory) $w/gone/ticktrace-[0-9]*.ttr (No such file or directory)\$" \
		"$w/gone.err" || { cat "$w/gone.err" >&2; fail "a trace not written, not said in record's summary"; }
	# The printed command, run as printed.
	(cd "$w" && "$tool" record -f work_b -o "sp ace/" -- sh -c "'$leaf'; '$leaf'; true" >/dev/null 2>sp.err) ||
		{ cat "$w/sp.err" >&2; fail "-o 'sp ace/': exit $?"; }
	cmd=$(sed -n 's/.*; see them on one timeline with: ticktrace //p' "$w/sp.err")
	[ -n "$cmd" ] && (cd "$w" && eval "\"\$tool\" $cmd" >/dev/null 2>sp.convert) && [ -s "$w/trace.pftrace" ] ||
		{ cat "$w/sp.err" "$w/sp.convert" >&2; fail "the printed convert command failed: ticktrace $cmd"; }
	# A directory refused: said on record's stderr, which is no terminal here.
	chmod 0777 "$w/ww"
	(cd "$w" && "$tool" record -f work_b -o ww/ -- "$leaf" >/dev/null 2>ww.err) && rc=0 || rc=$?
	[ "$rc" = 0 ] && grep -q "^ticktrace: record: -o ww/ names the directory $w/ww: not yours: .*sticky" "$w/ww.err" ||
		{ cat "$w/ww.err" >&2; fail "-o ww/ (0777, no sticky bit): exit $rc, the refusal not said on record's stderr"; }
	no_leftovers
	echo "chdir: every trace where -o said; a lost one counted; the printed command runs; a refused directory said"
	;;
static)
	compile -O1 -static -o "$dir/static" "$src/hello.c" 2>"$dir/cc.log" ||
		{ echo "skipped: no static C library here ($(head -1 "$dir/cc.log"))" >&2; exit 77; }
	compile -O1 -static-pie -o "$dir/static-pie" "$src/hello.c" 2>>"$dir/cc.log" ||
		cp "$dir/static" "$dir/static-pie"
	printf '#!%s\n' "$dir/static" >"$dir/script"
	printf '#!/usr/bin/env %s\n' "$dir/static" >"$dir/env-script"
	chmod +x "$dir/script" "$dir/env-script"
	for prog in static static-pie script env-script; do
		"$dir/$prog" >"$dir/plain.out" 2>"$dir/plain.err" && plain=0 || plain=$?
		[ "$plain" = 5 ] || fail "$prog exits $plain, not 5"
		(cd "$dir" && "$tool" record -f 'work_*' -c "$prog.json" -- "./$prog" >"$prog.out" \
			2>"$prog.err") && rc=0 || rc=$?
		[ "$rc" = 5 ] || { cat "$dir/$prog.err" >&2; fail "record $prog exits $rc, not the program's 5"; }
		cmp -s "$dir/plain.out" "$dir/$prog.out" || fail "record $prog changed its output"
		grep -q 'statically linked: nothing can be preloaded into it, so it runs untraced' \
			"$dir/$prog.err" || { cat "$dir/$prog.err" >&2; fail "record $prog: not said static"; }
		case $prog in *script) grep -qF "runs $dir/static, which is" "$dir/$prog.err" ||
			fail "record $prog: the interpreter not named" ;; esac
		! grep -q 'wrote no trace' "$dir/$prog.err" || fail "record $prog: looked for a trace"
		[ ! -e "$dir/$prog.json" ] || fail "record $prog: converted something"
		[ -z "$(cd "$dir" && ls ./*.ttr 2>/dev/null)" ] || fail "record $prog left $(cd "$dir" && ls ./*.ttr)"
		! grep -q 'patched' "$dir/$prog.err" || fail "record $prog: something was patched (env?)"
	done
	# Found through PATH as execvp finds it, an empty entry being the working directory.
	(cd "$dir" && PATH=":$PATH" "$tool" record -- static >/dev/null 2>path.err) && rc=0 || rc=$?
	[ "$rc" = 5 ] && grep -q 'static is statically linked' "$dir/path.err" ||
		{ cat "$dir/path.err" >&2; fail "record of a static program found in PATH: exit $rc"; }
	# A dynamic program is not taken for a static one.
	compile -O1 -o "$dir/dynamic" "$src/hello.c"
	(cd "$dir" && "$tool" record -f 'work_*' -o dyn.ttr -- ./dynamic >/dev/null 2>dyn.err) && rc=0 || rc=$?
	[ "$rc" = 5 ] && [ -s "$dir/dyn.ttr" ] && ! grep -q statically "$dir/dyn.err" ||
		{ cat "$dir/dyn.err" >&2; fail "record of a dynamic program"; }
	no_leftovers
	echo "static programs and scripts: said so, run as they are, their status"
	;;
children|no_follow)
	compile -O1 -o "$dir/spawn" "$src/spawn.c"
	"$dir/spawn" >"$dir/plain.out" && plain=0 || plain=$?
	[ "$plain" = 3 ] || fail "spawn exits $plain, not 3"
	flag=
	[ "$case_" = children ] || flag=--no-follow
	mkdir "$dir/run"
	(cd "$dir/run" && "$tool" record $flag -f 'work_*' -c all.json -- ../spawn >out 2>err) && rc=0 || rc=$?
	err=$dir/run/err
	[ "$rc" = 3 ] || { cat "$err" >&2; fail "record exits $rc, not the program's 3"; }
	with_logs "$err"
	sort "$dir/plain.out" >"$dir/plain.sorted"
	sort "$dir/run/out" >"$dir/run.sorted"
	cmp -s "$dir/plain.sorted" "$dir/run.sorted" || fail "the processes' output changed"
	[ "$(count "$err" 'ticktrace: patched 1 function')" = 1 ] ||
		{ cat "$err" >&2; fail "the patch report is not said once"; }
	files=$(cd "$dir/run" && ls ticktrace-*.ttr | wc -l)
	# (one log per process that said a line: the patch report's, the shell's)
	logs=$(grep -c "^ticktrace: record: ticktrace's lines are in .*ticktrace-[0-9]*.ttr.log" "$err")
	[ "$logs" = 1 ] || fail "the logs not named on record's last line"
	[ "$(count "$err" 'ticktrace: recorded')" = 1 ] || fail "not one summary line"
	summary=$(grep 'ticktrace: recorded' "$err")
	for f in "$dir"/run/ticktrace-*.ttr; do
		case $summary in *"$f"*) ;; *) fail "the summary does not name $f: $summary" ;; esac
	done
	# The processes that called work_leaf, on the converted timeline.
	pids=$(leaf_pids "$dir/run/all.json")
	if [ "$case_" = children ]; then
		# the program, its four children through the shell, its fork; and the two
		# shells, which record nothing and leave by _exit, a file each as a shell that
		# leaves by exit writes
		[ "$files" = 8 ] || fail "$files files written, not 8"
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
			grep -o 'ticktrace-[0-9]*\(\.exec[0-9]*\)\{0,1\}\.ttr' | sort)
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
	# (in a sanitizer build, built as the build's libraries are: one runtime)
	compile -O1 ${TT_SANITIZE_FLAGS:--fsanitize=address} -o "$dir/asan" "$src/hello.c" 2>"$dir/cc.log" ||
		{ echo "skipped: $cc cannot build with -fsanitize=address ($(head -1 "$dir/cc.log"))" >&2; exit 77; }
	unset LD_PRELOAD
	"$dir/asan" >"$dir/plain.out" 2>"$dir/plain.err" && plain=0 || plain=$?
	[ "$plain" = 5 ] || { cat "$dir/plain.err" >&2; fail "the plain run exits $plain, not 5"; }
	(cd "$dir" && "$tool" record -f 'work_*' -o asan.ttr -- ./asan >asan.out 2>asan.err) && rc=0 || rc=$?
	[ "$rc" = 5 ] || { cat "$dir/asan.err" >&2; fail "record of an ASan program exits $rc, not 5"; }
	with_logs "$dir/asan.err"
	cmp -s "$dir/plain.out" "$dir/asan.out" || fail "record of an ASan program changed its output"
	grep -q 'patched 1 function' "$dir/asan.err" && [ -s "$dir/asan.ttr" ] ||
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
	# -o into a directory that is not there: said before the program runs, exit 1.
	"$tool" record -o "$dir/none/run.ttr" -- sh -c "touch '$dir/ran'" 2>"$dir/err" && rc=0 || rc=$?
	[ "$rc" = 1 ] && [ ! -e "$dir/ran" ] &&
		grep -qF "cannot write the trace at $dir/none/run.ttr: $dir/none: No such file" "$dir/err" ||
		{ cat "$dir/err" >&2; fail "-o into a missing directory: exit $rc, the program run or not said"; }
	"$tool" record -f "$(printf 'a\nb')" -- true 2>"$dir/err" && rc=0 || rc=$?
	[ "$rc" = 2 ] && grep -q 'one line, not empty' "$dir/err" || fail "-f with a newline: exit $rc"
	grep -q '2 usage' "$dir/help" || fail "--help does not say 2 for usage"
	"$tool" record 2>/dev/null && rc=0 || rc=$?
	[ "$rc" = 2 ] || fail "usage: exit $rc"
	no_leftovers
	echo "record's exit statuses are those --help gives"
	;;
own_libraries)
	compile -O1 -o "$dir/hello" "$src/hello.c"
	compile -O1 -o "$dir/hello-z" "$src/hello.c" -Wl,--no-as-needed -lz 2>"$dir/cc.log" ||
		{ echo "skipped: no libz to link ($(head -1 "$dir/cc.log"))" >&2; exit 77; }
	# The program's own functions are all there is to patch (the C library is left
	# alone): no more than it defines.
	own=$(nm --defined-only "$dir/hello" | grep -c ' [Tt] ')
	(cd "$dir" && "$tool" record -f '*' -o run.ttr -- ./hello >/dev/null 2>err) && rc=0 || rc=$?
	[ "$rc" = 5 ] || { cat "$dir/err" >&2; fail "record -f '*' exits $rc, not 5"; }
	with_logs "$dir/err"
	patched=$(sed -n 's/^ticktrace: patched \([0-9]*\) functions.*/\1/p' "$dir/err")
	[ -n "$patched" ] && [ "$patched" -le "$own" ] ||
		{ cat "$dir/err" >&2; fail "-f '*' patched ${patched:-?} functions, the program has $own"; }
	grep -q "only ticktrace's detour library needs, left alone" "$dir/err" ||
		{ cat "$dir/err" >&2; fail "the detour library's own libraries not said left alone"; }
	# A library the program links, or the user preloads, is the program's: patched.
	for how in linked preloaded; do
		prog=./hello-z preload=${LD_PRELOAD:-}
		[ "$how" = linked ] || prog=./hello preload="${preload:+$preload:}libz.so.1"
		(cd "$dir" && LD_PRELOAD=$preload "$tool" record -f zlibVersion -o run.ttr -- $prog \
			>/dev/null 2>err) && rc=0 || rc=$?
		with_logs "$dir/err"
		[ "$rc" = 5 ] && grep -q '^ticktrace: patched 1 function' "$dir/err" ||
			{ cat "$dir/err" >&2; fail "libz $how: zlibVersion not patched (exit $rc)"; }
	done
	no_leftovers
	echo "-f '*': the program's $patched functions, its libraries', not the detour library's"
	;;
signals)
	compile -O1 -o "$dir/forever" "$src/forever.c"
	mkdir "$dir/run"
	# whom: record (SIGTERM, passed on), the program itself (SIGTERM, SIGKILL), or
	# a child the program (a shell) started; the exit status record then gives
	for how in record:TERM:143 program:TERM:143 program:KILL:137 child:KILL:137; do
		whom=${how%%:*} sig=${how#*:} want=${how##*:}
		sig=${sig%:*}
		rm -f "$dir"/run/*
		if [ "$whom" = child ]; then set -- sh -c '../forever; exit $?'; else set -- ../forever; fi
		(cd "$dir/run" && exec "$tool" record -f work_leaf -o 'run-%p.ttr' -c all.json -- \
			"$@" >out 2>err) &
		record=$!
		# Until the program ran its first patched call (its live file is there then).
		tries=0
		until grep -q running "$dir/run/out" 2>/dev/null; do
			tries=$((tries + 1))
			[ "$tries" -lt 600 ] || { kill -KILL "$record"; fail "$how: the program never ran"; }
			sleep 0.1
		done
		program=$(children "$record")
		[ -n "$program" ] || fail "$how: no program under record"
		# the process killed, whose live buffers are read
		victim=$program
		[ "$whom" != child ] || victim=$(children "$program")
		if [ "$whom" = record ]; then kill -"$sig" "$record"; else kill -"$sig" "$victim"; fi
		tries=0
		while kill -0 "$record" 2>/dev/null && [ "$tries" -lt 600 ]; do
			tries=$((tries + 1))
			sleep 0.1
		done
		if kill -0 "$record" 2>/dev/null; then
			kill -KILL "$victim" "$record"
			fail "$how: record still runs a minute after the signal"
		fi
		wait "$record" && rc=0 || rc=$?
		err=$dir/run/err
		[ "$rc" = "$want" ] || { cat "$err" >&2; fail "$how: record exits $rc, not $want"; }
		# SIGTERM (its default action): the program writes its trace, then dies of it;
		# SIGKILL: its live buffers are read
		if [ "$sig" = TERM ]; then
			grep -q "ticktrace: recorded .*run-$victim\(.exec1\)\{0,1\}.ttr$" "$err" &&
				grep -q "ended by signal 15" "$err" ||
				{ cat "$err" >&2; fail "$how: the trace written at SIGTERM not named"; }
		else
			grep -q "ticktrace: recorded .*run-$victim\(.exec1\)\{0,1\}.ttr.live.* .live: the buffers" "$err" ||
				{ cat "$err" >&2; fail "$how: the live buffers not named"; }
		fi
		grep -q '"work_leaf"' "$dir/run/all.json" || fail "$how: work_leaf not in the converted run"
		no_leftovers
	done
	# A run whose buffers cannot be had (ulimit -v: a quarter of the room left is under
	# 4 MiB) records nothing, says why, and leaves no live file to be taken for a killed
	# run's. (A sanitizer's runtime needs more.)
	if [ "$sanitize" = none ]; then
		rm -f "$dir"/run/*
		compile -O1 -o "$dir/hello" "$src/hello.c"
		(ulimit -v 20000 && cd "$dir/run" && "$tool" record -o run.ttr -- ../hello >/dev/null 2>err) &&
			rc=0 || rc=$?
		[ "$rc" = 5 ] && grep -q 'address-space limit (ulimit -v.*recording is off' "$dir/run/err" ||
			{ cat "$dir/run/err" >&2; echo "skipped the ulimit -v part: the buffers were had" >&2; }
		[ ! -e "$dir/run/run.ttr.live" ] && ! grep -q '\.live' "$dir/run/err" ||
			{ cat "$dir/run/err" >&2; fail "ulimit -v: a live file left by a run that recorded nothing"; }
	fi
	# Ctrl-C as the program begins recording: the live file made, its room being
	# reserved, its header not yet written (a preload stops it there); record removes
	# the file, which holds nothing, and says so (before: a .live left that no tool
	# reads, "wrong magic", and "wrote no trace")
	rm -f "$dir"/run/*
	cat >"$dir/stop.c" <<'PROG'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
int fallocate64(int fd, int mode, off_t offset, off_t len)
{
	char link[64], path[4096];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path);
	if (n > 5 && memcmp(path + n - 5, ".live", 5) == 0)
		raise(SIGINT);
	int (*next)(int, int, off_t, off_t) = (int (*)(int, int, off_t, off_t))dlsym(RTLD_NEXT, "fallocate64");
	return next(fd, mode, offset, len);
}
PROG
	compile -O1 -fPIC -shared -o "$dir/stop.so" "$dir/stop.c" -ldl
	compile -O1 -o "$dir/hello" "$src/hello.c"
	(cd "$dir/run" && LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$dir/stop.so" \
		"$tool" record -f '*' -o run.ttr -- ../hello >/dev/null 2>err) && rc=0 || rc=$?
	[ "$rc" = 130 ] || { cat "$dir/run/err" >&2; fail "Ctrl-C at the live file's start: record exits $rc, not 130"; }
	[ ! -e "$dir/run/run.ttr.live" ] ||
		{ cat "$dir/run/err" >&2; fail "Ctrl-C at the live file's start: a live file left that holds nothing"; }
	grep -q "removed .*run.ttr.live: its process was stopped as it began recording" "$dir/run/err" ||
		{ cat "$dir/run/err" >&2; fail "Ctrl-C at the live file's start: the removed live file not said"; }
	no_leftovers
	echo "signals: passed on to the program; a killed one's live buffers read"
	;;
keeps_all)
	cat >"$dir/many.c" <<'PROG'
#include <stdio.h>
__attribute__((noinline)) long work_leaf(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}
int main(void)
{
	long sum = 0;
	for (long i = 0; i < 700000; i++)
		sum += work_leaf(i);
	printf("%ld\n", sum);
	return 0;
}
PROG
	compile -O1 -o "$dir/many" "$dir/many.c"
	(cd "$dir" && "$tool" record -f work_leaf -o all.ttr -- ./many >out 2>err) && rc=0 || rc=$?
	[ "$rc" = 0 ] || { cat "$dir/err" >&2; fail "record exits $rc"; }
	with_logs "$dir/err"
	! grep -q dropped "$dir/err" || { cat "$dir/err" >&2; fail "record dropped events by default"; }
	"$tool" report "$dir/all.ttr" --csv -o "$dir/all.csv" -q
	grep -q '^"work_leaf",700000,' "$dir/all.csv" ||
		{ cat "$dir/err" "$dir/all.csv" >&2; fail "not every call of work_leaf in the trace"; }
	(cd "$dir" && TICKTRACE_BUFFER=65536 "$tool" record -f work_leaf -o some.ttr -- ./many >out 2>err) ||
		{ cat "$dir/err" >&2; fail "record with TICKTRACE_BUFFER=65536 fails"; }
	with_logs "$dir/err"
	grep -q "events dropped" "$dir/err" ||
		{ cat "$dir/err" >&2; fail "the user's TICKTRACE_BUFFER=65536 was not kept"; }
	no_leftovers
	echo "keeps_all: 700,000 calls recorded whole by default; the user's buffer holds"
	;;
deep)
	compile -O1 -o "$dir/deep" "$src/deep.c"
	depth=1100000
	# about 32 bytes a frame: 35 MB of stack
	ulimit -s 131072 2>/dev/null || ulimit -s unlimited 2>/dev/null ||
		{ echo "skipped: no stack of 128 MB here (ulimit -s $(ulimit -s))" >&2; exit 77; }
	"$dir/deep" $depth >"$dir/plain.out"
	(cd "$dir" && "$tool" record -f work_recurse -o run.ttr -c run.json -- ./deep $depth >out 2>err) &&
		rc=0 || rc=$?
	[ "$rc" = 0 ] || { cat "$dir/err" >&2; fail "record of a deep recursion exits $rc"; }
	with_logs "$dir/err"
	cmp -s "$dir/plain.out" "$dir/out" || fail "the deep recursion's result changed: $(cat "$dir/out")"
	# the calls beyond the stack's 1,048,575 (one slot is its sentinel), both recursions'
	beyond=$((depth + 1 - 1048575))
	grep -q "^ticktrace: $beyond calls of patched functions were not recorded" "$dir/err" ||
		{ cat "$dir/err" >&2; fail "not said that $beyond calls were not recorded"; }
	[ -s "$dir/run.json" ] || { cat "$dir/err" >&2; fail "the deep trace was not converted"; }
	no_leftovers
	echo "deep: $beyond calls beyond the shadow stack counted, the trace converted"
	;;
exec)
	compile -O1 -o "$dir/hello" "$src/hello.c"
	mkdir "$dir/run"
	# The shell's image, env's, then hello's: one pid, three files.
	(cd "$dir/run" && "$tool" record -f work_leaf -o 'run-%p.ttr' -c all.json -- \
		sh -c "exec env '$dir/hello'" >out 2>err) && rc=0 || rc=$?
	[ "$rc" = 5 ] || { cat "$dir/run/err" >&2; fail "record exits $rc, not hello's 5"; }
	files=$(cd "$dir/run" && ls run-*.ttr | sort | tr '\n' ' ')
	pid=${files#run-}
	pid=${pid%%.*}
	[ "$files" = "run-$pid.exec1.ttr run-$pid.exec2.ttr run-$pid.ttr " ] ||
		{ cat "$dir/run/err" >&2; fail "one process, three images: the files are $files"; }
	summary=$(grep 'ticktrace: recorded' "$dir/run/err")
	for f in $files; do
		case $summary in *"$dir/run/$f"*) ;; *) fail "the summary does not name $f: $summary" ;; esac
	done
	grep -q '"work_leaf"' "$dir/run/all.json" || fail "hello's work_leaf is not in the converted run"
	# With no %p in the name, the same: the next image's file is named apart.
	(cd "$dir/run" && "$tool" record -f work_leaf -o plain.ttr -- sh -c "exec '$dir/hello'" \
		>/dev/null 2>err) && rc=0 || rc=$?
	[ "$rc" = 5 ] && [ -s "$dir/run/plain.ttr" ] && [ -s "$dir/run/plain.exec1.ttr" ] ||
		{ cat "$dir/run/err" >&2; fail "-o plain.ttr: exit $rc, $(ls "$dir/run")"; }
	no_leftovers
	echo "exec: each image of a process its own file, all named"
	;;
shell_fork)
	bash=$(command -v bash) || { echo "skipped: no bash here" >&2; exit 77; }
	mkdir "$dir/run"
	(cd "$dir/run" && "$tool" record -f '*' -o c.ttr -- "$bash" -c 'x=$(echo hi); echo $x' \
		>out 2>err) && rc=0 || rc=$?
	[ "$rc" = 0 ] && [ "$(cat "$dir/run/out")" = hi ] ||
		{ cat "$dir/run/err" >&2; fail "record exits $rc, printed $(cat "$dir/run/out")"; }
	! grep -q 'could not write' "$dir/run/err" || { cat "$dir/run/err" >&2; fail "a trace was not written"; }
	with_logs "$dir/run/err"
	files=$(cd "$dir/run" && ls c.ttr* | grep -v '\.log$' | sed 's/[0-9][0-9]*/PID/' | sort | tr '\n' ' ')
	[ "$files" = "c.ttr c.ttr.PID " ] || fail "the shell and its fork: the files are $files"
	"$tool" convert "$dir/run"/c.ttr "$dir/run"/c.ttr.[0-9]*[0-9] -o "$dir/run/all.json" 2>"$dir/run/conv" ||
		{ cat "$dir/run/conv" >&2; fail "the two files do not convert"; }
	no_leftovers
	echo "shell_fork: the shell's fork wrote its trace"
	;;
shell_exit)
	# dash leaves by _exit: the program's trace is written there all the same (it was
	# left as its live file), nothing said of a process killed.
	dash=$(command -v dash) || { echo "skipped: no dash here" >&2; exit 77; }
	mkdir "$dir/run"
	(cd "$dir/run" && "$tool" record -o c.ttr -- "$dash" -c 'true; true' >out 2>err) && rc=0 || rc=$?
	[ "$rc" = 0 ] || { cat "$dir/run/err" >&2; fail "record exits $rc"; }
	files=$(cd "$dir/run" && ls -- c.ttr*)
	[ "$files" = c.ttr ] && "$tool" info "$dir/run/c.ttr" >/dev/null 2>&1 &&
		! grep -q 'killed, or it could not' "$dir/run/err" ||
		{ cat "$dir/run/err" >&2; fail "the shell that left by _exit left $files, not its trace c.ttr"; }
	echo "shell_exit: the shell that left by _exit wrote its trace"
	;;
starts)
	compile -O1 -o "$dir/starts" "$src/starts.c"
	for mode in stop ring stream; do
		run=$dir/run-$mode
		mkdir "$run"
		(cd "$run" && TICKTRACE_MODE=$mode "$tool" record -f work_leaf -o t.ttr -c all.json -- \
			../starts >out 2>err) && rc=0 || rc=$?
		err=$run/err
		[ "$rc" = 3 ] || { cat "$err" >&2; fail "$mode: record exits $rc, not the program's 3"; }
		[ "$(grep -c ': 10$' "$run/out")" = 5 ] || fail "$mode: the children did not all run: $(cat "$run/out")"
		# The program's two images keep the name given; every other process has its pid.
		[ -s "$run/t.ttr" ] && [ -s "$run/t.exec1.ttr" ] ||
			{ cat "$err" >&2; fail "$mode: the program's images are not t.ttr and t.exec1.ttr: $(ls "$run")"; }
		summary=$(grep 'ticktrace: recorded' "$err")
		for f in "$run"/t.*; do
			case $f in *.log) continue ;; esac
			case $summary in *"$f"*) ;; *) fail "$mode: the summary does not name $f: $summary" ;; esac
		done
		# The processes that called work_leaf (the program twice, one pid), each in a
		# file of its own: the fork, the fork and exec, posix_spawn, vfork, the shell's two.
		leaf_files=0
		for f in "$run"/t.*ttr*; do
			case $f in *.live|*.log) continue ;; esac
			"$tool" convert -q "$f" -o "$dir/one.json" --force
			! grep -q '"work_leaf"' "$dir/one.json" || leaf_files=$((leaf_files + 1))
		done
		[ "$leaf_files" = 8 ] || { ls "$run" >&2; fail "$mode: $leaf_files files hold work_leaf, not 8"; }
		pids=$(leaf_pids "$run/all.json")
		[ "$pids" = 7 ] || fail "$mode: -c converted work_leaf of $pids processes, not 7"
	done
	# A FIFO (as a device: -o /dev/null) is written in place by every process and
	# image: no file made beside it (it was t.fifo.PID, and /dev/null.PID in /dev).
	mkdir "$dir/fifo"
	mkfifo "$dir/fifo/t.fifo"
	cat "$dir/fifo/t.fifo" >/dev/null &
	reader=$!
	exec 3>"$dir/fifo/t.fifo" # (the reader sees no end until the test closes it)
	(cd "$dir/fifo" && "$tool" record -f work_leaf -o t.fifo -- ../starts >out 2>err) && rc=0 || rc=$?
	exec 3>&-
	wait "$reader"
	[ "$rc" = 3 ] || { cat "$dir/fifo/err" >&2; fail "-o a FIFO: record exits $rc, not 3"; }
	made=$(cd "$dir/fifo" && ls | grep -v '^\(t\.fifo\|out\|err\)$' || true)
	[ -z "$made" ] || fail "-o a FIFO: files made beside it: $(echo $made)"
	# make, which starts its recipes as it was built to (posix_spawn or vfork)
	if make=$(command -v make); then
		mkdir "$dir/make"
		# (three's recipe goes through a shell, which leaves by _exit: it left only
		# its live buffers, said as a run killed)
		printf 'all: one two three\none:\n\t../starts child make1\ntwo:\n\t../starts child make2\nthree:\n\t../starts child make3; true\n' \
			>"$dir/make/Makefile"
		(cd "$dir/make" && "$tool" record -f work_leaf -o t.ttr -c all.json -- "$make" -s -j1 \
			>out 2>err) && rc=0 || rc=$?
		[ "$rc" = 0 ] || { cat "$dir/make/err" >&2; fail "record make exits $rc"; }
		pids=$(leaf_pids "$dir/make/all.json")
		[ "$pids" = 3 ] || { ls "$dir/make" >&2; fail "record make: work_leaf of $pids recipes, not 3"; }
		! ls "$dir/make" | grep -q '\.live$' && ! grep -q 'killed' "$dir/make/err" ||
			{ ls "$dir/make" >&2; cat "$dir/make/err" >&2; fail "record make: a recipe's shell wrote no trace"; }
	else
		echo "skipped the make part: no make here" >&2
	fi
	no_leftovers
	echo "starts: each process its own file, the program's under the name given, all named"
	;;
relative)
	mkdir "$dir/run" "$dir/elsewhere"
	cat >"$dir/run/work.c" <<'C'
__attribute__((noinline)) int WORK(int x)
{
	int sum = 0;
	for (int i = 0; i < x; i++)
		__asm__ volatile("add %1, %0" : "+r"(sum) : "r"(i));
	return sum;
}
C
	cat >"$dir/run/main.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
int lib_work(int x);
int main(void)
{
	void *plug = dlopen("./libplug.so", RTLD_NOW);
	int (*plug_work)(int) = plug ? (int (*)(int))dlsym(plug, "plug_work") : 0;
	if (!plug_work)
		return 2;
	int sum = 0;
	for (int i = 0; i < 100; i++)
		sum += lib_work(i) + plug_work(i);
	dlclose(plug);
	/* (libwork.so's path, written at exit, then from the file the process maps) */
	if (chdir("/") != 0)
		return 3;
	printf("%d\n", sum);
	return 0;
}
C
	(cd "$dir/run" && compile -O1 -fPIC -shared -DWORK=lib_work -o libwork.so work.c &&
		compile -O1 -fPIC -shared -DWORK=plug_work -o libplug.so work.c &&
		compile -O1 -o main main.c -L. -lwork -ldl) || fail "the program does not build"
	(cd "$dir/run" && LD_LIBRARY_PATH=. "$tool" record -f '*_work' -o t.ttr -- ./main >out 2>err) && rc=0 || rc=$?
	[ "$rc" = 0 ] || { cat "$dir/run/err" >&2; fail "record -- ./main with LD_LIBRARY_PATH=. exits $rc"; }
	(cd "$dir/elsewhere" && "$tool" report ../run/t.ttr >report 2>err) ||
		{ cat "$dir/elsewhere/err" >&2; fail "report from another directory"; }
	! grep -q 'cannot read it' "$dir/elsewhere/err" || { cat "$dir/elsewhere/err" >&2; fail "a module's file not found"; }
	for fn in lib_work plug_work; do
		grep -q "^$fn[[:space:]]" "$dir/elsewhere/report" ||
			{ cat "$dir/elsewhere/report" "$dir/elsewhere/err" >&2; fail "$fn is not named in the report"; }
	done
	"$tool" info "$dir/run/t.ttr" >"$dir/info" 2>&1
	! grep -q '\./lib' "$dir/info" || { cat "$dir/info" >&2; fail "a module's path is relative"; }
	no_leftovers
	echo "LD_LIBRARY_PATH=., ./libplug.so dlopened: their functions named from another directory"
	;;
names)
	compile -O1 -o "$dir/slow" "$src/slow.c"
	# The names of the spikes the live log gives ("spike: NAME took ..."), sorted.
	live_names() { sed -n 's/^spike: \(.*\) took .*/\1/p' "$1" | sort -u; }
	# The names of the converted scopes of $1 longer than 10 ms, sorted.
	long_names() {
		python3 -c '
import json, sys
events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
print("\n".join(sorted({e["name"] for e in events if e.get("ph") == "X" and e.get("cat") == "ticktrace"
                          and e["dur"] > 10000})))' "$1"
	}
	(cd "$dir" && TICKTRACE_MODE=ring TICKTRACE_SNAPSHOTS=snaps TICKTRACE_SNAPSHOT_AFTER=1ms \
		TICKTRACE_SPIKES=spikes.txt TICKTRACE_SPIKE_THRESHOLD=10ms \
		"$tool" record -f 'slow_*' -o t.ttr -c t.json -- ./slow >out 2>err) && rc=0 || rc=$?
	[ "$rc" = 0 ] || { cat "$dir/err" >&2; fail "record slow exits $rc"; }
	# record's summary counts the snapshots (the process's own line is in its log) and
	# names the worst three, each a file there
	n=$(ls "$dir/snaps" | wc -l)
	said=$(grep "^ticktrace: record: $n snapshots in snaps (TICKTRACE_SNAPSHOTS: $n of spikes, 0 of triggers); the worst: " "$dir/err") ||
		{ cat "$dir/err" >&2; fail "record's summary does not count the $n snapshots"; }
	worst=$(echo "$said" | grep -o 'spike-[^ ]*\.ttr ([0-9.]* ms, [0-9.]* times its threshold)' | wc -l)
	[ "$worst" = 3 ] || fail "not the 3 worst named: $said"
	ranks=$(echo "$said" | grep -o '[0-9.]* times' | cut -d' ' -f1)
	[ "$ranks" = "$(echo "$ranks" | sort -rn)" ] || fail "the worst not worst first: $said"
	for f in $(echo "$said" | grep -o 'spike-[^ ]*\.ttr'); do
		[ -f "$dir/snaps/$f" ] || fail "$f named, not in snaps: $said"
	done
	[ "$(long_names "$dir/t.json")" = "$(printf 'slow_step\nslow_unnamed')" ] ||
		fail "the converter's names: $(long_names "$dir/t.json")"
	[ "$(live_names "$dir/spikes.txt")" = "$(long_names "$dir/t.json")" ] ||
		{ cat "$dir/spikes.txt" >&2; fail "the live log's names are not the converter's"; }
	snaps=$(cd "$dir/snaps" && ls | sed 's/^spike-[0-9]*-[0-9]*-\(.*\)\.ttr$/\1/' | sort -u)
	[ "$snaps" = "$(long_names "$dir/t.json")" ] ||
		fail "the snapshots' file names: $(ls "$dir/snaps")"
	for f in "$dir"/snaps/*.ttr; do
		"$tool" convert "$f" -o "$f.json" 2>/dev/null ||
			fail "$f not converted"
		python3 -c '
import json, sys
events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
marks = [e["name"] for e in events if e.get("ph") == "i" and e["name"].startswith("spike: ")]
sys.exit(0 if len(marks) == 1 and marks[0].startswith("spike: " + sys.argv[2] + " took ") else
         "marks: %s" % marks)' "$f.json" "$(echo "$f" | sed 's/.*-\([a-z_]*\)\.ttr$/\1/')" ||
			fail "the mark of $f"
	done
	# As C++ (g++ where there is one): the names demangled, as the converter shows them.
	if command -v g++ >/dev/null; then
		env -u LD_PRELOAD g++ -x c++ -O1 -o "$dir/slowxx" "$src/slow.c"
		(cd "$dir" && TICKTRACE_MODE=ring TICKTRACE_SPIKES=xx.txt TICKTRACE_SPIKE_THRESHOLD=10ms \
			"$tool" record -f 'slow_*' -o xx.ttr -c xx.json -- ./slowxx >out 2>err) && rc=0 || rc=$?
		[ "$rc" = 0 ] || { cat "$dir/err" >&2; fail "record slowxx exits $rc"; }
		[ "$(long_names "$dir/xx.json")" = "$(printf 'slow_step(int)\nslow_unnamed(int)')" ] &&
			[ "$(live_names "$dir/xx.txt")" = "$(long_names "$dir/xx.json")" ] ||
			fail "C++: the live log's $(live_names "$dir/xx.txt"), the converter's $(long_names "$dir/xx.json")"
	else
		echo "skipped the C++ part: no g++ here" >&2
	fi
	# Stripped, slow_unnamed patched by its address: no symbol, module+0xOFFSET alike.
	addr=$(nm "$dir/slow" | awk '$3 == "slow_unnamed" { print $1 }' | sed 's/^0*//')
	strip -o "$dir/bare" "$dir/slow"
	(cd "$dir" && TICKTRACE_MODE=ring TICKTRACE_SPIKES=bare.txt TICKTRACE_SPIKE_THRESHOLD=10ms \
		"$tool" record -f "0x$addr" -o b.ttr -c b.json -- ./bare >out 2>err) && rc=0 || rc=$?
	[ "$rc" = 0 ] || { cat "$dir/err" >&2; fail "record bare exits $rc"; }
	[ "$(live_names "$dir/bare.txt")" = "bare+0x$addr" ] && [ "$(long_names "$dir/b.json")" = "bare+0x$addr" ] ||
		fail "stripped: the live log's $(live_names "$dir/bare.txt"), the converter's $(long_names "$dir/b.json")"
	echo "names: the live log, the snapshots' files and marks name the patched functions as convert does"
	;;
stderr_pipe)
	# A program's stderr through a pipe, compared with what it was without ticktrace,
	# as xz's test_scripts.sh compares xzgrep's 2>&1: ticktrace's lines (the patch
	# report, the snapshots' count at exit) go to a log beside each
	# process's trace, which record's last line names (before, they were in it).
	cat >"$dir/says.c" <<'PROG'
#include <stdio.h>
#include <time.h>
__attribute__((noinline)) int work_leaf(int x)
{
	struct timespec nap = {0, 3000000};
	nanosleep(&nap, NULL);
	return x * 3 + 1;
}
int main(int argc, char **argv)
{
	(void)argv;
	fprintf(stderr, "says: %d\n", work_leaf(argc));
	return 0;
}
PROG
	compile -O1 -o "$dir/says" "$dir/says.c"
	pipe='./says 2>&1 | cat >"$0"'
	(cd "$dir" && sh -c "$pipe" plain.err) || fail "says without record"
	[ "$(cat "$dir/plain.err")" = "says: 4" ] || fail "says said $(cat "$dir/plain.err")"
	(cd "$dir" && TICKTRACE_MODE=ring TICKTRACE_SNAPSHOTS=snaps TICKTRACE_SPIKE_THRESHOLD=1ms \
		"$tool" record -f 'work_*' -o 't-%p.ttr' -- sh -c "$pipe" got.err >out 2>err) && rc=0 || rc=$?
	[ "$rc" = 0 ] || { cat "$dir/err" >&2; fail "record exits $rc"; }
	cmp "$dir/plain.err" "$dir/got.err" ||
		{ cat "$dir/got.err" >&2; fail "the program's stderr through a pipe is not as without ticktrace"; }
	# The log of says (the one that patched) holds what ticktrace said in it; record's
	# last line names it.
	log=$(grep -l 'ticktrace: patched 1 function' "$dir"/t-*.log)
	[ "$(echo "$log" | wc -l)" = 1 ] && grep -q 'ticktrace: 1 snapshot in snaps' "$log" ||
		{ ls "$dir" >&2; cat "$dir/err" >&2; fail "no log of says with ticktrace's lines: $log"; }
	last=$(tail -1 "$dir/err")
	case $last in "ticktrace: record: ticktrace's lines are in "[0-9]*" logs "*"$log"*) ;;
		*) cat "$dir/err" >&2; fail "record's last line does not name $log: $last" ;; esac
	# (record's own summary counts the snapshots too: "ticktrace: record: 1 snapshot in")
	! grep -q '^ticktrace: 1 snapshot in snaps$\|^ticktrace: patched' "$dir/err" ||
		{ cat "$dir/err" >&2; fail "a process said its lines on stderr"; }
	# TICKTRACE_LOG=stderr: on the program's stderr all the same, as asked.
	(cd "$dir" && TICKTRACE_LOG=stderr TICKTRACE_MODE=ring TICKTRACE_SNAPSHOTS=snaps \
		"$tool" record -f 'work_*' -o 's-%p.ttr' -- sh -c "$pipe" asked.err >out 2>err) && rc=0 || rc=$?
	[ "$rc" = 0 ] && grep -q 'ticktrace: patched 1 function' "$dir/asked.err" ||
		{ cat "$dir/asked.err" >&2; fail "TICKTRACE_LOG=stderr: the lines not on stderr"; }
	no_leftovers
	echo "stderr_pipe: the program's stderr as without ticktrace, ticktrace's lines in the named logs"
	;;
daemon)
	compile -O1 -o "$dir/daemon" "$src/daemon.c"
	mkdir "$dir/d" "$dir/run"
	(cd "$dir/run" && "$tool" record -f work_leaf -o t.ttr -- ../daemon "$dir/d" >out 2>err) && rc=0 || rc=$?
	err=$dir/run/err
	[ "$rc" = 0 ] || { cat "$err" >&2; fail "record exits $rc, not the program's 0"; }
	[ -s "$dir/d/pid" ] || { cat "$err" >&2; fail "record ended before the daemon started (no pid written)"; }
	daemon=$(cat "$dir/d/pid")
	summary=$(grep 'ticktrace: recorded' "$err")
	case $summary in
	*"t.ttr.$daemon.live"*"still runs"*) ;;
	*) touch "$dir/d/go"; fail "the daemon's live file t.ttr.$daemon.live not named as still running: $summary" ;;
	esac
	# The command record suggests converts: every file it names is there.
	files=$(sed -n 's/.* with: ticktrace convert \(.*\) -o trace.pftrace$/\1/p' "$err")
	[ -n "$files" ] || { touch "$dir/d/go"; fail "no convert command suggested: $summary"; }
	# shellcheck disable=SC2086 # (the files record named, none with a space)
	"$tool" convert -q $files -o "$dir/all.json" ||
		{ touch "$dir/d/go"; ls "$dir/run" >&2; fail "the suggested convert failed: $summary"; }
	touch "$dir/d/go"
	tries=0
	while kill -0 "$daemon" 2>/dev/null && [ "$tries" -lt 600 ]; do sleep 0.1; tries=$((tries + 1)); done
	! kill -0 "$daemon" 2>/dev/null || fail "the daemon still runs a minute after it was told to end"
	[ -s "$dir/run/t.ttr.$daemon" ] && [ ! -e "$dir/run/t.ttr.$daemon.live" ] ||
		{ ls "$dir/run" >&2; fail "the daemon's trace not written at its end"; }
	no_leftovers
	echo "daemon: the daemon's live file named, not the middle process's; its trace written at its end"
	;;
many)
	# A run of many processes (make check's: 1,100 files, a summary line of 60 KB that
	# named each twice): the first 16 named, the count, and a pattern of the shell's
	# that names them all, which the command it suggests takes; one that names another
	# run's file too says so.
	compile -O1 -o "$dir/hello" "$src/hello.c"
	mkdir "$dir/m"
	: >"$dir/m/m-1.ttr" # (an earlier run's, which the pattern names too)
	(cd "$dir/m" && "$tool" record -f work_leaf -o 'm-%p.ttr' -- \
		sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do ../hello; done' \
		>out 2>err) && rc=0 || rc=$?
	err=$dir/m/err
	[ "$rc" = 5 ] || { cat "$err" >&2; fail "record exits $rc, not the last hello's 5"; }
	files=$(cd "$dir/m" && ls m-*.ttr | grep -vc '^m-1\.ttr$')
	[ "$files" = 21 ] || fail "$files files, not 21 (the shell, 20 hellos)"
	summary=$(grep '^ticktrace: recorded' "$err")
	case $summary in "ticktrace: recorded the program and those it started, 21 files, one each, $dir/m/m-*.ttr (which names 1 more of other runs too): "*" and 5 more; see them on one timeline with: ticktrace convert $dir/m/m-*.ttr -o trace.pftrace") ;;
		*) fail "the summary of 21 files: $summary" ;; esac
	[ "$(echo "$summary" | tr ' ' '\n' | grep -c "^$dir/m/m-[0-9]*\.ttr$")" = 16 ] ||
		fail "not 16 files named: $summary"
	logs=$(tail -1 "$err")
	case $logs in "ticktrace: record: ticktrace's lines are in "*) ;; *) fail "the logs not named: $logs" ;; esac
	# Alone in its directory, the command suggested converts them all.
	mkdir "$dir/m2"
	err=$dir/m2/err
	(cd "$dir/m2" && "$tool" record -f work_leaf -o 'm-%p.ttr' -- \
		sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do ../hello; done' \
		>out 2>err) && rc=0 || rc=$?
	grep -q "(which names" "$err" && fail "an exact pattern said to name others: $(cat "$err")"
	cmd=$(sed -n 's/^ticktrace: recorded .*; see them on one timeline with: \(ticktrace convert .*\)$/\1/p' "$err")
	(cd "$dir/m2" && eval "\"\$tool\"${cmd#ticktrace}" 2>conv) ||
		{ cat "$dir/m2/conv" >&2; fail "the command suggested fails: $cmd"; }
	[ -s "$dir/m2/trace.pftrace" ] || fail "the command suggested wrote nothing: $cmd"
	# Under one name (-o s.ttr: s.ttr, s.ttr.PID), the logs beside each (its stderr a
	# pipe) are no files of other runs, nor named by the command suggested (s.* took them:
	# convert failed on the first, wrong magic), which convert says are logs.
	mkdir "$dir/m3"
	err=$dir/m3/err
	(cd "$dir/m3" && "$tool" record -f work_leaf -o s.ttr -- \
		sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do ../hello 2>&1 | cat; done' \
		>out 2>err) || true
	logs=$(ls "$dir/m3" | grep -c '^s\..*\.log$' || true)
	[ "$logs" -gt 0 ] || { cat "$err" >&2; fail "no logs beside the traces: $(ls "$dir/m3")"; }
	grep -q "(which names" "$err" && fail "the logs said to be other runs' files: $(grep '^ticktrace: recorded' "$err")"
	cmd=$(sed -n 's/^ticktrace: recorded .*; see them on one timeline with: \(ticktrace convert .*\)$/\1/p' "$err")
	case $cmd in "ticktrace convert $dir/m3/s.ttr $dir/m3/s.*[0-9] -o trace.pftrace") ;;
		*) fail "not the program's file and a pattern of the others: $cmd" ;; esac
	(cd "$dir/m3" && eval "\"\$tool\"${cmd#ticktrace}" 2>conv) ||
		{ cat "$dir/m3/conv" >&2; fail "the command suggested fails: $cmd"; }
	[ -s "$dir/m3/trace.pftrace" ] || fail "the command suggested wrote nothing: $cmd"
	"$tool" convert "$dir/m3/s.ttr" "$dir/m3/$(cd "$dir/m3" && ls s.*.log | head -1)" -o "$dir/m3/x.json" \
		2>"$dir/m3/conv" && fail "convert took a log"
	grep -q "offset 0: a log of ticktrace's lines (text), not a raw file" "$dir/m3/conv" ||
		fail "convert did not say a log is one: $(cat "$dir/m3/conv")"
	no_leftovers
	echo "many: 21 files summed up, 16 named, one pattern for all; the logs beside them left out"
	;;
unmatched)
	# A program whose patterns were never matched against its functions is not said to
	# have missed them (it said "what each pattern missed is said above", nothing above):
	# ended first (its loader failed to find a library: no constructor ran), or run with
	# TICKTRACE=0; a pattern that does miss is still said.
	printf 'int gone(void) { return 1; }\n' >"$dir/gone.c"
	printf 'int gone(void);\nint main(void) { return gone(); }\n' >"$dir/needs.c"
	compile -shared -fPIC -o "$dir/libgone.so" "$dir/gone.c"
	compile -O1 -o "$dir/needs" "$dir/needs.c" -L"$dir" -lgone
	rm "$dir/libgone.so"
	compile -O1 -o "$dir/hello" "$src/hello.c"
	cd "$dir"
	"$tool" record -f work_leaf -o n.ttr -- ./needs >out 2>err && rc=0 || rc=$?
	[ "$rc" = 127 ] || { cat err >&2; fail "needs: record exits $rc, not the loader's 127"; }
	! grep -q "said above" err || { cat err >&2; fail "needs: said the misses were said above"; }
	grep -qF "ticktrace: record: ./needs ended before the -f patterns were matched against its functions: nothing was patched" err ||
		{ cat err >&2; fail "needs: not said that it ended before the patterns were matched"; }
	TICKTRACE=0 "$tool" record -f work_leaf -o z.ttr -- ./hello >out 2>err && rc=0 || rc=$?
	[ "$rc" = 5 ] || { cat err >&2; fail "TICKTRACE=0: record exits $rc, not the program's 5"; }
	! grep -q "pattern" err || { cat err >&2; fail "TICKTRACE=0: said of the patterns"; }
	grep -qF "wrote no trace at z.ttr (TICKTRACE=0" err || { cat err >&2; fail "TICKTRACE=0: the missing trace not said"; }
	"$tool" record -f no_such_function -o m.ttr -- ./hello >out 2>err && rc=0 || rc=$?
	[ "$rc" = 5 ] || { cat err >&2; fail "a missing pattern: record exits $rc, not the program's 5"; }
	with_logs err
	grep -qF -- "-f no_such_function matches no function" err &&
		grep -qF "no -f pattern matched a function of ./hello or a program it ran: the trace holds none of their calls (what each pattern missed is said in ticktrace's lines, whose log is named below)" err ||
		{ cat err >&2; fail "a missing pattern: not said"; }
	"$tool" record -f work_leaf -o w.ttr -- ./hello >out 2>err && rc=0 || rc=$?
	[ "$rc" = 5 ] && ! grep -q "pattern" err || { cat err >&2; fail "work_leaf: record exits $rc"; }
	echo "unmatched: the patterns' misses said only where they were matched"
	;;
descriptors)
	[ "$sanitize" = none ] || { echo "skipped: a sanitizer's runtime needs descriptors of its own" >&2; exit 77; }
	printf 'int work_leaf(int x) { return x * 3 + 1; }\n' >"$dir/leaf.c"
	printf 'int work_leaf(int);\nint main(int c, char **v) { (void)v; return work_leaf(c) == 4 ? 0 : 9; }\n' >"$dir/m.c"
	compile -shared -fPIC -o "$dir/libleaf.so" "$dir/leaf.c"
	compile -O1 -o "$dir/m" "$dir/m.c" -L"$dir" -lleaf -Wl,-rpath,"$dir"
	cd "$dir"
	(ulimit -n 12 && ./m) || fail "the program fails under ulimit -n 12 untraced"
	(ulimit -n 12 && TICKTRACE_LOG=stderr exec "$tool" record -f work_leaf -o d.ttr -- ./m) >out 2>err && rc=0 || rc=$?
	# (the patcher's, not the program's: r43 R2 "the program ran out of file descriptors")
	grep -qE "ticktrace: record: the patcher ran out of file descriptors \(EMFILE\) in (\./)?m before" err &&
		grep -qF "raise the limit, as \`ulimit -n 1024\`" err ||
		{ cat err >&2; fail "running out of descriptors not said to record's user"; }
	grep -qF "ticktrace: the patcher ran out of file descriptors (EMFILE: ulimit -n is 12)" err ||
		{ cat err >&2; fail "running out of descriptors not said by the patcher"; }
	! grep -qF "ended before the -f patterns" err || { cat err >&2; fail "said the program ended first"; }
	[ "$rc" = 0 ] || { cat err >&2; fail "record exits $rc, not the program's 0"; }
	# Through env, which execs it: the image that ran out named, m, not the program
	# record ran alone (r45 N1: "in env", where m lost every -f target)
	(ulimit -n 12 && exec "$tool" record -f work_leaf -o v.ttr -- env ./m) >out 2>err || true
	grep -qE "ticktrace: record: the patcher ran out of file descriptors \(EMFILE\) in (env and )?m before the -f patterns could be matched against all (its|their) functions" err ||
		{ cat err >&2; fail "through env: the image that ran out not named"; }
	# Its lines in the log beside the trace, where record puts them, though the
	# patcher's files filled the table as it said them: held, and written once a
	# descriptor could be had (before: "cannot write its log ... (Too many open files):
	# its lines go to stderr", the program's)
	(ulimit -n 12 && exec "$tool" record -f work_leaf -o h.ttr -- ./m) >out 2>err || true
	! grep -q "cannot write its log\|the patcher ran out of file descriptors (EMFILE: ulimit" err &&
		grep -qF "ticktrace: the patcher ran out of file descriptors (EMFILE: ulimit -n is 12)" h.ttr.log ||
		{ cat err h.ttr.log >&2; fail "the patcher's lines not in the log beside the trace"; }
	# At 16 the patcher's modules' files fill the table too, but the threads were
	# counted before it read them: what it read is patched (before: "nothing patched:
	# the program's threads cannot be counted (/proc/self/task: Too many open files)")
	(ulimit -n 16 && exec "$tool" record -f work_leaf -o e.ttr -- ./m) >out 2>err ||
		{ cat err >&2; fail "record at ulimit -n 16 failed"; }
	"$tool" report -q e.ttr >report 2>&1 && grep -q "^ *work_leaf " report ||
		{ cat err e.ttr.log report >&2; fail "work_leaf not patched at ulimit -n 16"; }
	# No trace written at all (the directory gone): said and counted, and the status is
	# still the program's (r43 R3: exit 1 though the program exited 0)
	# (its start directory too: where its trace would go instead, TICKTRACE_OUT's gone)
	mkdir gone
	(cd gone && "$tool" record -o g.ttr -- sh -c 'rm -rf ../gone') >out 2>err && rc=0 || rc=$?
	grep -qF "could not write their traces at exit" err && grep -qF "wrote no trace at g.ttr" err ||
		{ cat err >&2; fail "the lost traces not said"; }
	[ "$rc" = 0 ] || { cat err >&2; fail "no trace written: record exits $rc, not the program's 0"; }
	no_leftovers
	echo "descriptors: EMFILE said, the program's exit status kept"
	;;
images)
	# A program killed, and one whose trace could not be written, named by the image
	# that ran last in their process, from its file (r43 R8: "env was killed by signal 9"
	# for sleep, "bash left by _exit" for the image bash exec'd), and the .live files
	# the summary names counted in all (it said "1 .live" after naming two).
	cd "$dir"
	printf '#include <sys/resource.h>\nint main(void) { struct rlimit r = {1, RLIM_INFINITY}; return setrlimit(RLIMIT_FSIZE, &r); }\n' >full.c
	compile -O1 -o "$dir/fullexit" full.c
	"$tool" record -o k.ttr -- env sleep 60 >out 2>err & rec=$!
	prog=
	for _ in $(seq 600); do
		prog=$(children "$rec") && "$tool" info k.exec1.ttr.live >/dev/null 2>&1 && break
		sleep 0.1
	done
	"$tool" info k.exec1.ttr.live >/dev/null || fail "sleep not started under record in 60 s: $(ls)"
	kill -9 "$prog"
	wait "$rec" || true
	grep -qF "ticktrace: record: sleep was killed by signal 9" err || { cat err >&2; fail "the killed program not named sleep"; }
	"$tool" record -o l.ttr -- bash -c 'sleep 60 & echo $! > sp; while [ ! -e go ]; do sleep 0.05; done; exec ./fullexit' >out 2>err & rec=$!
	# (killed once its live file is readable: one stopped before is removed, said)
	for _ in $(seq 600); do
		[ -s sp ] && "$tool" info "l.exec1.ttr.$(cat sp).live" >/dev/null 2>&1 && break
		sleep 0.1
	done
	"$tool" info "l.exec1.ttr.$(cat sp).live" >/dev/null || fail "the background sleep not started in 60 s: $(ls)"
	kill -9 "$(cat sp)"
	: > go
	wait "$rec" || true
	summary=$(grep "ticktrace: recorded" err) || { cat err >&2; fail "no summary"; }
	named=$(echo "$summary" | sed 's/; see .*//' | tr ' ' '\n' | grep -c '^/.*\.live$' || true)
	counted=$(echo "$summary" | grep -o '([0-9]* \.live' | tr -dc '0-9\n' | awk '{n += $1} END {print n + 0}')
	[ "$named" = 2 ] && [ "$counted" = 2 ] || { cat err >&2; fail "$named .live named, $counted counted"; }
	! grep -q "bash's, left by _exit\|bash left by _exit" err || { cat err >&2; fail "fullexit's .live said bash's"; }
	echo "images: the killed program named sleep, not env; two .live named, two counted"
	;;
*) fail "no case $case_" ;;
esac
