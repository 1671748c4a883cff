#!/bin/sh
# Under an address-space limit (ulimit -v, RLIMIT_AS) a traced program runs as it
# would untraced: ticktrace's reservations (its arena, its threads' stacks, the
# patcher's shadow stacks, the C library's malloc arenas its threads would make) once
# took the room (a bzip2 -9 that ran in 50 MB untraced could not allocate at 400 MB).
# A program with markup and a zero-markup one allocate half the limit and touch it,
# at 100 MB and 400 MB (recording reduced, said with the limit named) and at 20 MB
# (recording off, said); each must print what the untraced one prints and exit 0.
# At 40 MB they allocate 22 MiB, three quarters of what is free as ticktrace starts
# (29 to 31 MiB): ticktrace takes a quarter at most, all told, and recording is off
# (said). The arena alone took a quarter once, and what else ticktrace maps (its
# threads' stacks, the patcher) on top: a zero-markup lz4 that runs in 27 MiB failed.
# At 100 MB they allocate 76 MiB too: the buffers, mapped as they fill, give way.
#   memory_limit.sh BUILD_DIR SANITIZE  (TT_TEST_TOOL: the ticktrace command)
set -eu
. "$(dirname "$0")/scratch_install.sh"
scratch_install "$1" "${2:-none}"
cat >mem.c <<'PROG'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef MARKUP
#include <ticktrace.h>
#define SCOPE(name) TT_SCOPE(name)
#else
#define SCOPE(name)
#endif
static __attribute__((noinline)) long depth(int n)
{
	SCOPE("depth");
	return n ? depth(n - 1) + n : 0;
}
int main(int argc, char **argv)
{
	size_t bytes = (size_t)atol(argv[1]) << 20;
	char *p = malloc(bytes);
	if (argc != 2 || !p) {
		fprintf(stderr, "mem: could not allocate %s MiB\n", argv[1]);
		return 1;
	}
	memset(p, 1, bytes);
	long sum = 0;
	for (int i = 0; i < 20000; i++)
		sum += depth(i % 100);
	for (size_t i = 0; i < bytes; i += 4096)
		sum += p[i];
	printf("%ld\n", sum);
	free(p);
	return 0;
}
PROG
gcc -std=c11 -O2 -g -o plain mem.c
gcc -std=c11 -O2 -g -DMARKUP -o markup mem.c $(pkg-config --cflags --libs ticktrace)
gcc -std=c11 -O2 -g -o zero mem.c $(pkg-config --cflags --libs ticktrace-instrument)
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# $program traced under ulimit -v $limit_kb, allocating $mib MiB ($1: said after the
# limit): it must exit 0 (else 1) and print what the untraced one printed (plain.out).
traced() {
	run="$program under ulimit -v $limit_kb$1"
	rm -f run.ttr
	status=0
	(ulimit -v $limit_kb && LD_LIBRARY_PATH=$libdir TICKTRACE_OUT=$root/run.ttr ./$program $mib) \
		>run.out 2>run.err || status=$?
	[ $status = 0 ] || { cat run.err >&2; fail "$run exits $status"; return 1; }
	cmp -s plain.out run.out || fail "$run printed $(cat run.out), the untraced one $(cat plain.out)"
}
for limit_and_mib in 20000:9 40000:22 100000:48 400000:195; do
	limit_kb=${limit_and_mib%:*} mib=${limit_and_mib#*:}
	(ulimit -v $limit_kb && ./plain $mib) >plain.out 2>plain.err ||
		{ echo "skipped: the untraced program does not run under ulimit -v $limit_kb: $(cat plain.err)" >&2; exit 77; }
	for program in markup zero; do
		traced "" || continue
		said=$(grep -c "the address-space limit (ulimit -v, RLIMIT_AS: $((limit_kb / 1024)) MiB" run.err || true)
		[ "$said" = 1 ] || { cat run.err >&2; fail "$run: the limit is said $said times, not once"; }
		if [ $limit_kb -le 40000 ]; then
			grep -q "leaves no room for trace buffers.*recording is off" run.err ||
				{ cat run.err >&2; fail "$run does not say recording is off"; }
			[ ! -e run.ttr ] || fail "$run wrote a trace with recording off"
		else
			grep -q "leaves trace buffers [0-9]* MiB" run.err ||
				{ cat run.err >&2; fail "$run does not say the buffers it kept"; }
			"$TT_TEST_TOOL" info run.ttr >info.txt 2>&1 || { cat info.txt >&2; fail "$run: info fails"; }
			grep -q "records: *[1-9]" info.txt || { cat info.txt >&2; fail "$run recorded nothing"; }
		fi
	done
done
# Most of the room the program's (76 MiB of 97, three quarters of what is free being
# 68): the buffers, mapped as they fill, stop where the program leaves them none, said
# at exit and in info. Reserved at start, a quarter made it fail (outside r42 N5: an xz
# that ran in 293 MiB failed traced at 371).
limit_kb=100000 mib=76
if (ulimit -v $limit_kb && ./plain $mib) >plain.out 2>plain.err; then
	for program in markup zero; do
		traced ", $mib MiB allocated" || continue
		"$TT_TEST_TOOL" info run.ttr >info.txt 2>&1 || { cat info.txt >&2; fail "$run: info fails"; }
		grep -q "records: *[1-9]" info.txt || { cat info.txt >&2; fail "$run recorded nothing"; }
		# (markup's 2 million events outgrow what is left; zero-markup's few do not)
		[ $program = zero ] && continue
		grep -q "events dropped" run.err && grep -q "stopped at [0-9]* MiB, where the program's own use" run.err ||
			{ cat run.err >&2; fail "$run does not say where the buffers stopped"; }
		grep -q "gave way: the address-space limit" info.txt ||
			{ cat info.txt >&2; fail "$run: info does not say the buffers gave way"; }
	done
else
	echo "not checked: the untraced program does not allocate $mib MiB under ulimit -v $limit_kb: $(cat plain.err)"
fi
[ "$failures" = 0 ] || exit 1
echo "ok: both programs ran as untraced at 20, 40 (most of it allocated), 100 (and most of it allocated) and 400 MB, the limit said once"
