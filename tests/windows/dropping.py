#!/usr/bin/env python3
"""Mode stop's file while threads record into full buffers (dropping.exe under Wine,
each file read on Linux by `ticktrace info`). Each thread counts its drops without the
lock; a dump that read the counts once for the threads' sections and again for END
wrote files both tools refused ("END counts N dropped events, the threads M"):

exit: main returns while four threads record into full buffers: the file at exit
      read, drops counted; with TICKTRACE_LIVE=1 too, and the live file removed only
      once the trace is written.
dump: tt_dump every 20 ms while they do: every dump read.

    dropping.py WRAPPER DROPPING.EXE"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, run, tool, wine_path  # noqa: E402


def program(wrapper, exe, d, env, *args):
    return run([wrapper, exe, *map(str, args)], env=dict(os.environ, **env), cwd=d)


def read(ticktrace, ttr, what):
    """The file's dropped events, as `ticktrace info` reads them (it must)."""
    if not os.path.exists(ttr):
        fail(f"{what}: no {ttr}")
    info = subprocess.run([ticktrace, "info", ttr], capture_output=True, text=True, timeout=300)
    if info.returncode != 0 or "error:" in info.stderr:
        fail(f"{what}: {os.path.basename(ttr)} not read: exit {info.returncode}\n{info.stderr}")
    dropped = re.search(r"records: +\d+, dropped (\d+)", info.stdout)
    if not dropped:
        fail(f"{what}: no drops count in `ticktrace info`:\n{info.stdout}")
    return int(dropped[1])


def main():
    clean_on_term()
    wrapper, exe = sys.argv[1:3]
    exe = os.path.abspath(exe)
    ticktrace = tool()
    small = {"TICKTRACE_BUFFER": "300000"}
    with tempfile.TemporaryDirectory(prefix="tt-win-dropping-") as d:
        for i in range(3):
            for live in (False, True):
                what = f"exit, run {i + 1}" + (", live file" if live else "")
                ttr = os.path.join(d, f"exit-{i}{'-live' if live else ''}.ttr")
                env = dict(small, TICKTRACE_OUT=wine_path(ttr))
                if live:
                    env["TICKTRACE_LIVE"] = "1"
                program(wrapper, exe, d, env, "exit", 300)
                if read(ticktrace, ttr, what) == 0:
                    fail(f"{what}: no events dropped: the buffers never filled")
                if live and os.path.exists(ttr + ".live"):
                    fail(f"{what}: the trace written, the live file left")
        print("exit: 6 runs, each file read, drops counted, the live files removed")
        dumps = 8
        program(wrapper, exe, d, dict(small, TICKTRACE_OUT=wine_path(os.path.join(d, "final.ttr"))),
                "dump", 20, dumps)
        dropped = [read(ticktrace, os.path.join(d, f"dump-{k:02d}.ttr"), f"tt_dump {k}")
                   for k in range(dumps)]
        if not dropped[-1]:
            fail(f"dump: no events dropped by the last dump: {dropped}")
        print(f"dump: {dumps} dumps while four threads dropped, each read (dropped {dropped})")


if __name__ == "__main__":
    main()
