#!/usr/bin/env python3
"""The live spike log stays within TICKTRACE_SPIKES_LOG_MAX (r44: a ring run's log grew
16 MB in 8 minutes, with no bound), keeping what a user needs most: the worst spikes of
the whole run, and what was left out, counted in a line of it and at exit. A ring
run of 200 planted spikes in a shuffled order (snapshot_worst_prog) logs some 80 KB;
bound to 16 KiB, the log is written again with its worst spikes now and then. Checked:
its size, seen as it grows (at most the bound and one entry, for a moment) and at the
end (within it); one line in it, a note, that says what was left out, the spikes it
keeps and those left out adding up to the spikes found (the snapshots' exit line
counts them); every spike above that line (the last rewrite's) worse than the worst
left out; the worst of the run (the snapshots keep the 16 worst) all in it; the same
count said at exit. And in text, the same bound, the line said as text. Before,
the log took every spike: 80 KB.
Usage: spike_log_bound.py PROG"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from fractions import Fraction

from verdict import check, verdict

PROG = sys.argv[1]
# (16 KiB: under the CI's ASan build the detector, held to its share, passes over a held
# thread's older records with snapshots on and found 54 spikes, whose JSON, 23 KB, fit
# within 24 KiB: the bound was never met)
MAX = 16 << 10
ENTRY_MAX = 4096  # (an entry's text at most, here: a planted spike's stack is short)


def exit_line_of(said):
    """The line at exit that says what the bound left out."""
    return re.search(r"ticktrace: spike log \S+: (\d+) spikes? and (\d+) notes? \(of (\d+) events "
                     r"overwritten(?:, \d+ passed over)?\) left out to keep it within TICKTRACE_SPIKES_LOG_MAX "
                     r"\((\d+) bytes\): it keeps the worst spikes \(a line in it says what "
                     r"was left out\)\n", said)


def run(tmp, name):
    """The log's path, what the program said, and the largest size seen as it ran."""
    log = os.path.join(tmp, name)
    snaps = os.path.join(tmp, "snaps-" + name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TICKTRACE")}
    env.update(TICKTRACE_OUT="/dev/null", TICKTRACE_MODE="ring", TICKTRACE_BUFFER="131072",
               TICKTRACE_SNAPSHOTS=snaps, TICKTRACE_SNAPSHOT_BEFORE="1ms",
               TICKTRACE_SNAPSHOT_AFTER="1ms", TICKTRACE_SPIKES=log,
               TICKTRACE_SPIKE_THRESHOLD="1ms", TICKTRACE_SPIKES_LOG_MAX=str(MAX))
    largest = 0
    with tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen([PROG, "shuffle"], env=env, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + 120
        try:
            while p.poll() is None and time.monotonic() < deadline:
                try:
                    largest = max(largest, os.path.getsize(log))
                except FileNotFoundError:
                    pass
                time.sleep(0.005)
        finally:
            if p.poll() is None:
                p.kill()
            code = p.wait()
        err.seek(0)
        said = err.read()
    check(code == 0, f"{name}: exit {code}: {said}")
    if not exit_line_of(said) and largest <= MAX and "was held to its share" in said:
        # (the premise, more spikes found than the bound holds, not met: under the CI's
        # ASan build the detector is held to its share, passes over a held thread's older
        # records with snapshots on, and found 18 to 58 of the 200)
        print(f"SKIP: {name}: the detector, held to its share, found too few spikes to fill "
              f"the log's {MAX} bytes ({largest} at most): the bound is not tried: {said}")
        sys.exit(77)
    check(largest <= MAX + ENTRY_MAX, f"{name}: the log reached {largest} bytes as it ran, past "
          f"its bound of {MAX} and an entry")
    size = os.path.getsize(log) if os.path.exists(log) else -1
    check(0 < size <= MAX, f"{name}: the log ended with {size} bytes, its bound {MAX}")
    found = re.search(r"ticktrace: of (\d+) spikes, the snapshots keep", said)
    check(found, f"{name}: the spikes found not said: {said}")
    exit_line = exit_line_of(said)
    check(exit_line and int(exit_line.group(4)) == MAX, f"{name}: what was left out not said at exit: "
          f"{said}")
    print(f"{name}: {size} bytes at the end, {largest} at most as it ran; said: "
          f"{exit_line.group(0).strip() if exit_line else '?'}")
    return (log, snaps, int(found.group(1)) if found else -1,
            [int(n) for n in exit_line.groups()] if exit_line else None)


def json_log():
    with tempfile.TemporaryDirectory(prefix="tt-spike-log-bound-") as tmp:
        log, snaps, found, said = run(tmp, "bound.jsonl")
        with open(log) as f:
            lines = [json.loads(line) for line in f]
        at = [i for i, e in enumerate(lines) if "spikes_left_out" in e]
        check(len(at) == 1, f"json: {len(at)} notes of what was left out, not one")
        note = lines[at[0]] if at else {}
        spikes = [e for e in lines if "dur_ns" in e]
        check("name" not in note and "dur_ns" not in note, f"json: the note is a spike's line: {note}")
        out = note.get("spikes_left_out", -1)
        check(len(spikes) + out == found, f"json: {len(spikes)} spikes kept and {out} left out, "
              f"not the {found} found")
        check(said and said[0] == out and said[1] == note.get("notes_left_out"),
              f"json: said at exit {said}, the note {note}")
        # (the spikes above the note, those the last rewrite kept, each worse than the
        # worst left out)
        worst = Fraction(note.get("worst_left_out_ns", 0), max(note.get("worst_left_out_threshold_ns", 1), 1))
        above = [e for e in lines[:at[0] if at else 0] if "dur_ns" in e]
        below = [s["name"] for s in above if Fraction(s["dur_ns"], max(s["threshold_ns"], 1)) < worst]
        check(out > 0 and above and not below, f"json: {len(above)} kept at the last rewrite, yet not "
              f"worse than the worst left out ({worst}): {below}")
        names = {s["name"] for s in spikes}
        worst_run = {re.fullmatch(r"spike-\d+-\d+-(.*)\.ttr", f).group(1) for f in os.listdir(snaps)}
        check(len(worst_run) == 16 and worst_run <= names,
              f"json: the run's worst (its snapshots) not all in the log: {sorted(worst_run - names)}")
        print(f"json: {len(spikes)} spikes kept ({len(above)} above the note), {out} left out of {found}; "
              f"the run's 16 worst in it")


def text_log():
    with tempfile.TemporaryDirectory(prefix="tt-spike-log-bound-") as tmp:
        log, _, found, said = run(tmp, "bound.log")
        with open(log) as f:
            text = f.read()
        notes = re.findall(r"^log: within TICKTRACE_SPIKES_LOG_MAX \((\d+) bytes\) it keeps the worst "
                           r"spikes: (\d+) found up to [\d.]+ s were left out \(the worst of them [\d.]+ ms "
                           r"over a threshold of [\d.]+ ms\), and (\d+) notes \(of (\d+) events "
                           r"overwritten before the detector read them(?:, and of \d+ it passed over)?\)$", text, re.M)
        check(len(notes) == 1, f"text: {len(notes)} lines of what was left out, not one")
        kept = len(re.findall(r"^spike: ", text, re.M))
        out = int(notes[0][1]) if notes else -1
        check(kept + out == found, f"text: {kept} spikes kept and {out} left out, not the {found} found")
        check(said and said[0] == out, f"text: said at exit {said}, the log's {notes}")
        print(f"text: {kept} spikes kept, {out} left out of {found}")


def main():
    json_log()
    text_log()
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
