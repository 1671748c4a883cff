#!/usr/bin/env python3
"""Snapshots' settings and tt_trigger's results (issue 22): what a user who sets
TICKTRACE_SNAPSHOTS wrongly, or calls tt_trigger too often, is told.

snapshot_settings_prog calls tt_trigger(why) for each argument and prints its result.
Checked: without TICKTRACE_SNAPSHOTS -ENOTCONN and no file; with it, DIR made (0700),
one file per trigger named trigger-PID-N-WHY.ttr (WHY's odd characters made '_'), a
raw snapshot file each, TICKTRACE_SNAPSHOT_MAX then -EDQUOT and the count said at
exit (0: snapshots off, said so); mode stream said and refused; bad settings said, the
defaults used; DIR a file: said, refused; a forked child's own snapshots, numbered from 1, and its spike log
and report in the formats their names set; the snapshot of a
thread gone before it was written, its window overwritten; a thread triggering until the
process ends: every 0 has its file, or a crash says it lost; peak RSS within TICKTRACE_MEMORY with snapshots
taken; TICKTRACE=0.
Usage: snapshot_settings.py PROG TICKTRACE"""
import errno
import os
import re
import resource
import signal
import stat
import struct
import subprocess
import sys
import tempfile

PROG, TOOL = sys.argv[1:3]
failures = []
TT_FILE_SNAPSHOT = 1 << 12


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run_peak(tmp, args, **settings):
    """The program's lines, what it said on stderr, and its peak RSS in kB (its own
    VmHWM, as wait4 gives it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TICKTRACE")}
    env.update(TICKTRACE_OUT=os.path.join(tmp, "run-%p.ttr"), TICKTRACE_MODE="ring")
    env.update(settings)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen([PROG] + args, env=env, stdout=out, stderr=err, text=True,
                             start_new_session=True)
        try:
            _, status, usage = os.wait4(p.pid, 0)
        except BaseException:  # (killed: the program goes too, and a child it forked)
            os.killpg(p.pid, signal.SIGKILL)
            raise
        p.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        said = err.read()
        check(code == 0, f"{args} {settings}: exit {code}: {said}")
        return out.read().splitlines(), said, usage.ru_maxrss


def run_lines(tmp, args, **settings):
    """The program's lines, and what it said on stderr."""
    lines, said, _ = run_peak(tmp, args, **settings)
    return lines, said


def run(tmp, args, **settings):
    lines, err = run_lines(tmp, args, **settings)
    results = {}
    for line in lines:
        why, result = line.rsplit(" ", 1)
        results[why] = int(result) if result.lstrip("-").isdigit() else result
    return results, err


def cut_snapshot(tmp, label, **settings):
    """The run `label` in a ring of 20000 records, which tt_trigger("label") once:
    its one snapshot's info and report, and what the run said."""
    folder = os.path.join(tmp, label)
    results, err = run(tmp, [label], **{"TICKTRACE_SNAPSHOTS": folder, "TICKTRACE_BUFFER": "20000",
                                        "TICKTRACE_SNAPSHOT_AFTER": "1ms", **settings})
    check(results.get(label) == 0, f"{label}: {results}")
    files = os.listdir(folder) if os.path.isdir(folder) else []
    check(len(files) == 1, f"{label}: one snapshot: {files}")
    said = []
    for command in ("info", "report"):
        p = subprocess.run([TOOL, command] + [os.path.join(folder, f) for f in files[:1]],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0 and files, f"{label}: {command}: {p.stderr}")
        said.append(p.stdout)
    return said[0], said[1], err


def is_snapshot(path):
    with open(path, "rb") as f:
        head = f.read(20)
    return head[:8] == b"TICKTRC\x1a" and struct.unpack_from("<I", head, 16)[0] & TT_FILE_SNAPSHOT


def main():
    with tempfile.TemporaryDirectory(prefix="tt-snapshot-settings-") as tmp:
        results, err = run(tmp, ["nothing"])
        check(results.get("nothing") == -errno.ENOTCONN, f"no TICKTRACE_SNAPSHOTS: {results}")

        snaps = os.path.join(tmp, "snaps")
        results, err = run(tmp, ["a", "b/c d", "e"], TICKTRACE_SNAPSHOTS=snaps,
                           TICKTRACE_SNAPSHOT_MAX="2", TICKTRACE_SNAPSHOT_AFTER="1ms")
        check(results == {"a": 0, "b/c d": 0, "e": -errno.EDQUOT}, f"MAX=2: {results}")
        check(os.path.isdir(snaps) and stat.S_IMODE(os.stat(snaps).st_mode) == 0o700,
              "DIR made, mode 0700")
        files = sorted(os.listdir(snaps)) if os.path.isdir(snaps) else []
        pids = {f.split("-")[1] for f in files}
        check(len(pids) == 1 and len(files) == 2, f"two files of one process: {files}")
        pid = pids.pop() if len(pids) == 1 else "?"
        check(files == [f"trigger-{pid}-1-a.ttr", f"trigger-{pid}-2-b_c_d.ttr"], f"names: {files}")
        for f in files:
            check(is_snapshot(os.path.join(snaps, f)), f"{f}: a raw file with TT_FILE_SNAPSHOT")
        check(f"ticktrace: 2 snapshots in {snaps}" in err, f"how many were written: {err}")
        check("1 trigger had no snapshot: TICKTRACE_SNAPSHOT_MAX=2" in err,
              f"the one past MAX said: {err}")

        # MAX=0: snapshots off, said so (it said "the snapshots keep the 0 worst ...: 2
        # not worse than those kept" and "TICKTRACE_SNAPSHOT_MAX=0 were taken")
        off = os.path.join(tmp, "off")
        results, err = run(tmp, ["a", "b"], TICKTRACE_SNAPSHOTS=off, TICKTRACE_SNAPSHOT_MAX="0",
                           TICKTRACE_SPIKE_THRESHOLD="1ns")
        check(results == {"a": -errno.EDQUOT, "b": -errno.EDQUOT}, f"MAX=0: {results}")
        taken = os.listdir(off) if os.path.isdir(off) else []
        check(not taken, f"MAX=0: files: {taken}")
        check(re.search(r"ticktrace: TICKTRACE_SNAPSHOT_MAX=0: snapshots are off, none taken of [1-9]\d* "
                        r"spikes? and 2 triggers\n", err) and "worst" not in err and "were taken" not in err,
              f"MAX=0 said: {err}")

        results, err = run(tmp, ["s"], TICKTRACE_SNAPSHOTS=snaps, TICKTRACE_MODE="stream")
        check(results.get("s") == -errno.ENOTCONN, f"stream: {results}")
        check("TICKTRACE_SNAPSHOTS needs TICKTRACE_MODE ring or stop" in err, f"stream said: {err}")

        bad = os.path.join(tmp, "bad")
        results, err = run(tmp, ["x"], TICKTRACE_SNAPSHOTS=bad, TICKTRACE_SNAPSHOT_BEFORE="abc",
                           TICKTRACE_SNAPSHOT_AFTER="-1ms", TICKTRACE_SNAPSHOT_MAX="-1")
        check(results.get("x") == 0, f"bad settings, defaults used: {results}")
        for said in ("TICKTRACE_SNAPSHOT_BEFORE=abc is not a time",
                     "TICKTRACE_SNAPSHOT_AFTER=-1ms is not a time",
                     "TICKTRACE_SNAPSHOT_MAX=-1 is not a number"):
            check(said in err, f"said: {said!r} in {err!r}")
        check(os.path.isdir(bad) and len(os.listdir(bad)) == 1, "the snapshot, with the defaults")

        # Times out of range (1e9s: 31 years, taken before, every window written at
        # exit and said to end 999999957 s in): said, naming the setting and the
        # value, and the default used; past the clock's range too (1e30ms, 1e400s past
        # a double's), which were said to be "not a time" (outside recheck r38 R3).
        for name, before, after, threshold, min_dur in (("far", "3601s", "1e9s", "1e9s", "7200s"),
                                                        ("past", "1e400s", "1e30ms", "1e30ms",
                                                         "1e20ns")):
            far = os.path.join(tmp, name)
            results, err = run(tmp, ["f"], TICKTRACE_SNAPSHOTS=far, TICKTRACE_SNAPSHOT_BEFORE=before,
                               TICKTRACE_SNAPSHOT_AFTER=after, TICKTRACE_SPIKE_THRESHOLD=threshold,
                               TICKTRACE_MIN_DUR=min_dur)
            check(results.get("f") == 0, f"times out of range, defaults used: {results}")
            for var, value, then in (("TICKTRACE_SNAPSHOT_BEFORE", before, "using 100ms"),
                                     ("TICKTRACE_SNAPSHOT_AFTER", after, "using 10ms"),
                                     ("TICKTRACE_SPIKE_THRESHOLD", threshold, "using the default, none"),
                                     ("TICKTRACE_MIN_DUR", min_dur, "using the default")):
                said = (f"ticktrace: {var}={value} is out of range: a time setting takes an hour "
                        f"(3600s) at most; {then}")
                check(said in err, f"said: {said!r} in {err!r}")
            files = os.listdir(far) if os.path.isdir(far) else []
            info = subprocess.run([TOOL, "info", os.path.join(far, files[0])], capture_output=True,
                                  text=True, timeout=60).stdout if len(files) == 1 else ""
            window = re.search(r"window: +(-?[\d.]+) s \.\. ([\d.]+) s", info)
            check(window and float(window.group(2)) - float(window.group(1)) < 1,
                  f"the snapshot's window, with the defaults: {files} {window and window.group(0)}")

        # TICKTRACE_SPIKE_THRESHOLD read as every time is (a bare number is none: it
        # meant seconds, unsaid, and 20000000 no spike at all), a bad one said with what it
        # means for the run (a hex float strtod would take, 0x10ms as 16 ms, too; and one
        # below a nanosecond, which was taken as 0: every scope a spike, outside recheck
        # r38 R3); a spike log that cannot be made names its path, and the
        # snapshots go on (the trigger's returned 0 and was never written: no tt-spikes).
        for value in ("20000000", "0.02", "abc", "0x10ms", "0.4ns"):
            named = os.path.join(tmp, "named-" + value)
            log = os.path.join(tmp, "no-such-dir", "spikes-%p.log")
            results, err = run(tmp, ["t"], TICKTRACE_SNAPSHOTS=named, TICKTRACE_SPIKES=log,
                               TICKTRACE_SPIKE_THRESHOLD=value)
            check(f"TICKTRACE_SPIKE_THRESHOLD={value} is not a time (1.5ms, 200us, 2s: a number and "
                  "its unit); using the default, none: only the thresholds in the code "
                  "(TT_THRESHOLD_NS) and TICKTRACE_SPIKE_THRESHOLDS' file find spikes to log and "
                  "snapshots to take" in err, f"SPIKE_THRESHOLD={value}: said, and what it means: {err}")
            files = os.listdir(named) if os.path.isdir(named) else []
            pid = files[0].split("-")[1] if len(files) == 1 else "?"
            check(results.get("t") == 0 and len(files) == 1, f"SPIKE_THRESHOLD={value}: {results} {files}")
            check(f"cannot log spikes to {log.replace('%p', pid)} (TICKTRACE_SPIKES={log}): No such "
                  "file or directory; snapshots are taken still" in err,
                  f"SPIKE_THRESHOLD={value}: the log's path named: {err}")
        results, err = run(tmp, ["t"], TICKTRACE_SNAPSHOTS=os.path.join(tmp, "named-ms"),
                           TICKTRACE_SPIKE_THRESHOLD="20ms")
        check(results.get("t") == 0 and "SPIKE_THRESHOLD" not in err, f"SPIKE_THRESHOLD=20ms: {err}")

        a_file = os.path.join(tmp, "a-file")
        open(a_file, "w").close()
        results, err = run(tmp, ["y"], TICKTRACE_SNAPSHOTS=a_file)
        check(results.get("y") == -errno.ENOTCONN, f"DIR a file: {results}")
        check(f"TICKTRACE_SNAPSHOTS={a_file}: Not a directory: no snapshots" in err, f"said: {err}")

        # (not under AddressSanitizer: clang 14's allocator takes no lock around fork,
        # and a child forked while another thread allocated hangs in its first
        # allocation, the lock held for ever: the CI's ASan stage at load, the child's
        # tt-spikes in calloc, until the test's 480 s ran out; glibc's malloc is safe)
        if "address" in os.environ.get("TT_SANITIZE", ""):
            print("a forked child's snapshots: not under AddressSanitizer (its allocator and fork)")
        else:
            forked = os.path.join(tmp, "forked")
            results, err = run(tmp, ["p", "fork", "c"], TICKTRACE_SNAPSHOTS=forked,
                               TICKTRACE_SNAPSHOT_AFTER="1ms")
            check(results.get("p") == 0 and results.get("c") == 0 and results.get("child c") == 0,
                  f"parent and child: {results}")
            names = sorted(os.listdir(forked)) if os.path.isdir(forked) else []
            firsts = [n for n in names if n.split("-")[2] == "1"]
            check(len(names) == 3 and len(firsts) == 2,
                  f"the parent's two and the child's own, numbered from 1: {names}")
            # The child's spike log (live.jsonl.PID) and report (report.csv.PID) in the
            # formats the names set chose: they were text, the name's end hidden by .PID.
            run(tmp, ["p", "fork", "c"], TICKTRACE_SPIKES=os.path.join(tmp, "live.jsonl"),
                TICKTRACE_SPIKE_THRESHOLD="1ns", TICKTRACE_REPORT=os.path.join(tmp, "report.csv"))
            for name, first in (("live.jsonl", "{"), ("report.csv", "name,calls,")):
                files = sorted(n for n in os.listdir(tmp) if n.startswith(name))
                heads = {}
                for n in files:
                    with open(os.path.join(tmp, n)) as f:
                        heads[n] = f.readline()
                check(len(files) == 2 and all(h.startswith(first) for h in heads.values()),
                      f"the parent's {name} and the child's, both {first}...: {heads}")

        # More waiting for their window's end than there are places: each refused at
        # its call (-EBUSY), never accepted and then lost.
        many = os.path.join(tmp, "many")
        results, err = run(tmp, ["many"], TICKTRACE_SNAPSHOTS=many, TICKTRACE_SNAPSHOT_MAX="1000",
                           TICKTRACE_SNAPSHOT_AFTER="1s")
        taken, busy = results.get("many 0"), results.get(f"many {-errno.EBUSY}")
        written = len(os.listdir(many)) if os.path.isdir(many) else -1
        check(results.get("many other") == 0 and taken and busy and taken + busy == 200,
              f"200 triggers, 0 or -EBUSY each: {results}")
        check(written == taken, f"every trigger that returned 0 has its file: {taken} returned 0, "
              f"{written} files")
        # (Both refusals are -EBUSY: on a loaded machine some come 32 within 20 ms.)
        waited = re.search(r"(\d+) spikes and triggers had no snapshot: more than 64 waited", err)
        bunched = re.search(r"(\d+) triggers had no snapshot: more than 32 were called", err)
        said = sum(int(m.group(1)) for m in (waited, bunched) if m)
        check(waited and said == busy, f"the refused said ({busy}): {err}")

        # The thread that triggered, gone when its snapshot is written (at exit: its
        # window ends after the run) and its window's start overwritten: in the file
        # still, its cut said (the file was refused: "SNAPSHOT of thread index 0, which
        # has no THREAD section").
        info, _, err = cut_snapshot(tmp, "gone", TICKTRACE_SNAPSHOT_AFTER="60s")
        check("window cut: tid" in info, f"gone: the thread's cut said: {info}")

        # A window the ring holds in part (its start overwritten, its end kept): said in
        # the snapshot and, with the buffer it needs, on stderr, as for a window lost
        # whole (outside recheck r46, F2: the run's log said nothing when each window
        # was cut in part).
        info, report, err = cut_snapshot(tmp, "cut", TICKTRACE_SNAPSHOT_BEFORE="5s")
        check("window cut: tid" in info and "filling the ring" in report,
              f"cut: its cut said, its end kept: {info} {report}")
        check(re.search(r"ticktrace: thread \d+ \(.*\) writes \d+ records/s: a snapshot window .* "
                        r"TICKTRACE_BUFFER=\d+ .*this one part of them", err),
              f"cut: the buffer the window needs said: {err}")

        # 2000 threads gone, then a snapshot: memory for the copies of the live
        # threads' records only (each snapshot faulted in 9 chunks of 64 KiB for each
        # thread gone: 1.1 GiB here).
        joined = os.path.join(tmp, "joined")
        results, err = run(tmp, ["joined"], TICKTRACE_SNAPSHOTS=joined, TICKTRACE_SNAPSHOT_AFTER="1ms")
        # (the peak of the largest child so far: every other one is small)
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        written = os.listdir(joined) if os.path.isdir(joined) else []
        check(results.get("joined") == 0 and len(written) == 1, f"joined: {results} {written}")
        check(peak_kb < 256 * 1024, f"joined: peak RSS {peak_kb} kB, under 256 MiB")

        # A thread that triggers until the process ends: every 0 has its file (the exit
        # wrote its 64 waiting snapshots while the thread filled the 32 trigger slots,
        # each a 0 never written nor counted: 96 zeros, 64 files).
        until = os.path.join(tmp, "until")
        lines, err = run_lines(tmp, ["until-exit"], TICKTRACE_SNAPSHOTS=until,
                               TICKTRACE_SNAPSHOT_MAX="1000", TICKTRACE_SNAPSHOT_AFTER="1s")
        zeros = lines.count("0")
        # (the last call, cut short by the exit before it said its result, may have one)
        unsaid = 1 if lines and lines[-1] == "calling" else 0
        written = len(os.listdir(until)) if os.path.isdir(until) else -1
        check(zeros > 0 and zeros <= written <= zeros + unsaid,
              f"until exit: {zeros} triggers returned 0 ({unsaid} unsaid), {written} files: {err}")

        # A trigger's snapshot whose window has not ended when the program crashes:
        # its 0 said lost, and why.
        crashed = os.path.join(tmp, "crashed")
        env = {k: v for k, v in os.environ.items() if not k.startswith("TICKTRACE")}
        env.update(TICKTRACE_OUT=os.path.join(tmp, "run-%p.ttr"), TICKTRACE_MODE="ring",
                   TICKTRACE_SNAPSHOTS=crashed, TICKTRACE_SNAPSHOT_AFTER="10s")
        p = subprocess.run([PROG, "doomed", "crash"], env=env, capture_output=True, text=True,
                           timeout=60)
        check(p.returncode == -6 and p.stdout == "doomed 0\n" and
              "1 snapshot of spikes and triggers taken (tt_trigger returned 0) not written: the "
              "program died of signal 6 before their windows ended" in p.stderr,
              f"crashed: exit {p.returncode}, {p.stdout!r}: {p.stderr}")

        # The memory budget is the bound: 4 threads recording flat out fill a 64 MiB
        # budget while 12 snapshots of a second each are taken; the run's peak stays
        # within the budget of the program's own (its run with TICKTRACE=0), and 4 MiB
        # of ticktrace's bookkeeping; the windows that could not be copied whole said
        # (the copies were outside the budget: 119 to 135 MB against 68 without).
        _, _, own_kb = run_peak(tmp, ["budget"], TICKTRACE="0")
        for mode in ("ring", "stop"):
            budget = os.path.join(tmp, "budget-" + mode)
            lines, err, peak_kb = run_peak(tmp, ["budget"], TICKTRACE_MODE=mode,
                                           TICKTRACE_MEMORY="64M", TICKTRACE_SNAPSHOTS=budget,
                                           TICKTRACE_SNAPSHOT_MAX="100", TICKTRACE_SNAPSHOT_BEFORE="1s")
            written = len(os.listdir(budget)) if os.path.isdir(budget) else -1
            check(lines == ["budget 12"] and written == 12,
                  f"budget, mode {mode}: {lines}, {written} files: {err}")
            bound_kb = own_kb + (64 + 4) * 1024
            if "address" in os.environ.get("TT_SANITIZE", ""):
                # (ASan's shadow is an eighth of the memory it covers, the budget's
                # included, and its redzones pad ticktrace's own allocations)
                bound_kb += bound_kb // 8
            check(peak_kb <= bound_kb, f"budget, mode {mode}: peak RSS {peak_kb} kB, above "
                  f"{bound_kb} kB (the program's own {own_kb} kB, TICKTRACE_MEMORY=64M and 4 MiB)")
            check("began later than TICKTRACE_SNAPSHOT_BEFORE asked: the threads' records of the "
                  "window passed the 16 MiB of TICKTRACE_MEMORY kept for the copies" in err,
                  f"budget, mode {mode}: the windows begun later said: {err}")

        results, err = run(tmp, ["off"], TICKTRACE="0", TICKTRACE_SNAPSHOTS=snaps)
        check(results.get("off") == -errno.ECANCELED, f"TICKTRACE=0: {results}")
    if failures:
        print(f"{len(failures)} failed")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # (meson's timeout: the finally clauses run)
    sys.exit(main())
