#!/usr/bin/env python3
"""Programs whose threads end without exit() (ending.exe under Wine, with the DLL and
the static library): ticktrace's own threads kept such a process alive forever, with
no trace written (issue 34, D10, D24).

overflow:   main's stack overflows: the process ends, its file says the run crashed
            of a stack overflow (the handler overflowed the stack again before).
exitthread: main leaves by ExitThread and the last worker ends: the process ends,
            its file holds main's scope and the worker's 20.

    ending.py WRAPPER ENDING.EXE ENDING_STATIC.EXE"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, run, tool, wine_path  # noqa: E402


def program(wrapper, exe, d, ttr, how):
    env = dict(os.environ, TICKTRACE_OUT=wine_path(ttr), WINEDLLOVERRIDES="winedbg.exe=d")
    try:
        p = subprocess.run([wrapper, exe, how], env=env, cwd=d, capture_output=True, text=True,
                           timeout=120)
    except subprocess.TimeoutExpired:
        fail(f"{os.path.basename(exe)} {how}: still running after 120 s (its threads all ended)")
    if p.returncode == 77:
        print(p.stderr, end="", file=sys.stderr)
        sys.exit(77)
    if not os.path.exists(ttr):
        fail(f"{os.path.basename(exe)} {how}: exit {p.returncode}, no {ttr}\n{p.stderr}")


def main():
    clean_on_term()
    wrapper = sys.argv[1]
    ticktrace = tool()
    with tempfile.TemporaryDirectory(prefix="tt-win-ending-") as d:
        for exe in map(os.path.abspath, sys.argv[2:4]):
            name = os.path.basename(exe)
            ttr = os.path.join(d, f"{name}-overflow.ttr")
            program(wrapper, exe, d, ttr, "overflow")
            info = run([ticktrace, "info", ttr]).stdout
            if "the run crashed (exception 0xC00000FD (stack overflow))" not in info:
                fail(f"{name} overflow: the file does not say the stack overflowed:\n{info}")
            ttr = os.path.join(d, f"{name}-exitthread.ttr")
            program(wrapper, exe, d, ttr, "exitthread")
            report = run([ticktrace, "report", ttr]).stdout
            calls = dict(re.findall(r"^(main-part|work) +(\d+) ", report, re.M))
            if calls != {"main-part": "1", "work": "20"}:
                fail(f"{name} exitthread: calls {calls}, not main-part 1, work 20:\n{report}")
            print(f"{name}: the overflow written and the process ended; ExitThread's run "
                  "ended with its last thread, written")


if __name__ == "__main__":
    main()
