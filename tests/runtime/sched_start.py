#!/usr/bin/env python3
"""A new thread's start opens no /proc file with the counters as the source (issue 35.2:
the start reading was 9 system calls and the kernel's first build of the thread's /proc
directory, about 30 us a thread, most of schedstat_overhead_pct's part outside tt-sched).
sched_start_prog's threads are made with perf refused (EACCES, as perf_event_paranoid 3
refuses it):

- under strace (which makes each thread start well past the 0.1 ms within which a
  thread's start used to stand its counters at 0 for a reading), "starter", which
  records nothing, opened no file of /proc at all;
- "first", whose first scope is a 3 ms sleep, has its counters at its pthread_create
  call, all 0, its own (TT_SCHEDSTAT_OWN_FIRST), as its first reading, and its sleep
  split from the counters: on CPU + preempted + blocked = its duration, nothing
  unknown, mostly blocked within what it states, the error under half its length
  (the bound from that moment to the sleep's start holds whatever wait a late start
  had: judged where the thread began within 1 ms of its call, of 3 runs at most).

In modes stop and stream, and stop under strace (where strace is). Usage:
sched_start.py PROG TICKTRACE
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import ttr
from verdict import check, verdict

PROG, TOOL = sys.argv[1:3]
MS = 1000000
OWN_FIRST = 1 << 5  # format.h: TT_SCHEDSTAT_OWN_FIRST
LATE_MOST_NS = MS  # a first event this long after the call: its split judged (3 runs)


def run(tmp, mode, strace=None):
    """One run: the starter's opens of /proc (under strace), the first thread's split;
    False where its thread began too late after its call for the split to be judged."""
    what = mode + (", under strace" if strace else "")
    out = os.path.join(tmp, "start-%s-%d.ttr" % (mode, bool(strace)))
    calls = os.path.join(tmp, "strace-%s.txt" % mode)
    cmd = [strace, "-f", "-qq", "-e", "trace=openat,open", "-o", calls, PROG] if strace else [PROG]
    env = dict(os.environ, TICKTRACE_OUT=out, TICKTRACE_MODE=mode)
    if strace and "ASAN_OPTIONS" in env:
        # (LeakSanitizer's check at exit does not work under ptrace: it aborts the program)
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    if p.returncode != 0 and "seccomp" in p.stderr:
        print("not run: %s" % p.stderr.strip())
        sys.exit(77)
    check(p.returncode == 0, "%s: the program failed (%d): %s" % (what, p.returncode, p.stderr))
    if p.returncode != 0:
        return True
    said = {}
    for line in p.stdout.splitlines():
        said.update(json.loads(line))
    if strace:
        opened = [line.strip() for line in open(calls) if line.split()[0] == str(said["starter"]) and "/proc" in line]
        check(not opened, "%s: the starter opened %d /proc files as it started: %s" % (what, len(opened), opened))
        return True  # (its split not judged: tt-sched, traced too, may not read the thread)

    s = subprocess.run([TOOL, "spikes", "--json", "--threshold", "1ms", out],
                       capture_output=True, text=True, timeout=60)
    check(s.returncode == 0, "%s: ticktrace spikes failed: %s" % (what, s.stderr))
    found = [sp for sp in map(json.loads, s.stdout.splitlines())
             if sp["tid"] == said["first"] and sp["name"] == "sleep3"]
    check(len(found) == 1, "%s: %d spikes sleep3" % (what, len(found)))
    if len(found) != 1:
        return True
    sp = found[0]
    f = ttr.Ttr(out, packed_events=True)
    index = f.index_of(said["first"])
    readings = f.counters.get(index, {"readings": [], "flags": 0})
    first_ns = f.start[1] + sp["start_ns"]  # (its first event: the sleep's begin)
    r = readings["readings"][0] if readings["readings"] else None
    check(r is not None and (readings["flags"] & OWN_FIRST) and r.run_ns == 0 and r.wait_ns == 0
          and r.ns < first_ns,
          "%s: the first thread's first reading is not its counters at its pthread_create call, "
          "before its first event at %d: %s (flags %#x)" % (what, first_ns, r, readings["flags"]))
    # (a thread that waited long for a CPU to start has that wait within its first
    # scope's error: at load, up to all of a 3 ms sleep, whose split then says nothing)
    if r is not None and first_ns - r.ns > LATE_MOST_NS:
        print("%s: the first thread began %.2f ms after its pthread_create call: its split not judged"
              % (what, (first_ns - r.ns) / MS))
        return False

    on, pre, blk, unknown = (sp.get(k) for k in ("on_cpu_ns", "preempted_ns", "blocked_ns", "unknown_ns"))
    err = sp.get("causes_error_ns", 0)
    check(on is not None and sp.get("causes_from") == "schedstat",
          "%s: sleep3, its first scope, not split from the counters: %s" % (what, sp))
    if on is None:
        return True
    check(on + pre + blk + unknown == sp["dur_ns"] and unknown == 0 and 2 * err < sp["dur_ns"]
          and blk + err >= 3 * MS * 9 // 10,
          "%s: sleep3 (%d ns) split on CPU %d, preempted %d, blocked %d, unknown %d, within %d"
          % (what, sp["dur_ns"], on, pre, blk, unknown, err))
    print("%s: the first thread's first scope (%.2f ms, begun %.3f ms after its pthread_create call) "
          "split: on CPU %d, preempted %d, blocked %d ns, within %d"
          % (what, sp["dur_ns"] / MS, (first_ns - r.ns) / MS if r else float("nan"), on, pre, blk, err))
    return True


def main():
    with tempfile.TemporaryDirectory(prefix="ticktrace-sched-start-") as tmp:
        for mode in ("stop", "stream"):
            for attempt in range(3):
                if run(tmp, mode):
                    break
        strace = shutil.which("strace")
        if strace:
            run(tmp, "stop", strace)
        else:
            print("no strace here: the starter's opens not counted")
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
