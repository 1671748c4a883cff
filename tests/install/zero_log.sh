#!/bin/sh
# A zero-markup build leaves the program's own output as it is: ticktrace's lines
# (functions turned off, drops) go to a file beside the trace (TRACE.log) where stderr
# is not a terminal, and `info` names it. Before, they went into the program's stderr
# at exit, and a test suite that compares it failed (Debian's jq 1.6, tests/shtest:
# `jq ... 2> $d/out; cmp $d/out $d/expected`). On a terminal they stay there; a program
# with markup keeps them on stderr; TICKTRACE_LOG=stderr, off or a file (%p) says where.
# Each process (a fork, an exec) its own log, and a daemon that closed it has it opened
# again; a log that cannot be written (no such directory,
# another user's file) gives its lines to stderr, said.
#   zero_log.sh BUILD_DIR SANITIZE  (TT_TEST_TOOL: the ticktrace command)
set -eu
. "$(dirname "$0")/scratch_install.sh"
scratch_install "$1" "${2:-none}"
unset TICKTRACE TICKTRACE_LOG TICKTRACE_BUFFER TICKTRACE_MODE TICKTRACE_TURN_OFF TICKTRACE_LIBCALLS
cat >prog.c <<'PROG'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef MARKUP
#include <ticktrace.h>
#define SCOPE(name) TT_SCOPE(name)
#else
#define SCOPE(name)
#endif
__attribute__((noinline)) int tiny(int x)
{
	SCOPE("tiny");
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}
static int work(const char *who)
{
	int sum = 0;
	for (int i = 0; i < 20000; i++)
		sum += tiny(i);
	printf("%s %d\n", who, sum);
	fflush(stdout);
	fprintf(stderr, "%s: an error of the program's own, which its tests compare\n", who);
	return 0;
}
int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "close") == 0) /* (as a daemon does) */
		for (int fd = 3; fd < 65536; fd++)
			close(fd);
	if (argc > 1 && strcmp(argv[1], "exec") == 0) {
		work("before exec");
		execl("/proc/self/exe", argv[0], "exec'd", (char *)NULL);
		return 1;
	}
	if (argc > 1 && strcmp(argv[1], "fork") == 0) {
		pid_t child = fork();
		if (child == 0)
			return work("child");
		waitpid(child, NULL, 0);
	}
	return work("main");
}
PROG
gcc -std=c11 -O2 -g -o plain prog.c
gcc -std=c11 -O2 -g -o zero prog.c $(pkg-config --cflags --libs ticktrace-instrument)
gcc -std=c11 -O2 -g -DMARKUP -o markup prog.c $(pkg-config --cflags --libs ticktrace)
./plain >plain.out 2>plain.err
./plain fork >plain_fork.out 2>plain_fork.err
./plain exec >plain_exec.out 2>plain_exec.err
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
TURNED_OFF="functions* turned off after 1024 short calls"
# run NAME PROGRAM ARG VAR=VALUE...: in directory NAME/, stdout and stderr files
run() {
	name=$1 program=$2 arg=$3
	shift 3
	mkdir "$name"
	(cd "$name" && env LD_LIBRARY_PATH=$libdir TICKTRACE_OUT=$root/$name/run.ttr "$@" \
		"../$program" $arg >out 2>err) || fail "$name: the program exits $?"
}
# same NAME [fork]: the program's stdout and stderr byte for byte as the plain build's
same() {
	cmp -s "$1/out" "plain${2:+_$2}.out" || fail "$1: stdout differs from the plain build's"
	cmp -s "$1/err" "plain${2:+_$2}.err" ||
		{ cat "$1/err" >&2; fail "$1: stderr differs from the plain build's"; }
}
# has FILE PATTERN: FILE holds a line matching PATTERN
has() {
	grep -q "$2" "$1" 2>/dev/null || { cat "$1" >&2 || true; fail "$1 has no line: $2"; }
}

# The jq case: stderr a file, every setting left as it is.
run default zero ""
same default
has default/run.ttr.log "$TURNED_OFF"
"$TT_TEST_TOOL" info default/run.ttr >default/info 2>&1 || fail "default: info fails"
has default/info "log: *default/run.ttr.log: ticktrace's own lines"

# Drops: said in the log, and by info and convert from the trace itself.
run drops zero "" TICKTRACE_BUFFER=1000 TICKTRACE_TURN_OFF=0 TICKTRACE_MIN_DUR=0
same drops
has drops/run.ttr.log "dropped"
"$TT_TEST_TOOL" info drops/run.ttr >drops/info 2>&1 || fail "drops: info fails"
has drops/info "records: *[0-9]*, dropped [1-9]"
"$TT_TEST_TOOL" convert drops/run.ttr -o drops/run.json 2>drops/convert.err || fail "drops: convert fails"
has drops/convert.err "dropped"

# TICKTRACE_LOG's values.
run to_stderr zero "" TICKTRACE_LOG=stderr
has to_stderr/err "$TURNED_OFF"
[ ! -e to_stderr/run.ttr.log ] || fail "to_stderr: a log beside the trace"
run off zero "" TICKTRACE_LOG=off
same off
[ "$(ls off)" = "$(printf 'err\nout\nrun.ttr')" ] || fail "off: files beside the trace: $(ls off)"
mkdir logs
run to_file zero "" "TICKTRACE_LOG=$root/logs/zero-%p.log"
same to_file
set -- logs/zero-*.log
[ $# = 1 ] && [ -e "$1" ] || fail "to_file: $# logs in logs/: $*"
"$TT_TEST_TOOL" info to_file/run.ttr >to_file/info 2>&1 || fail "to_file: info fails"
pid=$(sed -n 's/^ *process: *\([0-9]*\) .*/\1/p' to_file/info)
has "logs/zero-$pid.log" "$TURNED_OFF"
run no_dir zero "" "TICKTRACE_LOG=$root/missing/zero.log"
has no_dir/err "cannot write its log $root/missing/zero.log (No such file or directory): its lines go to stderr"
has no_dir/err "$TURNED_OFF"

# A program that closes every descriptor but 0..2 after ticktrace's first line (a bad
# setting, said as it starts): the log opened again by its name for the lines at exit.
run closing zero close TICKTRACE_MIN_DUR=1h
same closing
has closing/run.ttr.log "TICKTRACE_MIN_DUR=1h is not a duration"
has closing/run.ttr.log "$TURNED_OFF"

# Another user's file where the log would go: left alone, the lines on stderr.
if [ "$(id -u)" = 0 ]; then
	mkdir theirs
	touch theirs/run.ttr.log
	chown nobody theirs/run.ttr.log
	(cd theirs && env LD_LIBRARY_PATH=$libdir TICKTRACE_OUT=$root/theirs/run.ttr ../zero >out 2>err) ||
		fail "theirs: the program exits $?"
	[ ! -s theirs/run.ttr.log ] || fail "theirs: another user's file written into"
	has theirs/err "cannot write its log $root/theirs/run.ttr.log"
	has theirs/err "$TURNED_OFF"
fi

# Each process of a fork its own log, beside its own trace.
run fork zero fork
same fork fork
logs=$(ls fork/*.log | wc -l)
[ "$logs" = 2 ] || fail "fork: $logs logs, not one a process: $(ls fork)"
for log in fork/*.log; do
	has "$log" "$TURNED_OFF"
	[ -e "${log%.log}" ] || fail "fork: $log beside no trace"
done

# An exec'd image: its log beside its own trace.
run exec zero exec
same exec exec
has exec/run.exec1.ttr.log "$TURNED_OFF"
[ -e exec/run.exec1.ttr ] || fail "exec: no trace of the exec'd image: $(ls exec)"

# A program with markup: its lines on stderr, as before (drops).
run markup_run markup "" TICKTRACE_BUFFER=1000
has markup_run/err "dropped"
[ ! -e markup_run/run.ttr.log ] || fail "markup_run: a log beside the trace"

# A terminal: the lines said there, no log.
mkdir tty
(cd tty && LD_LIBRARY_PATH=$libdir TICKTRACE_OUT=$root/tty/run.ttr timeout 60 \
	script -qec ../zero typescript >/dev/null 2>&1) || fail "tty: the program under script exits $?"
has tty/typescript "$TURNED_OFF"
has tty/typescript "main: an error of the program's own"
[ ! -e tty/run.ttr.log ] || fail "tty: a log beside the trace"

[ "$failures" = 0 ] || exit 1
echo "ok: the program's output unchanged by the zero-markup build (lines in TRACE.log), TICKTRACE_LOG's values, fork, a terminal"
