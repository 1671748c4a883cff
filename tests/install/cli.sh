#!/bin/bash
# The command as a user meets it: --version; --help for every subcommand that
# 'ticktrace help' lists (status 0, its usage on stdout, nothing on stderr); the man
# pages (one section per subcommand in ticktrace(1), every public function of the
# headers in ticktrace(3), every page rendered by man without a warning); the bash
# completion (subcommands, options, values); and that both get installed.
#   cli.sh BUILD_ROOT VERSION HEADER...   (TT_TEST_TOOL: the ticktrace command)
set -euo pipefail
build=$1 version=$2
shift 2
tool=$TT_TEST_TOOL
src=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "cli: $*" >&2; exit 1; }

[ "$("$tool" --version)" = "ticktrace $version" ] || fail "--version: $("$tool" --version)"

commands=$("$tool" help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' | grep -vx help)
[ "$(echo "$commands" | wc -l)" -ge 5 ] || fail "help lists: $commands"
man1=$build/tools/man/ticktrace.1 man3=$build/tools/man/ticktrace.3
man5=$build/tools/man/ticktrace-format.5 man7=$build/tools/man/ticktrace.7
for cmd in $commands; do
	out=$("$tool" "$cmd" --help 2>"$build/cli.err") || fail "$cmd --help: status $?"
	[ ! -s "$build/cli.err" ] || fail "$cmd --help wrote to stderr: $(cat "$build/cli.err")"
	[[ $out == "usage: ticktrace $cmd "* ]] || fail "$cmd --help: $out"
	grep -q "^\.SS ticktrace $cmd\$" "$man1" || fail "ticktrace(1) has no section for $cmd"
	# every option of the help is completed
	for opt in $(echo "$out" | grep -oE -- '(^|[ ,])--[a-z][a-z-]*' | tr -d ' ,' | sort -u); do
		words=$(bash -c '. "$1"; COMP_WORDS=("$2" "$3" "${4:0:4}"); COMP_CWORD=2; _ticktrace;
			printf "%s\n" "${COMPREPLY[@]}"' _ "$src/tools/ticktrace.bash-completion" "$tool" \
			"$cmd" "$opt")
		grep -qx -- "$opt" <<<"$words" || fail "completion of '$cmd ${opt:0:4}' lacks $opt: $words"
	done
done
# issue 24 items 17, 18: 'help CMD' is CMD's help; a usage error is its message, the
# usage's first line and where to read more, not the whole help; a TIME needs a unit
# (a bare number other than 0, or nan, once passed); info takes -q as the others do
for cmd in $commands; do
	[ "$("$tool" help "$cmd")" = "$("$tool" "$cmd" --help)" ] || fail "help $cmd is not $cmd --help"
done
usage_error() { # ARGS...: status 2, and at most three lines on stderr
	set +e
	"$tool" "$@" >/dev/null 2>"$build/cli.err"
	local status=$?
	set -e
	[ $status = 2 ] || fail "$*: status $status: $(cat "$build/cli.err")"
	[ "$(wc -l <"$build/cli.err")" -le 3 ] || fail "$*: the whole help on a usage error: $(cat "$build/cli.err")"
	grep -q "^see ticktrace $1 --help\$" "$build/cli.err" || fail "$*: $(cat "$build/cli.err")"
}
usage_error convert x.ttr -o x.json --frobnicate
usage_error convert x.ttr -o x.json --from 1.5
usage_error convert x.ttr -o x.json --to nan
usage_error convert x.ttr -o x.json --threshold inf
usage_error flame x.ttr -o - --from 2
usage_error report x.ttr --frames --budget 16.6
set +e
"$tool" info -q "$build/no-such.ttr" 2>"$build/cli.err"
[ $? = 1 ] && grep -q "no-such.ttr: No such file" "$build/cli.err" || fail "info -q: $(cat "$build/cli.err")"
set -e

complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _ticktrace;
		printf "%s\n" "${COMPREPLY[@]}"' _ "$src/tools/ticktrace.bash-completion" "$tool" "$@"
}
[ "$(complete_words "" | grep -cxE "$(echo $commands | tr ' ' '|')")" = "$(echo "$commands" | wc -l)" ] ||
	fail "completion of the subcommands: $(complete_words "")"
[ "$(complete_words report --sort p9)" = "$(printf 'p95\np99')" ] || fail "completion of --sort p9"
[ "$(complete_words convert -F p)" = perfetto ] || fail "completion of -F p"
[ "$(complete_words flame -F s)" = svg ] || fail "completion of flame -F s: $(complete_words flame -F s)"
# record: -f takes a pattern (no file offered), after '--' comes a program
[ -z "$(cd "$build" && complete_words record -f "")" ] || fail "completion of record -f offers words"
# (captured first: with pipefail, grep -q leaving early would fail the writer with SIGPIPE)
words=$(complete_words record -f 'work_*' -- bas)
grep -qx bash <<<"$words" || fail "completion of record -- bas lacks bash: $words"
# lines reads a profile, any file: not only raw ones
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tt-test-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
touch "$tmp/profile.txt" "$tmp/run.ttr"
[ "$(cd "$tmp" && complete_words lines pro)" = profile.txt ] ||
	fail "completion of lines pro: $(cd "$tmp" && complete_words lines pro)"
[ "$(cd "$tmp" && complete_words info pro)" = "" ] || fail "completion of info offers a profile"
# every subcommand that reads a run looks for debug info where told
for cmd in convert info open report spikes flame lines diff; do
	help=$("$tool" "$cmd" --help)
	grep -q -- '--debug-dir DIR' <<<"$help" || fail "$cmd takes no --debug-dir"
done

# ticktrace(3): every public function and macro of the headers.
for name in $(grep -ohE '^(TT_API|TT__PROFILE_API) [^(]*\btt_[a-z_]+\(|^#define TT_[A-Z_]+' "$@" |
	grep -oE '\btt_[a-z_]+|TT_[A-Z_]+$' | grep -vE '^(TT_API|TT__.*|tt__.*)$' | sort -u); do
	grep -q -- "$(sed 's/_/\\\\_/g' <<<"$name")\|$name" "$man3" || fail "ticktrace(3) lacks $name"
done
for page in "$man1" "$man3" "$man5" "$man7"; do
	if ! command -v man >/dev/null; then
		echo "cli: no man command here (man-db): the pages' rendering is not checked" >&2
		break
	fi
	warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null) || fail "man $page: status $?"
	[ -z "$warnings" ] || fail "man $page: $warnings"
done

# Installed where man and bash-completion look.
installed=$(meson introspect "$build" --installed)
for want in share/man/man1/ticktrace.1 share/man/man3/ticktrace.3 \
	share/man/man5/ticktrace-format.5 share/man/man7/ticktrace.7 \
	share/bash-completion/completions/ticktrace share/ticktrace/query_shards.py; do
	grep -q "\"[^\"]*/$want\"" <<<"$installed" || fail "$want is not installed"
done
# ticktrace(1)'s one query over all shards names the script where it is installed
grep -q 'share/ticktrace/query_shards' "$man1" ||
	fail "ticktrace(1) does not say where query_shards.py is installed"
grep -q 'bin_path' "$man1" || fail "ticktrace(1)'s Python example needs the network (no bin_path)"

echo "cli: --version, --help of $(echo $commands), man pages, completion"
