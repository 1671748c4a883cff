#!/usr/bin/env python3
"""A killed run's live file where perf is refused (issue 35, outside finding 6): the
thread's counters stood in for its switches, and both are in the run's memory only,
never in the live file. Its spikes said why they have no split as tt-live had got to
it: "a live file" where the run died before tt-live described the thread (its first
THREAD sections come 200 ms in), "the kernel refused its thread states" where it had
(as if nothing stood in: no counters), and `info` said no counters were read; the same
run killed a moment later said otherwise.

sched_causes_prog `seccomp hang` (perf_event_open refused by seccomp: EACCES; a 3 ms
sleep "sleep3", then {"hung": 1} and a wait to be killed), with TICKTRACE_LIVE=1 in
modes stop and ring, killed (SIGKILL) at once and once tt-live described its thread:
`spikes` on the .live gives sleep3 one reason in all four, the live file's, and says
the counters were there; `info` never says no counters were read. With
TICKTRACE_SCHED=switches (nothing stands in) a described thread says the refusal.

The program's first image, which sets the filter and execs itself by the system call
(unseen), leaves its live file at the name: the run's is beside it (NAME.PID.ttr.live).

Usage: live_refused.py PROG TICKTRACE   (PROG: sched_causes_prog)"""
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time

import ttr
from verdict import check, verdict

PROG, TOOL = sys.argv[1:3]
LIVE_SECTIONS_END = ttr.HEADER - 24  # format.h: struct tt_file_header


def described(live):
    """Whether the live file's descriptions hold a THREAD section."""
    try:
        data = open(live, "rb").read()
    except FileNotFoundError:
        return False
    if len(data) < ttr.HEADER:
        return False
    end, = struct.unpack_from("<Q", data, LIVE_SECTIONS_END)
    off = ttr.HEADER
    while off + 16 <= min(end, len(data)):
        kind, _, size = struct.unpack_from("<IIQ", data, off)
        if kind == ttr.SEC_THREAD:
            return True
        off += 16 + (size + 15) // 16 * 16
    return False


def live_of(out, pid):
    """The live file of the process `pid`: beside the one at OUT.live, which the
    program's first image (its exec the system call, unseen) left, or there."""
    beside = "%s.%d.ttr.live" % (out[:-len(".ttr")], pid)
    return beside if os.path.exists(beside) else out + ".live"


def killed(tmp, label, env_extra, wait_described):
    """The program killed once it hung (and, with wait_described, once its thread was
    described): its live file's sleep3 reason and what info says."""
    out = os.path.join(tmp, label + ".ttr")
    env = dict(os.environ, TICKTRACE_LIVE="1", TICKTRACE_OUT=out, **env_extra)
    p = subprocess.Popen([PROG, "seccomp", "hang"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        line = p.stdout.readline()
        while line and "hung" not in line:  # (sleep3's kernel figures first)
            line = p.stdout.readline()
        check("hung" in line, "%s: the program did not hang" % label)
        give_up = time.monotonic() + 60
        while wait_described and not described(live_of(out, p.pid)) and time.monotonic() < give_up:
            time.sleep(0.01)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)
        p.stdout.close()
    live = live_of(out, p.pid)
    was = described(live)
    check(was or not wait_described, "%s: tt-live never described the thread" % label)
    s = subprocess.run([TOOL, "spikes", "--json", "--threshold", "1ms", live],
                       capture_output=True, text=True, timeout=60)
    spikes = [json.loads(x) for x in s.stdout.splitlines()]
    why = [sp.get("no_split") for sp in spikes if sp["name"] == "sleep3"]
    check(s.returncode == 0 and len(why) == 1, "%s: spikes: exit %d, sleep3's reasons %r: %s"
          % (label, s.returncode, why, s.stderr))
    info = subprocess.run([TOOL, "info", live], capture_output=True, text=True, timeout=60)
    print("%s (%s): %s" % (label, "described" if was else "not described", why))
    return (why or [None])[0], info.stdout


def main():
    with tempfile.TemporaryDirectory(prefix="tt-live-refused-") as tmp:
        reasons = {}
        for mode in ("stop", "ring"):
            for wait in (False, True):
                label = "%s-%s" % (mode, "described" if wait else "at-once")
                why, info = killed(tmp, label, {"TICKTRACE_MODE": mode}, wait)
                reasons[label] = why
                check("no counters read" not in info,
                      "%s: info says no counters were read: %s" % (label, info))
        check(len(set(reasons.values())) == 1,
              "the same run killed at other moments gives other reasons: %s" % reasons)
        for label, why in reasons.items():
            check(why and why.startswith("a live file") and "counters" in why,
                  "%s: sleep3's reason is not the live file's, with its counters: %r" % (label, why))
        # nothing stood in for the switches: the refusal is the reason
        why, _ = killed(tmp, "switches-described", {"TICKTRACE_SCHED": "switches"}, True)
        check(why and "the kernel refused" in why,
              "TICKTRACE_SCHED=switches: sleep3's reason is not the refusal: %r" % why)
    sys.exit(verdict())


main()
