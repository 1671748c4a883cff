#!/usr/bin/env python3
"""A program that exits (exit(3)) while its threads record, run again and again in each
mode under Wine (exiting.exe, with the DLL and the static library): ticktrace's own
threads are to have ended before ExitProcess ends what is left. exitcheck.dll looks, as
the process detaches, at every thread of the process that was neither main nor a worker
just before the exit: one ExitProcess ended has the process's exit code (under Wine, a
thread of ours it ended in a system call took the process down now and then: SIGSEGV
in Wine's own code past the exit, nothing said). With TICKTRACE=0 there is none: the
threads counted are ticktrace's alone. Each run's file holds every worker's scopes.

    exiting.py WRAPPER EXITING.EXE EXITING_STATIC.EXE [RUNS]

RUNS: runs of each mode with each build (3). The Linux `ticktrace` as recorder.py finds
it; without it, or Wine, exit 77."""
import json
import os
import random
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, run, tool, wine_path  # noqa: E402

WORKERS = 3
EXIT_CODE = 3
# mode: its environment and the threads of ticktrace's it runs at least (the watch of
# the program's last thread, tt-sched, and tt-prefault, tt-live or tt-stream)
MODES = {"stop": ({}, 3), "ring": ({"TICKTRACE_MODE": "ring", "TICKTRACE_BUFFER": "64k"}, 3),
         "stream": ({"TICKTRACE_MODE": "stream"}, 4), "live": ({"TICKTRACE_LIVE": "1"}, 3)}


def once(wrapper, exe, d, mode, extra, ticktrace):
    name = f"{os.path.basename(exe)} ({mode})"
    ttr = os.path.join(d, f"{mode}.ttr")
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    env = dict(os.environ, TICKTRACE_OUT=wine_path(ttr), **extra)
    ms = random.randrange(0, 30)
    try:
        p = subprocess.run([wrapper, exe, str(WORKERS), str(ms)], env=env, cwd=d, capture_output=True,
                           text=True, timeout=120)
    except subprocess.TimeoutExpired:
        fail(f"{name}: still running 120 s after its exit({EXIT_CODE})")
    if p.returncode == 77:
        print(p.stderr, end="", file=sys.stderr)
        sys.exit(77)
    if p.returncode != EXIT_CODE:
        fail(f"{name}, exit after {ms} ms: exit code {p.returncode}, not {EXIT_CODE}\n{p.stderr}")
    m = re.search(r"^exitcheck: (\d+) threads of ticktrace's, (\d+) ended by ExitProcess$", p.stderr, re.M)
    if not m:
        fail(f"{name}: exitcheck.dll said nothing as the process detached\n{p.stderr}")
    threads, ended = int(m.group(1)), int(m.group(2))
    said = [line for line in p.stderr.splitlines() if "did not end" in line]
    if mode == "off":
        if threads:
            fail(f"{name}: {threads} threads neither main nor a worker with ticktrace off: "
                 "not ticktrace's alone")
        return
    if ended or threads < extra_threads(mode) or said:
        fail(f"{name}, exit after {ms} ms: {ended} of ticktrace's {threads} threads (at least "
             f"{extra_threads(mode)}) ended by ExitProcess, not before it\n{p.stderr}")
    out = os.path.join(d, f"{mode}.json")
    run([ticktrace, "convert", ttr, "-o", out, "-q"])
    events = json.load(open(out))
    events = events["traceEvents"] if isinstance(events, dict) else events
    working = {e["tid"] for e in events if e.get("name") == "work"}
    if len(working) != WORKERS:
        fail(f"{name}: {len(working)} threads recorded work in {ttr}, not {WORKERS}")


def extra_threads(mode):
    return MODES[mode][1]


def main():
    clean_on_term()
    wrapper = sys.argv[1]
    exes = [os.path.abspath(e) for e in sys.argv[2:4]]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    ticktrace = tool()
    with tempfile.TemporaryDirectory(prefix="tt-win-exiting-") as d:
        once(wrapper, exes[0], d, "off", {"TICKTRACE": "0"}, ticktrace)
        for exe in exes:
            for mode, (extra, _) in MODES.items():
                for _ in range(runs):
                    once(wrapper, exe, d, mode, extra, ticktrace)
        print(f"{2 * len(MODES) * runs} exits with {WORKERS} threads recording: ticktrace's threads "
              "all ended before ExitProcess")


if __name__ == "__main__":
    main()
