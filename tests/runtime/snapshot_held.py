#!/usr/bin/env python3
"""Snapshots of a thread the live detector holds to its share keep their windows: the
detector read such a thread again from its ring's front, the records the ring
overwrites next, found spikes whose windows began before that front, and copied them
after the look; the larger the ring, the older what it read (outside test r49, F5:
sqlite3 under record -f, 4 of 8 snapshots cut, each run's TICKTRACE_BUFFER advice too
small the next run). Now it reads such a thread's newest records its share affords,
copies a window as soon as it ends, and wakes for that end. The records it passes over
to do so are said as passed over ("skipped_events"), not as overwritten, in the log and
at exit (they were still in the ring: the log had said them overwritten).

spikes_share_prog (a thread writing records as fast as it can, held; a spike of 2 ms
every 100 ms of its CPU time; preempted scopes of more than 1 ms among them), mode ring,
TICKTRACE_BUFFER=4194304 (a ring of some 100 ms here), each window from 5 ms before
its spike to 1 ms after, TICKTRACE_SNAPSHOT_MAX=8. Checked: the detector said it held
the thread; the log's notes of events passed over and overwritten add up to what the
exit says of each, and some were passed over; of the snapshots kept, at most CUT_MOST have a window cut (main's code: 3,
5, 5, 6 of 8 in four runs at load 7 to 16; this one's: 0, 0, 1, 1). (Whether the
buffer a run advises holds the next run's windows is not checked: the advice assumes the
next run's rate and delay, and a fresh-clone CI's two runs differed 3.5 times in rate,
79.8 and 22.5 M records/s, the advised run 3 of 7 cut.)

Usage: snapshot_held.py PROG TICKTRACE"""
import json
import os
import re
import subprocess
import sys
import tempfile

from verdict import check, verdict

PROG, TOOL = sys.argv[1:3]
CUT_MOST = 2

def run(tmp, label, buffer):
    """The run's snapshot files, those cut, and what it said."""
    snaps = os.path.join(tmp, f"snaps-{label}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TICKTRACE")}
    env.update(TICKTRACE_MODE="ring", TICKTRACE_BUFFER=str(buffer), TICKTRACE_SNAPSHOTS=snaps,
               TICKTRACE_SNAPSHOT_MAX="8", TICKTRACE_SNAPSHOT_BEFORE="5ms", TICKTRACE_SNAPSHOT_AFTER="1ms",
               TICKTRACE_SPIKES=os.path.join(tmp, f"live-{label}.jsonl"), TICKTRACE_SPIKE_THRESHOLD="1ms",
               TICKTRACE_OUT=os.path.join(tmp, f"run-{label}.ttr"))
    p = subprocess.run([PROG], env=env, capture_output=True, text=True, timeout=150)
    check(p.returncode == 0, f"{label}: the program ended with {p.returncode}: {p.stderr}")
    files = sorted(os.listdir(snaps)) if os.path.isdir(snaps) else []
    cut = []
    for f in files:
        info = subprocess.run([TOOL, "info", os.path.join(snaps, f)], capture_output=True, text=True,
                              timeout=60)
        check(info.returncode == 0, f"{label}: {f}: info failed: {info.stderr}")
        cuts = re.findall(r"^ *window cut: .*$", info.stdout, re.M)
        if cuts:
            cut.append((f, cuts))
    print(f"{label}, TICKTRACE_BUFFER={buffer}: {len(cut)} of {len(files)} snapshots cut: {cut}\n"
          f"{p.stderr.strip()}")
    return files, cut, p.stderr


def notes(tmp, label, err):
    """The log's notes of events not read, by kind, against the exit's counts."""
    said = {"overwritten_events": 0, "skipped_events": 0}
    with open(os.path.join(tmp, f"live-{label}.jsonl")) as log:
        for line in log:
            entry = json.loads(line)
            for key in said:
                said[key] += entry.get(key, 0)
    exit_said = re.search(r"(\d+) events the rings overwrote before it read them(?:, and (\d+) it passed over)?", err)
    check(exit_said, f"{label}: the exit says the events not read: {err}")
    if not exit_said:
        return
    overwritten, skipped = int(exit_said.group(1)), int(exit_said.group(2) or 0)
    print(f"{label}: the log's notes: {said}; the exit's: {overwritten} overwritten, {skipped} passed over")
    check(said["skipped_events"] > 0 and skipped == said["skipped_events"],
          f"{label}: the records passed over said as such, in the log and at exit: {said}, exit {skipped}")
    check(overwritten == said["overwritten_events"],
          f"{label}: the log's overwritten events as the exit's: {said}, exit {overwritten}")


def whole(label, files, cut, err):
    check(len(files) >= 3, f"{label}: at least 3 snapshots of the run's spikes: {files}: {err}")
    check(len(cut) <= CUT_MOST, f"{label}: {len(cut)} of {len(files)} snapshots' windows cut (at most "
          f"{CUT_MOST}): {cut}: {err}")


with tempfile.TemporaryDirectory(prefix="tt-snapshot-held-") as tmp:
    # (again once where more were cut, or fewer than 3 kept: a detector behind on a
    # loaded machine, its spike found 640 ms after its window ended, cut 4 of 7 in a
    # fresh-clone CI's ASan stage, three tests and Wine's beside it, 0 of 4 and 5 alone
    # in the same build; 2 to 6 kept in 9 runs here, gcc's, before and after c75a77ae)
    for attempt in range(2):
        files, cut, err = run(tmp, f"large{attempt or ''}", 4194304)
        if len(files) >= 3 and len(cut) <= CUT_MOST:
            break
        print(f"large: {len(cut)} of {len(files)} snapshots cut{': again' if not attempt else ''}")
    if "held to its share" not in err:
        print(f"SKIP: the detector never held the thread here (a fast machine, or a quiet one): {err}")
        sys.exit(77)
    notes(tmp, f"large{attempt or ''}", err)
    whole("large", files, cut, err)
sys.exit(verdict())
