#!/usr/bin/env python3
"""The live spike detector reads a thread's counters for its spikes alone: where they
are the source of spikes' causes (TICKTRACE_SCHED=schedstat), tt-spikes read two /proc
files of every thread that recorded, at each of its looks (every 20 ms: a sixth of its
CPU time in xz -T2), whether or not a spike was among its records. It reads them once
it finds one, so that the spike has the reading after its end where tt-sched, which
watches scopes open 2 ms, took none.

spikes_reads_prog: a second of short scopes, a 1.5 ms spike (threshold 1 ms: tt-sched
never watches it), a second and a half more. In the trace (every reading kept is
written): before the spike, no more readings than tt-sched's own (those of a scope the
machine's load kept open a millisecond or more, and a few); before this change one
each look, some 50. In the live log: the spike had a reading after its start (taken
for it) when it was split, not "no counters reading after its start".

Usage: spikes_reads.py PROG"""
import os
import subprocess
import sys
import tempfile

import spike_log
import ttr
from verdict import check, verdict

PROG = sys.argv[1]
if not os.path.exists("/proc/self/schedstat"):
    print("SKIP: the kernel keeps no schedstat (CONFIG_SCHED_INFO): no counters to read")
    sys.exit(77)

with tempfile.TemporaryDirectory() as tmp:
    out, live = os.path.join(tmp, "run.ttr"), os.path.join(tmp, "live.jsonl")
    env = dict(os.environ, TICKTRACE_SCHED="schedstat", TICKTRACE_SPIKES=live,
               TICKTRACE_SPIKE_THRESHOLD="1ms", TICKTRACE_OUT=out)
    env.pop("TICKTRACE_MODE", None)
    p = subprocess.run([PROG], env=env, capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "the program ended with %d: %s" % (p.returncode, p.stderr))
    begin, end = map(int, p.stdout.split()[1:3])
    f = ttr.Ttr(out)
    index = next(iter(f.threads))
    # tt-sched's: from a millisecond into a scope open that long to 100 ms after its end
    watched, opened = [], []
    for e in f.events[index]:
        if e.kind == ttr.REC_BEGIN:
            opened.append(f.ns(e.tsc))
        elif e.kind == ttr.REC_END and opened:
            at = opened.pop()
            if f.ns(e.tsc) - at >= 1000000:
                watched.append((at + 1000000, f.ns(e.tsc) + 100000000))
    readings = [r.ns for r in f.counters.get(index, {"readings": []})["readings"]]
    # (not the thread's own as it started, before its first event: neither tt-sched's nor
    # tt-spikes')
    first = min(f.ns(e.tsc) for e in f.events[index])
    unwatched = [r for r in readings if first < r < begin and not any(lo <= r <= hi for lo, hi in watched)]
    # (a few more where the machine's load made spikes of short scopes, each read once
    # found, or kept tt-sched's looks apart: a quarter of tt-spikes' 50 looks at most)
    check(len(unwatched) <= 12, "%d readings in the second before the spike that tt-sched did not "
          "take for a scope (at %s ms before it): tt-spikes read the counters at its looks"
          % (len(unwatched), [round((begin - r) / 1e6, 1) for r in unwatched]))
    spikes = spike_log.spikes(spike_log.entries(live))
    found = [s for s in spikes if s["name"] == "spike"]
    check(len(found) == 1, "live log: %d spikes named spike, of %d" % (len(found), len(spikes)))
    for s in found:
        check(s.get("no_split") != "no counters reading after its start",
              "the live spike had no reading after its start: tt-spikes read none for it (%r)" % s)
    print("%d readings, %d before the spike not tt-sched's; the live spike: %s"
          % (len(readings), len(unwatched), found[0].get("no_split", "split") if found else "-"))
sys.exit(verdict())
