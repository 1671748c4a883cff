#!/bin/sh
# The Windows build as a user on Windows takes it: installed (meson install) into a
# scratch root, a small program built out of tree against what was installed alone
# (include/, bin/libticktrace.dll with lib/libticktrace.dll.a, or the static
# lib/libticktrace.a with TT_STATIC), each run under Wine with the installed bin/ as
# its path, its file converted on Linux.
#
#   install.sh BUILD_DIR SOURCE.c WINE_RUN README
#
# Installed by the README's own command (`meson install -C build-win --destdir ...`, run
# where build-win is BUILD_DIR), into the folder it names: each path the README lists
# there must be where it says.
#
# The Linux `ticktrace`: $TT_TEST_TOOL, else build/tools/ticktrace of the source tree;
# without it or Wine, exit 77.
set -eu
build=$1 source_file=$2 wine_run=$3 readme=$4
tool=${TT_TEST_TOOL:-$(dirname "$0")/../../build/tools/ticktrace}
if [ ! -x "$tool" ]; then
	echo "install.sh: no Linux ticktrace at $tool (set TT_TEST_TOOL): not run" >&2
	exit 77
fi
root=$(mktemp -d "${TMPDIR:-/tmp}/tt-win-install.XXXXXX")
trap 'rm -rf "$root"' EXIT
trap 'exit 1' INT TERM
install=$(tr '\n' ' ' <"$readme" | grep -o '`meson install -C build-win [^`]*`' | tr -d '`')
[ -n "$install" ] || { echo "install.sh: $readme names no meson install -C build-win" >&2; exit 1; }
cd "$root"
ln -s "$(cd "$build" && pwd)" build-win
eval "$install --no-rebuild --quiet"
for listed in $(tr '\n' ' ' <"$readme" | grep -o '`win/usr/local/[^`]*`' | tr -d '`'); do
	[ -e "$listed" ] || { echo "install.sh: the README's $listed is not there after its $install" >&2; exit 1; }
done
prefix="$root/win/usr/local"
dll=$prefix/bin/libticktrace.dll
header=$prefix/include/ticktrace.h
static=$prefix/lib/libticktrace.a
implib=$prefix/lib/libticktrace.dll.a
for f in "$dll" "$header" "$static" "$implib" "$(dirname "$header")/ticktrace/format.h"; do
	[ -f "$f" ] || { echo "install.sh: not installed: $f" >&2; exit 1; }
done
x86_64-w64-mingw32-gcc -std=c11 -Wall -Werror -O2 -o use-shared.exe "$source_file" -I"$(dirname "$header")" "$implib"
x86_64-w64-mingw32-gcc -std=c11 -Wall -Werror -O2 -DTT_STATIC -o use-static.exe "$source_file" -I"$(dirname "$header")" \
	"$static" -lpsapi -lsynchronization -ladvapi32
export WINEPATH="Z:$(dirname "$dll")"
for kind in shared static; do
	TICKTRACE_OUT=$kind.ttr "$wine_run" "./use-$kind.exe"
	"$tool" convert "$kind.ttr" -o "$kind.json" -q
	grep -q '"name":"decode"' "$kind.json" || { echo "install.sh: use-$kind.exe recorded no decode" >&2; exit 1; }
done
if x86_64-w64-mingw32-objdump -p use-static.exe | grep -qi 'DLL Name: libticktrace'; then
	echo "install.sh: use-static.exe imports libticktrace.dll" >&2
	exit 1
fi
echo "installed: shared and static builds record under Wine and convert on Linux"
