#!/usr/bin/env python3
"""The Windows recorder end to end: runs recorder.exe under Wine (the cross file's
wrapper), once writing its file by tt_dump and once by the exit (TICKTRACE_OUT), and
converts each on Linux with `ticktrace convert` to JSON and .pftrace: the scopes, the
argument, instants, counters, flows and thread names the program recorded, a thread of
its own for each of the threads started one after another (which Windows gives the TEBs
of those before), nothing dropped, and the .pftrace the same as the JSON
(check-perfetto.py). And TICKTRACE_OUT=NUL: written into, without a word.

    recorder.py WRAPPER RECORDER.EXE LIBTICKTRACE.DLL CHECK_PERFETTO SCHEMA

The Linux `ticktrace` is $TT_TEST_TOOL (.ci/run sets it), else build/tools/ticktrace of
the source tree; without one, or without Wine, exit 77."""
import datetime
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
from collections import Counter

SEQUENTIAL = 40


def clean_on_term():
    """A test meson ends (SIGTERM at its timeout) removes its directory as it leaves."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))


def fail(message):
    print(f"recorder: {message}", file=sys.stderr)
    sys.exit(1)


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    if p.returncode == 77:
        print(p.stderr, end="", file=sys.stderr)
        sys.exit(77)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    return p


def json_events(ticktrace, ttr, out):
    """The run's events, converted on Linux to JSON at `out` (either JSON form)."""
    run([ticktrace, "convert", ttr, "-o", out])
    events = json.load(open(out))
    return events["traceEvents"] if isinstance(events, dict) else events


def tool():
    t = os.environ.get("TT_TEST_TOOL")
    if not t:
        t = os.path.join(os.path.dirname(__file__), "..", "..", "build", "tools", "ticktrace")
    if not os.access(t, os.X_OK):
        print(f"recorder: no Linux ticktrace at {t} (set TT_TEST_TOOL): not run", file=sys.stderr)
        sys.exit(77)
    return t


def check(ttr, json_path, reused):
    events = json.load(open(json_path))
    events = events["traceEvents"] if isinstance(events, dict) else events
    kinds = Counter((e["ph"], e["name"]) for e in events)
    want = {("X", "main"): 1, ("X", "produce"): 3, ("X", "item"): 3, ("X", "consume"): 3,
            ("i", "took"): 3, ("C", "queued"): 3, ("s", "flow"): 3, ("f", "flow"): 3,
            ("X", "sequential"): SEQUENTIAL, ("C", "sequence"): SEQUENTIAL}
    for key, n in want.items():
        if kinds[key] != n:
            fail(f"{ttr}: {n} events {key} expected, {kinds[key]} converted")
    items = sorted(e["args"]["arg"] for e in events if e["name"] == "item")
    if items != [0, 1, 2]:
        fail(f"{ttr}: the items' arguments are {items}, not [0, 1, 2]")
    queued = sorted(e["args"]["value"] for e in events if e["ph"] == "C" and e["name"] == "queued")
    if queued != [1, 2, 3]:
        fail(f"{ttr}: the counter queued took {queued}, not [1, 2, 3]")
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    for name in ("main", "producer", "consumer"):
        if name not in names:
            fail(f"{ttr}: no thread named {name} (named: {sorted(names)})")
    seq_tids = {e["tid"] for e in events if e["name"] == "sequential"}
    if len(seq_tids) != SEQUENTIAL:
        fail(f"{ttr}: {SEQUENTIAL} sequential threads, converted on {len(seq_tids)} "
             f"({reused} of them had a TEB an earlier one had had)")
    # each sequential thread's counter value on its own thread: no two shared a buffer
    per_tid = Counter(e["tid"] for e in events if e["name"] == "sequence")
    if set(per_tid.values()) != {1}:
        fail(f"{ttr}: a sequential thread holds another's events: {per_tid}")


def wine_path(path):
    return "Z:" + os.path.abspath(path).replace("/", "\\")


def main():
    clean_on_term()
    wrapper, exe, dll, check_perfetto, schema = sys.argv[1:6]
    exe = os.path.abspath(exe)
    ticktrace = tool()
    os.environ["WINEPATH"] = wine_path(os.path.dirname(dll))
    with tempfile.TemporaryDirectory(prefix="tt-win-") as d:
        for how in ("dump", "exit"):
            ttr = os.path.join(d, f"{how}.ttr")
            env = dict(os.environ)
            # (after a dump the exit writes its own file: elsewhere)
            env["TICKTRACE_OUT"] = wine_path(os.path.join(d, "at-exit.ttr") if how == "dump" else ttr)
            arg = wine_path(ttr) if how == "dump" else "--at-exit"
            out = run([wrapper, exe, arg, str(SEQUENTIAL)], env=env, cwd=d).stdout
            reused = int(out.split("reused TEBs:")[1].split()[0])
            if not os.path.exists(ttr):
                fail(f"{how}: no {ttr} written")
            json_path = os.path.join(d, f"{how}.json")
            pf = os.path.join(d, f"{how}.pftrace")
            conv = run([ticktrace, "convert", ttr, "-o", json_path])
            run([ticktrace, "convert", ttr, "-o", pf])
            if "0 dropped" not in conv.stderr:
                fail(f"{ttr}: {conv.stderr}")
            check(ttr, json_path, reused)
            run([sys.executable, check_perfetto, pf, schema, json_path, "--flows", "3"])
            print(f"{how}: {ttr} converted and checked; {reused} of {SEQUENTIAL} threads "
                  f"had a TEB an earlier one had had")
        # The MACHINE section: the host, and the wall clock at the start, which place
        # the run beside other machines' runs.
        info = run([ticktrace, "info", ttr]).stdout
        host = socket.gethostname()
        started = re.search(r"wall clock at start: (\S+ \S+) UTC", info)
        if f"machine:  host {host}," not in info or not started:
            fail(f"{ttr}: no host {host} or wall clock at start said:\n{info}")
        at = datetime.datetime.strptime(started[1][:26], "%Y-%m-%d %H:%M:%S.%f")
        ago = datetime.datetime.utcnow() - at
        if not datetime.timedelta(0) <= ago <= datetime.timedelta(minutes=5):
            fail(f"{ttr}: the run started at {at} UTC, {ago} ago")
        # A crash: the file written as the program dies, said as a crash (the access
        # violation by its exception code, not as a signal), with what it recorded.
        ttr = os.path.join(d, "crash.ttr")
        # (Wine's debugger, which would say it all again and exit 0, left out)
        env = dict(os.environ, TICKTRACE_OUT=wine_path(ttr), WINEDLLOVERRIDES="winedbg.exe=d")
        p = subprocess.run([wrapper, exe, "--crash", str(SEQUENTIAL)], env=env, cwd=d,
                           capture_output=True, text=True, timeout=300)
        if p.returncode == 0 or not os.path.exists(ttr):
            fail(f"--crash: exit {p.returncode}, file written: {os.path.exists(ttr)}\n{p.stderr}")
        info = run([ticktrace, "info", ttr]).stdout
        if "the run crashed (exception 0xC0000005 (access violation))" not in info:
            fail(f"{ttr}: not said as a crash of an access violation:\n{info}")
        json_path = os.path.join(d, "crash.json")
        run([ticktrace, "convert", ttr, "-o", json_path])
        check(ttr, json_path, 0)
        print(f"crash: {ttr} written as the program died, converted and checked")
        # The null device takes the file in place (there is nothing to rename it to).
        env = dict(os.environ, TICKTRACE_OUT="NUL")
        p = run([wrapper, exe, "--at-exit", "1"], env=env, cwd=d)
        if "ticktrace:" in p.stderr:
            fail(f"TICKTRACE_OUT=NUL: {p.stderr}")


if __name__ == "__main__":
    main()
