#!/usr/bin/env python3
"""A Windows program built with -finstrument-functions (instrumented.exe under Wine),
its file converted on Linux: one call of main around three of middle, each around one
of leaf, every one a function of the program (named by its offset in the .exe: the
tools do not read PE files yet).

    instrumented.py WRAPPER INSTRUMENTED.EXE

The Linux `ticktrace` as recorder.py finds it; without it, or Wine, exit 77."""
import json
import os
import sys
import tempfile
from collections import Counter

sys.path.insert(0, os.path.dirname(__file__))
from recorder import fail, run, tool  # noqa: E402


def main():
    wrapper, exe = sys.argv[1:3]
    exe = os.path.abspath(exe)
    ticktrace = tool()
    with tempfile.TemporaryDirectory(prefix="tt-win-instrumented-") as d:
        env = dict(os.environ, TICKTRACE_OUT="instrumented.ttr")
        run([wrapper, exe], env=env, cwd=d)
        ttr, out = os.path.join(d, "instrumented.ttr"), os.path.join(d, "instrumented.json")
        run([ticktrace, "convert", ttr, "-o", out])
        events = json.load(open(out))
        events = events["traceEvents"] if isinstance(events, dict) else events
        slices = sorted((e for e in events if e["ph"] == "X"), key=lambda e: (e["ts"], -e["dur"]))
        calls = Counter(e["name"] for e in slices)
        if sorted(calls.values()) != [1, 3, 3] or not all("instrumented.exe+0x" in n for n in calls):
            fail(f"{ttr}: calls {dict(calls)}: not one main and three of middle and leaf")
        main_name = next(n for n, c in calls.items() if c == 1)
        outer = next(e for e in slices if e["name"] == main_name)
        # each of the three middles holds a leaf; all lie within main
        threes = [n for n, c in calls.items() if c == 3]
        for a, b in (threes, threes[::-1]):
            inner = [e for e in slices if e["name"] == b]
            holders = [e for e in slices if e["name"] == a]
            if all(any(h["ts"] <= i["ts"] and i["ts"] + i["dur"] <= h["ts"] + h["dur"]
                       for h in holders) for i in inner):
                break
        else:
            fail(f"{ttr}: no function's calls lie within the other's: {slices}")
        for e in slices:
            if not (outer["ts"] <= e["ts"] and e["ts"] + e["dur"] <= outer["ts"] + outer["dur"]):
                fail(f"{ttr}: {e['name']} lies outside main")
        print(f"main {main_name}, {a} around {b}, three times")


if __name__ == "__main__":
    main()
