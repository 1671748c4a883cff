# Sourced by tests/install/install_prefix.sh, subproject.sh and pkgconfig_meson.sh: runs the programs built
# from tests/consumers/use.c in DIR, converts each trace with $TT_TEST_TOOL, and checks
# what each target must have recorded. The loader must find libticktrace by itself, or
# in LIBDIR where one is given (a DESTDIR install, which no rpath can name).
#   check_use DIR [LIBDIR]
check_use() {
	dir=$1
	for prog in use-markup use-instrument use-wrap; do
		env -u LD_LIBRARY_PATH ${2:+LD_LIBRARY_PATH=$2} TICKTRACE_OUT="$dir/$prog.ttr" "$dir/$prog" || {
			echo "$dir/$prog failed (status $?)" >&2
			return 1
		}
		"$TT_TEST_TOOL" convert "$dir/$prog.ttr" -o "$dir/$prog.json" -q
	done
	expect() { grep -q "$2" "$dir/$1.json" || { echo "$1: no $2 in its trace" >&2; return 1; }; }
	expect use-markup '"ph":"X",[^}]*"name":"decode"'
	expect use-instrument '"ph":"X",[^}]*"name":"main"'
	expect use-instrument '"ph":"X",[^}]*"name":"decode"'
	expect use-wrap '"name":"malloc"'
	expect use-wrap '"name":"heap_live_bytes"'
	if grep -q '"name":"main"' "$dir/use-markup.json"; then
		echo "use-markup records functions: it was built with -finstrument-functions" >&2
		return 1
	fi
}
