#!/bin/sh
# The README's Windows example with Wine in Windows' place, run as a user would, line by
# line, from a directory laid out as the source tree (include/, src/, build/, build-win/),
# with readme_app.c as its app.c: each line ends well, app.exe records its scope and
# finds Wine started without address-space randomisation (its README ran wine64
# itself: about one start in 600 the heap lay over Wine's shared user data and the
# program exited 1, nothing said), and both conversions are written.
#
#   readme_wine.sh SOURCE_DIR BUILD_DIR README APP.C
#
# The Linux `ticktrace` (the README's build/): $TT_TEST_TOOL, else build/tools/ticktrace
# of the source tree; without it or Wine, exit 77.
set -eu
source_dir=$(cd "$1" && pwd) build=$(cd "$2" && pwd) readme=$3 app=$4
tool=${TT_TEST_TOOL:-$source_dir/build/tools/ticktrace}
if [ ! -x "$tool" ]; then
	echo "readme_wine.sh: no Linux ticktrace at $tool (set TT_TEST_TOOL): not run" >&2
	exit 77
fi
block=$(awk '/with Wine in Windows. place:/ { found = 1 } found && /^```sh$/ { inside = 1; next }
	inside && /^```$/ { exit } inside' "$readme")
[ -n "$block" ] || { echo "readme_wine.sh: $readme has no sh block after \"with Wine in Windows' place\"" >&2; exit 1; }
d=$(mktemp -d "${TMPDIR:-/tmp}/tt-win-readme.XXXXXX")
trap 'rm -rf "$d"' EXIT
trap 'exit 1' INT TERM
mkdir "$d/build" "$d/build/tools"
ln -s "$source_dir/include" "$d/include"
ln -s "$source_dir/src" "$d/src"
ln -s "$build" "$d/build-win"
ln -s "$tool" "$d/build/tools/ticktrace"
cp "$app" "$d/app.c"
cd "$d"
echo "$block" | while IFS= read -r line; do
	[ -n "$line" ] || continue
	rc=0
	sh -c "$line" </dev/null >out 2>err || rc=$?
	if [ "$rc" = 77 ]; then
		cat err >&2
		exit 77
	fi
	if [ "$rc" != 0 ]; then
		printf 'readme_wine.sh: the README'"'"'s line\n  %s\nexited %s:\n%s%s\n' "$line" "$rc" "$(cat out)" "$(cat err)" >&2
		exit 1
	fi
done
for f in app.pftrace app.json; do
	[ -s "$f" ] || { echo "readme_wine.sh: the README's example wrote no $f" >&2; exit 1; }
done
grep -q '"name":"app"' app.json || { echo "readme_wine.sh: app.json holds no scope app" >&2; exit 1; }
echo "the README's Windows example under Wine: app.exe recorded, Wine not randomised, both conversions written"
