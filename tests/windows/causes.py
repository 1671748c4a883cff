#!/usr/bin/env python3
"""Spikes' causes in a Windows run (causes.exe, under Wine): its threads' CPU time,
read by tt-sched (src/core/counters.c), splits each spike into time on CPU and
the rest, unknown (Windows gives no switch's reason without an administrator: preempted
and blocked are not told apart), said as such: causes_from "thread-times" and the error;
where ntdll counts the threads' switches (real Windows; Wine does not), the sleep's
said (and in report's profile, with no Linux call named).
A scope that computed 150 ms of CPU time is that much on CPU, within the error; one
that slept, next to none. With TICKTRACE_SCHED=0 no spike has a split, and each says
why.

    causes.py WRAPPER EXE [--etw]

--etw: the run is split by its threads' switches (an ETW session of its own, src/base/
switches_windows.c): causes_from "switches", the sleep blocked, the computation on CPU or preempted;
it needs real Windows and an administrator (exit 77 otherwise, as under Wine).
Without Wine or the Linux `ticktrace` (as recorder.py finds it), exit 77."""
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, run, tool  # noqa: E402

MS = 1000000


def spikes(ticktrace, ttr):
    out = run([ticktrace, "spikes", "--threshold", "50ms", "--json", ttr]).stdout
    got = {s["name"]: s for s in map(json.loads, out.splitlines())}
    if set(got) != {"compute", "sleep"}:
        fail(f"{ttr}: spikes {sorted(got)}, not compute and sleep")
    return got


def switches(got):
    for name, s in got.items():
        if s.get("causes_from") != "switches":
            fail(f"{name}: causes_from {s.get('causes_from')}, not switches: {s}")
    compute, sleep = got["compute"], got["sleep"]
    if (compute["on_cpu_ns"] + compute["preempted_ns"]) * 10 < compute["dur_ns"] * 9:
        fail(f"compute: not on CPU or preempted for 90 % of it: {compute}")
    if sleep["blocked_ns"] * 10 < sleep["dur_ns"] * 9:
        fail(f"sleep: not blocked for 90 % of it: {sleep}")
    print(f"compute: on CPU {compute['on_cpu_ns'] / MS:.1f} ms; sleep: blocked {sleep['blocked_ns'] / MS:.1f} ms")


def tick(info, got, text):
    """Thread times in steps (Wine's: no cycle time): the step the runtime found them
    move by (MACHINE's TT_MACHINE_TICK: Wine's 10 ms, its user and kernel times each cut
    to one, a value up to 20 ms behind), which each split's error is of, said."""
    if "in steps of the system's tick" not in info:
        return
    found = re.search(r"thread counters' tick: ([0-9.]+) ms as the run found", info)
    if not found:
        fail(f"info does not say the tick the run found:\n{info}")
    tick_ns = round(float(found.group(1)) * MS)
    behind = tick_ns * (2 if "each cut to one" in info else 1)
    for name, s in got.items():
        if s.get("tick_ns") != tick_ns or s.get("tick_behind_ns") != behind:
            fail(f"{name}: the tick {s.get('tick_ns')} ns, {s.get('tick_behind_ns')} ns behind, "
                 f"not the run's {tick_ns} ns, {behind} ns: {s}")
    if f"{tick_ns / MS:.3f} ms as its run found it" not in text:
        fail(f"spikes' text does not say the run's tick:\n{text}")
    print(f"tick: {tick_ns / MS:.3f} ms, a value up to {behind / MS:.3f} ms behind")


def main():
    clean_on_term()
    wrapper, exe = sys.argv[1:3]
    exe = os.path.abspath(exe)
    ticktrace = tool()
    with tempfile.TemporaryDirectory(prefix="tt-win-causes-") as d:
        ttr = os.path.join(d, "causes.ttr")
        if sys.argv[3:] == ["--etw"]:
            run([wrapper, exe, "--etw", ttr])
            switches(spikes(ticktrace, ttr))
            return
        run([wrapper, exe, ttr])
        got = spikes(ticktrace, ttr)
        for name, s in got.items():
            if s.get("causes_from") != "thread-times":
                fail(f"{name}: causes_from {s.get('causes_from')}, not thread-times: {s}")
            parts = s["on_cpu_ns"] + s["unknown_ns"]
            if s["preempted_ns"] or s["blocked_ns"] or parts != s["dur_ns"]:
                fail(f"{name}: the time off CPU told apart, or the parts do not sum: {s}")
        compute, sleep = got["compute"], got["sleep"]
        # (the loop stops once the thread's times say 150 ms more: one step of them late)
        err = compute["causes_error_ns"]
        if not 15 * MS <= err < compute["dur_ns"] or abs(compute["on_cpu_ns"] - 150 * MS) > err + 20 * MS:
            fail(f"compute: on CPU {compute['on_cpu_ns']} ns, not 150 ms within {err} ns: {compute}")
        if sleep["on_cpu_ns"] > sleep["causes_error_ns"] + 5 * MS:
            fail(f"sleep: on CPU {sleep['on_cpu_ns']} ns, beyond its error: {sleep}")
        info = run([ticktrace, "info", ttr]).stdout
        # (the count of switches where ntdll gives it: real Windows, not Wine)
        counted = "Windows: CPU time and the count of switches" in info
        if not (counted or "Windows: CPU time alone" in info) or "need an administrator" not in info:
            fail(f"info does not say the counters are Windows' CPU time:\n{info}")
        # (the reason whole: a buffer of 160 bytes cut it at "(its CPU time is r")
        if "not elevated, or the session was refused (its CPU time is read)\n" not in info:
            fail(f"info does not give the reason for no switches whole:\n{info}")
        text = run([ticktrace, "spikes", "--threshold", "50ms", ttr]).stdout
        if "preempted or blocked not told apart" not in text:
            fail(f"spikes' text does not say the split is coarser:\n{text}")
        tick(info, got, text)
        if counted and "switched out" not in text:
            fail(f"the sleep's switches not counted:\n{text}")
        # report's profile: the split by the threads' CPU time, its footnote naming no
        # Linux call (it said perf_event_open was refused), and --json's source
        text = run([ticktrace, "report", ttr]).stdout
        if "a Windows run had its threads' CPU time alone" not in text or "perf_event_open" in text:
            fail(f"report's footnote does not say the split is Windows' CPU time:\n{text}")
        rows = json.loads(run([ticktrace, "report", "--json", ttr]).stdout)
        rows = rows["rows"] if isinstance(rows, dict) else rows
        froms = {r.get("name"): r.get("causes_from") for r in rows if "causes_from" in r}
        if froms.get("compute") != "thread-times":
            fail(f"report --json's compute row: causes_from {froms}, not thread-times")
        print(f"compute: on CPU {compute['on_cpu_ns'] / MS:.1f} ms within {err / MS:.1f} ms of "
              f"{compute['dur_ns'] / MS:.1f} ms; sleep: {sleep['on_cpu_ns'] / MS:.1f} ms")

        off = os.path.join(d, "off.ttr")
        run([wrapper, exe, off], env=dict(os.environ, TICKTRACE_SCHED="0"))
        for name, s in spikes(ticktrace, off).items():
            if "on_cpu_ns" in s or "TICKTRACE_SCHED=0" not in s.get("no_split", ""):
                fail(f"{name} with TICKTRACE_SCHED=0: {s}")


if __name__ == "__main__":
    main()
