#!/bin/sh
# Under a low RLIMIT_NPROC (ulimit -u; a cgroup's pids.max acts alike) ticktrace's own
# threads are never the reason a program cannot start its threads: the program that
# starts N threads untraced starts them traced too, ticktrace ending threads of its
# own (tt-prefault, tt-sched) as the program's pthread_create meets the limit, and says
# what it gave up on stderr and in the file's info. (Before: the traced program's
# third thread was refused, "Resource temporarily unavailable", and ticktrace said
# nothing.) Root ignores RLIMIT_NPROC: run as the unprivileged user r40u.
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
# The user's tasks now, its shell (then the program), the N threads and one more:
# tt-dump, which writes the trace at a crash, stays.
limit=$(( $(ps -L -u "$user" -o lwp= | wc -l) + n + 2 ))
run() { # NAME PROG: runs PROG N as the user under the limit, its output in dir/NAME.*
	timeout 60 su "$user" -s /bin/bash -c "ulimit -u $limit && cd '$dir' && TICKTRACE_OUT='$dir/$1.ttr' exec '$2' $n" \
		>"$dir/$1.out" 2>"$dir/$1.err"
}
fail=0
run plain "$plain"
if [ $? != 0 ] || [ "$(cat "$dir/plain.out")" != "started $n" ]; then
	echo "FAIL: untraced, $n threads under ulimit -u $limit:"; cat "$dir/plain.out" "$dir/plain.err"
	exit 1
fi
run traced "$prog"
rc=$?
if [ $rc != 0 ] || [ "$(cat "$dir/traced.out")" != "started $n" ]; then
	echo "FAIL: traced (exit $rc), $n threads under ulimit -u $limit, as untraced:"
	cat "$dir/traced.out" "$dir/traced.err"; fail=1
fi
if ! grep -q "RLIMIT_NPROC (ulimit -u $limit), or a cgroup's pids.max): ticktrace ended threads of its own .*tt-prefault" "$dir/traced.err"; then
	echo "FAIL: traced: stderr does not say which threads ticktrace ended:"; cat "$dir/traced.err"; fail=1
fi
if [ "$(grep -c "ticktrace ended threads" "$dir/traced.err")" != 1 ]; then
	echo "FAIL: traced: not said once:"; cat "$dir/traced.err"; fail=1
fi
if ! "$tool" info "$dir/traced.ttr" >"$dir/info" 2>&1 || ! grep -q "gave way: .*RLIMIT_NPROC.*tt-prefault" "$dir/info"; then
	echo "FAIL: traced: the file's info does not say it:"; cat "$dir/info"; fail=1
fi
[ $fail = 0 ] && cat "$dir/traced.err" && echo "ok: $n threads traced under ulimit -u $limit; $(sed -n 's/.*ticktrace ended \(.*\)/\1/p' "$dir/info" | cut -c1-100)"
exit $fail
