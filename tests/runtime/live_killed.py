#!/usr/bin/env python3
"""A run killed by SIGKILL with TICKTRACE_LIVE=1 before tt-live described its threads
(its first THREAD sections come 200 ms in): each worker is still itself in the live
file, by the tid and name it wrote as it registered. `info` lists each worker's tid and
name; the .pftrace puts each one's slices on its own thread, none on tid 0, and
trace_processor loads it with no error (every worker on one track: overlapping
slices, slice_spill_overlapping_complete_event). The same file without its threads'
identities (a file from before them, or from a runtime that writes none): each
worker still a thread of its own, of a tid said as not known, none 0. Workers that
keep the process's name are named after their first scope ("PROG: outer"), which
the killed run had not described (named from the binary first).

Usage: live_killed.py PROG TICKTRACE   (PROG: live_killed_prog)"""
import csv
import io
import os
import re
import struct
import subprocess
import sys
import tempfile

import ttr

PROG, TOOL = sys.argv[1:3]
THREADS, LOOPS = 4, 20000
LIVE_SECTIONS_END = ttr.HEADER - 24  # format.h: struct tt_file_header
LIVE_THREADS_AT = ttr.HEADER - 8
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def described(live):
    """How many THREAD sections the live file's descriptions hold."""
    data = open(live, "rb").read()
    end, = struct.unpack_from("<Q", data, LIVE_SECTIONS_END)
    off, count = ttr.HEADER, 0
    while off < end:
        kind, _, size = struct.unpack_from("<IIQ", data, off)
        count += kind == ttr.SEC_THREAD
        off += 16 + (size + 15) // 16 * 16
    return count


def killed_run(tmp, *how):
    """Runs the program until one run dies before any worker is described; returns
    its live file and {tid: name} of the workers."""
    for attempt in range(5):
        out = os.path.join(tmp, "k%s%d.ttr" % ("".join(how), attempt))
        env = dict(os.environ, TICKTRACE_LIVE="1", TICKTRACE_OUT=out)
        c = subprocess.run([PROG, str(THREADS), str(LOOPS)] + list(how), env=env,
                           capture_output=True, text=True, timeout=120)
        if c.returncode != -9:
            sys.exit("%s exited %d, not killed: %s" % (PROG, c.returncode, c.stderr))
        workers = {int(t): n for t, n in (line.split() for line in c.stdout.splitlines())}
        live = out + ".live"
        if len(workers) == THREADS and described(live) == 0:
            return live, workers
        print("run %d: tt-live described threads before the kill (a loaded machine): again"
              % attempt)
    sys.exit("every run had its threads described before its kill")


def trace_processor_threads(tmp, trace):
    """{tid: (name, slices)} of the .pftrace's threads, and its error and data-loss
    stats; None where trace_processor_shell is not there."""
    tp = os.environ.get("TICKTRACE_TRACE_PROCESSOR") or \
        os.path.expanduser("~/.cache/ticktrace/trace_processor_shell")
    if not os.access(tp, os.X_OK):
        print("no trace_processor_shell at %s: the .pftrace not loaded" % tp)
        return None
    query = os.path.join(tmp, "q.sql")
    with open(query, "w") as f:
        f.write("SELECT 'thread', t.tid, t.name, COUNT(s.id) FROM thread t "
                "JOIN thread_track tt USING (utid) JOIN slice s ON s.track_id = tt.id "
                "GROUP BY t.utid UNION ALL SELECT 'stat', name, '', value FROM stats "
                "WHERE value > 0 AND severity IN ('error', 'data_loss');\n")
    c = subprocess.run([tp, "query", "-f", query, trace], capture_output=True, text=True,
                       timeout=300)
    check(c.returncode == 0, "trace_processor: %s" % c.stderr[-2000:])
    threads, stats = {}, {}
    for row in csv.reader(io.StringIO(c.stdout)):
        if len(row) == 4 and row[0] == "thread":
            threads[int(row[1])] = (row[2], int(row[3]))
        elif len(row) == 4 and row[0] == "stat":
            stats[row[1]] = row[3]
    return threads, stats


def converted(tmp, live, name):
    """The .pftrace of `live`, loaded in trace_processor (None where it is not)."""
    trace = os.path.join(tmp, name + ".pftrace")
    c = subprocess.run([TOOL, "convert", live, "-o", trace], capture_output=True,
                       text=True, timeout=300)
    check(c.returncode == 0, "convert %s: %s" % (live, c.stderr))
    loaded = trace_processor_threads(tmp, trace)
    if loaded:
        check(not loaded[1], "%s: trace_processor's errors: %s" % (name, loaded[1]))
        check(0 not in loaded[0], "%s: slices on tid 0: %s" % (name, (loaded[0].get(0),)))
    return loaded


def check_without_identities(tmp, live):
    """The live file with live_threads_at 0: its workers apart, their tids not known."""
    data = bytearray(open(live, "rb").read())
    struct.pack_into("<Q", data, LIVE_THREADS_AT, 0)
    old = os.path.join(tmp, "old.ttr.live")
    open(old, "wb").write(data)
    info = subprocess.run([TOOL, "info", old], capture_output=True, text=True, timeout=120)
    unknown = re.findall(r"^\s*(\d+)\s+\(thread \d+, tid not known", info.stdout, re.M)
    check(info.returncode == 0 and len(set(unknown)) == THREADS and "0" not in unknown,
          "without identities, info does not list %d threads of tids not known, "
          "none 0:\n%s%s" % (THREADS, info.stdout, info.stderr))
    loaded = converted(tmp, old, "old")
    if loaded:
        for tid in unknown:
            got = loaded[0].get(int(tid))
            check(got and got[1] == 2 * LOOPS,
                  "without identities, tid %s: %s, not its %d slices" % (tid, got, 2 * LOOPS))


def check_unnamed(tmp):
    """Workers with the process's name: each named after its first scope."""
    live, workers = killed_run(tmp, "unnamed")
    info = subprocess.run([TOOL, "info", live], capture_output=True, text=True, timeout=120)
    loaded = converted(tmp, live, "unnamed")
    # (its wall clock "as written" is the live file's making, not a time the run wrote it
    # last: said so, outside tester r50 #6)
    check("wall clock as the file began:" in info.stdout and "wall clock as written" not in info.stdout,
          "info of a killed run's live file: its second wall clock not said as the live file's making:\n%s"
          % info.stdout)
    for tid, name in workers.items():
        check(re.search(r"^\s*%d\s+%s: outer\s" % (tid, re.escape(name)), info.stdout, re.M),
              "info does not name worker %d \"%s: outer\":\n%s" % (tid, name, info.stdout))
        if loaded:
            got = loaded[0].get(tid)
            check(got and got[0] == name + ": outer",
                  "the .pftrace names worker %d %s, not \"%s: outer\"" % (tid, got, name))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_unnamed(tmp)
        live, workers = killed_run(tmp)
        check_without_identities(tmp, live)
        info = subprocess.run([TOOL, "info", live], capture_output=True, text=True, timeout=120)
        check(info.returncode == 0, "info %s: %s" % (live, info.stderr))
        for tid, name in workers.items():
            check(re.search(r"^\s*%d\s+%s\b" % (tid, name), info.stdout, re.M),
                  "info does not list worker %s as tid %d" % (name, tid))
        check(not re.search(r"^\s*0\s", info.stdout, re.M), "info lists a thread of tid 0")
        if failures:
            print(info.stdout)
        loaded = converted(tmp, live, "k")
        if loaded:
            for tid, name in workers.items():
                got = loaded[0].get(tid)
                check(got and got[0].startswith(name) and got[1] == 2 * LOOPS,
                      "worker %s (tid %d): %s, not its %d slices" % (name, tid, got, 2 * LOOPS))
    if failures:
        sys.exit("%d failures" % len(failures))
    print("ok: %d workers killed undescribed, each its own thread" % THREADS)


main()
