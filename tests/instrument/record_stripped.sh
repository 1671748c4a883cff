#!/bin/sh
# `ticktrace record -f` on a stripped program (issue 32 item 5): work.c built with -g,
# its calls under `record -f 'work_*'` the reference; then
#   strip      stripped (no .symtab): `-f '*'` patches the functions its .eh_frame
#              gives, named work+0xOFFSET (the offset nm gives the symbol) in --list,
#              in the trace, each called as often as its named twin; the output the
#              plain run's; `-f 'work+0xOFFSET'` matches one; a GCC .cold part
#              (cold.c) is not taken for a function;
#   debuglink  stripped with a debuglink: the debug file found in .debug/ beside it,
#              and under --debug-dir DIR only there (DIR/ITS/DIRECTORY/work.debug),
#              for the patching and record -c's conversion: named work_*;
#   debugdata  stripped with a .gnu_debugdata (MiniDebugInfo, xz, as Fedora makes
#              it): named work_*;
#   address    -f 0xADDR inside a function: names the function (work_leaf, or
#              work+0xOFFSET stripped) and where it starts, and record exits 1 (no
#              pattern matched); at its start, patched;
#   library    a stripped shared library (its soname a link to its file) with static
#              functions: -f '*' patches them from its .eh_frame, named
#              libsw.so.1+0xOFFSET (the loader's name, as the converter names them) in
#              --list and the trace, each called as often as its named twin; a
#              pattern naming one matches it alone (before, a library's .eh_frame was
#              not read: Debian's xz spent 903 of 908 ms in lzma_code as self time);
#   lz4        Debian's installed lz4 (stripped) under -f '*', compressing and
#              decompressing: its own functions patched and named lz4+0xOFFSET, as
#              --list said, its output byte-identical to a plain run's.
#   record_stripped.sh CASE CC SOURCES SANITIZE   (TT_TEST_TOOL: the ticktrace command)
set -eu
case_=$1 cc=$2 src=$3 sanitize=${4:-none}
tool=${TT_TEST_TOOL:-ticktrace}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trap 'exit 1' HUP INT TERM
mkdir "$dir/tmp"
export TMPDIR="$dir/tmp"
unset TICKTRACE TICKTRACE_OUT TICKTRACE_MODE
fail() { echo "FAIL: $*" >&2; exit 1; }
if [ "$sanitize" != none ]; then
	export LD_PRELOAD="$TT_ASAN_RUNTIME" ASAN_OPTIONS=detect_leaks=0
fi
# The compiler without it: it loads none of ticktrace's code (with it a compile took 4
# times the CPU time).
compile() { env -u LD_PRELOAD "$cc" "$@"; }
# The recorded calls of the converted trace $1: "NAME COUNT" a line, sorted.
calls() {
	python3 -c '
import collections, json, sys
events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
n = collections.Counter(e["name"] for e in events if e.get("ph") == "X" and e.get("cat") == "ticktrace")
print("\n".join("%s %d" % kv for kv in sorted(n.items())))' "$1"
}
# record -f $2... -- $1 in $dir (trace $dir/t.json, output $dir/out, stderr $dir/err);
# its exit status must be $want_rc (0 unless set: 1 where no pattern matches a function).
record() {
	prog=$1
	shift
	# (what the patcher says on stderr, as asked: its log otherwise, stderr being no terminal)
	(cd "$dir" && TICKTRACE_LOG=stderr "$tool" record "$@" -o t.ttr -c t.json --force -- "$prog" \
		>out 2>err) && rc=0 || rc=$?
	[ "$rc" = "${want_rc:-0}" ] || { cat "$dir/err" >&2; fail "record $* -- $prog exits $rc"; }
	cmp -s "$dir/out" "$dir/plain" || fail "record $* -- $prog: output not the plain run's"
}
# What --list says for -f $2... -- $1, the program not run: "NAME MODULE ADDRESS SIZE".
list() {
	prog=$1
	shift
	"$tool" record --list "$@" -- "$prog" >"$dir/list" 2>"$dir/list.err" ||
		{ cat "$dir/list.err" >&2; fail "record --list $* -- $prog"; }
	[ ! -s "$dir/list.err" ] || ! grep -q '^work:' "$dir/list.err" || fail "$prog ran under --list"
	tr '\t' ' ' <"$dir/list"
}

mkdir "$dir/ref" "$dir/s"
compile -O2 -g -pthread -o "$dir/ref/work" "$src/work.c"
"$dir/ref/work" >"$dir/plain"
record "$dir/ref/work" -f 'work_*'
calls "$dir/t.json" >"$dir/ref.calls"
[ "$(wc -l <"$dir/ref.calls")" -ge 6 ] || fail "the reference run recorded $(cat "$dir/ref.calls")"
list "$dir/ref/work" -f 'work_*' >"$dir/ref.list"
# "NAME OFFSET" of every work_* function, by its symbol
nm "$dir/ref/work" | awk '$2 ~ /^[Tt]$/ && $3 ~ /^work_/ {sub(/^0+/, "", $1); print $3, $1}' |
	sort >"$dir/ref.offsets"

case $case_ in
strip)
	cp "$dir/ref/work" "$dir/s/work"
	strip "$dir/s/work"
	! readelf -S "$dir/s/work" | grep -q '\.symtab' || fail "strip left a .symtab"
	list "$dir/s/work" -f '*' >"$dir/s.list"
	while read -r name offset; do
		size=$(awk -v n="$name" '$1 == n {print $4}' "$dir/ref.list")
		want="work+0x$offset work 0x$offset $size"
		grep -qxF "$want" "$dir/s.list" || fail "--list -f '*' lacks '$want': $(cat "$dir/s.list")"
	done <"$dir/ref.offsets"
	record "$dir/s/work" -f '*'
	calls "$dir/t.json" >"$dir/s.calls"
	while read -r name count; do
		offset=$(awk -v n="$name" '$1 == n {print $2}' "$dir/ref.offsets")
		grep -qxF "work+0x$offset $count" "$dir/s.calls" ||
			fail "$name: $count calls; stripped, work+0x$offset: $(cat "$dir/s.calls")"
	done <"$dir/ref.calls"
	leaf=$(awk '$1 == "work_leaf" {print $2}' "$dir/ref.offsets")
	[ "$(list "$dir/s/work" -f "work+0x$leaf" | cut -d' ' -f1)" = "work+0x$leaf" ] ||
		fail "-f work+0x$leaf: $(cat "$dir/list")"
	# a function's .cold part (entered by a jump, within its frame) is not one
	compile -O2 -o "$dir/ref/cold" "$src/cold.c"
	part=$(nm "$dir/ref/cold" | awk '$3 == "checked_sum.cold" {sub(/^0+/, "", $1); print $1}')
	whole=$(nm "$dir/ref/cold" | awk '$3 == "checked_sum" {sub(/^0+/, "", $1); print $1}')
	if [ -n "$part" ]; then
		strip -o "$dir/s/cold" "$dir/ref/cold"
		list "$dir/s/cold" -f '*' >"$dir/s.list"
		grep -q "^cold+0x$whole " "$dir/s.list" || fail "checked_sum not listed: $(cat "$dir/s.list")"
		! grep -q "^cold+0x$part " "$dir/s.list" || fail "checked_sum.cold listed as a function"
	else
		echo "note: $cc made no checked_sum.cold: that check not made" >&2
	fi
	;;
debuglink | debugdata)
	cp "$dir/ref/work" "$dir/s/work"
	strip "$dir/s/work"
	objcopy --only-keep-debug "$dir/ref/work" "$dir/work.debug"
	if [ "$case_" = debuglink ]; then
		objcopy --add-gnu-debuglink="$dir/work.debug" "$dir/s/work"
		mkdir "$dir/s/.debug"
		cp "$dir/work.debug" "$dir/s/.debug/"
	else
		command -v xz >/dev/null || { echo "skipped: no xz here to make a .gnu_debugdata" >&2; exit 77; }
		# (Fedora's find-debuginfo: the functions' symbols the dynamic ones lack)
		nm "$dir/ref/work" --format=posix --defined-only | awk '$2 ~ /^[Tt]$/ {print $1}' |
			sort >"$dir/keep"
		objcopy -S --remove-section .gdb_index --remove-section .comment \
			--keep-symbols="$dir/keep" "$dir/work.debug" "$dir/mini"
		xz "$dir/mini"
		objcopy --add-section .gnu_debugdata="$dir/mini.xz" "$dir/s/work"
	fi
	list "$dir/s/work" -f 'work_*' >"$dir/s.list"
	diff "$dir/ref.list" "$dir/s.list" >&2 || fail "--list -f 'work_*' of the stripped $case_ program"
	record "$dir/s/work" -f 'work_*'
	calls "$dir/t.json" | diff "$dir/ref.calls" - >&2 || fail "the stripped $case_ program's calls"
	if [ "$case_" = debuglink ]; then
		# elsewhere, its debug file only under --debug-dir
		mkdir "$dir/elsewhere" "$dir/dd"
		cp "$dir/s/work" "$dir/elsewhere/"
		mkdir -p "$dir/dd/$(cd "$dir/elsewhere" && pwd -P)"
		cp "$dir/work.debug" "$dir/dd/$(cd "$dir/elsewhere" && pwd -P)/"
		list "$dir/elsewhere/work" -f 'work_leaf' >"$dir/s.list"
		[ ! -s "$dir/s.list" ] || fail "the debug file found without --debug-dir: $(cat "$dir/s.list")"
		list "$dir/elsewhere/work" --debug-dir "$dir/dd" -f 'work_*' >"$dir/s.list"
		diff "$dir/ref.list" "$dir/s.list" >&2 || fail "--list --debug-dir"
		record "$dir/elsewhere/work" --debug-dir "$dir/dd" -f 'work_*'
		calls "$dir/t.json" | diff "$dir/ref.calls" - >&2 || fail "the calls under --debug-dir"
	fi
	;;
address)
	cp "$dir/ref/work" "$dir/s/work"
	strip "$dir/s/work"
	leaf=$(awk '$1 == "work_leaf" {print $2}' "$dir/ref.offsets")
	inside=$(printf '%x' $((0x$leaf + 3)))
	want_rc=1
	record "$dir/ref/work" -f "0x$inside"
	grep -qF -- "-f 0x$inside is inside work_leaf, which starts at 0x$leaf" "$dir/err" ||
		{ cat "$dir/err" >&2; fail "-f 0x$inside does not say where work_leaf starts"; }
	record "$dir/s/work" -f "0x$inside"
	grep -qF -- "-f 0x$inside is inside work+0x$leaf, which starts at 0x$leaf" "$dir/err" ||
		{ cat "$dir/err" >&2; fail "-f 0x$inside (stripped) does not say where its function starts"; }
	[ -z "$(calls "$dir/t.json")" ] || fail "-f 0x$inside patched: $(calls "$dir/t.json")"
	want_rc=0
	[ "$(list "$dir/s/work" -f "0x$leaf")" = "work+0x$leaf work 0x$leaf $(awk '$1 == "work_leaf" {print $4}' "$dir/ref.list")" ] ||
		fail "--list -f 0x$leaf: $(cat "$dir/list")"
	record "$dir/s/work" -f "0x$leaf"
	[ "$(calls "$dir/t.json")" = "work+0x$leaf $(awk '$1 == "work_leaf" {print $2}' "$dir/ref.calls")" ] ||
		fail "-f 0x$leaf recorded $(calls "$dir/t.json")"
	;;
library)
	cat >"$dir/sw.c" <<'C'
#include <stdio.h>
__attribute__((noinline)) static int sw_leaf(int x)
{
	int sum = 0;
	for (int i = 0; i < x; i++)
		__asm__ volatile("add %1, %0" : "+r"(sum) : "r"(i));
	return sum;
}
__attribute__((noinline)) static int sw_middle(int x)
{
	int sum = 0;
	for (int i = 0; i < 3; i++)
		sum += sw_leaf(x + i);
	__asm__ volatile("" : "+r"(sum));
	return sum;
}
int sw_run(int n)
{
	int sum = 0;
	for (int i = 0; i < n; i++)
		sum += sw_middle(i) + sw_leaf(i);
	return sum;
}
C
	printf 'int sw_run(int);\n#include <stdio.h>\nint main(void) { printf("%%d\\n", sw_run(40)); return 0; }\n' >"$dir/main.c"
	mkdir "$dir/lib"
	compile -O2 -g -fPIC -shared -Wl,-soname,libsw.so.1 -o "$dir/ref/libsw.so.1.0" "$dir/sw.c"
	ln -s libsw.so.1.0 "$dir/ref/libsw.so.1"
	strip -o "$dir/lib/libsw.so.1.0" "$dir/ref/libsw.so.1.0"
	ln -s libsw.so.1.0 "$dir/lib/libsw.so.1"
	! readelf -S "$dir/lib/libsw.so.1.0" | grep -q '\.symtab' || fail "strip left the library's .symtab"
	compile -O2 -o "$dir/ref/main" "$dir/main.c" -L"$dir/ref" -l:libsw.so.1 -Wl,-rpath,'$ORIGIN'
	cp "$dir/ref/main" "$dir/lib/main"
	"$dir/ref/main" >"$dir/plain"
	record "$dir/ref/main" -f 'sw_*'
	calls "$dir/t.json" >"$dir/ref.calls"
	[ "$(wc -l <"$dir/ref.calls")" = 3 ] || fail "the reference run recorded $(cat "$dir/ref.calls")"
	nm "$dir/ref/libsw.so.1.0" | awk '$2 == "t" && $3 ~ /^sw_/ {sub(/^0+/, "", $1); print $3, $1}' |
		sort >"$dir/ref.offsets"
	[ "$(wc -l <"$dir/ref.offsets")" = 2 ] || fail "the static functions: $(cat "$dir/ref.offsets")"
	list "$dir/lib/main" -f '*' >"$dir/s.list"
	record "$dir/lib/main" -f '*'
	calls "$dir/t.json" >"$dir/s.calls"
	while read -r name offset; do
		grep -q "^libsw.so.1+0x$offset libsw.so.1.0 0x$offset " "$dir/s.list" ||
			fail "--list -f '*' lacks libsw.so.1+0x$offset ($name): $(cat "$dir/s.list")"
		count=$(awk -v n="$name" '$1 == n {print $2}' "$dir/ref.calls")
		grep -qxF "libsw.so.1+0x$offset $count" "$dir/s.calls" ||
			fail "$name: $count calls; stripped, libsw.so.1+0x$offset: $(cat "$dir/s.calls")"
	done <"$dir/ref.offsets"
	grep -qx "sw_run $(awk '$1 == "sw_run" {print $2}' "$dir/ref.calls")" "$dir/s.calls" ||
		fail "sw_run, exported, not recorded as before: $(cat "$dir/s.calls")"
	leaf=$(awk '$1 == "sw_leaf" {print $2}' "$dir/ref.offsets")
	[ "$(list "$dir/lib/main" -f "libsw.so.1+0x$leaf" | cut -d' ' -f1)" = "libsw.so.1+0x$leaf" ] ||
		fail "-f libsw.so.1+0x$leaf: $(cat "$dir/list")"
	# Through `env LD_LIBRARY_PATH=DIR PROG` (an uninstalled build, no rpath): PROG's list,
	# not env's (before: "-f sw_* matches no function", naming no image)
	compile -O2 -o "$dir/lib/bare" "$dir/main.c" -L"$dir/ref" -l:libsw.so.1
	list "$dir/lib/main" -f 'sw_*' >"$dir/direct.list"
	[ -s "$dir/direct.list" ] || fail "--list -f 'sw_*' of main lists nothing"
	"$tool" record --list -f 'sw_*' -- env -- LD_LIBRARY_PATH="$dir/lib" "$dir/lib/bare" \
		>"$dir/env.list" 2>"$dir/list.err" || { cat "$dir/list.err" >&2; fail "--list through env"; }
	tr '\t' ' ' <"$dir/env.list" | sed 's/^bare+/main+/; s/ bare / main /' | diff "$dir/direct.list" - >&2 ||
		fail "--list through env: not the program's list"
	# env given an option is listed as it is, named
	"$tool" record --list -f 'sw_*' -- env -i LD_LIBRARY_PATH="$dir/lib" "$dir/lib/bare" \
		>"$dir/env.list" 2>"$dir/list.err" || true
	grep -q "would be patched.*in $(readlink -f "$(command -v env)") and its libraries" "$dir/list.err" ||
		fail "--list of env -i does not name env: $(cat "$dir/list.err")"
	;;
lz4)
	lz4=$(command -v lz4) ||
		{ echo "skipped: no lz4 here (Debian: apt-get install lz4)" >&2; exit 77; }
	python3 -c '
import random, sys
r = random.Random(32)
words = [bytes(r.choice(b"abcdefghij") for _ in range(r.randint(2, 9))) for _ in range(500)]
sys.stdout.buffer.write(b" ".join(r.choice(words) for _ in range(400000)))' >"$dir/in"
	lz4 -q -f "$dir/in" "$dir/plain.lz4"
	list "$lz4" -f '*' >"$dir/s.list"
	own=$(grep -c '^lz4+0x[0-9a-f]* lz4 0x[0-9a-f]* [0-9]*$' "$dir/s.list" || true)
	[ "$own" -ge 100 ] || fail "--list -f '*' gives $own of lz4's own functions: $(cat "$dir/s.list")"
	# all in .text: none of the PLT's stubs (they jump on to the C library's)
	readelf -SW "$lz4" | sed 's/^ *\[ *[0-9]*\]//' | awk '$1 == ".text" {print $3, $5}' >"$dir/text"
	read -r text_at text_size <"$dir/text" || fail "no .text in $lz4"
	python3 -c '
import sys
at, size = int(sys.argv[2], 16), int(sys.argv[3], 16)
bad = [l for l in open(sys.argv[1]) if l.split()[1] == "lz4" and not at <= int(l.split()[2], 16) < at + size]
sys.exit("".join(bad) or None)' \
		"$dir/s.list" "$text_at" "$text_size" || fail "--list -f '*' gives lz4 functions outside its .text"
	for run in "-f $dir/in $dir/rec.lz4" "-d -f $dir/plain.lz4 $dir/rec.out"; do
		# shellcheck disable=SC2086 # (the words of the run)
		(cd "$dir" && TICKTRACE_LOG=stderr "$tool" record -f '*' -o t.ttr -c t.json --force -- \
			"$lz4" -q $run 2>err) ||
			{ cat "$dir/err" >&2; fail "record -f '*' -- lz4 $run"; }
		patched=$(sed -n 's/^ticktrace: patched \([0-9]*\) functions.*/\1/p' "$dir/err")
		[ "${patched:-0}" -ge 100 ] || { cat "$dir/err" >&2; fail "lz4 $run: patched ${patched:-none}"; }
		calls "$dir/t.json" | grep '^lz4+0x' >"$dir/lz4.calls" || fail "lz4 $run: none of its calls recorded"
		[ "$(wc -l <"$dir/lz4.calls")" -ge 5 ] || fail "lz4 $run recorded $(cat "$dir/lz4.calls")"
		while read -r name count; do
			grep -q "^$name lz4 " "$dir/s.list" || fail "lz4 $run: $name is not a name --list gave"
		done <"$dir/lz4.calls"
	done
	cmp "$dir/plain.lz4" "$dir/rec.lz4" || fail "lz4's compressed output is not the plain run's"
	cmp "$dir/in" "$dir/rec.out" || fail "lz4's decompressed output is not the input"
	;;
*)
	fail "no case $case_"
	;;
esac
[ -z "$(ls -A "$dir/tmp")" ] || fail "record left $(ls -A "$dir/tmp") in TMPDIR"
