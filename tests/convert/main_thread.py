#!/usr/bin/env python3
"""A process whose main thread records nothing (it only starts workers) still has its
main thread named in the .pftrace, whole and in each --split shard: trace_processor's
thread of tid = pid carries the process's name, as Linux names a main thread.

Usage: main_thread.py PROG TICKTRACE   (PROG: live_killed_prog)"""
import csv
import glob
import io
import os
import subprocess
import sys
import tempfile

PROG, TOOL = sys.argv[1:3]
THREADS, LOOPS, SPLIT = 4, 20000, 40000
TP = os.environ.get("TICKTRACE_TRACE_PROCESSOR") or \
    os.path.expanduser("~/.cache/ticktrace/trace_processor_shell")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def main_threads(tmp, trace):
    """[(pid, process name, main thread's name)] of the trace's processes."""
    query = os.path.join(tmp, "q.sql")
    with open(query, "w") as f:
        f.write("SELECT p.pid, p.name, COALESCE(t.name, 'NULL') FROM process p "
                "JOIN thread t ON t.upid = p.upid AND t.tid = p.pid WHERE p.pid > 0;\n")
    c = subprocess.run([TP, "query", "-f", query, trace], capture_output=True, text=True,
                       timeout=300)
    check(c.returncode == 0, "trace_processor on %s: %s" % (trace, c.stderr[-2000:]))
    return [tuple(r) for r in csv.reader(io.StringIO(c.stdout)) if len(r) == 3][1:]


def main():
    if not os.access(TP, os.X_OK):
        print("no trace_processor_shell at %s" % TP)
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        ttr = os.path.join(tmp, "m.ttr")
        c = subprocess.run([PROG, str(THREADS), str(LOOPS), "exit"],
                           env=dict(os.environ, TICKTRACE_OUT=ttr), capture_output=True,
                           text=True, timeout=120)
        check(c.returncode == 0, "%s: status %d: %s" % (PROG, c.returncode, c.stderr))
        whole = os.path.join(tmp, "whole.pftrace")
        c = subprocess.run([TOOL, "convert", ttr, "-o", whole], capture_output=True,
                           text=True, timeout=300)
        check(c.returncode == 0, "convert: %s" % c.stderr)
        c = subprocess.run([TOOL, "convert", ttr, "--split", str(SPLIT), "-o",
                            os.path.join(tmp, "out.pftrace")], capture_output=True,
                           text=True, timeout=300)
        check(c.returncode == 0, "convert --split: %s" % c.stderr)
        shards = sorted(glob.glob(os.path.join(tmp, "out*.pftrace")))
        check(len(shards) >= 2, "--split %d made %d shards" % (SPLIT, len(shards)))
        for trace in [whole] + shards:
            rows = main_threads(tmp, trace)
            check(len(rows) == 1 and rows[0][2] == rows[0][1] != "NULL",
                  "%s: main thread not named after its process: %s" %
                  (os.path.basename(trace), rows))
    if failures:
        sys.exit("%d failures" % len(failures))
    print("ok: the main thread named after its process, whole and in %d shards" % len(shards))


main()
