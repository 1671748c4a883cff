#!/usr/bin/env python3
"""A running program's live file read as far as written (ticktrace(7), CRASHES AND
KILLS), in modes ring and stop. Outside test r49, F1: in mode ring, `convert` and `info`
of a running program's live file failed ("offset N: INSTANT_ARG record without its
VALUE record", at a chunk's last event) whenever the program recorded two-record
events, while the same file converted once the program was killed: the reader mapped
the file, found each thread's chunks, and the decoder read them later, after the ring
had recycled them (zeroed, or another stretch of records) under it.

tt_longrun_prog `seq 2 4000000000`: two threads of TT_INSTANT_ARG flat out, read
while they record: every `convert` and `info` of the .live exits 0; then killed, the
file converts too.

Usage: live_running.py PROG TICKTRACE   (PROG: tt_longrun_prog)"""
import os
import signal
import subprocess
import sys
import tempfile
import time

from verdict import check, verdict

PROG, TOOL = sys.argv[1:3]
ROUNDS = 6


def tool(*args):
    return subprocess.run([TOOL] + list(args), capture_output=True, text=True, timeout=300)


def reads(tmp, mode):
    out = os.path.join(tmp, mode + ".ttr")
    live = out + ".live"
    # (4 MiB a thread: its ring recycles its chunks sooner than the default's 64 MiB,
    # and each read converts 16 times less: 7 minutes of the CI's ASan build at load)
    env = dict(os.environ, TICKTRACE_MODE=mode, TICKTRACE_LIVE="1", TICKTRACE_OUT=out,
               TICKTRACE_BUFFER="262144")
    p = subprocess.Popen([PROG, "seq", "2", "4000000000"], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    done = 0
    try:
        give_up = time.monotonic() + 60
        # (its threads described: tt-live's first THREAD sections come 200 ms in)
        while time.monotonic() < give_up and p.poll() is None and \
                tool("info", live).returncode != 0:
            time.sleep(0.2)
        for k in range(ROUNDS):
            if p.poll() is not None:
                break
            c = tool("convert", live, "-o", os.path.join(tmp, "%s%d.json" % (mode, k)))
            i = tool("info", live)
            running = p.poll() is None
            check(c.returncode == 0, "%s, round %d: convert of the running program's live file "
                  "exits %d: %s" % (mode, k, c.returncode, c.stderr.strip()[-300:]))
            check(i.returncode == 0 and (not running or "is still writing it" in i.stdout),
                  "%s, round %d: info exits %d: %s" % (mode, k, i.returncode,
                                                       (i.stdout + i.stderr).strip()[-300:]))
            if c.returncode == 0:
                os.unlink(os.path.join(tmp, "%s%d.json" % (mode, k)))
            done += running
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)
    c = tool("convert", live, "-o", os.path.join(tmp, mode + "-killed.json"))
    check(c.returncode == 0, "%s: convert of the killed program's live file exits %d: %s"
          % (mode, c.returncode, c.stderr.strip()[-300:]))
    print("%s: %d reads while it ran" % (mode, done))
    return done


def main():
    with tempfile.TemporaryDirectory(prefix="tt-live-running-") as tmp:
        done = [reads(tmp, mode) for mode in ("ring", "stop")]
    if not done[0] and verdict() == 0:
        print("the program ended before its live file could be read: nothing shown")
        sys.exit(77)
    sys.exit(verdict())


main()
