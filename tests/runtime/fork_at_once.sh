#!/bin/sh
# Mode stream, a child that forks at once (a shell's subshell starting a job; tmux's
# server starting a pane): its own drain makes its file as the child goes on, and a
# fork then must not find the drain inside the C library's lock of the loaded modules
# (dl_iterate_phdr), which the grandchild would inherit held, its drain waiting for it
# for ever and its exit for its drain (before: a hang within the first 10 to 40 of
# these). 120 subshells that each fork twice at once, every process's file whole (300
# before: 92 s of the CI's gcc stage, for a hang that came within the first 40).
# Usage: fork_at_once.sh LIBTICKTRACE TICKTRACE SANITIZE
set -eu
lib=$1 tool=$2 sanitize=$3
if [ "$sanitize" != none ]; then
	echo "SKIP: a library built with -fsanitize=$sanitize preloaded into Debian's bash, which is not"
	exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
status=0 subshells=120
LD_PRELOAD=$lib TICKTRACE_MODE=stream TICKTRACE_OUT="$dir/run-%p.ttr" \
	bash -c 'for i in $(seq "$1"); do ( sleep 0.001 & true & wait ); done' _ "$subshells" &
shell=$!
# A hang is a minute without a new file (each subshell makes some); a loaded machine is
# slow, not hung: 300 subshells took 48 s at load 19 here, past a whole-run timeout of 100.
files=0 still=0
while kill -0 "$shell" 2>/dev/null && [ "$still" -lt 60 ]; do
	sleep 1
	now=$(ls "$dir" | wc -l)
	if [ "$now" -eq "$files" ]; then still=$((still + 1)); else still=0 files=$now; fi
done
if [ "$still" -ge 60 ]; then
	kill -9 "$shell" 2>/dev/null || true
	wait "$shell" 2>/dev/null || true
	status=124
else
	wait "$shell" || status=$?
fi
if [ "$status" -ne 0 ]; then
	echo "FAIL: the shell ended with $status (124: it hung, a minute without a new file) after $(ls "$dir" | wc -l) files"
	# (the hung subshells and jobs, whose trace goes to $dir: nothing left behind)
	for p in /proc/[0-9]*; do
		if { tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qx "TICKTRACE_OUT=$dir/run-%p.ttr"; then
			kill -9 "${p#/proc/}" 2>/dev/null || true
		fi
	done
	exit 1
fi
files=$(ls "$dir" | wc -l)
# the shell, the subshells and their two jobs each (sleep and true may be builtins or not)
if [ "$files" -lt $((2 * subshells + 1)) ]; then
	echo "FAIL: $files files, not the $((2 * subshells + 1)) or more of the shell and its $subshells subshells and jobs"
	exit 1
fi
# (one command decodes them all, as the process tree they are, and names a file that does
# not read: one a file took 15 s of the test at load 17, 0.3 s so)
if ! "$tool" info "$dir"/run-*.ttr >/dev/null 2>"$dir/err"; then
	echo "FAIL: the files do not read: $(cat "$dir/err")"
	exit 1
fi
echo "ok: $subshells subshells forking at once, $files files, each whole"
