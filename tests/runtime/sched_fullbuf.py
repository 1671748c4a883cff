#!/usr/bin/env python3
"""A stop-mode buffer that fills early in a long scope (outside recheck r39 F1): the
scope's split still agrees with the kernel's figures within what it states, and its
stolen time is given where the kernel accounts steal.

sched_causes_prog fullbuf: main and a spinner pinned to one CPU; main spins CPU time
in scope "fullbuf", recording empty scopes flat out into a buffer of 100000 events
(its end dropped), then exits inside it. The kernel's figures for main's thread are
read just outside the scope. Before the fix the spike (switches) had no stolen_ns
(its readings far from its edges: none between the buffer's filling and the exit),
its on CPU the switches' whole time on CPU, the hypervisor's too, with error 0.

Checks: the buffer filled (events dropped); the spike split from the switches, adding
up; stolen_ns given (where `info` says stolen time is told apart); on CPU less stolen
within its errors of the kernel's CPU time, and preempted of its run-queue wait, the
kernel's window's excess over the spike and each switch's moment (SWITCH_NS) allowed.

Usage: sched_fullbuf.py PROG TICKTRACE
"""
import json
import os
import subprocess
import sys
import tempfile

PROG, TOOL = sys.argv[1:3]
MS = 1000000
SWITCH_NS = 5000  # a switch record's moment against the kernel's accounting of it
failures = []
STEAL_TICK_NS = 10**9 // os.sysconf("SC_CLK_TCK")  # /proc/stat's unit


def cpu0_steal_ns():
    """What the hypervisor stole from CPU 0 so far, /proc/stat's eighth figure."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu0 "):
                return int(line.split()[8]) * STEAL_TICK_NS
    return 0


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def one(tmp, n):
    out = os.path.join(tmp, "fb%d.ttr" % n)
    env = dict(os.environ, TICKTRACE_OUT=out, TICKTRACE_BUFFER="100000", TICKTRACE_MODE="stop")
    steal_before = cpu0_steal_ns()
    p = subprocess.run([PROG, "fullbuf", "150"], env=env, capture_output=True, text=True, timeout=300)
    cpu0_stolen = cpu0_steal_ns() - steal_before
    check(p.returncode == 0, "run %d: exit %d: %s" % (n, p.returncode, p.stderr[-2000:]))
    kernel = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode or len(kernel) != 1:
        check(False, "run %d: no kernel line: %r" % (n, p.stdout))
        return
    k = kernel[0]
    info = subprocess.run([TOOL, "info", out], capture_output=True, text=True, timeout=120).stdout
    thr = os.path.join(tmp, "thr.txt")
    with open(thr, "w") as f:
        f.write("fullbuf 1ms\n* 1000s\n")
    sp = subprocess.run([TOOL, "spikes", "--json", "--thresholds", thr, out], capture_output=True,
                        text=True, timeout=120)
    spikes = [json.loads(l) for l in sp.stdout.splitlines() if l.startswith("{")]
    spikes = [s for s in spikes if s["name"] == "fullbuf"]
    check(len(spikes) == 1, "run %d: one spike fullbuf: %s %s" % (n, sp.stdout[-2000:], sp.stderr[-2000:]))
    if len(spikes) != 1:
        return
    s = spikes[0]
    if s.get("causes_from") != "switches":
        print("SKIP: no switches here (perf refused?): %s" % s)
        sys.exit(77)
    check("dropped 0," not in info and "dropped" in info, "run %d: the buffer filled: %s" % (n, info[:600]))
    parts = s["on_cpu_ns"] + s["preempted_ns"] + s["blocked_ns"] + s["unknown_ns"]
    check(parts == s["dur_ns"] and s["unknown_ns"] == 0, "run %d: split adds up, all known: %s" % (n, s))
    told = "stolen time: told apart" in info
    if told:
        check("stolen_ns" in s, "run %d: stolen time told apart, but the spike has no stolen_ns: %s" % (n, s))
        # (bounded by a reading at the thread's end, not "somewhere in all of it": within
        # a tenth of on CPU, or where the hypervisor stole more (a loaded CI host: 20.4
        # +- 20.4 ms of 179 on CPU), within what it stole from CPU 0, the program's, all run)
        check(s.get("stolen_error_ns", 0) <= max(s["on_cpu_ns"] // 10, cpu0_stolen + STEAL_TICK_NS),
              "run %d: stolen_error_ns within a tenth of on CPU, or of CPU 0's steal over the run (%d ns): %s"
              % (n, cpu0_stolen, s))
    stolen, stolen_err = s.get("stolen_ns", 0), s.get("stolen_error_ns", 0)
    err = s["causes_error_ns"]
    excess = k["wall_ns"] - s["dur_ns"]
    check(excess >= -SWITCH_NS, "run %d: the kernel's window (%d ns) holds the spike (%d)" % (n, k["wall_ns"], s["dur_ns"]))
    slack = (k["nvcsw"] + k["nivcsw"] + 2) * SWITCH_NS
    cpu = s["on_cpu_ns"] - stolen
    # (without stolen told apart, on CPU holds it: the kernel's CPU time at most)
    lo = cpu - stolen_err - err - slack
    hi = cpu + stolen_err + err + slack + max(excess, 0) + (0 if told else s["on_cpu_ns"])
    check(lo <= k["run_ns"] <= hi,
          "run %d: on CPU %d less stolen %d (+-%d, error %d) against the kernel's CPU time %d "
          "(window excess %d, %d switches)" % (n, s["on_cpu_ns"], stolen, stolen_err, err, k["run_ns"],
                                               excess, k["nvcsw"] + k["nivcsw"]))
    pre_lo = s["preempted_ns"] - err - slack
    # (under a hypervisor that steals much, the kernel's run-queue wait exceeded the
    # switches' preempted by what they showed as on CPU, stolen: 3.8 ms of 953 with
    # 29.4 +- 12.2 ms stolen, the stolen's bound held)
    pre_hi = s["preempted_ns"] + s["blocked_ns"] + err + slack + max(excess, 0) + stolen + stolen_err
    check(pre_lo <= k["wait_ns"] <= pre_hi,
          "run %d: preempted %d (blocked %d, error %d) against the kernel's run-queue wait %d "
          "(window excess %d)" % (n, s["preempted_ns"], s["blocked_ns"], err, k["wait_ns"], excess))
    print("run %d: dur %.1f ms (kernel's window %.1f): on %.3f stolen %.3f+-%.3f vs CPU %.3f; preempted %.3f vs wait %.3f; error %.3f ms"
          % (n, s["dur_ns"] / MS, k["wall_ns"] / MS, s["on_cpu_ns"] / MS, stolen / MS, stolen_err / MS,
             k["run_ns"] / MS, s["preempted_ns"] / MS, k["wait_ns"] / MS, err / MS))


def main():
    if os.cpu_count() is None or len(os.sched_getaffinity(0)) < 1 or 0 not in os.sched_getaffinity(0):
        print("SKIP: CPU 0 is not ours to pin to")
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="tt_fullbuf_") as tmp:
        for n in range(2):
            one(tmp, n)
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)
    print("ok")


main()
