#!/usr/bin/env python3
"""A Windows program whose functions record their calls (under Wine), its file
converted on Linux: built with -finstrument-functions (instrumented.exe), one call of
main around three of middle, each around one of leaf; or calling MSVC's _penter and
_pexit (hooked.exe), three calls of tt_hooked, each around one of tt_hooked_leaf, and
three of tt_hooked_half. Each function named by the tools on Linux from the .exe's
COFF symbol table (tools/read/pe.c), in convert's trace and in report's profile; a
static function the symbol table lacks (linked with --discard-all) from the DWARF,
else (no DWARF either) by its offset, never after the symbol before it.

    instrumented.py WRAPPER EXE [--drive-c] NAME=CALLS...

--drive-c: run as Wine's drive C: names it (a copy in the prefix's drive_c, $WINEPREFIX
or ~/.wine), converted elsewhere: found through the prefix's dosdevices link.

NAME=CALLS: each function and its calls (main=1 middle=3 leaf=3); NAME=CALLSxK with
NAME a pattern (fnmatch): K functions so named, each of CALLS calls.

The Linux `ticktrace` as recorder.py finds it; without it, or Wine, exit 77."""
import contextlib
import fnmatch
import json
import os
import shutil
import sys
import tempfile
from collections import Counter

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, run, tool  # noqa: E402


def matches(calls, want):
    """Each function's calls as `want` says: a name's own, or a pattern's K functions."""
    left = dict(calls)
    for name, count in want.items():
        n, _, k = count.partition("x")
        named = [f for f in left if fnmatch.fnmatchcase(f, name)] if k else [name]
        if len(named) != int(k or 1) or any(left.get(f) != int(n) for f in named):
            return False
        for f in named:
            del left[f]
    return not left


def copied_to_drive_c(wrapper, exe, scratch, stack):
    """`exe` copied into Wine's drive C: (a directory removed as `stack` closes): its
    path there, as Windows names it."""
    run([wrapper, "cmd", "/c", "exit"], cwd=scratch)  # (the prefix made, on its first use)
    prefix = os.environ.get("WINEPREFIX") or os.path.expanduser("~/.wine")
    drive = os.path.join(prefix, "drive_c")
    if not os.path.isdir(drive):
        print(f"instrumented: no Wine drive C: at {drive}: not run", file=sys.stderr)
        sys.exit(77)
    where = stack.enter_context(tempfile.TemporaryDirectory(prefix="tt-win-drive-c-", dir=drive))
    shutil.copy(exe, where)
    return "C:\\" + os.path.basename(where) + "\\" + os.path.basename(exe)


def main():
    clean_on_term()
    wrapper, exe = sys.argv[1:3]
    drive_c = sys.argv[3:4] == ["--drive-c"]
    want = {name: calls for name, calls in (a.split("=") for a in sys.argv[3 + drive_c:])}
    exe = os.path.abspath(exe)
    program = os.path.basename(exe)
    ticktrace = tool()
    with tempfile.TemporaryDirectory(prefix="tt-win-instrumented-") as d, contextlib.ExitStack() as stack:
        env = dict(os.environ, TICKTRACE_OUT="instrumented.ttr")
        if drive_c:
            exe = copied_to_drive_c(wrapper, exe, d, stack)
        run([wrapper, exe], env=env, cwd=d)
        ttr, out = os.path.join(d, "instrumented.ttr"), os.path.join(d, "instrumented.json")
        run([ticktrace, "convert", ttr, "-o", out])
        events = json.load(open(out))
        events = events["traceEvents"] if isinstance(events, dict) else events
        slices = sorted((e for e in events if e["ph"] == "X"), key=lambda e: (e["ts"], -e["dur"]))
        calls = Counter(e["name"] for e in slices)
        if not matches(calls, want):
            fail(f"{ttr}: calls {dict(calls)}, not {want} (named from {program})")
        report = run([ticktrace, "report", ttr]).stdout
        rows = {line.split()[0]: int(line.split()[1]) for line in report.splitlines()[2:]
                if len(line.split()) > 1 and line.split()[1].isdigit()}
        if not matches(rows, want):
            fail(f"{ttr}: report's rows {rows}, not {want}:\n{report}")

        def within(i, h):
            return h["ts"] <= i["ts"] and i["ts"] + i["dur"] <= h["ts"] + h["dur"]

        # two functions of three calls, each call of one within a call of the other
        threes = [n for n, c in calls.items() if c == 3]
        pairs = [(a, b) for a in threes for b in threes if a != b and all(
            any(within(i, h) for h in slices if h["name"] == a)
            for i in slices if i["name"] == b)]
        if not pairs:
            fail(f"{ttr}: no function's calls lie within another's: {slices}")
        a, b = pairs[0]
        # one of a single call (main) holds all the others
        for name in (n for n, c in calls.items() if c == 1):
            outer = next(e for e in slices if e["name"] == name)
            if not all(within(e, outer) for e in slices):
                fail(f"{ttr}: a call lies outside {name}'s")
        print(f"{program}: {dict(calls)}; {a} around {b}")


if __name__ == "__main__":
    main()
