#!/usr/bin/env python3
"""Names made at run time on Windows (names.exe under Wine, converted on Linux by
`ticktrace convert`): every event of the _DYN macros named by the name the program
made, in mode stop (the dump at exit), mode stream (SITES written as the run goes) and
a live file left by TerminateProcess (SITES that tt-live appends): for each K, N/JOBS
scopes "job-K", instants "step-K" and counter values "load-K" (those the program gave),
every "job-K" opened on the thread named worker; a name too long for the file cut to
its first bytes and "...", a NULL name "(null)".

    names.py WRAPPER NAMES.EXE

The Linux `ticktrace` as recorder.py finds it; without it, or Wine, exit 77."""
import os
import sys
import tempfile
from collections import Counter

sys.path.insert(0, os.path.dirname(__file__))
from modes import program  # noqa: E402
from recorder import clean_on_term, fail, json_events, tool, wine_path  # noqa: E402

JOBS = 7
NAME_MAX = 65536  # include/ticktrace/format.h: TT_NAME_MAX


def check(what, events, n):
    scopes = Counter(e["name"] for e in events if e["ph"] in ("B", "X"))
    instants = Counter(e["name"] for e in events if e["ph"] in ("i", "I"))
    loads = {}
    for e in events:
        if e["ph"] == "C" and e["name"].startswith("load-"):
            loads.setdefault(e["name"], []).append(e["args"]["value"])
    for k in range(JOBS):
        want = len(range(k, n, JOBS))
        if scopes[f"job-{k}"] != want or instants[f"step-{k}"] != want:
            fail(f"{what}: job-{k} {scopes[f'job-{k}']} scopes, step-{k} "
                 f"{instants[f'step-{k}']} instants, {want} wanted; names seen: "
                 f"{sorted(set(scopes) | set(instants))[:20]}")
        if loads.get(f"load-{k}") != list(range(k, n, JOBS)):
            fail(f"{what}: load-{k}'s values are not the program's: "
                 f"{(loads.get(f'load-{k}') or [])[:5]}")
    cut = [name for name in instants if name.startswith("xxx")]
    if len(cut) != 1 or cut[0] != "x" * (NAME_MAX - 3) + "...":
        fail(f"{what}: the long name not cut to {NAME_MAX - 3} bytes and '...': "
             f"{[len(c) for c in cut]}")
    if instants["(null)"] != 1:
        fail(f"{what}: the NULL name not said '(null)': {instants['(null)']}")
    tids = {e["tid"] for e in events if e.get("name", "").startswith("job-")}
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    if [names.get(t) for t in tids] != ["worker"]:
        fail(f"{what}: job scopes on threads {[names.get(t) for t in tids]}, not worker alone")
    print(f"{what}: {n} scopes, instants and counter values named as made, "
          f"the long name cut, NULL said")


def main():
    clean_on_term()
    wrapper, exe = sys.argv[1:3]
    exe = os.path.abspath(exe)
    ticktrace = tool()
    n = 3000
    with tempfile.TemporaryDirectory(prefix="tt-win-names-") as d:
        for what, env, how, rc, written in (
                ("stop", {}, "exit", 0, ""),
                ("stream", {"TICKTRACE_MODE": "stream", "TICKTRACE_BUFFER": "20000"},
                 "exit", 0, ""),
                ("live, killed", {"TICKTRACE_LIVE": "1"}, "kill", 9, ".live")):
            ttr = os.path.join(d, what.split(",")[0] + ".ttr")
            program(wrapper, exe, d, dict(env, TICKTRACE_OUT=wine_path(ttr)), n, how, want_rc=rc)
            check(what, json_events(ticktrace, ttr + written, ttr + ".json"), n)


if __name__ == "__main__":
    main()
