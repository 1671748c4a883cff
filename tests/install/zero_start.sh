#!/bin/sh
# The zero-markup build's start-up names nothing per function: every process of it
# found its functions' names with elfutils before main, which reads the module's whole
# symbol table for each address (dwfl_module_addrname for each NOP area, addrinfo for
# each .eh_frame function and each function patched): 80 ms of CPU for each zstd
# process. A program with 300 functions runs with elfutils' lookups counted (a preloaded
# shim): a few at most, never one per function. Names are made only when the runtime
# asks (its report at exit), and they are the converter's: a global alias before the
# static function it names, a weak one before a local.
#   zero_start.sh BUILD_DIR SANITIZE  (TT_TEST_TOOL: the ticktrace command)
set -eu
. "$(dirname "$0")/scratch_install.sh"
scratch_install "$1" "${2:-none}"
functions=300
{
	echo '#include <stdio.h>'
	for i in $(seq $functions); do
		echo "static __attribute__((noinline)) int step$i(int x) { __asm__ volatile(\"\" : \"+r\"(x)); return x + $i; }"
	done
	echo 'extern int global_alias(int) __attribute__((alias("step7")));'
	echo 'extern int weak_alias(int) __attribute__((weak, alias("step8")));'
	echo 'int main(void)'
	echo '{'
	echo '	int x = 0;'
	for i in $(seq $functions); do
		echo "	x = step$i(x);"
	done
	printf '\tprintf("%%d\\n", x);\n'
	echo '	return 0;'
	echo '}'
} >many.c
cat >count.c <<'SHIM'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
static unsigned long lookups;
typedef const char *addrinfo_fn(void *, uint64_t, void *, void *, void *, void *, void *);
typedef const char *addrsym_fn(void *, uint64_t, void *, void *);
typedef const char *addrname_fn(void *, uint64_t);
#define REAL(name, type) \
	static type *real; \
	if (!real) \
		real = (type *)dlsym(RTLD_NEXT, name); \
	__atomic_add_fetch(&lookups, 1, __ATOMIC_RELAXED)
const char *dwfl_module_addrinfo(void *mod, uint64_t at, void *off, void *sym, void *shndx, void *elf,
				 void *bias)
{
	REAL("dwfl_module_addrinfo", addrinfo_fn);
	return real(mod, at, off, sym, shndx, elf, bias);
}
const char *dwfl_module_addrsym(void *mod, uint64_t at, void *sym, void *shndx)
{
	REAL("dwfl_module_addrsym", addrsym_fn);
	return real(mod, at, sym, shndx);
}
const char *dwfl_module_addrname(void *mod, uint64_t at)
{
	REAL("dwfl_module_addrname", addrname_fn);
	return real(mod, at);
}
__attribute__((destructor)) static void said(void)
{
	fprintf(stderr, "elfutils lookups: %lu\n", lookups);
}
SHIM
gcc -std=c11 -O2 -fPIC -shared -o count.so count.c -ldl
gcc -std=c11 -O2 -g -o many many.c $(pkg-config --cflags --libs ticktrace-instrument)
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
expected=$((functions * (functions + 1) / 2))
LD_PRELOAD=$root/count.so LD_LIBRARY_PATH=$libdir TICKTRACE_OUT=$root/start.ttr ./many >start.out 2>start.err ||
	{ cat start.err >&2; fail "the program exits $?"; }
[ "$(cat start.out)" = "$expected" ] || fail "the program printed $(cat start.out), not $expected"
lookups=$(sed -n 's/^elfutils lookups: //p' start.err)
[ -n "$lookups" ] || { cat start.err >&2; fail "the shim counted nothing (not preloaded?)"; lookups=0; }
[ "$lookups" -lt 10 ] ||
	fail "$functions patched functions cost $lookups of elfutils' lookups by address (each reads the whole symbol table)"
# the names, asked for at exit, as the converter gives them
LD_PRELOAD=$root/count.so LD_LIBRARY_PATH=$libdir TICKTRACE_MIN_DUR=0 TICKTRACE_LIBCALLS=0 \
	TICKTRACE_REPORT=$root/report.txt TICKTRACE_OUT=$root/named.ttr ./many >/dev/null 2>named.err ||
	{ cat named.err >&2; fail "the program with TICKTRACE_REPORT exits $?"; }
lookups=$(sed -n 's/^elfutils lookups: //p' named.err)
[ "${lookups:-0}" -lt 10 ] || fail "naming the functions at exit cost $lookups of elfutils' lookups"
"$TT_TEST_TOOL" report named.ttr >converted.txt 2>converted.err || { cat converted.err >&2; fail "report fails"; }
for name in step1 step300 global_alias weak_alias main; do
	grep -q "^$name " report.txt || fail "the report at exit does not name $name"
	grep -q "^$name " converted.txt || fail "ticktrace report does not name $name"
done
for name in step7 step8; do
	! grep -q "^$name " report.txt || fail "the report at exit names $name, which the converter calls by its alias"
done
names() { awk 'NR > 1 && $1 ~ /^[a-z_0-9]+$/ {print $1}' "$1" | sort; }
names report.txt >at_exit.names
names converted.txt >converted.names
cmp -s at_exit.names converted.names ||
	{ diff at_exit.names converted.names >&2 || true; fail "the report at exit and the converter name the functions otherwise"; }
[ "$(wc -l <at_exit.names)" -ge $functions ] || fail "the report at exit names $(wc -l <at_exit.names) functions"
[ "$failures" = 0 ] || exit 1
echo "ok: $functions functions patched with $lookups lookups; the names at exit are the converter's"
