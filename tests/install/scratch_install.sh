# Sourced by tests/install/link_order.sh, after_inlining.sh, pkgconfig_build.sh and pkgconfig_meson.sh: skips (77) a sanitizer
# build, installs BUILD_DIR into a scratch root removed at exit ($root), and points
# pkg-config at it; $libdir is where the libraries are, and the shell is in $root.
#   scratch_install BUILD_DIR SANITIZE
scratch_install() {
	if [ "${2:-none}" != none ]; then
		echo "skipped: the library is built with -fsanitize=$2, which an out-of-tree program" \
			"linked without it cannot load" >&2
		exit 77
	fi
	root=$(mktemp -d)
	trap 'rm -rf "$root"' EXIT
	trap 'exit 1' HUP INT TERM
	unset CFLAGS LDFLAGS LD_PRELOAD TICKTRACE_OUT TICKTRACE_MIN_DUR TICKTRACE_DETOUR
	# ticktrace's lines on stderr, where the tests read them (a zero-markup build's go
	# to a file beside the trace by default: zero_log.sh tests that)
	export TICKTRACE_LOG=stderr
	DESTDIR=$root/dest meson install -C "$1" --no-rebuild --quiet
	pc=$(dirname "$(find "$root/dest" -name ticktrace.pc | head -n 1)")
	export PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$root/dest
	libdir=$(dirname "$pc")
	cd "$root"
}
