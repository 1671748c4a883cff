#!/usr/bin/env python3
"""Files of runs whose threads drop events (dropping.exe under Wine, each file read on
Linux by `ticktrace info` and `convert`), as on Linux.

stop (mode stop): each thread counts its drops without the lock; a dump that read the
counts once for the threads' sections and again for END wrote files both tools
refused ("END counts N dropped events, the threads M"):
  exit: main returns while four threads record into full buffers: the file at exit
        read, drops counted; with TICKTRACE_LIVE=1 too, and the live file removed only
        once the trace is written. Each thread's drops a run after its records, as
        Linux's mode stop places them, all of them (were counted alone: no run).
  dump: tt_dump every 20 ms while they do: every dump read, its drops in runs.
stream_kill: mode stream whose disk falls behind four threads (a buffer of two
        chunks), the process ended by TerminateProcess (no totals written): the drops
        located in the file as they happened, each run a slice "ticktrace: events
        dropped" that closes the scopes that ended in it, none of their ends left
        unmatched, the file's drop count theirs (was: "dropped 0", the ends unmatched);
        its header written again as tt-stream passes (as Linux's drain does), so that the
        file's clock runs at least to the threads' start, 300 ms in (was: 0 s, the
        header as the run began).
live_kill: a live file (mode stop), its threads described before their buffers
        filled, the process ended by TerminateProcess: each thread's drops in the
        live file (was: "dropped 0", the counts of when it was described).
stream_dump: tt_dump(path) in mode stream every 20 ms while the threads drop: each a
        copy of the file ended as a complete run, read, the drops in it (was: -ENOTSUP);
        the streamed file renamed after half of them, the later copies still read back
        from it (was: -ENOENT, read back by its name), and it ends complete there.

    dropping.py WRAPPER DROPPING.EXE [stop|stream_kill|live_kill|stream_dump]"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, run, tool, wine_path  # noqa: E402


def program(wrapper, exe, d, env, *args):
    return run([wrapper, exe, *map(str, args)], env=dict(os.environ, **env), cwd=d)


def info(ticktrace, ttr, what):
    """`ticktrace info` of the file (it must read it): its output and its warnings."""
    if not os.path.exists(ttr):
        fail(f"{what}: no {ttr}")
    p = subprocess.run([ticktrace, "info", ttr], capture_output=True, text=True, timeout=300)
    if p.returncode != 0 or "error:" in p.stderr:
        fail(f"{what}: {os.path.basename(ttr)} not read: exit {p.returncode}\n{p.stderr}")
    return p.stdout, p.stderr


def read(ticktrace, ttr, what):
    """The file's dropped events, as `ticktrace info` reads them."""
    out, _ = info(ticktrace, ttr, what)
    dropped = re.search(r"records: +\d+, dropped (\d+)", out)
    if not dropped:
        fail(f"{what}: no drops count in `ticktrace info`:\n{out}")
    return int(dropped[1])


def threads_dropping(warnings, cause):
    """The threads whose warnings say they dropped events of `cause`."""
    return re.findall(rf"\): ([0-9]+) events dropped \(.*{cause}: [1-9]", warnings)


def stop(ticktrace, wrapper, exe, d):
    small = {"TICKTRACE_BUFFER": "300000"}
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
            # each dropping thread's drops after its records, as Linux's mode stop
            # places them (were counted, not located: no run of them in the file)
            runs, _ = located_drops(ticktrace, ttr, what, info(ticktrace, ttr, what)[0])
            if any(n != 1 for n, _ in runs):
                fail(f"{what}: not one run of drops for each dropping thread: {runs}")
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
    for k in range(dumps):  # (the threads dropping on as each was written)
        ttr = os.path.join(d, f"dump-{k:02d}.ttr")
        if dropped[k]:
            located_drops(ticktrace, ttr, f"tt_dump {k}", info(ticktrace, ttr, f"tt_dump {k}")[0])
    print(f"dump: {dumps} dumps while four threads dropped, each read (dropped {dropped})")


def killed(wrapper, exe, d, env, ttr, ms):
    """dropping.exe kill: its threads described, then spinning for `ms` milliseconds,
    ended by TerminateProcess."""
    p = subprocess.run([wrapper, exe, "kill", str(ms)], env=dict(os.environ, TICKTRACE_OUT=wine_path(ttr), **env),
                       cwd=d, capture_output=True, text=True, timeout=300)
    if p.returncode == 77:
        print(p.stderr, end="", file=sys.stderr)
        sys.exit(77)
    if p.returncode != 9:
        fail(f"dropping.exe kill: exit {p.returncode}, not 9 (TerminateProcess)\n{p.stderr}")


def located_drops(ticktrace, ttr, what, out):
    """The file's runs of dropped events as `convert` shows them, each thread's (N runs,
    M events): all the drops `info` counts (`out`) in them, none of their scopes' ends
    left unmatched."""
    dropped = re.search(r"records: +\d+, dropped (\d+)", out)
    conv = subprocess.run([ticktrace, "convert", ttr, "-o", ttr + ".pftrace"], capture_output=True,
                          text=True, timeout=300)
    # (each thread's, as "N runs of dropped events (M events) shown as slices")
    runs = [(int(n), int(m)) for n, m in
            re.findall(r"([0-9]+) runs? of dropped events \(([0-9]+) events\) shown as slices", conv.stderr)]
    located = sum(m for _, m in runs)
    if conv.returncode != 0 or not dropped or not located or int(dropped[1]) != located:
        fail(f"{what}: the drops not located in the file (info: dropped "
             f"{dropped and dropped[1]}, in runs {located}):\n{conv.stderr}")
    if "no open scope" in conv.stderr:
        fail(f"{what}: scope ends left unmatched by the drops:\n{conv.stderr}")
    os.remove(ttr + ".pftrace")
    return runs, located


def stream_kill(ticktrace, wrapper, exe, d):
    for i in range(2):
        what = f"stream killed, run {i + 1}"
        ttr = os.path.join(d, f"stream-kill-{i}.ttr")
        killed(wrapper, exe, d, {"TICKTRACE_MODE": "stream", "TICKTRACE_BUFFER": "8192"}, ttr, 300)
        out, _ = info(ticktrace, ttr, what)
        if "ended:    NO" not in out:
            fail(f"{what}: the file does not say the run was killed:\n{out}")
        recorded = re.search(r"recorded for ([0-9.]+) s", out)
        if not recorded or float(recorded[1]) < 0.3:
            fail(f"{what}: its clock not measured past the threads' start (300 ms in):\n{out}")
        runs, located = located_drops(ticktrace, ttr, what, out)
        os.remove(ttr)
        print(f"{what}: {sum(n for n, _ in runs)} runs of dropped events ({located} events) in the file "
              f"of {len(runs)} threads, none unmatched")


def live_kill(ticktrace, wrapper, exe, d):
    ttr = os.path.join(d, "live-kill.ttr")
    killed(wrapper, exe, d, {"TICKTRACE_LIVE": "1", "TICKTRACE_BUFFER": "300000"}, ttr, 1000)
    if os.path.exists(ttr):
        fail("live killed: a trace written by a run TerminateProcess ended")
    out, warnings = info(ticktrace, ttr + ".live", "live killed")
    full = threads_dropping(warnings, "buffer full")
    if len(full) != 4:
        fail(f"live killed: {len(full)} of the 4 spinning threads' drops in the live file:\n{warnings}{out}")
    print(f"live killed: each spinning thread's drops in the live file ({', '.join(full)})")


def stream_dump(ticktrace, wrapper, exe, d):
    dumps = 8
    streamed = os.path.join(d, "stream.ttr")
    program(wrapper, exe, d, {"TICKTRACE_MODE": "stream", "TICKTRACE_BUFFER": "8192",
                              "TICKTRACE_OUT": wine_path(streamed)}, "dump", 20, dumps, "move")
    if os.path.exists(streamed):
        fail(f"stream, tt_dump: {streamed} not moved to stream.ttr.moved")
    out, warnings = info(ticktrace, streamed + ".moved", "stream, moved")
    if "ended:    NO" in out or "mode stream" not in out:
        fail(f"stream, moved: the streamed file not ended where it was moved:\n{warnings}{out}")
    dropped = []
    for k in range(dumps):
        what = f"stream, tt_dump {k}"
        out, warnings = info(ticktrace, os.path.join(d, f"dump-{k:02d}.ttr"), what)
        records = re.search(r"records: +(\d+), dropped (\d+)", out)
        if "ended:    NO" in out or "mode stream" not in out or not records or records[1] == "0":
            fail(f"{what}: not a complete run of mode stream with records:\n{warnings}{out}")
        dropped.append(int(records[2]))
    if not dropped[-1]:
        fail(f"stream, tt_dump: no events dropped by the last dump: {dropped}")
    print(f"stream, tt_dump: {dumps} copies of the file, each a complete run (dropped {dropped}), the file "
          f"moved after {dumps // 2}, ended there")


def main():
    clean_on_term()
    wrapper, exe = sys.argv[1:3]
    case = sys.argv[3] if len(sys.argv) > 3 else "stop"
    exe = os.path.abspath(exe)
    ticktrace = tool()
    with tempfile.TemporaryDirectory(prefix="tt-win-dropping-") as d:
        {"stop": stop, "stream_kill": stream_kill, "live_kill": live_kill,
         "stream_dump": stream_dump}[case](ticktrace, wrapper, exe, d)


if __name__ == "__main__":
    main()
