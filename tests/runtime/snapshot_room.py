#!/usr/bin/env python3
"""The memory a snapshot's window is copied into (writer/threads.c's copy room): kept
from one window to the next, let go a second after the last. It was mapped, faulted
in and unmapped for each window: a third of tt-spikes' CPU time where spikes came
every few tens of ms (outside recheck r38 R2's ring200).

snapshot_room_prog DIR, mode ring, TICKTRACE_SNAPSHOTS=DIR: the anonymous read-write
mappings of 4 MiB or more before a tt_trigger, once its snapshot is written (one more:
the room, kept; before this change none), and two seconds later (that one gone).

Usage: snapshot_room.py PROG"""
import os
import subprocess
import sys
import tempfile

from verdict import check, verdict

PROG = sys.argv[1]
with tempfile.TemporaryDirectory() as tmp:
    snaps = os.path.join(tmp, "snaps")
    os.mkdir(snaps)
    env = dict(os.environ, TICKTRACE_MODE="ring", TICKTRACE_SNAPSHOTS=snaps,
               TICKTRACE_OUT=os.path.join(tmp, "run.ttr"))
    p = subprocess.run([PROG, snaps], env=env, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "the program ended with %d: %s%s" % (p.returncode, p.stdout, p.stderr))
    seen, when = {}, None
    for line in p.stdout.splitlines():
        if line.startswith("big "):
            seen[when].add(line.split()[1])
        else:
            when = line
            seen[when] = set()
    check("written" in seen, "no snapshot written: %s %s" % (p.stdout, p.stderr))
    if "written" in seen:
        room = seen["written"] - seen["before"]
        check(len(room) == 1, "once the snapshot was written, %d new large mappings (%s): the "
              "room for the copies was not kept" % (len(room), sorted(room)))
        check(not room & seen.get("idle", set()), "two seconds after the snapshot the room %s is "
              "still mapped: never let go" % sorted(room & seen.get("idle", set())))
sys.exit(verdict())
