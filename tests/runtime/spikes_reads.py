#!/usr/bin/env python3
"""The live spike detector reads a thread's counters for its spikes alone: where they
are the source of spikes' causes (TICKTRACE_SCHED=schedstat), tt-spikes read two /proc
files of every thread that recorded, at each of its looks (every 20 ms: a sixth of its
CPU time in xz -T2), whether or not a spike was among its records. It reads them once
it finds one, so that the spike has the reading after its end where tt-sched, which
watches scopes open 2 ms, took none.

spikes_reads_prog: a second of short scopes, a 1.5 ms spike (threshold 1 ms: tt-sched
never watches it), a second and a half more. In the trace (every reading kept is
written): before the spike, each reading one the code takes there, and one more at
most; before this change one each look, some 50. Those it takes: tt-sched's inside a
scope the machine's load kept open a millisecond or more and once after it; tt-spikes'
once after each spike it found (such a scope, past the 1 ms threshold); tt-sched's as
its looks rest, once in each stretch of 2.5 ms or more the thread recorded nothing
outside its scopes (the program's 1 ms sleeps, which a loaded machine stretches: up to
30 in the second at load 20 to 70, 21 in CI's gcc stage, all counted as tt-spikes'
until this test knew them). In the live log: the
spike had a reading after its start (taken for it) when it was split, not "no counters
reading after its start".

Usage: spikes_reads.py PROG"""
import heapq
import os
import subprocess
import sys
import tempfile

import spike_log
import ttr
from verdict import check, verdict

PROG = sys.argv[1]
MS = 1000000
# tt-sched's looks rest where every thread it reads has recorded nothing outside its
# scopes for 2 ms, and a quarter more for each not read since (here one: 2.5 ms, less
# 0.1 for the clocks); a look that found the thread quiet reads it after the thread
# recorded again only by as long as the look took (0.05 ms at most in 80 runs at load
# 17 to 62): one kept off its CPU longer leaves a reading unexplained, one allowed.
QUIET_NS = 2400000
QUIET_SLACK = MS // 2
ALLOWED = 1


def explain(readings, windows):
    """The readings (in order) that the windows ([lo, hi], each explains one reading in it)
    explain, as many as can be: each reading taken by the window open at it that closes
    first."""
    windows, taken, k, open_ = sorted(windows), [], 0, []
    for r in readings:
        while k < len(windows) and windows[k][0] <= r:
            heapq.heappush(open_, windows[k][1])
            k += 1
        while open_ and open_[0] < r:
            heapq.heappop(open_)
        if open_:
            heapq.heappop(open_)
            taken.append(r)
    return taken


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
    events = [(f.ns(e.tsc), e.kind) for e in f.events[index] if e.kind in (ttr.REC_BEGIN, ttr.REC_END)]
    readings = [r.ns for r in f.counters.get(index, {"readings": []})["readings"]]
    spikes = spike_log.spikes(spike_log.entries(live))
    # (not the thread's own as it started, before its first event: neither tt-sched's nor
    # tt-spikes')
    first = min(ns for ns, _ in events)
    before = sorted(r for r in readings if first < r < begin)
    # Where the code reads: tt-sched for a scope, from a millisecond into one open that
    # long (its first reading up to a millisecond early) to its end, and once after it
    # (100 ms for a loaded machine's tt-sched kept off a CPU); tt-spikes once after each
    # spike it found (a short scope the machine's load stretched past the threshold),
    # whenever its look came; tt-sched once in each stretch its looks rest in (each thread
    # quiet outside its scopes read once since its last record: core/counters.c).
    inside, once, opened, depth = [], [], [], 0
    for (ns, kind), (after, _) in zip(events, events[1:] + [(None, None)]):
        if kind == ttr.REC_BEGIN:
            opened.append(ns)
        elif opened:
            at = opened.pop()
            if ns - at >= MS:
                inside.append((at + MS, ns))
                once.append([ns, ns + 100 * MS])
        depth = max(depth + (1 if kind == ttr.REC_BEGIN else -1), 0)
        if not depth and after is not None and after - ns >= QUIET_NS:
            once.append([ns + QUIET_NS, after + QUIET_SLACK])
    once += [[f.start[1] + s["start_ns"] + s["dur_ns"], begin] for s in spikes]
    outside = [r for r in before if not any(lo <= r <= hi for lo, hi in inside)]
    unexplained = sorted(set(outside) - set(explain(outside, once)))
    check(len(unexplained) <= ALLOWED, "%d readings in the second before the spike that neither tt-sched took "
          "(for a scope, or once as its looks rested) nor tt-spikes for a spike it found (at %s ms before it): "
          "tt-spikes read the counters at its looks"
          % (len(unexplained), [round((begin - r) / 1e6, 1) for r in unexplained]))
    found = [s for s in spikes if s["name"] == "spike"]
    check(len(found) == 1, "live log: %d spikes named spike, of %d" % (len(found), len(spikes)))
    for s in found:
        check(s.get("no_split") != "no counters reading after its start",
              "the live spike had no reading after its start: tt-spikes read none for it (%r)" % s)
    print("%d readings, %d before the spike: %d inside scopes of 1 ms or more, %d after one or in a rest, "
          "%d unexplained; the live spike: %s"
          % (len(readings), len(before), len(before) - len(outside), len(outside) - len(unexplained),
             len(unexplained), found[0].get("no_split", "split") if found else "-"))
sys.exit(verdict())
