#!/usr/bin/env python3
"""A spike's page faults, counted between the readings before its start and after its
end, are all of its faults (and any between those readings outside it): never fewer
than the kernel counted across it. tt-sched read a watched scope's counters on while
it stayed open without the page faults (stat, the dearest file), each reading then
carrying the last one's: a scope inside it that no watch followed, between two such
readings, counted 0 faults where the kernel counted 512 (outside recheck r40, F1).

faults_inner_prog: a scope "outer" of 60 scopes "touch" of 512 minor faults each, too
short to be watched. Every touch spike whose faults were read around it (not "at
least") counts at least the kernel's.

Usage: faults_inner.py PROG TICKTRACE"""
import json
import os
import subprocess
import sys
import tempfile

from verdict import check, verdict

PROG, TOOL = sys.argv[1], sys.argv[2]
if not os.path.exists("/proc/self/schedstat"):
    print("SKIP: the kernel keeps no schedstat (CONFIG_SCHED_INFO): no counters to read")
    sys.exit(77)

with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "run.ttr")
    env = dict(os.environ, TICKTRACE_SCHED="schedstat", TICKTRACE_OUT=out)
    env.pop("TICKTRACE_MODE", None)
    p = subprocess.run([PROG], env=env, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "the program ended with %d: %s" % (p.returncode, p.stderr))
    kernel = [tuple(map(int, line.split()[1:4])) for line in p.stdout.splitlines()
              if line.startswith("touch ")]
    check(len(kernel) == 60, "the program said %d scopes, not 60" % len(kernel))
    s = subprocess.run([TOOL, "spikes", out, "--threshold", "1us", "--json", "-q"],
                       capture_output=True, text=True, timeout=120)
    check(s.returncode == 0, "spikes ended with %d: %s" % (s.returncode, s.stderr))
    spikes = [json.loads(line) for line in s.stdout.splitlines() if line.strip()]
    touches = [sp for sp in spikes if sp.get("name") == "touch"]
    check(len(touches) == 60, "%d touch spikes, not 60" % len(touches))
    around = 0
    for sp, (begin, end, minflt) in zip(sorted(touches, key=lambda sp: sp["start_ns"]), kernel):
        if "minor_faults" not in sp or sp.get("faults_at_least"):
            continue
        around += 1
        check(sp["minor_faults"] >= minflt,
              "a touch spike of %d ns counted %d minor faults read around it, the kernel %d "
              "across it: %s" % (end - begin, sp["minor_faults"], minflt, sp))
    # (a watched "outer" is read on while it stays open: readings around nearly every one)
    check(around >= 30, "only %d of 60 touch spikes had their faults read around them" % around)
    print("%d touch spikes' faults read around them, each at least the kernel's" % around)
sys.exit(verdict())
