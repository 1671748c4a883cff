#!/bin/sh
# wine-run's lock is its prefix's: the prefix made and its server started under a lock
# that every wine-run on that prefix takes, whichever checkout it is in and whatever
# path names the prefix (it was the script's own file: two checkouts, or CI and a
# developer, on one prefix raced to make it and start its server). Run with a Wine of
# the test's own, no Windows program: each step wine-run takes under its lock (wineboot,
# the server) asks whether the prefix's directory is locked.
#
#   wine_run_lock.sh WINE_RUN
set -eu
wine_run=$1
if ! command -v flock >/dev/null 2>&1; then
	echo "wine_run_lock.sh: no flock here (wine-run takes no lock without it): not run" >&2
	exit 77
fi
d=$(mktemp -d "${TMPDIR:-/tmp}/tt-wine-run-lock.XXXXXX")
trap 'rm -rf "$d"' EXIT
trap 'exit 1' INT TERM
mkdir "$d/bin" "$d/one" "$d/two"
cat >"$d/bin/wine64" <<'EOS'
#!/bin/sh
if [ "$1" != wineboot ]; then
	echo "ran $*" >>"$TT_LOG"
	exit 0
fi
if flock -n "$TT_PREFIX" true; then echo "unlocked: wine64 $*"; else echo "locked: wine64 $*"; fi >>"$TT_LOG"
[ "${2:-}" != -i ] || touch "$WINEPREFIX/system.reg"
EOS
cat >"$d/bin/wineserver" <<'EOS'
#!/bin/sh
if flock -n "$TT_PREFIX" true; then echo "unlocked: wineserver $*"; else echo "locked: wineserver $*"; fi >>"$TT_LOG"
EOS
chmod +x "$d/bin/wine64" "$d/bin/wineserver"
cp "$wine_run" "$d/one/wine-run"
cp "$wine_run" "$d/two/wine-run"
export TICKTRACE_WINE="$d/bin/wine64" TT_PREFIX="$d/prefix" TT_LOG="$d/log"
# A new prefix, by one checkout's wine-run; then by another's, through a link to it.
ln -s prefix "$d/link"
WINEPREFIX="$d/prefix" "$d/one/wine-run" first.exe
WINEPREFIX="$d/link" "$d/two/wine-run" second.exe
want="locked: wine64 wineboot -i
locked: wineserver -w
locked: wineserver -p60
locked: wine64 wineboot
ran first.exe
locked: wineserver -p60
locked: wine64 wineboot
ran second.exe"
if [ "$(cat "$d/log")" != "$want" ]; then
	printf 'wine_run_lock.sh: wine-run on one prefix from two checkouts did:\n%s\nnot:\n%s\n' \
		"$(cat "$d/log")" "$want" >&2
	exit 1
fi
echo "wine-run: the prefix made and its server started under the prefix's own lock, from either checkout"
