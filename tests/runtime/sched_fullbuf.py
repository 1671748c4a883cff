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
sched_causes_prog fullwoken: the same beside a waker whose wake-ups preempt main
(some 1500 times), main napping now and then: the kernel moves a few microseconds of
each preemption from its CPU time into its wait, and a wake-up lies between the
readings. Before its fix the move was taken for none there: preempted 6 ms under the
kernel's wait, stated within 3.6 ms, the move called stolen.

Checks: the buffer filled (events dropped); the spike split from the switches, adding
up; stolen_ns given (where `info` says stolen time is told apart; fullwoken's, or why
not, on a quiet machine its buffer full before tt-sched read main); on CPU less stolen
within its errors of the kernel's CPU time (stolen_error_ns: stolen's, or how much of
on CPU may be where not known), and preempted of its run-queue wait, the
kernel's window's excess over the spike and each edge's switch (EDGE_NS) allowed;
the spike's end, among the dropped events, said to lie up to end_late_ns after its
stated end, where the program was still inside its scope, by `spikes` and the live
log (before: not said, the stated end before that moment; the live log's 0.5 s
before it).

Usage: sched_fullbuf.py PROG TICKTRACE
"""
import json
import os
import subprocess
import sys
import tempfile

import ttr

PROG, TOOL = sys.argv[1:3]
MS = 1000000
CLOCK_NS = 1000  # the tools' times against the monotonic clock's (their conversion)
EDGE_NS = 50000  # the scope's edges: a switch's moment against the kernel's accounting of it
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


def one(tmp, mode, n):
    out = os.path.join(tmp, "%s%d.ttr" % (mode, n))
    thr = os.path.join(tmp, "thr.txt")
    with open(thr, "w") as f:
        f.write("%s 1ms\n* 1000s\n" % mode)
    live = os.path.join(tmp, "%s%d.jsonl" % (mode, n))
    snaps = os.path.join(tmp, "snaps%s%d" % (mode, n))
    os.mkdir(snaps)
    env = dict(os.environ, TICKTRACE_OUT=out, TICKTRACE_BUFFER="100000", TICKTRACE_MODE="stop",
               TICKTRACE_SPIKES=live, TICKTRACE_SPIKE_THRESHOLDS=thr, TICKTRACE_SNAPSHOTS=snaps)
    steal_before = cpu0_steal_ns()
    p = subprocess.run([PROG, mode, "150"], env=env, capture_output=True, text=True, timeout=300)
    cpu0_stolen = cpu0_steal_ns() - steal_before
    check(p.returncode == 0, mode + " run %d: exit %d: %s" % (n, p.returncode, p.stderr[-2000:]))
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    kernel = [l for l in lines if "scope" in l]
    inside = [l["inside_ns"] for l in lines if "inside_ns" in l]
    if p.returncode or len(kernel) != 1 or len(inside) != 1:
        check(False, mode + " run %d: no kernel line: %r" % (n, p.stdout))
        return
    k = kernel[0]
    info = subprocess.run([TOOL, "info", out], capture_output=True, text=True, timeout=120).stdout
    sp = subprocess.run([TOOL, "spikes", "--json", "--thresholds", thr, out], capture_output=True,
                        text=True, timeout=120)
    spikes = [json.loads(l) for l in sp.stdout.splitlines() if l.startswith("{")]
    spikes = [s for s in spikes if s["name"] == mode]
    check(len(spikes) == 1, mode + " run %d: one spike %s: %s %s" % (n, mode, sp.stdout[-2000:], sp.stderr[-2000:]))
    if len(spikes) != 1:
        return
    s = spikes[0]
    if s.get("causes_from") != "switches" and not s.get("switches_lost"):
        print("SKIP: no switches here (perf refused?): %s" % s)
        sys.exit(77)
    if s.get("switches_lost"):  # (a loaded machine: tt-sched late, the kernel's ring full)
        print("%s run %d: the kernel lost %d switches: again" % (mode, n, s["switches_lost"]))
        return False
    check("dropped 0," not in info and "dropped" in info, mode + " run %d: the buffer filled: %s" % (n, info[:600]))
    parts = s["on_cpu_ns"] + s["preempted_ns"] + s["blocked_ns"] + s["unknown_ns"]
    check(parts == s["dur_ns"] and s["unknown_ns"] == 0, mode + " run %d: split adds up, all known: %s" % (n, s))
    told = "stolen time: told apart" in info
    if told:
        # (fullwoken's buffer may fill before tt-sched read main, read again at its exit
        # alone: not known, why said, and on CPU's stated error then carries it, below)
        check("stolen_ns" in s or (mode == "fullwoken" and s.get("stolen_unknown")),
              mode + " run %d: stolen time told apart, but the spike has no stolen_ns: %s" % (n, s))
        # (bounded by a reading at the thread's end, not "somewhere in all of it": within
        # a tenth of on CPU, or where the hypervisor stole more (a loaded CI host: 20.4
        # +- 20.4 ms of 179 on CPU), within what it stole from CPU 0, the program's, all
        # run; where main naps, the kernel's move across its wake-ups is uncertain too,
        # and stolen's)
        check(mode != "fullbuf"
              or s.get("stolen_error_ns", 0) <= max(s["on_cpu_ns"] // 10, cpu0_stolen + STEAL_TICK_NS),
              mode + " run %d: stolen_error_ns within a tenth of on CPU, or of CPU 0's steal over the run "
              "(%d ns): %s" % (n, cpu0_stolen, s))
    # Its end was among the dropped events (the program exits inside it): it lasted past
    # a moment read inside it after the rest, and the spike says it ended up to
    # end_late_ns after its stated end (before: nothing said, its end the last timed
    # event among the dropped, before that moment).
    inside_at = inside[0] - ttr.read_machine(out)[0][1]
    logged = [json.loads(l) for l in open(live)] if os.path.exists(live) else []
    logged = [l for l in logged if l.get("name") == mode]
    check(len(logged) == 1, mode + " run %d: one spike in the live log: %s" % (n, logged))
    for where, spike in (("spikes", s), ("the live log", logged[0] if logged else None)):
        if not spike:
            continue
        stated_end = spike["start_ns"] + spike["dur_ns"]
        late = spike.get("end_late_ns", 0)
        check(stated_end <= inside_at + CLOCK_NS and (late < 0 or inside_at <= stated_end + late + CLOCK_NS),
              mode + " run %d: %s: its end among the dropped events: said %d, up to %d ns later; still "
              "in it at %d" % (n, where, stated_end, late, inside_at))
    # (its snapshot's spike, as the runtime had it and as its window has it, says so too)
    for name in os.listdir(snaps):
        got = subprocess.run([TOOL, "spikes", "--json", os.path.join(snaps, name)], capture_output=True,
                             text=True, timeout=120).stdout
        said = [json.loads(l) for l in got.splitlines() if l.startswith("{")]
        said = [l for l in said if l["name"] == mode]
        check(said and all(l.get("end_late_ns") for l in said),
              mode + " run %d: snapshot %s: its spike's end among dropped events not said: %s" % (n, name, said))
    # (stolen not known: on CPU may hold the hypervisor's, within stolen_error_ns; before,
    # none said, and a quiet machine's fullwoken stood 4.5-5.3 ms over the kernel's CPU
    # time, stated within 3.7 ms, 4 of 4 runs)
    stolen, stolen_err = s.get("stolen_ns", 0), s.get("stolen_error_ns", 0)
    err = s["causes_error_ns"]
    excess = k["wall_ns"] - s["dur_ns"]
    check(excess >= -EDGE_NS, mode + " run %d: the kernel's window (%d ns) holds the spike (%d)" % (n, k["wall_ns"], s["dur_ns"]))
    slack = 2 * EDGE_NS
    cpu = s["on_cpu_ns"] - stolen
    # (without stolen told apart, on CPU holds it: the kernel's CPU time at most)
    lo = cpu - stolen_err - err - slack
    hi = cpu + stolen_err + err + slack + max(excess, 0) + (0 if told else s["on_cpu_ns"])
    check(lo <= k["run_ns"] <= hi,
          mode + " run %d: on CPU %d less stolen %d (+-%d, error %d) against the kernel's CPU time %d "
          "(window excess %d, %d switches)" % (n, s["on_cpu_ns"], stolen, stolen_err, err, k["run_ns"],
                                               excess, k["nvcsw"] + k["nivcsw"]))
    pre_lo = s["preempted_ns"] - err - slack
    # (the kernel's move, which the readings measure, within err; the waits after
    # wake-ups that blocked may hold too)
    pre_hi = s["preempted_ns"] + err + slack + max(excess, 0)
    check(pre_lo <= k["wait_ns"] <= pre_hi,
          mode + " run %d: preempted %d (blocked %d, error %d) against the kernel's run-queue wait %d "
          "(window excess %d)" % (n, s["preempted_ns"], s["blocked_ns"], err, k["wait_ns"], excess))
    print("%s run %d: dur %.1f ms (kernel's window %.1f): on %.3f stolen %.3f+-%.3f vs CPU %.3f; preempted %.3f vs wait %.3f; error %.3f ms"
          % (mode, n, s["dur_ns"] / MS, k["wall_ns"] / MS, s["on_cpu_ns"] / MS, stolen / MS, stolen_err / MS,
             k["run_ns"] / MS, s["preempted_ns"] / MS, k["wait_ns"] / MS, err / MS))


def main():
    if os.cpu_count() is None or len(os.sched_getaffinity(0)) < 1 or 0 not in os.sched_getaffinity(0):
        print("SKIP: CPU 0 is not ours to pin to")
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="tt_fullbuf_") as tmp:
        for mode in ("fullbuf", "fullwoken"):
            for n in range(2):
                for attempt in range(3):
                    if one(tmp, mode, n * 3 + attempt) is not False:
                        break
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)
    print("ok")


main()
