#!/usr/bin/env python3
"""tt-prefault faults in memory ahead of the writers in proportion to what they used:
a short run (a test suite runs thousands) gets no 16 MiB zeroed for it (4.7-6.4 ms
of tt-prefault's CPU time at load 8, 0.3-0.4 ms now). tt_longrun_prog records `scopes N` (4 records of
16 bytes each) and waits; once the arena's resident memory has stayed the same for
a while, it is measured from /proc/PID/smaps (the mapping of 1 GiB or more).
Usage: prefault_window.py PROG (tt_longrun_prog)"""
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

from verdict import check, verdict

PROG = sys.argv[1]
MiB = 1 << 20


def arena_rss(pid):
    """The arena's resident bytes: the writable mapping of 1 to 256 GiB, and the one just below
    it (its first huge page's worth, left on small pages, is a mapping of its own)."""
    maps, rss = [], {}
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):  # a mapping's first line
                maps.append(tuple(int(x, 16) for x in head.split("-")) + (line.split()[1],))
            elif head == "Rss:":
                rss[maps[-1]] = int(line.split()[1]) * 1024
    # (writable, at most 256 GiB: AddressSanitizer's shadow is terabytes, its allocator's
    # regions tens of GiB with no access)
    arena = [m for m in maps if 1 << 30 <= m[1] - m[0] <= 256 << 30 and m[2].startswith("rw")]
    if not arena:
        return None
    low = arena[0][0]
    return rss[arena[0]] + sum(rss[m] for m in maps if m[1] == low)


def settled_rss(pid, timeout=60):
    """The arena's resident bytes once unchanged for 0.5 s (tt-prefault asleep)."""
    last, since = None, time.monotonic()
    deadline = since + timeout
    while time.monotonic() < deadline:
        rss = arena_rss(pid)
        if rss != last:
            last, since = rss, time.monotonic()
        elif time.monotonic() - since >= 0.5:
            return rss
        time.sleep(0.05)
    return last


def run(scopes, tmp):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TICKTRACE")}
    env.update(TICKTRACE_OUT=os.path.join(tmp, "run-%p.ttr"), TICKTRACE_LOG="stderr")
    p = subprocess.Popen([PROG, "scopes", str(scopes)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        ready, _, _ = select.select([p.stdout], [], [], 120)
        if not (ready and p.stdout.readline().strip() == "ready"):
            check(False, f"scopes {scopes}: not ready")
            return None
        return settled_rss(p.pid)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)


def main():
    with tempfile.TemporaryDirectory(prefix="tt-prefault-window-") as tmp:
        # One chunk used: its first window is a few chunks (was 16 MiB and more).
        rss = run(100, tmp)
        print(f"scopes 100: the arena holds {rss} bytes")
        check(rss is not None and rss <= 1 * MiB,
              f"scopes 100 (6.4 kB of records): the arena holds {rss} bytes, not 1 MiB at most")
        # 1.28 MB used: the window grew as the writer went, to four times what it used
        # (not 16 MiB), a huge page's step at most beyond.
        used = 20000 * 64
        rss = run(20000, tmp)
        print(f"scopes 20000: the arena holds {rss} bytes, {used} used")
        check(rss is not None and used < rss <= 5 * used + 2 * MiB,
              f"scopes 20000 ({used} bytes of records): the arena holds {rss} bytes, "
              f"not more than they and at most five times and 2 MiB")
    sys.exit(verdict())


main()
