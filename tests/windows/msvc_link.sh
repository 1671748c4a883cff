#!/bin/sh
# A program built as MSVC builds one with /Gh /GH, linked as MSVC links it: its C for
# MSVC's ABI (clang --target=x86_64-pc-windows-msvc), hooked.asm's functions calling
# _penter and _pexit, linked by lld-link (MSVC's link.exe's options and inputs) with
# ticktrace.lib, the import library the Windows build installs for MSVC's linker; run
# under Wine, its calls recorded and counted by instrumented.py (named by offset: an
# MSVC build keeps its symbols in a PDB, which ticktrace does not read). Without clang,
# lld-link (Debian's lld) or NASM, exit 77.
#   msvc_link.sh WRAPPER TICKTRACE_LIB MINGW_CC MSVC_MAIN_C HOOKED_ASM INSTRUMENTED_PY
set -eu
wrapper=$1 lib=$2 mingw_cc=$3 main_c=$4 hooked_asm=$5 instrumented=$6
for tool in clang lld-link nasm; do
	command -v "$tool" >/dev/null || { echo "msvc_link: no $tool here (Debian: clang, lld, nasm): not run" >&2; exit 77; }
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trap 'exit 1' HUP INT TERM
clang --target=x86_64-pc-windows-msvc -ffreestanding -O1 -c "$main_c" -o "$dir/main.obj"
nasm -f win64 "$hooked_asm" -o "$dir/hooked.obj"
# (ExitProcess's import: mingw-w64's kernel32 import library, which lld-link reads too)
lld-link /nologo /entry:tt_msvc_start /subsystem:console /out:"$dir/msvc_hooked.exe" \
	"$dir/main.obj" "$dir/hooked.obj" "$lib" "$("$mingw_cc" -print-file-name=libkernel32.a)"
python3 "$instrumented" "$wrapper" "$dir/msvc_hooked.exe" 'msvc_hooked.exe+0x*=3x3'
