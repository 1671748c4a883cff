#!/usr/bin/env python3
"""Modes ring and stream and the live file on Windows (modes.exe under Wine, each file
converted on Linux by `ticktrace convert`). modes.exe's thread "worker" records the
counter seq = 0 .. N-1.

ring:   TICKTRACE_BUFFER far below N: the ring wraps, keeps the last events (seq's
        values a run that ends at N-1), and the rest is counted as overwritten (kept +
        overwritten = N); at exit, by tt_dump, and as the process dies of an
        unhandled exception.
stream: a run ten times the buffer: every event in the file, none dropped; ended by
        TerminateProcess, the file holds every event recorded before (tt-stream
        writes what the current chunks hold too); dying of an unhandled exception,
        the file is ended, every event in it, said as a crash; ended by ExitProcess
        (as an MSVC program's C runtime ends it: tt-stream ended first, wherever it
        was), the file is ended by the exiting thread, every event in it (it had no
        END: outside test ow32).
stream_pairs: PAIRS.EXE's scopes and counters as fast as its thread can, eight runs
        (before the fix about half the files were refused): every file read (each counter's COUNTER record with
        its VALUE: a chunk given back to be filled again held its old records, which
        tt-stream took for written ones); the drops said at exit in one line, with
        the cause and what to change; mode stop's, counted as in its file; every
        file ended at exit, with a buffer for every event too (tt-stream writing as
        the program exits).
live:   TICKTRACE_LIVE=1, the process ended by TerminateProcess (no handler runs):
        the live file holds every event, its thread named (modes stop and ring: the
        ring's last events); a run that ends writes its trace and removes the live
        file; a file already there by the live file's name (a killed run's) is left
        alone, the run's live file beside it (NAME.PID.ttr.live), said, and removed
        once the trace is written.
outdir: TICKTRACE_OUT naming a directory (one there, DIR\\ or DIR/): the trace in it at
        the default name, modes stop and stream, nothing said; one not there, written
        with a trailing separator: said at start, the default name used.

    modes.py WRAPPER MODES.EXE ring|stream|live|outdir
    modes.py WRAPPER PAIRS.EXE stream_pairs

The Linux `ticktrace` as recorder.py finds it; without it, or Wine, exit 77."""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, run, tool, wine_path  # noqa: E402


def convert(ticktrace, path, d):
    """seq's values in the order converted, the threads' names, convert's stderr."""
    out = os.path.join(d, os.path.basename(path) + ".json")
    conv = run([ticktrace, "convert", path, "-o", out, "--force"])
    events = json.load(open(out))
    events = events["traceEvents"] if isinstance(events, dict) else events
    values = [e["args"]["value"] for e in events if e["ph"] == "C" and e["name"] == "seq"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    return values, names, conv.stderr


def program(wrapper, exe, d, env, n, how, pace=0, want_rc=0):
    env = dict(os.environ, **env)
    p = subprocess.run([wrapper, exe, str(n), how, str(pace)], env=env, cwd=d,
                       capture_output=True, text=True, timeout=300)
    if p.returncode == 77:
        print(p.stderr, end="", file=sys.stderr)
        sys.exit(77)
    if want_rc is not None and p.returncode != want_rc:
        fail(f"{os.path.basename(exe)} {n} {how}: exit {p.returncode}, not {want_rc}\n{p.stderr}")
    return p


def check_tail(what, values, n, stderr):
    """A ring's: the last events, one run ending at n-1, the rest said overwritten."""
    if not values or values != list(range(n - len(values), n)):
        fail(f"{what}: seq's values are not the last ones up to {n - 1}: "
             f"{len(values)} values, {values[:3]} .. {values[-3:]}")
    if len(values) >= n:
        fail(f"{what}: the ring kept all {n} events: it never wrapped")
    said = re.search(r"(\d+) older ones of \d+ threads were overwritten", stderr)
    if not said or int(said.group(1)) != n - len(values):
        fail(f"{what}: {n - len(values)} overwritten expected, convert said: {stderr}")


def ring(ticktrace, wrapper, exe, d):
    n = 50000
    for how, rc in (("exit", 0), ("dump", 0), ("crash", None)):
        ttr = os.path.join(d, f"ring-{how}.ttr")
        # (Wine's debugger, which would say the crash again and exit 0, left out)
        p = program(wrapper, exe, d, {"TICKTRACE_MODE": "ring", "TICKTRACE_BUFFER": "10000",
                                      "TICKTRACE_OUT": wine_path(ttr),
                                      "WINEDLLOVERRIDES": "winedbg.exe=d"}, n, how, want_rc=rc)
        if how == "crash" and p.returncode == 0:
            fail("modes.exe crash: exit 0 (no access violation?)")
        if not os.path.exists(ttr):
            fail(f"ring, {how}: no {ttr} written\n{p.stderr}")
        values, names, stderr = convert(ticktrace, ttr, d)
        check_tail(f"ring, {how}", values, n, stderr)
        if "worker" not in names:
            fail(f"ring, {how}: no thread named worker: {names}")
        info = run([ticktrace, "info", ttr]).stdout
        if how == "crash" and "the run crashed (exception 0xC0000005 (access violation))" not in info:
            fail(f"ring, crash: the file does not say the run crashed:\n{info}")
        print(f"ring, {how}: the last {len(values)} of {n} kept, {n - len(values)} overwritten")


STREAM_TRIES = 3


def stream_whole(what, ticktrace, wrapper, exe, d, env, n, how, want_rc):
    """A stream run's file with all its n events: paced so that tt-stream keeps up, which a
    loaded machine may still keep it from (CI at load 13 to 20: 12,716 of 400,000 dropped,
    disk behind). Such a run, its drops all said as the disk behind and the file's events
    the rest in order, is run again, STREAM_TRIES times at most; any other loss fails."""
    for attempt in range(STREAM_TRIES):
        ttr = os.path.join(d, f"{what}.ttr")
        p = program(wrapper, exe, d, dict(env, TICKTRACE_MODE="stream", TICKTRACE_BUFFER="40000",
                                          TICKTRACE_OUT=wine_path(ttr)), n, how, pace=500, want_rc=want_rc)
        values, names, stderr = convert(ticktrace, ttr, d)
        if values == list(range(n)) and " 0 dropped" in stderr:
            return ttr, p, values, names
        behind = re.search(r"(\d+) events dropped \(buffer full: 0, no memory: 0, disk behind: (\d+), "
                           r"recorded from inside the recorder: 0, cut in half where the file ends: 0\)", stderr)
        if not (behind and behind.group(1) == behind.group(2) and len(values) + int(behind.group(1)) == n
                and values == sorted(set(values)) and set(values) <= set(range(n))):
            break
        print(f"{what}: tt-stream fell behind, {behind.group(1)} of {n} events dropped, said (attempt "
              f"{attempt + 1}, load {os.getloadavg()[0]:.1f}): run again")
    fail(f"{what}: {len(values)} of {n} events in the file ({values[:3]} .. {values[-3:]}): {stderr}")


def stream(ticktrace, wrapper, exe, d):
    n = 400000
    ttr, _, _, _ = stream_whole("stream", ticktrace, wrapper, exe, d, {}, n, "exit", 0)
    info = run([ticktrace, "info", ttr]).stdout
    if "mode stream" not in info:
        fail(f"stream: the file does not say mode stream:\n{info}")
    print(f"stream: all {n} events of a run {n // 40000} times the buffer written")
    n = 100000
    _, _, _, names = stream_whole("stream-kill", ticktrace, wrapper, exe, d, {}, n, "kill", 9)
    if "worker" not in names:
        fail(f"stream, killed: threads {names}")
    print(f"stream, killed: all {n} events in the file")
    ttr, _, _, _ = stream_whole("stream-crash", ticktrace, wrapper, exe, d, {"WINEDLLOVERRIDES": "winedbg.exe=d"},
                                n, "crash", None)
    info = run([ticktrace, "info", ttr]).stdout
    if "the run crashed (exception 0xC0000005 (access violation))" not in info:
        fail(f"stream, crash: the file does not say the crash:\n{info}")
    print(f"stream, crash: all {n} events in the file, said as a crash")
    ttr, _, _, _ = stream_whole("stream-exitprocess", ticktrace, wrapper, exe, d, {}, n, "exitprocess", 0)
    info = run([ticktrace, "info", ttr])
    if "without its END section" in info.stderr or "ended:    NO" in info.stdout:
        fail(f"stream, ExitProcess: the file not ended:\n{info.stdout}{info.stderr}")
    print(f"stream, ExitProcess: all {n} events in the file, ended")


def stream_pairs(ticktrace, wrapper, exe, d):
    n = 3000000
    runs = 8
    for i in range(runs):
        ttr = os.path.join(d, f"pairs-{i}.ttr")
        p = program(wrapper, exe, d, {"TICKTRACE_MODE": "stream", "TICKTRACE_OUT": wine_path(ttr)}, n,
                    "exit")
        info = subprocess.run([ticktrace, "info", ttr], capture_output=True, text=True, timeout=300)
        if info.returncode != 0 or "error:" in info.stderr:
            fail(f"stream_pairs, run {i + 1}: the file is not read: exit {info.returncode}\n"
                 f"{info.stderr}")
        if "could not write the trace at exit" in p.stderr or "without its END" in info.stderr:
            fail(f"stream_pairs, run {i + 1}: the file not ended at exit:\n{p.stderr}{info.stderr}")
        behind = re.search(r"disk behind: ([1-9][0-9]*)", info.stderr)
        if behind and not re.search(r"ticktrace: [0-9]+ events dropped, [0-9]+ because the disk "
                                    r"fell behind", p.stderr):
            fail(f"stream_pairs, run {i + 1}: {behind[1]} events dropped in the file, not said:\n"
                 f"{p.stderr}")
        os.remove(ttr)
    # a buffer for every event: tt-stream still writing as the program exits (ended
    # by ExitProcess as it wrote, before the end took its place, the file was left
    # without its END, most of it lost): the file ended, every event in it
    ttr = os.path.join(d, "pairs-big.ttr")
    p = program(wrapper, exe, d, {"TICKTRACE_MODE": "stream", "TICKTRACE_BUFFER": "67108864",
                                  "TICKTRACE_OUT": wine_path(ttr)}, n, "exit")
    info = subprocess.run([ticktrace, "info", ttr], capture_output=True, text=True, timeout=300)
    if info.returncode != 0 or f"records:  {4 * n}, dropped 0," not in info.stdout:
        fail(f"stream_pairs, a buffer for every event: not all {4 * n} records in an ended file:\n"
             f"{p.stderr}{info.stderr}{info.stdout}")
    os.remove(ttr)
    # mode stop, a small buffer: the drops said at exit as the file counts them
    ttr = os.path.join(d, "pairs-stop.ttr")
    p = program(wrapper, exe, d, {"TICKTRACE_BUFFER": "4096", "TICKTRACE_OUT": wine_path(ttr)},
                100000, "exit")
    full = re.search(r"dropped ([0-9]+),", run([ticktrace, "info", ttr]).stdout)
    said = f"ticktrace: {full[1] if full else '?'} events dropped, {full[1] if full else '?'} because " \
           "the buffer was full"
    if not full or full[1] == "0" or said not in p.stderr:
        fail(f"stream_pairs, mode stop: the file's drops ({full and full[1]}) not said as "
             f"{said!r}:\n{p.stderr}")
    print(f"stream_pairs: {runs} runs of {n} scopes and counters, each file read, the drops said")


def live(ticktrace, wrapper, exe, d):
    # modes stop and ring, killed: TerminateProcess leaves the live file alone
    for mode, n, buffer in (("stop", 30000, 100000), ("ring", 50000, 10000)):
        ttr = os.path.join(d, f"live-{mode}.ttr")
        program(wrapper, exe, d, {"TICKTRACE_MODE": mode, "TICKTRACE_LIVE": "1",
                                  "TICKTRACE_BUFFER": str(buffer),
                                  "TICKTRACE_OUT": wine_path(ttr)}, n, "kill", want_rc=9)
        if os.path.exists(ttr) or not os.path.exists(ttr + ".live"):
            fail(f"live, {mode}: killed, {ttr}: {os.path.exists(ttr)}, .live: "
                 f"{os.path.exists(ttr + '.live')} (want the live file alone)")
        values, names, stderr = convert(ticktrace, ttr + ".live", d)
        if "killed" not in stderr:
            fail(f"live, {mode}: convert does not say the run was killed: {stderr}")
        if mode == "stop" and values != list(range(n)):
            fail(f"live, stop: {len(values)} of {n} events: {values[:3]} .. {values[-3:]}")
        if mode == "ring":
            if not values or values != list(range(n - len(values), n)) or len(values) >= n:
                fail(f"live, ring: not the ring's last events: {len(values)}, "
                     f"{values[:3]} .. {values[-3:]}")
        if "worker" not in names:
            fail(f"live, {mode}: the thread is not named worker: {names}")
        print(f"live, {mode}: TerminateProcess left {len(values)} of {n} events, named")
    # a run that ends writes its trace and removes the live file
    ttr = os.path.join(d, "live-exit.ttr")
    program(wrapper, exe, d, {"TICKTRACE_LIVE": "1", "TICKTRACE_OUT": wine_path(ttr)}, 1000, "exit")
    if not os.path.exists(ttr) or os.path.exists(ttr + ".live"):
        fail(f"live, exit: {ttr}: {os.path.exists(ttr)}, .live left: {os.path.exists(ttr + '.live')}")
    values, _, _ = convert(ticktrace, ttr, d)
    if values != list(range(1000)):
        fail(f"live, exit: {len(values)} of 1000 events")
    print("live, exit: the trace written, the live file removed")
    ttr = os.path.join(d, "live-taken.ttr")
    with open(ttr + ".live", "w") as f:
        f.write("another's")
    p = program(wrapper, exe, d, {"TICKTRACE_LIVE": "1", "TICKTRACE_OUT": wine_path(ttr)}, 1000, "exit")
    values, _, _ = convert(ticktrace, ttr, d)
    lives = sorted(f for f in os.listdir(d) if f.startswith("live-taken.") and f.endswith(".live"))
    said = re.search(r"live-taken.ttr.live: a file no process keeps as its live file is there \(a killed "
                     r"run's, or another's\), left as it is: this one's live file is \S+(live-taken.\d+.ttr.live)\n",
                     p.stderr)
    if open(ttr + ".live").read() != "another's" or not said or lives != ["live-taken.ttr.live"] or \
            values != list(range(1000)):
        fail(f"live, name taken: {len(values)} of 1000 events, the file there: "
             f"{open(ttr + '.live').read()[:20]!r}, live files left: {lives}, said: {p.stderr}")
    print(f"live, name taken: left alone, this one's beside it ({said.group(1)}), said, removed")


def converted_whole(ticktrace, path, d, what):
    """The file at `path` holds modes.exe's 1000 events; removed."""
    values, _, _ = convert(ticktrace, path, d)
    if values != list(range(1000)):
        fail(f"outdir, {what}: {len(values)} of 1000 events")
    os.unlink(path)


def outdir(ticktrace, wrapper, exe, d):
    """TICKTRACE_OUT naming a directory (r40 F5): the trace in it at the default name."""
    runs = os.path.join(d, "runs")
    os.mkdir(runs)
    for out in (wine_path(runs), wine_path(runs) + "\\", "runs", "runs/"):
        for mode in ("stop", "stream"):
            p = program(wrapper, exe, d, {"TICKTRACE_OUT": out, "TICKTRACE_MODE": mode}, 1000, "exit")
            files = os.listdir(runs)
            if len(files) != 1 or not re.fullmatch(r"ticktrace-\d+\.ttr", files[0]) or "ticktrace:" in p.stderr:
                fail(f"outdir, TICKTRACE_OUT={out}, {mode}: not one trace in it at the default name, or a "
                     f"line said: {files} {os.listdir(d)}: {p.stderr}")
            converted_whole(ticktrace, os.path.join(runs, files[0]), d, f"TICKTRACE_OUT={out}, {mode}")
            print(f"outdir, TICKTRACE_OUT={out}, {mode}: the trace in it, {files[0]}")
    # A directory not there, written with a trailing separator: said at start, naming
    # it, the trace at the default name in the start directory.
    for out in ("missing\\", "missing/"):
        p = program(wrapper, exe, d, {"TICKTRACE_OUT": out}, 1000, "exit")
        said = re.search(r"ticktrace: TICKTRACE_OUT=%s names the directory (\S+): No such file or directory: the "
                         r"trace is written at (\S+), the default name, instead\n" % re.escape(out), p.stderr)
        files = [f for f in os.listdir(d) if re.fullmatch(r"ticktrace-\d+\.ttr", f)]
        if not said or not said.group(1).endswith("missing") or len(files) != 1 or \
                not said.group(2).endswith("\\" + files[0]) or os.path.exists(os.path.join(d, "missing")):
            fail(f"outdir, TICKTRACE_OUT={out}: not said, naming it, or not at the default name: {files}: "
                 f"{p.stderr}")
        converted_whole(ticktrace, os.path.join(d, files[0]), d, f"TICKTRACE_OUT={out}")
        print(f"outdir, TICKTRACE_OUT={out}: said, the trace at the default name, {files[0]}")


def main():
    clean_on_term()
    wrapper, exe, case = sys.argv[1:4]
    exe = os.path.abspath(exe)
    ticktrace = tool()
    with tempfile.TemporaryDirectory(prefix="tt-win-modes-") as d:
        {"ring": ring, "stream": stream, "stream_pairs": stream_pairs, "live": live,
         "outdir": outdir}[case](ticktrace, wrapper, exe, d)


if __name__ == "__main__":
    main()
