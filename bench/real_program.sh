#!/usr/bin/env bash
# A real program nobody here wrote, instrumented with -finstrument-functions: Lua 5.4
# from Debian's sources, built with Debian's compiler flags, timed on a script that
# calls small functions all the time (the worst case for a per-call recorder):
#   plain          no instrumentation
#   glibc-hooks    -finstrument-functions, glibc's empty __cyg_profile_func_* hooks
#   off            the same objects linked with ticktrace, TICKTRACE=0
#   default        ticktrace's defaults: mode stop, its buffer fills and the rest drops
#   kept           every event kept (TICKTRACE_MODE=stream)
# Prints the median of --repeats runs of each, and the ratios issue 12 asks for.
#
#   bench/real_program.sh BUILD_DIR [REPEATS]
# Needs deb-src in apt's sources (apt-get source); works in $TT_REAL_DIR
# (default ~/.cache/ticktrace/real).
set -euo pipefail
build=$(realpath "${1:?usage: real_program.sh BUILD_DIR [REPEATS]}")
repeats=${2:-5}
work=${TT_REAL_DIR:-$HOME/.cache/ticktrace/real}
mkdir -p "$work"
cd "$work"
if [ ! -d lua5.4-*/src ]; then
	apt-get source -qq lua5.4 >/dev/null 2>&1 || { echo "real_program.sh: apt-get source lua5.4 failed (deb-src?)" >&2; exit 1; }
fi
src=$(echo "$work"/lua5.4-*/src)
echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' >"$src/lua5.4-deb-multiarch.h"
cflags="$(dpkg-buildflags --get CFLAGS) -DLUA_COMPAT_5_3 -DLUA_USE_POSIX -DLUA_USE_DLOPEN"
for kind in plain instr; do
	extra=; [ "$kind" = instr ] && extra=-finstrument-functions
	mkdir -p "obj-$kind"
	for f in "$src"/*.c; do
		case $f in */luac.c) continue ;; esac
		o="obj-$kind/$(basename "${f%.c}").o"
		[ "$o" -nt "$f" ] || gcc $cflags $extra -I"$src" -c "$f" -o "$o"
	done
done
gcc obj-plain/*.o -o lua-plain -lm -ldl
gcc obj-instr/*.o -o lua-glibc-hooks -lm -ldl
gcc obj-instr/*.o -o lua-ticktrace -lm -ldl -L"$build/src" -lticktrace -Wl,-rpath,"$build/src"

cat >work.lua <<'LUA'
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local t = {}
for i = 1, 200000 do t[i] = tostring((i * 7919) % 100003) end
table.sort(t)
print(fib(27), #t)
LUA

# The median wall time of `repeats` runs of a command, in seconds.
median() {
	local times=()
	for _ in $(seq "$repeats"); do
		local t0 t1
		t0=$(date +%s%N)
		env "$@" >/dev/null 2>>"$work/stderr"
		t1=$(date +%s%N)
		times+=($(( t1 - t0 )))
	done
	printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]/1e9}'
}
: >"$work/stderr"
out=$(mktemp -d)
plain=$(median ./lua-plain work.lua)
hooks=$(median ./lua-glibc-hooks work.lua)
off=$(median TICKTRACE=0 ./lua-ticktrace work.lua)
default=$(median TICKTRACE_OUT="$out/default.ttr" ./lua-ticktrace work.lua)
kept=$(median TICKTRACE_MODE=stream TICKTRACE_OUT="$out/kept.ttr" ./lua-ticktrace work.lua)
rm -rf "$out"
printf 'lua5.4 %s, median of %d runs (s): plain %s, glibc hooks %s, TICKTRACE=0 %s, default (stop) %s, every event kept (stream) %s\n' \
	"$(basename "$(dirname "$src")")" "$repeats" "$plain" "$hooks" "$off" "$default" "$kept"
awk -v h="$hooks" -v o="$off" -v d="$default" -v k="$kept" 'BEGIN {
	printf "TICKTRACE=0 / glibc hooks: %.2f (target <= 1.5); default / every event kept: %.2f (target <= 1)\n", o / h, d / k }'
echo "the default run said at exit:"
grep -m2 'ticktrace:' "$work/stderr" || echo "(nothing)"
