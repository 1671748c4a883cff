#!/bin/sh
# Under a low RLIMIT_NPROC (ulimit -u; a cgroup's pids.max acts alike) ticktrace's own
# threads are never the reason a program cannot start its threads: the program that
# starts N threads untraced at the limit starts them traced too, ticktrace ending its
# own threads (tt-prefault, tt-sched, tt-dump) as the program's pthread_create meets
# the limit, and saying once on stderr and in the file's info what it gave up; a
# program that then leaves by _exit has its trace written all the same (by the
# exiting thread). (Before: the traced program's 5th thread of 6 was refused,
# "Resource temporarily unavailable", and ticktrace said nothing.) With a live file
# (TICKTRACE_LIVE=1, record's default) tt-live gives way too (RECHECK42 F3: it never
# did, the program's thread refused under record). Root ignores
# RLIMIT_NPROC: run as the unprivileged user r40u.
# Usage: nproc.sh PROG PLAIN TICKTRACE
set -u
prog=$(readlink -f "$1") plain=$(readlink -f "$2") tool=$3
user=r40u
if [ "$(id -u)" != 0 ] || ! id "$user" >/dev/null 2>&1 || [ ! -x /bin/bash ]; then
	echo "SKIP: needs root, the unprivileged user $user (root ignores RLIMIT_NPROC) and bash (ulimit -u)"
	exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
chown "$user" "$dir"
n=6
# The user's tasks now, its shell (then the program) and the N threads: not one more.
limit=$(( $(ps -L -u "$user" -o lwp= | wc -l) + n + 1 ))
run() { # NAME PROG [ARG [LIVE]]: runs PROG N [ARG] as the user under the limit (TICKTRACE_LIVE=LIVE),
	# output in dir/NAME.*
	timeout 60 su "$user" -s /bin/bash -c "ulimit -u $limit && cd '$dir' && TICKTRACE_LIVE=${4:-0} TICKTRACE_OUT='$dir/$1.ttr' exec '$2' $n ${3:-}" \
		>"$dir/$1.out" 2>"$dir/$1.err"
}
fail=0
run plain "$plain"
if [ $? != 0 ] || [ "$(cat "$dir/plain.out")" != "started $n" ]; then
	echo "FAIL: untraced, $n threads under ulimit -u $limit:"; cat "$dir/plain.out" "$dir/plain.err"
	exit 1
fi
for how in exit _exit live; do
	gave="tt-prefault (.*), tt-sched (.*), tt-dump ("
	if [ $how = live ]; then
		gave="tt-prefault (.*), tt-live (.*), tt-sched (.*), tt-dump ("
		run "$how" "$prog" exit 1
	else
		run "$how" "$prog" "$how"
	fi
	rc=$?
	if [ $rc != 0 ] || [ "$(cat "$dir/$how.out")" != "started $n" ]; then
		echo "FAIL: $how: traced (exit $rc), $n threads under ulimit -u $limit, as untraced:"
		cat "$dir/$how.out" "$dir/$how.err"; fail=1
	fi
	if [ "$(grep -c "RLIMIT_NPROC (ulimit -u $limit), or a cgroup's pids.max): ticktrace ended threads of its own .*: $gave" "$dir/$how.err")" != 1 ]; then
		echo "FAIL: $how: stderr does not say once which threads ticktrace ended:"; cat "$dir/$how.err"; fail=1
	fi
	if ! "$tool" info "$dir/$how.ttr" >"$dir/$how.info" 2>&1 ||
	   ! grep -q "gave way: .*RLIMIT_NPROC.*ended $gave" "$dir/$how.info" ||
	   ! grep -q "^ *0x[0-9a-f]*  *$n  worker " "$dir/$how.info"; then
		echo "FAIL: $how: the file's info does not say it, or not $n workers:"; cat "$dir/$how.info"; fail=1
	fi
done
[ $fail = 0 ] && echo "ok: $n threads traced under ulimit -u $limit, by exit and _exit, with a live file: $(cat "$dir/live.err")"
exit $fail
