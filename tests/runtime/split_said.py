#!/usr/bin/env python3
"""Never made up (issue 35.3, 35.7): the README's ./app, a run of a few milliseconds,
its spikes found at a 5 us threshold in every place a spike is shown: `spikes` text
and --json, convert --threshold's marks, the live log (TICKTRACE_SPIKES), the report
at exit (TICKTRACE_REPORT) and `report`.

With its states (the default: asked for as the program starts), every spike has a
split, and the split makes up its duration: on CPU + preempted + blocked + unknown.
With TICKTRACE_SCHED=0 no spike has a split, and each place says the true reason
(the states were off), as info does of the thread; info says since when the states
are known as the file has them, not the thread's first switch.

Usage: split_said.py APP TICKTRACE
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import spike_log
import ttr
from verdict import check, verdict

APP, TOOL = sys.argv[1:3]
SPLIT = ("on_cpu_ns", "preempted_ns", "blocked_ns", "unknown_ns")
OFF = "thread states are off (TICKTRACE_SCHED=0)"
COLUMNS = re.compile(r"p99 +on cpu +off cpu")  # the table's split columns


def tool(*args):
    p = subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        sys.exit("ticktrace %s failed: %s" % (" ".join(args), p.stderr))
    return p.stdout


def said(where, spike, states):
    """A spike as one place shows it (a dict of its keys): split that makes up its
    duration with states, else none and why."""
    if states:
        check(all(k in spike for k in SPLIT) and sum(spike[k] for k in SPLIT) == spike["dur_ns"],
              "%s: a split that does not make up its spike: %s" % (where, spike))
    else:
        check(not any(k in spike for k in SPLIT), "%s: a split made up: %s" % (where, spike))


def one_run(tmp, states):
    what = "states" if states else "TICKTRACE_SCHED=0"
    out, live, report = (os.path.join(tmp, "%s.%s" % (what, ext)) for ext in ("ttr", "jsonl", "txt"))
    env = dict(os.environ, TICKTRACE_OUT=out, TICKTRACE_SPIKES=live, TICKTRACE_SPIKE_THRESHOLD="5us",
               TICKTRACE_REPORT=report)
    if not states:
        env["TICKTRACE_SCHED"] = "0"
    p = subprocess.run([APP], env=env, capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "%s: ./app failed (%d): %s" % (what, p.returncode, p.stderr))

    spikes = [json.loads(l) for l in tool("spikes", "-q", "--json", "--threshold", "5us", out).splitlines()]
    check(spikes, what + ": no spike at 5 us")
    for sp in spikes:
        said(what + ": spikes --json", sp, states)
        if not states:
            check(sp.get("no_split") == OFF, "%s: spikes --json says no why: %s" % (what, sp))
    text = tool("spikes", "-q", "--threshold", "5us", out)
    lines = text.count("\n  on CPU ") if states else text.count("\n  no split: %s\n" % OFF)
    check(lines == len(spikes), "%s: spikes: %d of %d spikes split or say why:\n%s"
          % (what, lines, len(spikes), text))

    logged = spike_log.spikes(spike_log.entries(live))
    check(logged, what + ": nothing in the live log")
    for sp in logged:
        said(what + ": the live log", sp, states)
        if not states:
            check(sp.get("no_split") == OFF, "%s: the live log says no why: %s" % (what, sp))

    marked = os.path.join(tmp, what + ".json")
    tool("convert", "-q", "--threshold", "5us", out, "-o", marked)
    marks = [e for e in json.load(open(marked))["traceEvents"]
             if e.get("ph") == "i" and e.get("name", "").startswith("spike: ")]
    check(len(marks) == len(spikes), "%s: %d marks, %d spikes" % (what, len(marks), len(spikes)))
    for m in marks:
        said(what + ": convert's mark", m.get("args", {}), states)

    at_exit, table = open(report).read(), tool("report", "-q", out)
    info = tool("info", out)
    if states:
        for name, t in (("the report at exit", at_exit), ("report", table)):
            check(COLUMNS.search(t) and "no thread has states" not in t, "%s: %s:\n%s" % (what, name, t))
        check("without states" not in info, "%s: info: %s" % (what, info))
        # info's "known from": since the states are known (its first SCHED section's
        # since_ns, or its first state where the kernel's is earlier), as spikes read
        # them, not its first switch
        f = ttr.Ttr(out)
        for index, sched in f.sched.items():
            tid = f.threads[index]["tid"]
            table = info[info.find("thread states (their switches"):]
            row = re.search(r"^ +%d +.* (\d+)\.(\d{9}) s$" % tid, table, re.M)
            known = int(row.group(1)) * 10**9 + int(row.group(2)) if row else None
            check(sched["states"] and known == sched["states"][0][0] - f.start[1],
                  "%s: info says thread %d's states known from %s ns, its file from %s:\n%s"
                  % (what, tid, known, sched["states"][:1], info))
    else:
        for name, t in (("the report at exit", at_exit), ("report", table)):
            check(not COLUMNS.search(t) and ("): %s)\n" % OFF) in t, "%s: %s:\n%s" % (what, name, t))
        check("  1 thread without states: %s\n" % OFF in info, "%s: info:\n%s" % (what, info))
    print("%s: %d spikes, %d in the live log, %d marks" % (what, len(spikes), len(logged), len(marks)))


with tempfile.TemporaryDirectory() as tmp:
    one_run(tmp, True)
    one_run(tmp, False)
sys.exit(verdict())
