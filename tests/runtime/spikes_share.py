#!/usr/bin/env python3
"""The live spike detector is held to its share of the program's CPU time: a thread
writing millions of records a second, in mode ring with snapshots and a spike log, cost
tt-spikes 26 % of the program's CPU time (a -finstrument-functions build of gzip:
outside recheck r39 F4), more the more it wrote. Its CPU time against the process's is a
ratio: a loaded machine slows both.

spikes_share_prog: 4 s of CPU time of empty scopes "hot", a scope "spike" of 2 ms of CPU
time every 100 ms. Checked: tt-spikes' share as its exit line says it (said from 1 %) at
most the share, 5 % (or one CPU's 2 % of the run's time where more: a loaded machine's
run is long), and MARGIN more (the exit's last look reads what the ring holds
then, and the look that passed the share ends past it); that it says it was held, and
the log says so too; and that the spikes it found are spikes: "spike" of 2 ms at least,
no other name than the program's.

Usage: spikes_share.py PROG"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from verdict import check, verdict

PROG = sys.argv[1]
SHARE, WALL, MARGIN = 5.0, 2.0, 3.0

with tempfile.TemporaryDirectory() as tmp:
    live = os.path.join(tmp, "live.jsonl")
    env = dict(os.environ, TICKTRACE_MODE="ring", TICKTRACE_SNAPSHOTS=os.path.join(tmp, "snaps"),
               TICKTRACE_SPIKES=live, TICKTRACE_SPIKE_THRESHOLD="1ms",
               TICKTRACE_OUT=os.path.join(tmp, "run.ttr"))
    began = time.monotonic()
    p = subprocess.run([PROG], env=env, capture_output=True, text=True, timeout=150)
    wall = time.monotonic() - began
    check(p.returncode == 0, "the program ended with %d: %s" % (p.returncode, p.stderr))
    cost = re.search(r"tt-spikes.*for ([0-9.]+) ms of CPU time: ([0-9.]+)% of the program's ([0-9.]+) ms",
                     p.stderr)
    share = float(cost.group(2)) if cost else 0.0  # (said from 1 %)
    # (or one CPU's WALL % of the run's time, where more: the program's wall time is at most
    # what this one measured)
    allowed = max(SHARE, 100 * WALL / 100 * wall * 1000 / float(cost.group(3))) if cost else SHARE
    check(share <= allowed + MARGIN, "tt-spikes took %.2f%% of the program's CPU time, past its share "
          "(%.2f%%) and %.0f more: %s" % (share, allowed, MARGIN, p.stderr))
    held = re.search(r"held to its share .*\) for ([0-9.]+) s: .* up to ([0-9.]+) s apart.*; ([0-9]+) events",
                     p.stderr)
    check(held is not None, "tt-spikes' exit says nothing of its share: %s" % p.stderr)
    entries = [json.loads(line) for line in open(live)]
    check(any("detector_share_pct" in e for e in entries),
          "the log does not say the detector was held to its share")
    spikes = [e for e in entries if "name" in e]
    for s in spikes:
        check(s["name"] in ("hot", "spike"), "a spike of no scope of the program: %r" % s)
        check(s["name"] != "spike" or s["dur_ns"] >= 2000000, "a spike shorter than its 2 ms: %r" % s)
    print("tt-spikes: %.2f%% of the program's CPU time, allowed %.2f%% (%s); held: %s; %d spikes (%d \"spike\")"
          % (share, allowed, cost.group(0) if cost else "not said", held.group(0) if held else "-", len(spikes),
             sum(s["name"] == "spike" for s in spikes)))
sys.exit(verdict())
