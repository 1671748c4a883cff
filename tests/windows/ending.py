#!/usr/bin/env python3
"""Programs whose threads end without exit() (ending.exe under Wine, with the DLL and
the static library): ticktrace's own threads kept such a process alive forever, with
no trace written (issue 34, D10, D24).

overflow:   main's stack overflows: the process ends, its file says the run crashed
            of a stack overflow (the handler overflowed the stack again before), and
            its exit status is the one it has without ticktrace (TICKTRACE=0: Wine's
            1; it was 0, the last thread's, as ticktrace's watch ended it: r50 #2).
exitthread: main leaves by ExitThread and the last worker ends: the process ends,
            its file holds main's scope and the worker's 20.
filter:     main's own top-level filter ends the process (a crash reporter's,
            EXCEPTION_EXECUTE_HANDLER) after an access violation: the file says the
            run crashed of it, the program's filter ran, the exit status is the one
            without ticktrace (the static library wrote no file: r50 #3).
raise:      an unhandled RaiseException: the file says so, the exit status is the
            one without ticktrace (0 once in 4 runs with the DLL: r50 #4).

    ending.py WRAPPER ENDING.EXE ENDING_STATIC.EXE"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, run, tool, wine_path  # noqa: E402


def program(wrapper, exe, d, ttr, how, **more):
    """Its run (subprocess's); `more`: the environment's additions (TICKTRACE=0: no file)"""
    env = dict(os.environ, TICKTRACE_OUT=wine_path(ttr), WINEDLLOVERRIDES="winedbg.exe=d", **more)
    try:
        p = subprocess.run([wrapper, exe, how], env=env, cwd=d, capture_output=True, text=True,
                           timeout=120)
    except subprocess.TimeoutExpired:
        fail(f"{os.path.basename(exe)} {how}: still running after 120 s (its threads all ended)")
    if p.returncode == 77:
        print(p.stderr, end="", file=sys.stderr)
        sys.exit(77)
    if not more and not os.path.exists(ttr):
        fail(f"{os.path.basename(exe)} {how}: exit {p.returncode}, no {ttr}\n{p.stderr}")
    return p


def same_end(wrapper, exe, d, ttr, how):
    """Its run with ticktrace; its exit status is the one without, and not 0"""
    p = program(wrapper, exe, d, ttr, how)
    plain = program(wrapper, exe, d, ttr + ".off", how, TICKTRACE="0").returncode
    if p.returncode != plain or plain == 0:
        fail(f"{os.path.basename(exe)} {how}: exit status {p.returncode} with ticktrace, "
             f"{plain} without")
    return p


def main():
    clean_on_term()
    wrapper = sys.argv[1]
    ticktrace = tool()
    with tempfile.TemporaryDirectory(prefix="tt-win-ending-") as d:
        for exe in map(os.path.abspath, sys.argv[2:4]):
            name = os.path.basename(exe)
            ttr = os.path.join(d, f"{name}-overflow.ttr")
            status = same_end(wrapper, exe, d, ttr, "overflow").returncode
            info = run([ticktrace, "info", ttr]).stdout
            if "the run crashed (exception 0xC00000FD (stack overflow))" not in info:
                fail(f"{name} overflow: the file does not say the stack overflowed:\n{info}")
            ttr = os.path.join(d, f"{name}-exitthread.ttr")
            program(wrapper, exe, d, ttr, "exitthread")
            report = run([ticktrace, "report", ttr]).stdout
            calls = dict(re.findall(r"^(main-part|work) +(\d+) ", report, re.M))
            if calls != {"main-part": "1", "work": "20"}:
                fail(f"{name} exitthread: calls {calls}, not main-part 1, work 20:\n{report}")
            for how, cause in (("filter", "0xC0000005 (access violation)"),
                               ("raise", "0xE0000001")):
                ttr = os.path.join(d, f"{name}-{how}.ttr")
                p = same_end(wrapper, exe, d, ttr, how)
                info = run([ticktrace, "info", ttr]).stdout
                if f"the run crashed (exception {cause}" not in info:
                    fail(f"{name} {how}: the file does not say exception {cause}:\n{info}")
                if how == "filter" and "own filter ran" not in p.stderr:
                    fail(f"{name} filter: the program's own filter did not run:\n{p.stderr}")
            print(f"{name}: the overflow written and the process ended, exit {status} as "
                  "without ticktrace, a program's filter's and RaiseException's too; "
                  "ExitThread's run "
                  "ended with its last thread, written")


if __name__ == "__main__":
    main()
