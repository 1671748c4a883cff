#!/bin/sh
# A program that leaves by _exit (no exit handler runs: forked workers, many daemons)
# has its trace written, from main and from a signal handler; a vfork child's _exit
# ends nothing of its parent's run. (Before: no file, nothing said.) A thread that forks
# while ticktrace writes the trace after main's _exit never finds ticktrace's thread
# inside malloc, as ticktrace's other threads' work keeps fork out (before: it did, and
# a child under an allocator that is not fork-safe hung), and the child, forked as
# the run ends, has a trace of its own.
# Usage: underscore_exit.sh PROG TICKTRACE
set -u
prog=$1 tool=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fail=0
for case in main:3:1000 handler:4: vfork:5:2000 fork:6:1000; do
	how=${case%%:*} rest=${case#*:} status=${rest%%:*} scopes=${rest#*:}
	pid=$(TICKTRACE_OUT="$dir/$how-%p.ttr" timeout 60 "$prog" "$how" 2>"$dir/$how.err")
	rc=$?
	if [ "$rc" != "$status" ]; then
		echo "FAIL: $how: exit status $rc, not $status"; cat "$dir/$how.err"; fail=1; continue
	fi
	child=$(sed -n 's/^child: pid \([0-9]*\)$/\1/p' "$dir/$how.err")
	files=$(ls "$dir" | grep -v "^$how-$child\.ttr$" | grep -c "^$how-.*\.ttr$")
	if [ "$files" != 1 ] || [ ! -f "$dir/$how-$pid.ttr" ]; then
		echo "FAIL: $how: $files trace files, not $how-$pid.ttr alone:"; ls "$dir"; cat "$dir/$how.err"
		fail=1; continue
	fi
	if ! "$tool" report "$dir/$how-$pid.ttr" --csv >"$dir/$how.csv" 2>"$dir/$how.report"; then
		echo "FAIL: $how: report:"; cat "$dir/$how.report"; fail=1; continue
	fi
	calls=$(sed -n 's/^"work",\([0-9]*\),.*/\1/p' "$dir/$how.csv")
	if [ -z "$calls" ] || { [ -n "$scopes" ] && [ "$calls" != "$scopes" ]; } ||
	   { [ -z "$scopes" ] && [ "$calls" -lt 1000 ]; }; then
		echo "FAIL: $how: $calls work scopes in the trace, not ${scopes:-1000 or more}"; fail=1; continue
	fi
	if [ "$how" = fork ] && grep "^skipped:" "$dir/$how.err"; then
		echo "skip: fork: the check of what a fork finds"
	elif [ "$how" = fork ]; then
		if ! grep -q "^tt-dump allocates after _exit" "$dir/$how.err" ||
		   grep -q "^child: inherited" "$dir/$how.err"; then
			echo "FAIL: fork: a fork found ticktrace's thread inside malloc (or it never allocated):"
			cat "$dir/$how.err"; fail=1; continue
		fi
		# (the child, forked as the run ended, ends a run of its own: before, the
		# parent's end done, it wrote nothing and said nothing)
		if [ -z "$child" ] || ! "$tool" report "$dir/$how-$child.ttr" --csv >"$dir/child.csv" 2>&1 ||
		   [ "$(sed -n 's/^"child",\([0-9]*\),.*/\1/p' "$dir/child.csv")" != 10 ]; then
			echo "FAIL: fork: the child's trace ($how-$child.ttr) lacks its 10 scopes:"
			ls "$dir"; cat "$dir/$how.err" "$dir/child.csv"; fail=1; continue
		fi
	fi
	echo "ok: $how: exit $rc, $calls scopes in $how-$pid.ttr"
done
# The system call itself runs nothing of ticktrace's: no trace, but the live file holds
# every event, as after SIGKILL (ticktrace(7)).
pid=$(TICKTRACE_LIVE=1 TICKTRACE_OUT="$dir/group-%p.ttr" timeout 60 "$prog" exit_group 2>"$dir/group.err")
rc=$?
if [ "$rc" != 7 ] || [ -e "$dir/group-$pid.ttr" ] ||
   ! "$tool" report "$dir/group-$pid.ttr.live" --csv >"$dir/group.csv" 2>"$dir/group.report" ||
   [ "$(sed -n 's/^"work",\([0-9]*\),.*/\1/p' "$dir/group.csv")" != 1000 ]; then
	echo "FAIL: exit_group: exit $rc, not the live file alone with 1000 work scopes:"
	ls "$dir"; cat "$dir/group.err" "$dir/group.report"; fail=1
else
	echo "ok: exit_group: exit 7, the live file read"
fi
exit $fail
