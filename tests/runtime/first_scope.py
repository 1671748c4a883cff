#!/usr/bin/env python3
"""A thread nobody named is named after its first scope in every file of a run (r40's
F6): a worker whose first scope ("worker") lasts the whole run of it is "PROC: worker"
in mode stop's file, which holds its start, and in mode ring's run file and its
trigger's snapshot too, which hold only its last scopes (the ring wrapped): named
before after the first scope they kept, "PROC: inner". The live spike log (text in
mode stop, JSONL in mode ring) names it so too (r41's F5: "PROC", the process's name).
   first_scope.py PROGRAM TICKTRACE"""
import glob
import json
import os
import subprocess
import sys
import tempfile

prog, tool = sys.argv[1], sys.argv[2]


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def events_of(path, tmp):
    out = os.path.join(tmp, "x.json")
    r = subprocess.run([tool, "convert", "--force", path, "-o", out], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail("convert %s: %s" % (path, r.stderr))
    with open(out) as f:
        events = json.load(f)
    return events["traceEvents"] if isinstance(events, dict) else events


def worker_name(events):
    pids = {e["pid"] for e in events}
    names = {e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name" and e["tid"] not in pids and
             not e["args"]["name"].endswith(" (states)")}
    if len(names) != 1:
        fail("not one worker thread: %s" % sorted(names))
    return names.pop()


with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ)
    for k in ("TICKTRACE", "TICKTRACE_MODE", "TICKTRACE_BUFFER", "TICKTRACE_SNAPSHOTS"):
        env.pop(k, None)
    whole = os.path.join(tmp, "stop.ttr")
    text = os.path.join(tmp, "spikes.txt")
    subprocess.run([prog], env=dict(env, TICKTRACE_OUT=whole, TICKTRACE_SPIKES=text,
                                    TICKTRACE_SPIKE_THRESHOLD="1ms"), check=True, timeout=120)
    events = events_of(whole, tmp)
    proc = next(e["args"]["name"] for e in events if e.get("name") == "process_name")
    want = proc + ": worker"
    if worker_name(events) != want:
        fail("mode stop: the worker is %r, not %r" % (worker_name(events), want))
    with open(text) as f:
        said = f.read()
    # (the worker's first scope is its longest: one spike of it at least)
    if "thread %s (tid" % want not in said or "thread %s (tid" % proc in said:
        fail("the live spike log names the worker otherwise than %r: %s" % (want, said[:2000]))
    snaps = os.path.join(tmp, "snaps")
    os.mkdir(snaps)
    ring = os.path.join(tmp, "ring.ttr")
    jsonl = os.path.join(tmp, "spikes.jsonl")
    # (a ring of 40,000 records wraps five times over the worker's 200,000, and holds the
    # 20,000 written after the trigger: its window is there however late tt-spikes copies it)
    subprocess.run([prog], env=dict(env, TICKTRACE_OUT=ring, TICKTRACE_MODE="ring", TICKTRACE_BUFFER="40000",
                                    TICKTRACE_SNAPSHOTS=snaps, TICKTRACE_SNAPSHOT_BEFORE="5ms",
                                    TICKTRACE_SNAPSHOT_AFTER="1ms", TICKTRACE_SPIKES=jsonl,
                                    TICKTRACE_SPIKE_THRESHOLD="1ms"), check=True, timeout=120)
    with open(jsonl) as f:
        threads = {json.loads(line)["thread"] for line in f if line.strip()}
    if want not in threads or proc in threads:
        fail("mode ring's live spike log names the threads %s, not the worker %r" % (sorted(threads), want))
    files = [ring] + sorted(glob.glob(os.path.join(snaps, "trigger-*.ttr")))
    if len(files) != 2:
        fail("no trigger's snapshot: %s" % os.listdir(snaps))
    for path in files:
        events = events_of(path, tmp)
        inner = sum(1 for e in events if e.get("name") == "inner")
        # (the ring wrapped: the worker's first records are gone from this file)
        if not 0 < inner < 100000:
            fail("%s holds %d inner scopes: not the end of them alone" % (os.path.basename(path), inner))
        if worker_name(events) != want:
            fail("%s names the worker %r, not %r" % (os.path.basename(path), worker_name(events), want))
    print("the worker is %r in mode stop's file, mode ring's and its snapshot" % want)
