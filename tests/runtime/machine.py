#!/usr/bin/env python3
"""Each run knows its machine and how good its clock is (issue 33.1): the raw file's
MACHINE section holds the host name, /etc/machine-id, the boot id, CLOCK_REALTIME and
CLOCK_TAI at the start anchor and as the section was written, and the kernel's own
word on its clock (adjtimex: the estimated and maximum error, unsynchronized); `info`
says them. Checked against what this test reads of the machine itself, in modes stop
and stream (which writes the section at its start), as root and as nobody; then a run
in a UTS namespace with a host name of its own (unshare --uts; exit 77 after the rest
passed where that is refused) says its own name, on the same boot.

With PART `merge` (issue 33.2): two processes of this host merged, each flow one arrow
between them (JSON and .pftrace). Then a process on this host sends 200 numbered flows
(flows_prog) through a pipe to one in a time namespace a day ahead with a host name of
its own (unshare --time --monotonic 86400 --boottime 86400 --uts; REALTIME shared;
exit 77 where it is refused); merged, every receive is after its send, the namespace's
offset taken out (one boot: exact), each process labelled with its host and the
machines in otherData. The receiver's file then made another boot's (its boot id
changed): placed through the wall clocks, every receive is where the exact merge put
it give or take the uncertainty said, which is said; --offset HOST=TIME moves that
host's events by TIME, names no other, and no offset of 2^62 ns (146 years) or more,
alone or summed. Both merges as .pftrace too (issue 33.3):
each machine a Perfetto machine named after its host, every packet of the second
with its machine_id, its clock snapshot bringing it where the JSON has it
(check-perfetto.py: the same slices, no clock or track error).

With PART `placement`: placement(), time_limits(), stepped_between_runs() and
unknown_ids(), their files' machines made by editing their MACHINE sections (no
namespace needed).

With PART `real`: real(), two machines whose boot and machine ids differ; `redis`:
redis(), Debian's redis client and server on two such machines.

Usage: machine.py PROG TICKTRACE [merge|placement|real|redis CHECK_PERFETTO SCHEMA]   (PROG: flows_prog)"""
import csv
import ctypes
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import struct
import time
from bisect import bisect_right as bisect

import ttr

PROG, TOOL = sys.argv[1:3]
PART = sys.argv[3] if len(sys.argv) > 3 else "machine"
CHECK_PERFETTO, SCHEMA = sys.argv[4:6] if len(sys.argv) > 5 else (None, None)
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
    p = subprocess.run([*wrap, PROG, "send", "20"], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=120,
                       **({"user": user} if user is not None else {}))
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
    # (a stream's second reading is written as its file begins: said so)
    for when, said in (("start", "at start"), ("written", "as the file began" if mode == "stream" else "as written")):
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


def converted(tmp, files, *options):
    """The merged JSON of `files`, and what convert said on stderr."""
    out = os.path.join(tmp, "merged.json")
    c = subprocess.run([TOOL, "convert", "--force", *files, "-o", out, *options],
                       capture_output=True, text=True, timeout=120)
    check(c.returncode == 0, "convert %s: %s" % (" ".join(options), c.stderr))
    return (json.load(open(out)) if c.returncode == 0 else None), c.stderr


def as_perfetto(tmp, files, hosts, *options, flows=200, arrows=None):
    """The merge as .pftrace, checked against its JSON (merged.json) by check-perfetto:
    a machine per host, named so, the same slices where the JSON has them, an arrow a flow
    (`arrows`: a flow whose receive is placed before its send has none)."""
    out = os.path.join(tmp, "merged.pftrace")
    c = subprocess.run([TOOL, "convert", "--force", "-q", *files, "-o", out, *options],
                       capture_output=True, text=True, timeout=120)
    check(c.returncode == 0, "convert to .pftrace: %s" % c.stderr)
    # trace_processor links flow ids within a machine only: said where flows cross
    between = "%d flows between machines: Perfetto links flows within a machine only" % flows
    check((between in c.stderr) == (len(hosts) > 1), "%s: %s" % (between, c.stderr))
    if c.returncode != 0:
        return
    c = subprocess.run([sys.executable, CHECK_PERFETTO, out, SCHEMA, os.path.join(tmp, "merged.json"),
                        "--flows", str(flows if arrows is None else arrows)],
                       capture_output=True, text=True, timeout=300)
    if c.returncode == 77:
        print("(not checked as .pftrace: %s)" % c.stdout.strip())
        return
    said = re.search(r"^machines: (.*)$", c.stdout, re.M)
    check(c.returncode == 0 and (said.group(1) if said else None) == (
        ", ".join("%d %s" % h for h in enumerate(hosts)) if len(hosts) > 1 else None),
          "the .pftrace of %s: %s%s" % (" ".join(options) or "the merge", c.stdout[-3000:], c.stderr))
    if len(hosts) > 1:
        loaded_by_trace_processor(tmp, out, " ".join(options) or "the merge", len(hosts))


def loaded_by_trace_processor(tmp, trace, label, machines=2):
    """Where Perfetto's trace_processor_shell is ($TICKTRACE_TRACE_PROCESSOR, or
    ~/.cache/ticktrace/trace_processor_shell): it loads the trace with no error or
    data-loss stat, the processes on their machines."""
    tp = os.environ.get("TICKTRACE_TRACE_PROCESSOR") or \
        os.path.expanduser("~/.cache/ticktrace/trace_processor_shell")
    if not os.access(tp, os.X_OK):
        return
    pids = [str(m["pids"][0]) for m in json.load(open(os.path.join(tmp, "merged.json")))
            ["otherData"]["machines"]]
    query = os.path.join(tmp, "q.sql")
    with open(query, "w") as f:
        f.write("SELECT 'machines' AS k, COUNT(DISTINCT COALESCE(machine_id, -1)) AS v FROM process "
                "WHERE pid IN (%s) UNION ALL SELECT 'errors', COUNT(*) FROM stats WHERE value > 0 "
                "AND severity IN ('error', 'data_loss');\n" % ", ".join(pids))
    c = subprocess.run([tp, "query", "-f", query, trace], capture_output=True, text=True, timeout=300)
    rows = {r[0]: r[1] for r in csv.reader(io.StringIO(c.stdout)) if len(r) == 2}
    check(c.returncode == 0 and rows.get("machines") == str(machines) and rows.get("errors") == "0",
          "trace_processor on %s: %s %s" % (label, rows, c.stderr[-2000:]))


def another_boot(path, out, flip=0xff):
    """The raw file at `path` made another boot's (its boot id's first byte xor `flip`),
    written to `out`: its bytes, and where its MACHINE section is."""
    data = bytearray(open(path, "rb").read())
    at = ttr.HEADER
    while struct.unpack_from("<I", data, at)[0] != ttr.SEC_MACHINE:
        at += 16 + ((struct.unpack_from("<Q", data, at + 8)[0] + 15) & ~15)
    data[at + 16 + 24] ^= flip
    open(out, "wb").write(data)
    return data, at


def with_pid(data, pid):
    """The raw file's bytes `data` made a process `pid`'s."""
    struct.pack_into("<I", data, 104, pid)  # the header's, then the PROCESS section's
    process = ttr.HEADER
    while struct.unpack_from("<I", data, process)[0] != ttr.SEC_PROCESS:
        process += 16 + ((struct.unpack_from("<Q", data, process + 8)[0] + 15) & ~15)
    struct.pack_into("<I", data, process + 16, pid)


def moved_machine(path, out, host, wall_s=0, boot_id=None, pid=None):
    """The raw file at `path` made another machine's, written to `out`: its host name
    `host`, its boot id `boot_id` (16 bytes; None: its first byte flipped), its wall
    clocks (REALTIME and TAI, at the start and as written) moved by `wall_s`, its
    process's pid `pid` (None: kept)."""
    data, at = another_boot(path, out)
    if pid is not None:
        with_pid(data, pid)
    m = at + 16
    if boot_id is not None:
        data[m + 24:m + 40] = boot_id
    name = host.encode()
    struct.pack_into("<I", data, m + 56, len(name))
    data[m + 64:m + 128] = name.ljust(64, b"\0")
    for reading in (m + 128, m + 176):
        realtime, tai = struct.unpack_from("<qq", data, reading + 8)
        struct.pack_into("<qq", data, reading + 8, realtime + wall_s * 10**9, tai + wall_s * 10**9)
    open(out, "wb").write(data)


def placement(tmp):
    """A machine whose wall clock puts it before the first machine's boot (10 h behind, the
    first up for less), or the first machine moved by --offset before its clock's zero:
    the .pftrace moves its clock so that no time is negative (which trace_processor
    drops, unsaid), its snapshots consistent (check-perfetto and
    trace_processor: no error, no data loss); --offset that spans more than the 2^61 ns a
    .pftrace holds is refused with no output. One pid on two machines, or twice on one at
    the same time (PID namespaces), is two processes in the JSON. Runs whose boot is not
    known (Windows) are one machine by host name and machine id, whatever their order,
    never by a missing boot id."""
    host = os.uname().nodename
    send, receive = send_receive(tmp, "place-")
    west = os.path.join(tmp, "west.ttr")
    uptime = float(open("/proc/uptime").read().split()[0])
    moved_machine(receive, west, "westhost", -int(uptime + 36000))
    trace, said = converted(tmp, [send, west])
    check(trace and "host westhost: placed by CLOCK_REALTIME, -" in said, "west: %s" % said)
    # the warnings said (flows arriving before they left) are the summary's count
    counted = re.search(r", (\d+) warnings\n", said)
    check(said.count("warning: ") >= 1 and counted and int(counted.group(1)) == said.count("warning: "),
          "west: %d warnings said, the summary counts %s" % (
              said.count("warning: "), counted and counted.group(1)))
    as_perfetto(tmp, [send, west], (host, "westhost"), arrows=0)
    # the first machine moved before its own clock's zero (--offset): the .pftrace's
    # clock moved up to 0 exactly, a clock snapshot that must still say CLOCK_MONOTONIC
    early = "%s=-%ds" % (host, int(uptime + 50000))  # (before west: the earliest)
    trace, said = converted(tmp, [send, west], "--offset", early)
    as_perfetto(tmp, [send, west], (host, "westhost"), "--offset", early)
    # the timeline's zero before the first machine's boot: start_monotonic_ns is negative,
    # ts + it the first machine's own CLOCK_MONOTONIC (before: 0, 36000 s off)
    trace, said = converted(tmp, [send, west])
    if trace:
        pid, first = ttr.Ttr(send).pid, ttr.Ttr(send).start[1]
        start = trace["otherData"]["start_monotonic_ns"]
        earliest = min(e["ts"] for e in trace["traceEvents"] if e.get("pid") == pid and e.get("ph") == "X")
        check(start < 0 and first <= start + earliest * 1000 < first + 60 * 10**9,
              "west: start_monotonic_ns %d, send's first slice at %.3f us, its run began at %d ns"
              % (start, earliest, first))
    time_limits(tmp, send, receive, west)
    stepped_between_runs(tmp, send, receive, host)
    unknown_ids(tmp, send, receive, host)
    lost_switches(tmp, send)
    # unknown boots: the receiver's file under another host name, both files' boot ids gone
    files = [os.path.join(tmp, n) for n in ("win-a.ttr", "win-b.ttr", "win-c.ttr")]
    moved_machine(send, files[0], host, boot_id=bytes(16))
    moved_machine(receive, files[1], "winhost", boot_id=bytes(16))
    moved_machine(receive, files[2], host, boot_id=bytes(16))
    # the same pid on two machines: two processes in the JSON too (viewers join by pid)
    pid = ttr.Ttr(send).pid
    other = os.path.join(tmp, "same-pid.ttr")
    moved_machine(receive, other, "pidhost", pid=pid)
    trace, said = converted(tmp, [send, other])
    if trace:
        names = {}
        for e in trace["traceEvents"]:
            if e.get("name") == "process_name":
                names.setdefault(e["pid"], []).append(e["args"]["name"])
        given = [f for f in trace["otherData"]["files"] if f.get("recorded_pid") == pid]
        check(len(names) == 2 and all(len(n) == 1 for n in names.values()) and len(given) == 1
              and given[0]["pid"] != pid and given[0]["pid"] in names,
              "one pid on two machines: process names by pid %s; files %s" % (names, trace["otherData"]["files"]))
    # the same pid on one machine at the same time (PID namespaces: both pid 1): two
    # processes in the JSON too, said (before: one, their slices on one track, unsaid)
    # (the two runs must have overlapped: under ASan the sender may have filled the pipe
    # and written its file before the receiver's run began, and one pid one process
    # after another is one process)
    first, second = send, receive
    for attempt in range(3):
        at_once = [ttr.Ttr(f) for f in (first, second)]
        if all(a.start[1] <= b.end[1] for a, b in (at_once, at_once[::-1])):
            break
        print("one pid twice on one machine: the sender's and receiver's runs did not overlap "
              "(attempt %d): run again" % (attempt + 1))
        first, second = send_receive(tmp, "again-%d-" % attempt)
    pid = ttr.Ttr(first).pid
    namespaced = os.path.join(tmp, "namespaced.ttr")
    data = bytearray(open(second, "rb").read())
    with_pid(data, pid)
    open(namespaced, "wb").write(data)
    trace, said = converted(tmp, [first, namespaced])
    if trace:
        pids = {e["pid"] for e in trace["traceEvents"] if e.get("ph") == "X"}
        given = [f for f in trace["otherData"]["files"] if f.get("recorded_pid") == pid]
        check(len(trace["otherData"]["machines"]) == 1 and len(pids) == 2 and len(given) == 1
              and given[0]["pid"] in pids and "namespaced.ttr: its process %d is pid %d in the JSON"
              % (pid, given[0]["pid"]) in said and "another PID namespace" in said,
              "one pid twice on one machine: slices' pids %s; files %s; %s" % (
                  pids, trace["otherData"]["files"], said))
    for pair, machines in (((send, files[1]), 2), ((files[1], send), 2), ((files[0], files[1]), 2),
                           ((files[1], files[0]), 2), ((files[0], files[2]), 1)):
        trace, said = converted(tmp, list(pair))
        got = trace and [m["host"] for m in trace["otherData"]["machines"]]
        check(got and len(got) == machines, "unknown boots %s: machines %s; %s" % (
            [os.path.basename(p) for p in pair], got, said))


def time_limits(tmp, send, receive, west):
    """Times a trace cannot hold: a timeline spans less than 2^61 ns (73 years) in every
    format: JSON too (before, an --offset past it piled the machine's slices on 2^61 ns,
    exit 0), whatever offsets sum to it; offsets of 2^62 ns in all are no clock's. A
    .pftrace counts from the first machine's boot: a span JSON holds, it may not, and
    says so. None of them leaves an output."""
    span = "a trace's times span less than 2^61 ns (73 years) in every format; nothing written"
    for offsets, said in ((["westhost=4000000000s"], span), (["westhost=-3155000000s"], span),
                          (["westhost=1600000000s", "westhost=1600000000s"], span),
                          (["westhost=4611686019s"], "2^62 ns (146 years) or more in all")):
        for out in (os.path.join(tmp, "far.json"), os.path.join(tmp, "far.pftrace")):
            c = subprocess.run([TOOL, "convert", send, west, "-o", out,
                                *("--offset=" + o for o in offsets)],
                               capture_output=True, text=True, timeout=120)
            check(c.returncode == 1 and said in c.stderr and not os.path.exists(out),
                  "--offset %s -o %s: exit %d, %s" % (offsets, os.path.basename(out), c.returncode, c.stderr))
    # just under 2^61 ns: JSON holds it exactly (each slice where the offset puts it); a
    # .pftrace, counting from the boot of the first (up that long), does not: it says so
    east = os.path.join(tmp, "east.ttr")
    moved_machine(receive, east, "easthost")
    uptime = float(open("/proc/uptime").read().split()[0])
    if uptime < 60:
        return
    offset = 2**61 // 10**9 - 10
    trace, said = converted(tmp, [send, east], "--offset", "easthost=%ds" % offset)
    if trace:
        pid = ttr.Ttr(receive).pid
        slices = [e["ts"] for e in trace["traceEvents"] if e.get("pid") == pid and e.get("ph") == "X"]
        # (within 5 s of it either way: the receiver's first events may come before the
        # sender's, the timeline's zero, where the sender starts slower, as under ASan)
        check(len(slices) > 1 and len(set(slices)) > 1 and
              all((offset - 5) * 1e6 < ts < (offset + 5) * 1e6 for ts in slices),
              "--offset easthost=%ds: its slices at %s .. %s us" % (offset, min(slices), max(slices)))
    out = os.path.join(tmp, "east.pftrace")
    c = subprocess.run([TOOL, "convert", send, east, "-o", out, "--offset", "easthost=%ds" % offset],
                       capture_output=True, text=True, timeout=120)
    check(c.returncode == 1 and "more than a .pftrace's times hold" in c.stderr and
          "-o OUT.json holds it" in c.stderr and not os.path.exists(out),
          "--offset easthost=%ds -o .pftrace: exit %d, %s" % (offset, c.returncode, c.stderr))


def stepped_between_runs(tmp, send, receive, host):
    """A machine whose wall clock stepped back 10 s between two of its runs (one boot):
    placed by its earliest run's whatever the order of the files (before: by whichever
    came first, 10 s apart), the step said as a warning; a run of this boot whose time
    namespace offset is damaged (-1e18 ns: 31 years from its peers) said likewise."""
    _, later = send_receive(tmp, "later-")
    boot = bytes(range(0x50, 0x60))
    early, stepped = (os.path.join(tmp, n) for n in ("step-early.ttr", "step-later.ttr"))
    moved_machine(receive, early, "stephost", boot_id=boot)
    moved_machine(later, stepped, "stephost", -10, boot_id=boot)
    placed = []
    for files in ([send, early, stepped], [send, stepped, early], [stepped, early, send]):
        trace, said = converted(tmp, files)
        if not trace:
            return
        m = {m["host"]: m for m in trace["otherData"]["machines"]}
        placed.append(m["stephost"]["offset_ns"] - m[host]["offset_ns"])
        check(re.search(r"warning: host stephost: runs of one boot disagree about its wall clock: "
                        r"\S*step-later.ttr's moved -(9\.9|10\.0)\d+ s against CLOCK_MONOTONIC from "
                        r"\S*step-early.ttr's \(its boot's earliest run", said) and
              abs(m["stephost"].get("runs_wall_clock_step_ns", 0) + 10**10) < 10**8,
              "stepped between runs, %s: %s %s" % ([os.path.basename(f) for f in files], m["stephost"], said))
    check(len(set(placed)) == 1 and abs(placed[0]) < 10**9,
          "stepped between runs: stephost placed %s ns from %s by the files' orders" % (placed, host))
    damaged = os.path.join(tmp, "timens-damaged.ttr")
    data, at = another_boot(later, damaged, flip=0)
    struct.pack_into("<q", data, at + 16 + 8, -10**18)
    open(damaged, "wb").write(data)
    trace, said = converted(tmp, [send, damaged])
    check(trace and re.search(r"warning: host %s: runs of one boot disagree about its wall clock: "
                              r"\S*timens-damaged.ttr's moved -(999999999|1000000000)\.\d+ s" % re.escape(host), said),
          "a damaged time namespace offset: %s" % said)


def unknown_ids(tmp, send, receive, host):
    """A machine whose machine and boot ids were not read, of this host's name: convert
    names it by its machine id as zeros, and --offset by that name moves it (before:
    refused, and the host name too, two machines having it: no way to move it)."""
    unknown = os.path.join(tmp, "unknown-ids.ttr")
    data, at = another_boot(receive, unknown)
    data[at + 16 + 24:at + 16 + 56] = bytes(32)
    open(unknown, "wb").write(data)
    trace, said = converted(tmp, [send, unknown])
    check("host %s (machine id 00000000)" % host in said, "unknown ids: %s" % said)
    moved, said = converted(tmp, [send, unknown], "--offset", "00000000=1s")
    if trace and moved:
        given = [m["given_offset_ns"] for m in moved["otherData"]["machines"]]
        check(given == [0, 10**9] and moved["otherData"]["machines"][1]["offset_ns"] -
              trace["otherData"]["machines"][1]["offset_ns"] == 10**9,
              "--offset 00000000=1s: %s %s" % (moved["otherData"]["machines"], said))


def lost_switches(tmp, send):
    """A thread whose switches the kernel lost (its SCHED section says 7 more): convert warns,
    as for dropped events, in the summary's count (before: only info said it)."""
    data = bytearray(open(send, "rb").read())
    at = ttr.HEADER
    while at + 16 <= len(data) and struct.unpack_from("<I", data, at)[0] != ttr.SEC_SCHED:
        at += 16 + ((struct.unpack_from("<Q", data, at + 8)[0] + 15) & ~15)
    if at + 16 > len(data):
        print("(lost switches not checked: %s has no thread states)" % send)
        return
    # (7 more than the run lost itself: a loaded machine's kernel may have lost some)
    said = r"warning: \S*%s: tid (\d+) .*: (\d+) of its thread-state switches lost"
    c = subprocess.run([TOOL, "convert", "--force", send, "-o", os.path.join(tmp, "unpatched.json")],
                       capture_output=True, text=True, timeout=120)
    before = {tid: int(n) for tid, n in re.findall(said % re.escape(os.path.basename(send)), c.stderr)}
    struct.pack_into("<Q", data, at + 16 + 8, struct.unpack_from("<Q", data, at + 16 + 8)[0] + 7)
    lost = os.path.join(tmp, "lost-switches.ttr")
    open(lost, "wb").write(data)
    for out in ("lost.json", "lost.pftrace"):
        c = subprocess.run([TOOL, "convert", "--force", lost, "-o", os.path.join(tmp, out)],
                           capture_output=True, text=True, timeout=120)
        counted = re.search(r", (\d+) warnings\n", c.stderr)
        after = {tid: int(n) for tid, n in re.findall(said % "lost-switches.ttr", c.stderr)}
        more = {tid: n - before.get(tid, 0) for tid, n in after.items() if n != before.get(tid, 0)}
        check(c.returncode == 0 and list(more.values()) == [7] and counted and
              int(counted.group(1)) == c.stderr.count("warning: "),
              "lost switches, -o %s: %s" % (out, c.stderr))


def gaps(trace, flows=200, arrows=True):
    """Each flow's receive less its send (us), by id; the hosts the processes are labelled with.
    With `arrows`, each flow is one arrow from its send's process to its receive's (the
    JSON's "s" and "f" of one id, in two processes), as the receive came after the send."""
    ends = {"flow_out": {}, "flow_in": {}}
    hosts = {}
    arrow_ends = {"s": {}, "f": {}}
    for e in trace["traceEvents"]:
        if e.get("name") in ends:
            ends[e["name"]][e["args"]["id"]] = e["ts"]
        elif e.get("name") == "process_labels":
            hosts[e["pid"]] = e["args"]["labels"]
        elif e.get("ph") in arrow_ends:
            arrow_ends[e["ph"]][e["id"]] = e["pid"]
    sent, got = ends["flow_out"], ends["flow_in"]
    check(len(sent) == len(got) == flows and set(sent) == set(got),
          "flows: %d sent, %d received" % (len(sent), len(got)))
    across = sum(1 for i, pid in arrow_ends["s"].items() if arrow_ends["f"].get(i, pid) != pid)
    check(not arrows or across == flows, "%d arrows between the processes for %d flows (%d starts, "
          "%d ends)" % (across, flows, len(arrow_ends["s"]), len(arrow_ends["f"])))
    return {i: got[i] - sent[i] for i in sent if i in got}, hosts


def send_receive(tmp, label, wrap=()):
    """200 flows through a pipe from a process of this host to one under `wrap`: their files."""
    send, receive = (os.path.join(tmp, label + end + ".ttr") for end in ("send", "receive"))
    sender = subprocess.Popen([PROG, "send", "200"], stdout=subprocess.PIPE,
                              env=dict(os.environ, TICKTRACE_OUT=send))
    receiver = subprocess.run([*wrap, PROG, "receive", "200"], stdin=sender.stdout,
                              env=dict(os.environ, TICKTRACE_OUT=receive), timeout=120)
    sender.stdout.close()
    check(sender.wait(timeout=120) == 0 and receiver.returncode == 0,
          "flows_prog: sender %s, receiver %s" % (sender.returncode, receiver.returncode))
    return send, receive


def one_machine(tmp):
    """Two processes of this host: merged, each flow one arrow from the sender's process
    to the receiver's, in the JSON and the .pftrace (each end had an arrow of its own)."""
    files = send_receive(tmp, "local-")
    trace, _ = converted(tmp, files)
    if trace:
        gaps(trace)
        as_perfetto(tmp, files, (os.uname().nodename,))


def renamed_host(tmp):
    """A process renamed by `unshare --uts` (as a container is), on this boot and in its
    time namespace: the same machine, named by the first file's host, each process
    labelled with its own name, and every flow an arrow in the .pftrace too (Perfetto
    links flows within a machine only: as two machines, all 200 were dropped)."""
    renamed = "tt-renamed-%d" % os.getpid()
    wrap = ["unshare", "--uts", "--", "sh", "-c", 'hostname "$0" && exec "$@"', renamed]
    if subprocess.run([*wrap, "true"], capture_output=True, timeout=60).returncode != 0:
        return
    files = send_receive(tmp, "renamed-", wrap)
    host = os.uname().nodename
    trace, _ = converted(tmp, files)
    if trace:
        _, hosts = gaps(trace)
        check(sorted(hosts.values()) == sorted(["host " + host, "host " + renamed]),
              "a renamed host's process labels: %s" % hosts)
        machines = [m["host"] for m in trace["otherData"].get("machines", [])]
        check(machines in ([host], []), "a renamed host on this boot: machines %s" % machines)
        as_perfetto(tmp, files, (host,))
        # --offset by the renamed name moves its machine (both files: one boot), as by
        # the first's; the machine lists its other name
        for name in (renamed, host):
            moved, _ = converted(tmp, files, "--offset", name + "=1ms")
            if not moved:
                continue
            other = moved["otherData"]
            check(other["start_monotonic_ns"] - trace["otherData"]["start_monotonic_ns"] == 10**6,
                  "--offset %s=1ms: the start moved from %d to %d" % (
                      name, trace["otherData"]["start_monotonic_ns"], other["start_monotonic_ns"]))
            check([(m["host"], m.get("also_named"), m["given_offset_ns"]) for m in other["machines"]]
                  == [(host, [renamed], 10**6)], "--offset %s: machines %s" % (name, other["machines"]))


def own_clocks(tmp, host):
    """A process of this host in a time namespace of its own (its host name kept, as a
    child forked after unshare(CLONE_NEWTIME) has it): one machine with the rest of
    its boot, the namespace's offsets taken out, every flow an arrow in the .pftrace
    (before: a second machine of the same name, its flows not drawn)."""
    files = send_receive(tmp, "own-clocks-", ["unshare", "--time", "--monotonic", "500",
                                              "--boottime", "500", "--"])
    trace, said = converted(tmp, files)
    if trace:
        exact, _ = gaps(trace)
        machines = [m["host"] for m in trace["otherData"].get("machines", [])]
        check(machines == [host] and "2 machines" not in said and 0 < min(exact.values()),
              "a time namespace of this host's name: machines %s, receives %.3f us after their "
              "sends at the least; %s" % (machines, min(exact.values()), said))
        as_perfetto(tmp, files, (host,))


def merge(tmp):
    one_machine(tmp)
    renamed_host(tmp)
    other = "tt-far-%d" % os.getpid()
    wrap = ["unshare", "--time", "--monotonic", "86400", "--boottime", "86400", "--uts", "--",
            "sh", "-c", 'hostname "$0" && exec "$@"', other]
    probe = subprocess.run([*wrap, "true"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        return ("unshare --time --uts is refused here (it needs CAP_SYS_ADMIN and a kernel with "
                "time namespaces, 5.6 or later): " + probe.stderr.strip())
    send, receive = send_receive(tmp, "", wrap)
    host = os.uname().nodename
    own_clocks(tmp, host)
    trace, said = converted(tmp, [send, receive])
    if not trace:
        return None
    exact, hosts = gaps(trace)
    machines = {m["host"]: m for m in trace["otherData"].get("machines", [])}
    check(0 < min(exact.values()) and max(exact.values()) < 60e6,
          "one boot: receives %.3f .. %.3f us after their sends" % (min(exact.values()), max(exact.values())))
    check(sorted(hosts.values()) == sorted(["host " + host, "host " + other]),
          "the processes' host labels: %s" % hosts)
    check(set(machines) == {host, other} and machines[other]["time_namespace_ns"] == 86400 * 10**9
          and machines[other]["uncertainty_ns"] == 0 and machines[other]["offset_ns"] == 0,
          "one boot's machines: %s" % machines)
    check("host %s: the first's boot, exact; its time namespace's +86400.000000000 s taken out"
          % other in said, "convert does not say the namespace taken out: %s" % said)
    as_perfetto(tmp, [send, receive], (host, other))
    # The receiver's file another boot's: placed by the wall clocks, said how well.
    far = os.path.join(tmp, "far-boot.ttr")
    data, at = another_boot(receive, far)
    trace, said = converted(tmp, [send, far])
    if not trace:
        return None
    placed, _ = gaps(trace)
    m = {m["host"]: m for m in trace["otherData"].get("machines", [])}.get(other, {})
    unsync = kernel_clock()[0] == TIME_ERROR or bool(kernel_clock()[1] & STA_UNSYNC)
    uncertainty = m.get("uncertainty_ns")
    check(m.get("placed_by") in ("CLOCK_REALTIME", "CLOCK_TAI") and uncertainty is not None and
          uncertainty == 2 * m["maxerror_ns"] and m["unsynchronized"] == unsync,
          "another boot's machine: %s" % m)
    worst = max(abs(placed[i] - exact[i]) * 1000 for i in exact)
    check(uncertainty is not None and worst <= uncertainty and
          all(placed[i] > -uncertainty / 1000 for i in placed),
          "placed by the wall clock %.0f ns from the exact merge, the uncertainty said %s ns"
          % (worst, uncertainty))
    if uncertainty is None:
        return None
    as_perfetto(tmp, [send, far], (host, other))
    check(("placed by %s" % m["placed_by"]) in said and
          "off by up to %d.%09d s" % divmod(uncertainty, 10**9) in said and
          ("UNSYNCHRONIZED" in said) == unsync,
          "convert does not say the placement and its uncertainty: %s" % said)
    # --offset: that host's events moved by it, said; a host no file has refused.
    trace, said = converted(tmp, [send, far], "--offset", other + "=-1.5ms")
    if trace:
        # (the wall clocks placed the receives within their uncertainty: 1.5 ms earlier,
        # some may come before their sends, which no arrow joins)
        moved, _ = gaps(trace, arrows=False)
        after = sum(1 for i in moved if moved[i] > 0)
        check(all(abs(moved[i] - placed[i] + 1500) < 0.002 for i in placed),
              "--offset -1.5ms: the receives moved by %s us" % sorted({moved[i] - placed[i] for i in placed})[:3])
        check("(of which --offset -0.001500000 s)" in said, "--offset not said: %s" % said)
        as_perfetto(tmp, [send, far], (host, other), "--offset", other + "=-1.5ms", arrows=after)
    # A wall clock far beyond any (damage): said, nothing placed.
    struct.pack_into("<qq", data, at + 16 + 128 + 8, -2**63 + 1, -2**63 + 1)
    wild = os.path.join(tmp, "wild.ttr")
    open(wild, "wb").write(data)
    c = subprocess.run([TOOL, "convert", send, wild, "-o", os.path.join(tmp, "x.json")],
                       capture_output=True, text=True, timeout=60)
    check(c.returncode == 1 and "or %s's, is 2^62 ns (146 years) or more from 1970" % send
          in c.stderr and not os.path.exists(os.path.join(tmp, "x.json")),
          "a wall clock far off: %d %s" % (c.returncode, c.stderr))
    c = subprocess.run([TOOL, "convert", send, far, "-o", os.path.join(tmp, "x.json"),
                        "--offset", "nowhere=1s"], capture_output=True, text=True, timeout=60)
    check(c.returncode == 1 and "--offset nowhere: no file was recorded on a host of that name"
          in c.stderr and not os.path.exists(os.path.join(tmp, "x.json")),
          "--offset of no host: %d %s" % (c.returncode, c.stderr))
    # offsets past any clock's, alone or summed (two of 285 years wrapped around to -14
    # years, placed so unsaid): refused, no output
    for offsets in (["--offset", other + "=-9000000000s"],
                    ["--offset", other + "=9000000000s", "--offset", other + "=9000000000s"]):
        c = subprocess.run([TOOL, "convert", send, far, "-o", os.path.join(tmp, "x.json"), *offsets],
                           capture_output=True, text=True, timeout=60)
        check(c.returncode == 1 and "--offset %s: 2^62 ns (146 years) or more in all" % other in c.stderr
              and not os.path.exists(os.path.join(tmp, "x.json")),
              "%s: %d %s" % (" ".join(offsets), c.returncode, c.stderr))
    align(tmp, wrap, host, other)
    return None


def ping_pong(tmp, label, wrap_ping, wrap_pong, base=0):
    """200 round trips (ids from base on) between a process under `wrap_ping` and one
    under `wrap_pong`: their files."""
    ping, pong = (os.path.join(tmp, label + end + ".ttr") for end in ("ping", "pong"))
    to_pong, to_ping = os.pipe(), os.pipe()
    a = subprocess.Popen([*wrap_ping, PROG, "ping", "200", str(base)], stdin=to_ping[0],
                         stdout=to_pong[1], env=dict(os.environ, TICKTRACE_OUT=ping))
    b = subprocess.Popen([*wrap_pong, PROG, "pong", "200", str(base)], stdin=to_pong[0],
                         stdout=to_ping[1], env=dict(os.environ, TICKTRACE_OUT=pong))
    for fd in (*to_pong, *to_ping):
        os.close(fd)
    check(a.wait(timeout=120) == 0 and b.wait(timeout=120) == 0,
          "flows_prog ping/pong: %s %s" % (a.returncode, b.returncode))
    return ping, pong


def namespace(name, days):
    """A time namespace `days` ahead with its own host name."""
    ahead = str(86400 * days)
    return ["unshare", "--time", "--monotonic", ahead, "--boottime", ahead, "--uts", "--",
            "sh", "-c", 'hostname "$0" && exec "$@"', name]


def three_machines(tmp, host):
    """--align flows machine by machine: this host (A) makes round trips with machine B
    (two processes in time namespaces of one name), B with C (another); A and C none.
    Listed A, C, B: C has no flows with a machine before it, and is placed through B
    once B is. B's and C's files other boots', their clocks put -1 s and +2 s off: both
    placed by their flows, C against B with B's uncertainty and its own; each of the 800
    receives after its send, where the exact merge (one boot) has it give or take the
    uncertainty said."""
    b, c = "tt-b-%d" % os.getpid(), "tt-c-%d" % os.getpid()
    a_ping, b_pong = ping_pong(tmp, "ab-", (), namespace(b, 1))
    b_ping, c_pong = ping_pong(tmp, "bc-", namespace(b, 1), namespace(c, 2), 1000)
    files = [a_ping, c_pong, b_pong, b_ping]
    trace, said = converted(tmp, files)
    if not trace:
        return
    exact, _ = gaps(trace, 800)
    far = [files[0]]
    for path, flip in zip(files[1:], (0x0f, 0xff, 0xff)):
        far.append(path.replace(".ttr", "-far.ttr"))
        another_boot(path, far[-1], flip)
    options = ["--offset", b + "=-1s", "--offset", c + "=2s", "--align", "flows"]
    trace, said = converted(tmp, far, *options)
    if not trace:
        return
    aligned, _ = gaps(trace, 800)
    machines = trace["otherData"]["machines"]
    m = {m["host"]: m for m in machines}
    worst = max(abs(aligned[i] - exact[i]) * 1000 for i in exact)
    check([mc["host"] for mc in machines] == [host, c, b] and
          all(m[h]["placed_by"] == "flows" for h in (b, c)) and m[b]["flows_with"] == 0 and
          m[c]["flows_with"] == 2 and m[c]["uncertainty_ns"] > m[b]["uncertainty_ns"] and
          worst <= m[c]["uncertainty_ns"] + 1 and min(aligned.values()) >= 0,
          "three machines, --align flows: %s; receives %.0f ns at most from the exact merge's, "
          "%.3f us after their sends at the least; said: %s" % (machines, worst, min(aligned.values()), said))
    check(("host %s: placed by flows" % c) in said and ("against host %s" % b) in said and
          "arrive before they left" not in said, "three machines, --align flows said: %s" % said)
    as_perfetto(tmp, far, (host, c, b), *options, flows=800)


def align(tmp, wrap, host, other):
    """--align flows (issue 33.2): 200 round trips between this host and the namespace,
    flows both ways. One boot: the window the flows leave holds the exact placement and
    none arrives before it left. The namespace's file another boot's and its clock put
    1 s early (--offset): its 200 receives are said to arrive before they left, and
    counted; --align flows places it back within the window its flows leave, said, every
    receive after its send, each where the exact merge has it give or take the
    uncertainty said (half the window's width). One boot moved by --offset is placed
    by its flows too; flows one way do not place it, and their early arrivals are said
    without suggesting the --align flows given."""
    ping, pong = ping_pong(tmp, "", (), wrap)
    trace, said = converted(tmp, [ping, pong], "--align", "flows")
    if not trace:
        return
    exact, _ = gaps(trace, 400)
    m = {m["host"]: m for m in trace["otherData"]["machines"]}[other]
    lo, hi = m.get("flows_window_ns", (1, -1))
    check(m["placed_by"] == "CLOCK_MONOTONIC" and lo <= 0 <= hi and min(exact.values()) > 0,
          "one boot, --align flows: the window %s .. %s ns, receives %.3f us after their sends "
          "at the least: %s" % (lo, hi, min(exact.values()), m))
    check("the window its flows leave: " in said and "arrive before they left" not in said,
          "one boot, --align flows: %s" % said)
    # one boot moved by --offset: the flows place it back (they replace what --offset
    # gave; before, it stayed 1 s off and the warning suggested the --align flows given)
    trace, said = converted(tmp, [ping, pong], "--offset", other + "=-1s", "--align", "flows")
    if trace:
        m = {m["host"]: m for m in trace["otherData"]["machines"]}[other]
        lo, hi = m.get("flows_window_ns", (1, -1))
        check(m["placed_by"] == "flows" and lo <= 0 <= hi and abs(m["offset_ns"]) <= m["uncertainty_ns"]
              and min(gaps(trace, 400)[0].values()) >= 0 and "arrive before they left" not in said
              and "(of which --offset -1.000000000 s)" in said
              and "corrects a known offset" not in said,  # (no wall clock placed them)
              "one boot, --offset -1s --align flows: %s; %s" % (m, said))
    # flows one way: not placed by them, said; the flows that arrive early are said without
    # suggesting the --align flows given
    send, receive = send_receive(tmp, "oneway-", wrap)
    trace, said = converted(tmp, [send, receive], "--offset", other + "=-1s", "--align", "flows")
    check(trace and "stays where CLOCK_MONOTONIC placed it" in said
          and "200 of the 200 flows between machines arrive before they left" in said
          and "--align flows places them" not in said, "flows one way, --align flows: %s" % said)
    far = os.path.join(tmp, "pong-far.ttr")
    another_boot(pong, far)
    trace, said = converted(tmp, [ping, far], "--offset", other + "=-1s")
    if not trace:
        return
    early = sum(1 for gap in gaps(trace, 400, arrows=False)[0].values() if gap < 0)
    check(early == 200 and "warning: 200 of the 400 flows between machines arrive before they left"
          " (by up to 0.99" in said and ("host %s and host %s" % (host, other)) in said,
          "a clock 1 s early: %d flows arrive before they left; said: %s" % (early, said))
    trace, said = converted(tmp, [ping, far], "--offset", other + "=-1s", "--align", "flows")
    if not trace:
        return
    aligned, _ = gaps(trace, 400)
    m = {m["host"]: m for m in trace["otherData"]["machines"]}[other]
    lo, hi = m.get("flows_window_ns", (1, -1))
    worst = max(abs(aligned[i] - exact[i]) * 1000 for i in exact)
    check(m["placed_by"] == "flows" and lo <= 0 <= hi and abs(m["uncertainty_ns"] - (hi - lo) / 2) <= 1
          and worst <= m["uncertainty_ns"] + 1 and min(aligned.values()) >= 0,
          "--align flows: %s; receives %.0f ns at most from the exact merge's, %.3f us after "
          "their sends at the least" % (m, worst, min(aligned.values())))
    check(("host %s: placed by flows" % other) in said and "(the window its flows leave: " in said
          and "arrive before they left" not in said, "--align flows said: %s" % said)
    as_perfetto(tmp, [ping, far], (host, other), "--offset", other + "=-1s", "--align", "flows", flows=400)
    three_machines(tmp, host)


def real_machine(tmp, host, days=1, user=None):
    """A wrap for a run on another machine as the runtime sees one: a mount namespace
    with a boot id and a machine id of its own bind-mounted over
    /proc/sys/kernel/random/boot_id and /etc/machine-id, a UTS namespace named `host`,
    a time namespace `days` ahead (CLOCK_REALTIME alone is shared: no namespace moves
    it); the run as `user` (None: this one). Its ids (hex) beside it."""
    ids = {}
    for name in ("boot_id", "machine_id"):
        ids[name] = os.urandom(16).hex()
        path = os.path.join(tmp, "%s-%s" % (host, name))
        with open(path, "w") as f:
            f.write(ids[name] if name == "machine_id" else "%s-%s-%s-%s-%s" % (
                ids[name][:8], ids[name][8:12], ids[name][12:16], ids[name][16:20], ids[name][20:]))
            f.write("\n")
        os.chmod(path, 0o644)
        ids[name + "_path"] = path
    ahead = str(86400 * days)
    become = ["setpriv", "--reuid", str(user), "--regid", str(user), "--clear-groups"] if user else []
    wrap = ["unshare", "--mount", "--propagation", "private", "--uts", "--time", "--monotonic", ahead,
            "--boottime", ahead, "--", "sh", "-c",
            'mount --bind "$1" /proc/sys/kernel/random/boot_id && mount --bind "$2" /etc/machine-id'
            ' && hostname "$3" && shift 3 && exec "$@"', "sh", ids["boot_id_path"],
            ids["machine_id_path"], host, *become]
    return wrap, ids


def set_clock_state(path, out, synchronized):
    """The raw file at `path` written to `out` with its kernel's word on its clock (both
    readings) made synchronized (TIME_OK, STA_UNSYNC clear, errors of 1 ms) or not
    (TIME_ERROR, STA_UNSYNC, 16 s)."""
    data = bytearray(open(path, "rb").read())
    at = ttr.HEADER
    while struct.unpack_from("<I", data, at)[0] != ttr.SEC_MACHINE:
        at += 16 + ((struct.unpack_from("<Q", data, at + 8)[0] + 15) & ~15)
    for reading in (at + 16 + 128, at + 16 + 176):
        state, status = struct.unpack_from("<iI", data, reading + 40)
        error = 10**6 if synchronized else 16 * 10**9
        struct.pack_into("<qqiI", data, reading + 24, error, error, 0 if synchronized else TIME_ERROR,
                         status & ~STA_UNSYNC if synchronized else status | STA_UNSYNC)
    open(out, "wb").write(data)


def machines_said(said):
    """convert's lines on the machines: {host and what tells it apart: the rest of the line}."""
    lines = {}
    for line in said.splitlines():
        found = re.match(r"ticktrace:   host (.*?): (.*)$", line)
        if found:
            lines[found.group(1)] = found.group(2)
    return lines


def real(tmp):
    """Two real machines (issue 33's Done-when on runs whose boot ids and machine ids
    differ, not one boot's time namespace): real_machine()'s namespace stands in for
    the second, its runs recorded there, as nobody where the paths allow. Placed through
    the wall clocks, each said with its uncertainty (every receive after its send by
    less), the machines in info, the JSON and the .pftrace (trace_processor: two
    machines, no error); one unsynchronized, and one whose wall clock stepped during its
    run, said of it alone; a wall clock 3 s behind (made so in its file: no namespace moves
    REALTIME) puts the receives before their sends, said; --offset takes it back, and
    --align flows places it by its round trips within what it says. Then a second
    machine with this host's own name: told apart everywhere by its machine id, and
    --offset by that name refused as ambiguous, by a prefix of its machine id taken.
    First, boottime_kept(): what trace_processor shows of a time namespace's BOOTTIME."""
    host = os.uname().nodename
    other = "tt-real-%d" % os.getpid()
    user = None
    if os.geteuid() == 0 and all(os.stat(d).st_mode & 0o001 for p in (PROG, TOOL)
                                 for d in parents(os.path.abspath(p))):
        os.chmod(tmp, 0o777)
        user = 65534
    wrap, ids = real_machine(tmp, other, user=user)
    probe = subprocess.run([*wrap, "true"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        return ("a mount, UTS and time namespace is refused here (unshare --mount --uts --time "
                "needs CAP_SYS_ADMIN and a kernel with time namespaces, 5.6 or later): "
                + probe.stderr.strip())
    boottime_kept(tmp, host)
    send, receive = send_receive(tmp, "real-", wrap)
    _, m = ttr.read_machine(receive)
    check(m and (m["host"], m["boot_id"], m["machine_id"]) == (other, ids["boot_id"], ids["machine_id"]),
          "the other machine's file: %s, its ids %s" % (m, ids))
    # info: both machines' identities
    info = subprocess.run([TOOL, "info", send, receive], capture_output=True, text=True, timeout=60)
    for name, boot, machine in ((host, own_id("/proc/sys/kernel/random/boot_id"), own_id("/etc/machine-id")),
                                (other, ids["boot_id"], ids["machine_id"])):
        want = "  machine:  host %s, machine id %s, boot id %s\n" % (name, machine or "not known", boot)
        check(info.returncode == 0 and want in info.stdout, "info does not say %r: %s%s" % (
            want, info.stdout, info.stderr))
    trace, said = converted(tmp, [send, receive])
    if not trace:
        return None
    placed, hosts = gaps(trace)
    machines = {m["host"]: m for m in trace["otherData"].get("machines", [])}
    far = machines.get(other, {})
    state, status, _ = kernel_clock()
    unsync = state == TIME_ERROR or bool(status & STA_UNSYNC)
    uncertainty = far.get("uncertainty_ns")
    check(set(machines) == {host, other} and far["boot_id"] == ids["boot_id"]
          and far["machine_id"] == ids["machine_id"] and far["placed_by"] in ("CLOCK_REALTIME", "CLOCK_TAI")
          and far["time_namespace_ns"] == 86400 * 10**9 and far["unsynchronized"] == unsync
          and uncertainty == far["maxerror_ns"] + machines[host]["maxerror_ns"],
          "two real machines: %s" % machines)
    check(sorted(hosts.values()) == sorted(["host " + host, "host " + other]),
          "the processes' host labels: %s" % hosts)
    check(uncertainty is not None and all(0 < gap * 1000 < uncertainty for gap in placed.values()),
          "receives %.3f .. %.3f us after their sends, the uncertainty said %s ns" % (
              min(placed.values()), max(placed.values()), uncertainty))
    lines = machines_said(said)
    check(("placed by %s" % far.get("placed_by")) in lines.get(other, "") and
          uncertainty is not None and "off by up to %d.%09d s" % divmod(uncertainty, 10**9) in lines[other]
          and all(("UNSYNCHRONIZED" in lines.get(h, "")) == unsync for h in (host, other)),
          "convert does not say the placement and its uncertainty: %s" % said)
    as_perfetto(tmp, [send, receive], (host, other))
    # A machine the kernel calls unsynchronized, beside one it does not: said of it alone
    synced, unsynced = (os.path.join(tmp, n) for n in ("synced.ttr", "unsynced.ttr"))
    set_clock_state(send, synced, True)
    set_clock_state(receive, unsynced, False)
    trace, said = converted(tmp, [synced, unsynced])
    if trace:
        lines = machines_said(said)
        flags = {m["host"]: m["unsynchronized"] for m in trace["otherData"]["machines"]}
        check("UNSYNCHRONIZED" in lines.get(other, "") and "UNSYNCHRONIZED" not in lines.get(host, "x")
              and flags == {host: False, other: True}, "one machine unsynchronized: %s %s" % (flags, said))
    # Its wall clock stepped back 2 s during its run (its reading as written 2 s behind
    # the start's, against CLOCK_MONOTONIC): said of it alone, the start's taken
    stepped = os.path.join(tmp, "stepped.ttr")
    data, at = another_boot(receive, stepped)
    data[at + 16 + 24:at + 16 + 40] = bytes.fromhex(ids["boot_id"])
    realtime, tai = struct.unpack_from("<qq", data, at + 16 + 176 + 8)
    struct.pack_into("<qq", data, at + 16 + 176 + 8, realtime - 2 * 10**9, tai - 2 * 10**9)
    open(stepped, "wb").write(data)
    trace, said = converted(tmp, [send, stepped])
    if trace:
        lines = machines_said(said)
        step = re.search(r"its wall clock stepped -(\d+\.\d+) s during its run", lines.get(other, ""))
        steps = {m["host"]: m.get("wall_clock_step_ns") for m in trace["otherData"]["machines"]}
        check(steps[host] is None and -2.01e9 < (steps[other] or 0) < -1.99e9,
              "the wall clock's step in otherData: %s" % steps)
        check(step and 1.99 < float(step.group(1)) < 2.01 and "stepped" not in lines.get(host, "x")
              and "placed by the start's" in lines[other] and all(0 < gap * 1000 < uncertainty
                                                               for gap in gaps(trace)[0].values()),
              "a wall clock stepped back 2 s during the run: %s" % said)
    # Its wall clock 3 s behind: its receives 3 s before their sends, said; --offset
    # takes the 3 s back
    behind = os.path.join(tmp, "behind.ttr")
    moved_machine(receive, behind, other, -3, boot_id=bytes.fromhex(ids["boot_id"]))
    trace, said = converted(tmp, [send, behind])
    if trace:
        early = gaps(trace, arrows=False)[0]
        check(all(abs(early[i] - placed[i] + 3e6) < 0.002 for i in placed) and
              "warning: 200 of the 200 flows between machines arrive before they left" in said,
              "a wall clock 3 s behind: the receives moved by %s us; %s" % (
                  sorted({round(early[i] - placed[i], 3) for i in placed})[:3], said))
    trace, said = converted(tmp, [send, behind], "--offset", other + "=3s")
    if trace:
        moved = gaps(trace)[0]
        check(all(abs(moved[i] - placed[i]) < 0.002 for i in placed) and "arrive before" not in said,
              "--offset %s=3s: the receives moved by %s us" % (
                  other, sorted({round(moved[i] - placed[i], 3) for i in placed})[:3]))
    real_align(tmp, wrap, ids, host, other)
    same_host_name(tmp, host, user)
    return None


def trace_processor_lead(tmp, files, *options):
    """The .pftrace of `files` as trace_processor places it (in CLOCK_BOOTTIME, through the
    clock snapshots): its `send` slices' times less the JSON's (CLOCK_MONOTONIC), a set
    of differences in ns (one, a whole trace's boot lead); None where
    trace_processor_shell is not here."""
    tp = os.environ.get("TICKTRACE_TRACE_PROCESSOR") or \
        os.path.expanduser("~/.cache/ticktrace/trace_processor_shell")
    if not os.access(tp, os.X_OK):
        return None
    trace, said = converted(tmp, files, *options)
    out = os.path.join(tmp, "lead.pftrace")
    c = subprocess.run([TOOL, "convert", "--force", "-q", *files, "-o", out, *options],
                       capture_output=True, text=True, timeout=120)
    check(c.returncode == 0 and trace, "convert %s: %s" % (" ".join(options), c.stderr))
    if c.returncode != 0 or not trace:
        return set()
    base = trace["otherData"]["start_monotonic_ns"]
    sends = sorted(base + round(e["ts"] * 1000) for e in trace["traceEvents"]
                   if e.get("ph") == "X" and e["name"] == "send")
    query = os.path.join(tmp, "lead.sql")
    with open(query, "w") as f:
        f.write("SELECT ts FROM slice WHERE name = 'send' ORDER BY ts;\n")
    c = subprocess.run([tp, "query", "-f", query, out], capture_output=True, text=True, timeout=300)
    shown = [int(r[0]) for r in csv.reader(io.StringIO(c.stdout)) if r and r[0].isdigit()]
    check(c.returncode == 0 and len(shown) == len(sends) > 0,
          "trace_processor on %s %s: %d send slices, the JSON's %d: %s" % (
              " ".join(files), " ".join(options), len(shown), len(sends), c.stderr[-2000:]))
    return {a - b for a, b in zip(shown, sends)}


def boottime_kept(tmp, host):
    """A run's CLOCK_BOOTTIME, which trace_processor shows every time in: in a time
    namespace that moves BOOTTIME otherwise than MONOTONIC (--monotonic 86400 --boottime
    3600), each clock's own offset taken out (before, MONOTONIC's out of both put
    BOOTTIME 23 h before the boot: every slice dropped, unsaid); a file that read no
    BOOTTIME (0, as a file of before the field) moved by --offset keeps none, so
    BOOTTIME is taken to be MONOTONIC (before, the offset was taken for it: times near
    0). Each slice where the JSON has it, less the machine's lead of BOOTTIME on
    MONOTONIC as its file's anchor says it."""
    apart = os.path.join(tmp, "boottime-apart.ttr")
    c = subprocess.run(["unshare", "--time", "--monotonic", "86400", "--boottime", "3600",
                        PROG, "send", "5"], env=dict(os.environ, TICKTRACE_OUT=apart),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120)
    check(c.returncode == 0, "flows_prog in a time namespace: %s" % c.stderr)
    data = bytearray(open(apart, "rb").read())
    mono, boot = struct.unpack_from("<qq", data, 48)  # the header's start anchor
    m_off, b_off = ttr.Ttr(apart).timens
    lead = trace_processor_lead(tmp, [apart])
    if lead is None:
        print("(BOOTTIME not checked: no trace_processor_shell)")
        return
    want = (boot - b_off) - (mono - m_off)
    check(lead and max(abs(d - want) for d in lead) <= 1,
          "BOOTTIME %d s ahead in a time namespace: the slices %s ns after the JSON's, its "
          "lead %d ns" % (b_off // 10**9, sorted(lead)[:3], want))
    none = os.path.join(tmp, "no-boottime.ttr")
    c = subprocess.run([PROG, "send", "5"], env=dict(os.environ, TICKTRACE_OUT=none),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120)
    check(c.returncode == 0, "flows_prog: %s" % c.stderr)
    data = bytearray(open(none, "rb").read())
    struct.pack_into("<q", data, 56, 0)  # the start and end anchors' CLOCK_BOOTTIME
    struct.pack_into("<q", data, 88, 0)
    open(none, "wb").write(data)
    lead = trace_processor_lead(tmp, [none], "--offset", host + "=1s")
    check(lead == {0}, "no BOOTTIME, --offset %s=1s: the slices %s ns after the JSON's" % (
        host, sorted(lead)[:3]))


def real_align(tmp, wrap, ids, host, other):
    """--align flows between two real machines, the second's wall clock 3 s behind: it is
    placed by its round trips, every receive after its send, each where the exact merge
    has it give or take the uncertainty said (the exact: its file given this boot's id
    back, one CLOCK_MONOTONIC, its time namespace's offset taken out)."""
    ping, pong = ping_pong(tmp, "real-", (), wrap)
    this_boot = os.path.join(tmp, "pong-this-boot.ttr")
    moved_machine(pong, this_boot, other, boot_id=bytes.fromhex(own_id("/proc/sys/kernel/random/boot_id")))
    trace, _ = converted(tmp, [ping, this_boot])
    if not trace:
        return
    exact = gaps(trace, 400)[0]
    behind = os.path.join(tmp, "pong-behind.ttr")
    moved_machine(pong, behind, other, -3, boot_id=bytes.fromhex(ids["boot_id"]))
    trace, said = converted(tmp, [ping, behind], "--align", "flows")
    if not trace:
        return
    aligned = gaps(trace, 400)[0]
    m = {m["host"]: m for m in trace["otherData"]["machines"]}[other]
    lo, hi = m.get("flows_window_ns", (1, -1))
    worst = max(abs(aligned[i] - exact[i]) * 1000 for i in exact)
    check(m["placed_by"] == "flows" and lo <= hi and abs(m["uncertainty_ns"] - (hi - lo) / 2) <= 1
          and worst <= m["uncertainty_ns"] + 1 and min(aligned.values()) >= 0
          and "arrive before they left" not in said and ("host %s: placed by flows" % other) in said,
          "two real machines, --align flows: %s; receives %.0f ns at most from the exact merge's, "
          "%.3f us after their sends at the least; %s" % (m, worst, min(aligned.values()), said))
    as_perfetto(tmp, [ping, behind], (host, other), "--align", "flows", flows=400)


def same_host_name(tmp, host, user):
    """Another machine of this host's name (a clone, a reinstall): two machines told apart
    by their machine ids wherever they are named; --offset by the host name refused (it
    names two machines: which is said, with their ids), by a prefix of either's machine
    id or boot id taken, moving that machine alone."""
    wrap, ids = real_machine(tmp, host, user=user)
    send, receive = send_receive(tmp, "twin-", wrap)
    trace, said = converted(tmp, [send, receive])
    if not trace:
        return
    ours = own_id("/etc/machine-id") or "0" * 32
    theirs = ids["machine_id"]
    names = ["%s (machine id %s)" % (host, ours[:8]), "%s (machine id %s)" % (host, theirs[:8])]
    lines = machines_said(said)
    check(sorted(lines) == sorted(names), "two machines named %s said as %s: %s" % (host, sorted(lines), said))
    labels = sorted(gaps(trace)[1].values())
    check(labels == sorted("host " + n for n in names), "the twins' processes labelled %s" % labels)
    out = os.path.join(tmp, "x.json")
    c = subprocess.run([TOOL, "convert", send, receive, "-o", out, "--offset", host + "=1s"],
                       capture_output=True, text=True, timeout=60)
    check(c.returncode == 1 and ("--offset %s: 2 machines have that host name" % host) in c.stderr
          and ours[:8] in c.stderr and theirs[:8] in c.stderr and not os.path.exists(out),
          "--offset of a host name two machines have: %d %s" % (c.returncode, c.stderr))
    # (fewer than 4 digits could be a host name's typo: none of an id)
    c = subprocess.run([TOOL, "convert", send, receive, "-o", out, "--offset", theirs[:3] + "=1s"],
                       capture_output=True, text=True, timeout=60)
    check(c.returncode == 1 and "--offset %s: no file was recorded on a host of that name, nor on a "
          "machine whose machine id or boot id begins so" % theirs[:3] in c.stderr and not os.path.exists(out),
          "--offset of 3 digits of a machine id: %d %s" % (c.returncode, c.stderr))
    for prefix in (theirs[:8], ids["boot_id"][:6].upper()):
        moved, said = converted(tmp, [send, receive], "--offset", prefix + "=1s")
        if moved:
            given = {m["machine_id"]: m["given_offset_ns"] for m in moved["otherData"]["machines"]}
            check(given == {ours: 0, theirs: 10**9}, "--offset %s=1s: %s; %s" % (prefix, given, said))
    # (the .pftrace's machines named as convert says them; checked against the last JSON)
    as_perfetto(tmp, [send, receive], names, "--offset", prefix + "=1s")
    # This machine rebooted between its runs (one machine id, two boot ids): told apart
    # by the boot id, which --offset takes
    rebooted = os.path.join(tmp, "rebooted.ttr")
    boot_id = bytes(b ^ 0x5a for b in bytes.fromhex(own_id("/proc/sys/kernel/random/boot_id")))
    moved_machine(send, rebooted, host, boot_id=boot_id, pid=ttr.Ttr(send).pid + 1)
    trace, said = converted(tmp, [send, rebooted, receive])
    if trace:
        ours_boot = own_id("/proc/sys/kernel/random/boot_id")
        want = ["%s (boot id %s)" % (host, ours_boot[:8]), "%s (boot id %s)" % (host, boot_id.hex()[:8]),
                names[1]]
        check(sorted(machines_said(said)) == sorted(want), "a rebooted twin said as %s: %s" % (
            sorted(machines_said(said)), said))
        moved, _ = converted(tmp, [send, rebooted, receive], "--offset", boot_id.hex()[:8] + "=1s")
        given = moved and [m["given_offset_ns"] for m in moved["otherData"]["machines"]]
        check(given == [0, 10**9, 0], "--offset %s=1s (a boot id): %s" % (boot_id.hex()[:8], given))


def redis(tmp):
    """Issue 33's real client and server that nobody here wrote, on two real machines:
    Debian's redis-server in real_machine()'s namespaces (its own boot and machine ids,
    a day ahead), redis-benchmark on this host over loopback, each under `record -f`
    (processCommand, redisGetReply). Merged: two machines, the server's placed through
    the wall clocks, each process labelled with its host; one connection's requests in
    turn, so the server's commands and the client's replies alternate: nearly every reply
    the client reads comes after a command the server ran since the reply before (a
    timeline a millisecond off would not interleave them). The .pftrace loads in
    trace_processor with two machines and no error. Exit 77 where redis or the
    namespaces are not here."""
    import shutil
    import socket
    server_exe, bench_exe = shutil.which("redis-server"), shutil.which("redis-benchmark")
    if not server_exe or not bench_exe:
        return "redis-server and redis-benchmark are not installed (Debian: apt install redis)"
    host = os.uname().nodename
    other = "tt-redis-%d" % os.getpid()
    wrap, ids = real_machine(tmp, other)
    probe = subprocess.run([*wrap, "true"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        return "a mount, UTS and time namespace is refused here: " + probe.stderr.strip()
    listed = subprocess.run([TOOL, "record", "--list", "-f", "processCommand", "--", server_exe, "--version"],
                            capture_output=True, text=True, timeout=120)
    if "processCommand" not in listed.stdout:
        return "this redis-server has no function processCommand: %s" % listed.stderr.strip()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server_ttr, client_ttr = os.path.join(tmp, "server.ttr"), os.path.join(tmp, "client.ttr")
    server = subprocess.Popen([*wrap, TOOL, "record", "-o", server_ttr, "-f", "processCommand", "--",
                               server_exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--dir", tmp], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                check(time.monotonic() < deadline and server.poll() is None,
                      "redis-server did not listen on %d" % port)
                if failures:
                    return None
                time.sleep(0.1)
        bench = subprocess.run([TOOL, "record", "-o", client_ttr, "-f", "redisGetReply", "--", bench_exe,
                                "-p", str(port), "-n", "2000", "-c", "1", "-t", "set", "-q"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120)
        check(bench.returncode == 0, "redis-benchmark under record: %d %s" % (bench.returncode, bench.stderr))
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(b"SHUTDOWN NOSAVE\r\n")
        server.wait(timeout=60)
    finally:  # (killed: unshare's children, record and the server, with it)
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    check(server.returncode == 0, "redis-server under record: %s %s" % (server.returncode, server.stderr.read()))
    trace, said = converted(tmp, [client_ttr, server_ttr])
    if not trace:
        return None
    machines = {m["host"]: m for m in trace["otherData"]["machines"]}
    far = machines.get(other, {})
    check(set(machines) == {host, other} and far.get("boot_id") == ids["boot_id"]
          and far.get("placed_by") in ("CLOCK_REALTIME", "CLOCK_TAI"), "redis's machines: %s" % machines)
    labels, ends, begins = {}, [], []
    for e in trace["traceEvents"]:
        if e.get("name") == "process_labels":
            labels[e["pid"]] = e["args"]["labels"]
        elif e.get("ph") == "X" and e["name"] == "processCommand":
            ends.append(e["ts"] + e["dur"])
        elif e.get("ph") == "X" and e["name"] == "redisGetReply":
            begins.append(e["ts"])
    check(sorted(labels.values()) == sorted(["host " + host, "host " + other]), "redis's labels: %s" % labels)
    ends.sort()
    begins.sort()
    alternate = sum(1 for before, reply in zip(begins, begins[1:])
                    if any(before <= end <= reply for end in ends[bisect(ends, before) - 1:bisect(ends, reply)]))
    check(len(ends) >= 2000 and len(begins) >= 2000 and alternate >= 0.95 * (len(begins) - 1),
          "redis: %d commands, %d replies read, %d of them after a command since the reply before"
          % (len(ends), len(begins), alternate))
    out = os.path.join(tmp, "redis.pftrace")
    c = subprocess.run([TOOL, "convert", "-q", client_ttr, server_ttr, "-o", out],
                       capture_output=True, text=True, timeout=120)
    check(c.returncode == 0, "redis to .pftrace: %s" % c.stderr)
    if c.returncode == 0:
        loaded_by_trace_processor(tmp, out, "redis", 2)
    return None


def parents(path):
    d = os.path.dirname(path)
    while d != "/":
        yield d
        d = os.path.dirname(d)


# Killed (meson's timeout sends SIGTERM first): the temporary folder removed on the way out.
signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit("killed by signal %d" % signum))
with tempfile.TemporaryDirectory() as tmp:
    skipped = {"merge": merge, "placement": placement, "real": real, "redis": redis}.get(PART, main)(tmp)
if failures:
    sys.exit("%d failures" % len(failures))
if skipped:
    print("SKIP:", skipped)
    sys.exit(77)
print("ok")
