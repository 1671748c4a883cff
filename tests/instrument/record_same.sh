#!/bin/sh
# The guarantee of `ticktrace record`: it never changes what the traced program does
# (issue 23). Small programs (detour/same.c, detour/same_cxx.cc: one feature each run)
# built with gcc and clang, -O0/-O2/-O3, PIE or not (and C++ with its runtime linked
# in statically), run plainly and under `record -f '*'`: the exit status, stdout and
# stderr (less ticktrace's own lines) must be the same.
#   record_same.sh DETOUR_SOURCES CC SANITIZE   (TT_TEST_TOOL: the ticktrace command;
#   SANITIZE: the build's b_sanitize, CC its compiler)
set -eu
src=$1 build_cc=${2:-cc} sanitize=${3:-none}
tool=${TT_TEST_TOOL:-ticktrace}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trap 'exit 1' HUP INT TERM
unset TICKTRACE TICKTRACE_OUT TICKTRACE_MODE TICKTRACE_DETOUR
# A sanitizer build's settings are not the plain programs'; its detour library needs
# its runtime loaded first: both runs get it as a user's preload (which record keeps
# before its own library), the compilers and the script's tools not (each process
# started with it took 35 ms more CPU time, a compile 4 times its own).
unset ASAN_OPTIONS UBSAN_OPTIONS
[ "$sanitize" = none ] || export ASAN_OPTIONS=detect_leaks=0
preloaded() { # COMMAND...: run with the sanitizer's runtime preloaded, in its build
	if [ "$sanitize" != none ]; then
		LD_PRELOAD="$TT_ASAN_RUNTIME" "$@"
	else
		"$@"
	fi
}

c_features="leaf threads altstack longjmp pthread_exit swapcontext"
cxx_features="exceptions pthread_exit threads"
# NAME:COMPILER:FLAGS[:FEATURES]: each compiler, level and kind of executable at least
# once. (pthread_exit with libgcc linked in statically aborts by itself: glibc's
# forced unwind is libgcc_s's, the frames' personality the program's.)
configs="gcc-O0:gcc:-O0
gcc-O2:gcc:-O2
gcc-O3-nopie:gcc:-O3 -fno-pie -no-pie
clang-O2-nopie:clang:-O2 -fno-pie -no-pie
clang-O3:clang:-O3
g++-O2:g++:-O2
clang++-O0-nopie:clang++:-O0 -fno-pie -no-pie
g++-O3-static-libstdc++:g++:-O3 -static-libstdc++ -static-libgcc:exceptions threads"

# The sanitizers' build (CI's ASan stage) checks the detour library, not the compilers:
# there the configs whose patching differs alone, which ran every line and branch of
# src/ the eight do (clang's coverage, as .ci/asan-tests measures: gcc -O3 non-PIE
# relocates instructions the others do not, the C++ ones look symbols up otherwise).
sanitized_configs="clang-O3 gcc-O3-nopie clang++-O0-nopie g++-O3-static-libstdc++"

built=0 passed=0 failures=0
# Runs one program both ways: its exit statuses in $plain and $traced, its output in
# $dir/plain.* and $dir/record.* (ticktrace's lines left out of record.err).
run_both() {
	prog=$1 feature=$2
	(cd "$dir" && preloaded timeout -k 5 60 "$prog" "$feature" >plain.out 2>plain.err) && plain=0 || plain=$?
	(cd "$dir" && preloaded timeout -k 5 60 "$tool" record -f '*' -o "run-%p.ttr" -- "$prog" "$feature" \
		>record.out 2>record.all) && traced=0 || traced=$?
	rm -f "$dir"/run-*.ttr
	grep -v '^ticktrace' "$dir/record.all" >"$dir/record.err" || true
	# (a sanitizer's messages begin with the pid, which differs from run to run)
	sed -i 's/^==[0-9]*==/==PID==/' "$dir/plain.err" "$dir/record.err"
}

echo "$configs" | {
while IFS=: read -r name compiler flags only; do
	if [ "$sanitize" != none ]; then
		case " $sanitized_configs " in *" $name "*) ;; *) continue ;; esac
	fi
	command -v "$compiler" >/dev/null || { echo "$name: no $compiler here, not built"; continue; }
	case $compiler in
	*++) source=$src/same_cxx.cc features=$cxx_features ;;
	*) source=$src/same.c features=$c_features ;;
	esac
	features=${only:-$features}
	prog=$dir/same-$name
	# shellcheck disable=SC2086
	"$compiler" $flags -g -o "$prog" "$source" -pthread 2>"$dir/cc.log" ||
		{ cat "$dir/cc.log" >&2; echo "FAIL: $name does not build" >&2; exit 1; }
	built=$((built + 1))
	for feature in $features; do
		run_both "$prog" "$feature"
		# Every program exits 0 by itself, or is no measure.
		[ "$plain" = 0 ] || { cat "$dir/plain.err" >&2; echo "FAIL: $name $feature exits $plain by itself" >&2; exit 1; }
		if [ "$plain" = "$traced" ] && cmp -s "$dir/plain.out" "$dir/record.out" &&
			cmp -s "$dir/plain.err" "$dir/record.err"; then
			passed=$((passed + 1))
		else
			echo "FAIL: $name $feature changed under record -f '*': exit $plain plain, $traced recorded" >&2
			diff "$dir/plain.out" "$dir/record.out" >&2 || true
			diff "$dir/plain.err" "$dir/record.err" >&2 || true
			grep '^ticktrace' "$dir/record.all" | tail -5 >&2 || true
			failures=$((failures + 1))
		fi
	done
done
[ "$built" -gt 0 ] || { echo "skipped: no compiler here" >&2; exit 77; }
echo "$passed cases the same, $failures failures"
[ "$failures" = 0 ]
}
