#!/usr/bin/env python3
"""Each run knows its machine and how good its clock is (issue 33.1): the raw file's
MACHINE section holds the host name, /etc/machine-id, the boot id, CLOCK_REALTIME and
CLOCK_TAI at the start anchor and as the section was written, and the kernel's own
word on its clock (adjtimex: the estimated and maximum error, unsynchronized); `info`
says them. Checked against what this test reads of the machine itself, in modes stop
and stream (which writes the section at its start), as root and as nobody; then a run
in a UTS namespace with a host name of its own (unshare --uts; exit 77 after the rest
passed where that is refused) says its own name, on the same boot.

Usage: machine.py PROG TICKTRACE   (PROG: sched_causes_prog, run as `PROG sleep`)"""
import ctypes
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import ttr

PROG, TOOL = sys.argv[1:3]
STA_UNSYNC, TIME_ERROR = 0x40, 5
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def kernel_clock():
    """adjtimex with no change asked: (state, status, TAI offset in s)."""
    timex = ctypes.create_string_buffer(512)  # struct timex (208 bytes on x86-64)
    state = ctypes.CDLL(None, use_errno=True).adjtimex(timex)
    status = int.from_bytes(timex.raw[40:44], "little")
    tai = int.from_bytes(timex.raw[160:164], "little", signed=True)
    return state, status, tai


def own_id(path):
    try:
        text = open(path).read().strip().replace("-", "")
    except OSError:
        return None
    return text if re.fullmatch(r"[0-9a-f]{32}", text) else None


def record(tmp, label, mode, wrap=(), user=None):
    """Runs PROG under `wrap` in `mode`: its file, read, and what info says of it."""
    print(label)
    out = os.path.join(tmp, label.replace(" ", "_").replace(",", "") + ".ttr")
    env = dict(os.environ, TICKTRACE_OUT=out, TICKTRACE_MODE=mode)
    before = time.time()
    p = subprocess.run([*wrap, PROG, "sleep"], env=env, capture_output=True, text=True,
                       timeout=120, **({"user": user} if user is not None else {}))
    after = time.time()
    if p.returncode != 0:
        check(False, "%s: %s failed (%d): %s" % (label, PROG, p.returncode, p.stderr))
        return None, ""
    info = subprocess.run([TOOL, "info", out], capture_output=True, text=True, timeout=60)
    check(info.returncode == 0, "%s: info failed: %s" % (label, info.stderr))
    start, m = ttr.read_machine(out)
    check(m is not None, "%s: no MACHINE section of this version's" % label)
    if m is None:
        return None, info.stdout
    # The wall clocks: read while the program ran, TAI ahead of REALTIME by the
    # kernel's offset, the kernel's word on them as adjtimex says it here.
    state, status, tai = kernel_clock()
    unsync = state == TIME_ERROR or bool(status & STA_UNSYNC)
    for when, said in (("start", "at start"), ("written", "as written")):
        r = m[when]
        check(before - 1 <= r["realtime_ns"] / 1e9 <= after + 1,
              "%s: %s's CLOCK_REALTIME %.3f not within the run (%.3f .. %.3f)"
              % (label, when, r["realtime_ns"] / 1e9, before, after))
        check(abs(r["tai_ns"] - r["realtime_ns"] - tai * 10**9) < 10**8,
              "%s: %s's CLOCK_TAI %d ns ahead of REALTIME, the kernel's offset %d s"
              % (label, when, r["tai_ns"] - r["realtime_ns"], tai))
        check(r["state"] >= 0 and bool(r["state"] == TIME_ERROR or r["status"] & STA_UNSYNC) == unsync,
              "%s: %s's clock state %d status %#x, the kernel's now %d %#x"
              % (label, when, r["state"], r["status"], state, status))
        line = next((l for l in info.stdout.splitlines() if l.startswith("  wall clock %s: " % said)), "")
        date = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(r["realtime_ns"] // 10**9))
        check(date in line and "CLOCK_TAI %+d s" % tai in line and
              ("UNSYNCHRONIZED" in line) == unsync and ("; synchronized" in line) != unsync and
              "error %d.%09d s" % divmod(r["esterror_ns"], 10**9) in line and
              "at most %d.%09d s" % divmod(r["maxerror_ns"], 10**9) in line,
              "%s: info does not say the %s clock: %r (file: %s)" % (label, when, line, r))
    check(m["start"]["tsc"] == start[0] and m["written"]["tsc"] >= start[0],
          "%s: the readings' TSCs %d %d, the start anchor's %d"
          % (label, m["start"]["tsc"], m["written"]["tsc"], start[0]))
    return m, info.stdout


def said_machine(label, m, out, host):
    boot, machine = own_id("/proc/sys/kernel/random/boot_id"), own_id("/etc/machine-id")
    check(m["host"] == host and m["boot_id"] == boot and m["machine_id"] == (machine or "0" * 32),
          "%s: the file's machine %s, this one's host %r boot id %s machine id %s"
          % (label, m, host, boot, machine))
    want = "  machine:  host %s, machine id %s, boot id %s\n" % (host, machine or "not known", boot)
    check(want in out, "%s: info does not say %r:\n%s" % (label, want, out))


def main(tmp):
    host = os.uname().nodename
    users = [None]
    if os.geteuid() == 0 and all(os.stat(d).st_mode & 0o001 for p in (PROG, TOOL)
                                 for d in parents(os.path.abspath(p))):
        os.chmod(tmp, 0o777)
        users.append(65534)
    for user in users:
        for mode in ("stop", "stream"):
            label = "mode %s%s" % (mode, ", as nobody" if user else "")
            m, out = record(tmp, label, mode, user=user)
            if m:
                said_machine(label, m, out, host)
    other = "tt-other-%d" % os.getpid()
    uts = ["unshare", "--uts", "--", "sh", "-c", 'hostname "$0" && exec "$@"', other]
    probe = subprocess.run([*uts, "true"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        return "unshare --uts is refused here (it needs CAP_SYS_ADMIN): " + probe.stderr.strip()
    m, out = record(tmp, "in a UTS namespace", "stop", wrap=uts)
    if m:
        said_machine("in a UTS namespace", m, out, other)
    return None


def parents(path):
    d = os.path.dirname(path)
    while d != "/":
        yield d
        d = os.path.dirname(d)


# Killed (meson's timeout sends SIGTERM first): the temporary folder removed on the way out.
signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit("killed by signal %d" % signum))
with tempfile.TemporaryDirectory() as tmp:
    skipped = main(tmp)
if failures:
    sys.exit("%d failures" % len(failures))
if skipped:
    print("SKIP:", skipped)
    sys.exit(77)
print("ok")
