#!/usr/bin/env bash
# zero_markup_cpu_ratio: a real program nobody here wrote, Lua 5.4 from Debian's sources
# (the upstream tarball of `apt-get source lua5.4`), built with its own Makefile
# (`make linux`, whose link line puts LDFLAGS before the objects) three ways:
#   plain     Debian's compiler flags alone
#   zero      plus the flags of the installed ticktrace-instrument.pc: CFLAGS from
#             --cflags, LDFLAGS from --libs (so in the LDFLAGS-first order); run with
#             ticktrace's default settings, and again with TICKTRACE_LIBCALLS=0
#             (its library calls not recorded: what recording them costs)
#   uftrace   plus -pg, run under `uftrace record` with its defaults
# and timed in the same run on a script that calls small functions all the time (the
# worst case for a per-call recorder): the CPU time (user + system, the children's
# included: ticktrace's threads, uftrace's writers) of each, the median of REPEATS runs,
# the three in turns. Each zero-markup run must leave a trace naming Lua's functions.
# And what a zero-markup process costs to start and end (a test suite of many small
# runs pays it each time): `lua -e ''` 20 times in a row, plain and zero-markup, in
# turns, REPEATS times; the difference of the medians of their CPU time a process.
#
#   bench/real_program.sh BUILD_DIR [REPEATS] [--starts] [--json FILE|-]
#
# --starts: zero_markup_start_ms alone (no uftrace, no work.lua runs: a minute, not five).
#
# --json writes {"zero_markup_cpu_ratio": ..., "uftrace_cpu_ratio": ..., "zero_markup_start_ms": ...,
# ...} (ticktrace-bench
# runs it so and takes its keys). Exits 77 when it cannot run here (no deb-src, no
# uftrace, a sanitizer build), saying why. BUILD_DIR is installed into a scratch root;
# the sources and the plain and -pg builds are kept in $TT_REAL_DIR (default
# ~/.cache/ticktrace/real), the zero-markup build is made again each run.
set -euo pipefail
usage="usage: real_program.sh BUILD_DIR [REPEATS] [--starts] [--json FILE|-]"
build=$(realpath "${1:?$usage}")
shift
repeats=5 json= starts_only=
while [ $# -gt 0 ]; do
	case $1 in
	--json) json=${2:?$usage}; shift 2 ;;
	--starts) starts_only=1; shift ;;
	[0-9]*) repeats=$1; shift ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
here=$(dirname "$(realpath "$0")")
skip() { echo "real_program.sh: skipped: $*" >&2; exit 77; }
[ -n "$starts_only" ] || command -v uftrace >/dev/null || skip "no uftrace to compare with"
sanitize=$(meson introspect --buildoptions "$build" 2>/dev/null |
	python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "b_sanitize"))')
# ticktrace's default settings: none of the caller's (ticktrace-bench sets its own)
unset $(env | sed -n 's/^\(TICKTRACE[A-Z_]*\)=.*/\1/p')
# (scratch_install says why and exits 77 for a sanitizer build; it leaves the shell in $root)
. "$here/../tests/install/scratch_install.sh"
scratch_install "$build" "$sanitize" >&2

work=${TT_REAL_DIR:-$HOME/.cache/ticktrace/real}
mkdir -p "$work"
exec 9>"$work/lock"
flock 9 # one run at a time in the cache
cd "$work"
if ! ls lua5.4_*.orig.tar.gz >/dev/null 2>&1; then
	apt-get source -qq --download-only lua5.4 >/dev/null 2>&1 ||
		skip "apt-get source lua5.4 failed (deb-src in apt's sources?)"
fi
tarball=$(ls lua5.4_*.orig.tar.gz | head -n 1)
version=${tarball#lua5.4_}
version=${version%.orig.tar.gz}
debian_cflags="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
debian_ldflags=$(dpkg-buildflags --get LDFLAGS)
# make_lua KIND CFLAGS LDFLAGS: Lua's Makefile in a fresh copy of the tarball's tree.
make_lua() {
	rm -rf "$1"
	mkdir "$1"
	tar xzf "$tarball" -C "$1" --strip-components=1
	nice make -s -C "$1" linux MYCFLAGS="$2" MYLDFLAGS="$3" >"$1.log" 2>&1 ||
		{ cat "$1.log" >&2; echo "real_program.sh: building Lua ($1) failed" >&2; exit 1; }
}
[ -x plain/src/lua ] || make_lua plain "$debian_cflags" "$debian_ldflags"
[ -n "$starts_only" ] || [ -x pg/src/lua ] || make_lua pg "$debian_cflags -pg" "$debian_ldflags -pg"
make_lua zero "$debian_cflags $(pkg-config --cflags ticktrace-instrument)" \
	"$debian_ldflags $(pkg-config --libs ticktrace-instrument)"

cat >work.lua <<'LUA'
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local t = {}
for i = 1, 200000 do t[i] = tostring((i * 7919) % 100003) end
table.sort(t)
print(fib(27), #t)
LUA
runs=$root/runs
mkdir -p "$runs"
# cpu CMD...: the CPU seconds (user + system, waited-for children included) of one run in
# $runs, the program's output checked against the plain build's.
cpu() {
	local TIMEFORMAT='%3U %3S' times
	times=$( { time (cd "$runs" && "$@" >"$root/out" 2>>"$root/stderr"); } 2>&1) ||
		{ cat "$root/stderr" >&2; echo "real_program.sh: $* failed" >&2; exit 1; }
	[ ! -s "$root/expected" ] || cmp -s "$root/out" "$root/expected" ||
		{ echo "real_program.sh: $* printed other output than the plain build" >&2; exit 1; }
	echo "$times" | awk '{printf "%.3f\n", $1 + $2}'
}
median() { sort -n | awk '{a[NR] = $1} END {printf "%.3f", a[int((NR + 1) / 2)]}'; }
# start_ms CMD...: the CPU milliseconds a process of CMD (which does nothing) takes,
# over $starts runs in a row in $root/starts (their traces left there)
starts=20
start_ms() {
	local TIMEFORMAT='%3U %3S' times
	times=$( { time (cd "$root/starts" && for _ in $(seq $starts); do
		"$@" >/dev/null 2>>"$root/stderr" || exit 1
	done); } 2>&1) || { cat "$root/stderr" >&2; echo "real_program.sh: $* failed" >&2; exit 1; }
	echo "$times" | awk -v n=$starts '{printf "%.3f\n", ($1 + $2) * 1000 / n}'
}
mkdir -p "$root/starts"
: >"$root/expected"
(cd "$runs" && "$work/plain/src/lua" "$work/work.lua" >"$root/expected")
plain=() zero=() nolib=() uft=() plain_start=() zero_start=()
for _ in $(seq "$repeats"); do
	if [ -z "$starts_only" ]; then
		plain+=("$(cpu "$work/plain/src/lua" "$work/work.lua")")
		zero+=("$(cpu env LD_LIBRARY_PATH="$libdir" "$work/zero/src/lua" "$work/work.lua")")
		nolib+=("$(cpu env LD_LIBRARY_PATH="$libdir" TICKTRACE_LIBCALLS=0 \
			"$work/zero/src/lua" "$work/work.lua")")
		uft+=("$(cpu uftrace record -d "$runs/uftrace.data" "$work/pg/src/lua" "$work/work.lua")")
	fi
	plain_start+=("$(start_ms env LD_LIBRARY_PATH="$libdir" "$work/plain/src/lua" -e '')")
	zero_start+=("$(start_ms env LD_LIBRARY_PATH="$libdir" "$work/zero/src/lua" -e '')")
done
ps=$(printf '%s\n' "${plain_start[@]}" | median)
zs=$(printf '%s\n' "${zero_start[@]}" | median)
sr=$(awk -v z="$zs" -v p="$ps" 'BEGIN {printf "%.3f", z - p}')
starts_line="zero_markup_start_ms $sr: a process that does nothing (lua -e '') took $zs ms of CPU, $ps ms plain (medians of $repeats rounds of $starts)"
# json KEY VALUE ...: the result, to --json's FILE or stdout
json() {
	local result
	result=$(printf '"%s": %s, ' "$@")
	result="{${result%, }}"
	case $json in
	'') ;;
	-) echo "$result" ;;
	*) echo "$result" >"$json" ;;
	esac
}
if [ -n "$starts_only" ]; then
	ls "$root/starts"/*.ttr >/dev/null 2>&1 ||
		{ cat "$root/stderr" >&2; echo "real_program.sh: the zero-markup build wrote no trace" >&2; exit 1; }
	echo "$starts_line" >&2
	json zero_markup_start_ms "$sr"
	exit 0
fi
# the zero-markup build recorded Lua's own functions (its last run's file)
trace=$(ls "$runs"/*.ttr 2>/dev/null | head -n 1)
[ -n "$trace" ] || { cat "$root/stderr" >&2; echo "real_program.sh: the zero-markup build wrote no trace" >&2; exit 1; }
"$build/tools/ticktrace" report "$trace" >"$root/report" 2>&1 &&
	grep -q 'luaV_execute' "$root/report" ||
	{ cat "$root/report" >&2; echo "real_program.sh: luaV_execute is not in the zero-markup trace" >&2; exit 1; }
p=$(printf '%s\n' "${plain[@]}" | median)
z=$(printf '%s\n' "${zero[@]}" | median)
n=$(printf '%s\n' "${nolib[@]}" | median)
u=$(printf '%s\n' "${uft[@]}" | median)
zr=$(awk -v z="$z" -v p="$p" 'BEGIN {printf "%.3f", z / p}')
ur=$(awk -v u="$u" -v p="$p" 'BEGIN {printf "%.3f", u / p}')
nr=$(awk -v n="$n" -v p="$p" 'BEGIN {printf "%.3f", n / p}')
{
	echo "lua $version, Lua's Makefile, CPU seconds, medians of $repeats runs: plain $p, zero-markup $z" \
		"($n with TICKTRACE_LIBCALLS=0), uftrace record (-pg) $u"
	echo "zero_markup_cpu_ratio $zr (target <= 1.5 and <= uftrace's $ur); without the library calls $nr"
	echo "$starts_line"
	echo "the zero-markup run said at exit (in its log beside the trace, TICKTRACE_LOG):"
	cat "$root/stderr" "$runs"/*.log 2>/dev/null | grep -m3 'ticktrace:' || echo "(nothing)"
} >&2
json zero_markup_cpu_ratio "$zr" uftrace_cpu_ratio "$ur" zero_markup_no_libcalls_cpu_ratio "$nr" \
	real_plain_cpu_s "$p" zero_markup_start_ms "$sr"
