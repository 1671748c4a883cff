#!/bin/sh
# A run whose children exec, TICKTRACE_OUT without %p: every image a file of its own,
# none over another, nothing said of another process (the images of forked children
# wrote run.exec1.ttr each over the last; a vfork child's image took run.ttr and moved
# its parent aside). Named as record names them: run.ttr.PID, run.exec1.ttr.PID.
# Usage: exec_children.sh PROG TICKTRACE
set -eu
prog=$1 tool=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }
for mode in stop stream; do
	run=$dir/$mode
	mkdir "$run"
	TICKTRACE_MODE=$mode TICKTRACE_OUT=$run/run.ttr timeout 60 "$prog" 2>"$dir/err" ||
		{ cat "$dir/err"; fail "$mode: the program failed"; }
	! grep -q 'put its trace there' "$dir/err" || { cat "$dir/err"; fail "$mode: a file moved aside"; }
	files=$(cd "$run" && ls)
	# image 0, three forked children before their exec, images 1 to 5
	[ "$(echo "$files" | wc -l)" = 9 ] || fail "$mode: 9 files due, not: $files"
	images=$(for f in $files; do
		"$tool" info "$run/$f" | sed -n 's/.*command line: [^ ]*exec_children_prog *\([0-9]*\)$/\1/p' |
			sed 's/^$/0/'
	done | sort | tr '\n' ' ')
	[ "$images" = "0 0 0 0 1 2 3 4 5 " ] || fail "$mode: the files hold images $images: $files"
	for f in $files; do
		case $f in
		run.ttr | run.exec1.ttr) ;; # image 0, image 5 (the same process)
		run.ttr.[0-9]*) ;;          # a forked child, the vfork child's image
		run.exec1.ttr.[0-9]*)       # a forked child's image, beside its first
			[ -e "$run/run.ttr.${f##*.}" ] || fail "$mode: $f has no run.ttr.${f##*.}" ;;
		*) fail "$mode: $f is not named as a file of the run" ;;
		esac
	done
	echo "ok: $mode:" $files
done
# Children whose exec the runtime does not see (posix_spawn, system: glibc execs them
# itself), TICKTRACE_OUT without %p: each its own file, named as record names them,
# nothing said (each spawned child took run.ttr, and the next replaced it as older
# than itself: only the last child's remained, the first process's beside it).
run=$dir/spawn
mkdir "$run"
TICKTRACE_OUT=$run/run.ttr timeout 60 "$prog" s 2>"$dir/err" || { cat "$dir/err"; fail "spawn: the program failed"; }
! grep -q 'put its trace there' "$dir/err" || { cat "$dir/err"; fail "spawn: a file moved aside"; }
files=$(cd "$run" && ls)
images=$(for f in $files; do
	"$tool" info "$run/$f" | sed -n 's/.*command line: [^ ]*exec_children_prog *\([0-9s]*\)$/\1/p'
done | sort | tr '\n' ' ')
[ "$images" = "5 6 6 6 7 7 7 8 s " ] || { cat "$dir/err"; fail "spawn: the files hold images $images: $files"; }
for f in $files; do
	case $f in
	run.ttr | run.exec1.ttr) ;; # image s, image 5 (the first process)
	run.ttr.[0-9]*) ;;          # a spawned child, system's
	run.exec1.ttr.[0-9]*)       # a spawned child's image, beside its first
		[ -e "$run/run.ttr.${f##*.}" ] || fail "spawn: $f has no run.ttr.${f##*.}" ;;
	*) fail "spawn: $f is not named as a file of the run" ;;
	esac
done
echo "ok: spawn:" $files
