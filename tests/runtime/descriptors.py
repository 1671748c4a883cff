#!/usr/bin/env python3
"""ticktrace's descriptors in a program that takes them (issue 30, items 1 and 2).

descriptors_prog (programs/) records from 4 threads, then takes every descriptor but
0..2 as daemons do (closefrom, close_range, a loop of close() over 3..1023, or dup2
of its own file over every number), opens its own files and writes them while the
threads record more and exit. Run in modes stop, ring and stream, with
TICKTRACE_LIVE=1, and under `ticktrace record`: the program succeeds, its files are
byte-identical to a plain run's (TICKTRACE=0), and the trace is whole (each worker's
events and drops add up to what it recorded) or stderr says it was lost.

`descriptors_prog dup2_at_write`, in mode stream, and with a live file (stop, ring,
record): a thread of the program's puts its own file at the trace's number each time
tt-drain writes to it, and at the live file's each time a thread writes, grows or
truncates that, after ticktrace's last check and before its call (the one system call's
window that the dup2 case hit by chance, 1 run in 30 to 60; with a live file, in a CI
run at load 12): the program's files as in a plain run, the trace whole, nothing lost;
the live file's growth made 300 ms slower there, the workers that overtake it wait for
it: in mode stop, none of their events dropped; killed (SIGKILL) 250 and 600 ms into
its writes (the program still running: the old live file's growth in its own-0 made
its workers die of SIGBUS by 600 ms), its live file read by `ticktrace info`, its 4 workers there, and each of
the program's files the start of a plain run's.

`descriptors_prog profile`: the same (closefrom) with a self-profile (perf, every
thread) started before and closed after: its files as the plain closefrom run's; at
ulimit -n 16 (below a small limit) by its timers, its files as well.

`descriptors_prog limit`: threads that record (more than a user's locked memory holds
perf rings for), then as many of 57 files as the program can open, under a soft
RLIMIT_NOFILE of 64: as many as in a plain run. As
nobody with no RLIMIT_MEMLOCK (where the test runs as root), perf's locked memory
runs out after a few threads' rings: which threads went without states, and why, is
said at exit.
`stdio_taken_prog data`: a program that closes 0..2 too and opens its data files at
0, 1 and 2 has none of ticktrace's lines (its drops, said at exit) written into them,
in every mode and under `record`; `stdio_taken_prog log`, whose number 2 is its log
open for appending, has them there, as its stderr.
`descriptors_prog full`: a program that returns from main holding every descriptor its
limit allows (it leaks them) gets its trace, with both its scopes, in every mode and
under `record`; its snapshots too.
`descriptors_prog full` at ulimit -n 6, 7, 8, 12, 16 and 64, every mode and record,
its stderr a file: it holds as many as in a plain run below 32 (three quarters of its
limit at 64), its trace is written, what ticktrace gave up said with the limit.
`descriptors_prog closes`: the spike log (TICKTRACE_SPIKES, a file) of a program that
closes its descriptors between two spikes holds both, whole, nothing said lost;
`closes_dup2`, which also dup2s its own file over every number: the same in modes stop
and ring.
Usage: descriptors.py PROG TICKTRACE STDIO_PROG"""
import glob
import json
import os
import pwd
import re
import resource
import subprocess
import sys
import tempfile
import time

import spike_log as live_log
from runs import SETTINGS
from verdict import check, verdict

PROG, TOOL, STDIO_PROG = (os.path.abspath(p) for p in sys.argv[1:4])
# descriptors_prog.c: scopes before and after, those after a quarter under TT_TEST_FEWER
WORKER_FIRST, WORKER_MORE = 20000, 300000
LOSS_SAID = "the program closed the"


def fewer(how):
    """Whether PROG `how` records fewer scopes (TT_TEST_FEWER): where the sanitizers run
    (each run and each `ticktrace info` there some 4 times as long), but in
    dup2_at_write, whose checks need the workers to outrun the live file's growth."""
    return "ASAN_OPTIONS" in os.environ and how != "dup2_at_write"


def worker_events(how):
    return 2 * (WORKER_FIRST + (WORKER_MORE // 4 if fewer(how) else WORKER_MORE))


# the modes of PROG that hold every number below their limit as they exit
TAKES_EVERY_NUMBER = ("closes_dup2",)


def run(args, workdir, settings, limit=None, nobody=False, err_file=None):
    """PROG ARGS in workdir: with ticktrace's `settings`, under `record` (None), or
    plain ({"TICKTRACE": "0"}); its stderr into `err_file` (a file, which ticktrace
    keeps a copy of where it keeps any), else captured (a pipe)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TICKTRACE")}
    env["TICKTRACE_OUT"] = os.path.join(workdir, "run-%p.ttr")
    cmd = [PROG] + args
    if fewer(args[0]):
        env["TT_TEST_FEWER"] = "1"
    if settings is None:
        cmd = [TOOL, "record", "-o", os.path.join(workdir, "run.ttr"), "--"] + cmd
    else:
        env.update(settings)

    if (limit or args[0] in TAKES_EVERY_NUMBER) and "ASAN_OPTIONS" in env:
        # (LeakSanitizer's check at exit opens /proc/PID/task: a program holding every
        # descriptor it may have leaves it none, and it aborts, with or without ticktrace)
        env["ASAN_OPTIONS"] += ":detect_leaks=0"

    def lower_limit():
        if limit:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        if nobody:
            resource.setrlimit(resource.RLIMIT_MEMLOCK, (0, 0))
            user = pwd.getpwnam("nobody")
            os.setgroups([])
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)
    if err_file is None:
        return subprocess.run(cmd, env=env, cwd=workdir, capture_output=True, text=True, timeout=120,
                              preexec_fn=lower_limit)
    with open(err_file, "w") as err:
        p = subprocess.run(cmd, env=env, cwd=workdir, stdout=subprocess.PIPE, stderr=err, text=True,
                           timeout=120, preexec_fn=lower_limit)
    p.stderr = open(err_file).read()
    return p


def own_files(workdir):
    return {name: open(os.path.join(workdir, name), "rb").read()
            for name in sorted(os.listdir(workdir)) if name.startswith("own-")}


def worker_counts(trace):
    """(events, dropped) of each thread named worker, as `ticktrace info` says them."""
    p = subprocess.run([TOOL, "info", trace], capture_output=True, text=True, timeout=120)
    if not check(p.returncode == 0, "%s: info exit %d: %s" % (trace, p.returncode, p.stderr)):
        return []
    return [(int(m.group(1)), int(m.group(2)))
            for m in re.finditer(r"^\s+\d+\s+worker\s+(\d+)\s+(\d+)",
                                 p.stdout.split("thread states")[0], re.M)]


def taken(tmp, how, plain, settings_list=SETTINGS, loss_allowed=True):
    for what, settings in settings_list:
        workdir = tempfile.mkdtemp(dir=tmp)
        p = run([how, workdir], workdir, settings)
        name = "%s, %s" % (how, what)
        check(p.returncode == 0 and "written" in p.stdout,
              "%s: the program's writes: exit %d: %s" % (name, p.returncode, p.stderr))
        check(own_files(workdir) == plain, "%s: the program's files differ from a plain run's" % name)
        traces = [t for t in glob.glob(os.path.join(workdir, "*.ttr"))]
        said = LOSS_SAID in p.stderr
        check(loss_allowed or not said, "%s: the trace whole, no loss: %s" % (name, p.stderr))
        if said:
            print("%s: the loss said: %s" % (name, p.stderr.strip()))
            continue
        if not check(len(traces) == 1, "%s: one trace, no loss said: %s %s" % (name, traces, p.stderr)):
            continue
        counts = worker_counts(traces[0])
        totals = [events + dropped for events, dropped in counts]
        want = worker_events(how)
        check(totals == [want] * 4, "%s: each worker's events and drops add up to %d: %s" % (name, want, totals))
        if how == "dup2_at_write" and settings == {"TICKTRACE_MODE": "stop", "TICKTRACE_LIVE": "1"}:
            check(all(dropped == 0 for _, dropped in counts), "%s: the workers waited for the live "
                  "file to grow, dropping nothing: %s: %s" % (name, counts, p.stderr))
        print("%s: the program's files as in a plain run, the trace whole" % name)


def killed(tmp, plain):
    for delay in (0.25, 0.6):
        workdir = tempfile.mkdtemp(dir=tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TICKTRACE")}
        env.update(TICKTRACE_OUT=os.path.join(workdir, "run.ttr"), TICKTRACE_MODE="stop", TICKTRACE_LIVE="1")
        p = subprocess.Popen([PROG, "dup2_at_write", workdir], env=env, cwd=workdir, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        first = os.path.join(workdir, "own-0")
        until = time.monotonic() + 60
        while p.poll() is None and time.monotonic() < until and not (os.path.exists(first) and
                                                                      os.path.getsize(first)):
            time.sleep(0.005)
        time.sleep(delay)
        running = p.poll() is None
        p.kill()
        out, err = p.communicate(timeout=60)
        name = "dup2_at_write, stop, live, killed %d ms into its writes" % (delay * 1000)
        got = own_files(workdir)
        check(running and all(got[f] == plain[f][:len(got[f])] for f in got),
              "%s: still running (%s), the program's files the start of a plain run's: %s: %s"
              % (name, running, [(f, got[f][:80]) for f in got if got[f] != plain[f][:len(got[f])]][:1], err))
        info = subprocess.run([TOOL, "info", os.path.join(workdir, "run.ttr.live")], capture_output=True,
                              text=True, timeout=120)
        workers = re.findall(r"^\s+\d+\s+worker\s+\d+\s+\d+", info.stdout.split("thread states")[0], re.M)
        check(info.returncode == 0 and len(workers) == 4,
              "%s: the live file read, its 4 workers there: exit %d: %s%s"
              % (name, info.returncode, info.stdout[:2000], info.stderr))
        print("%s: the live file read, the program's files its own" % name)


def profile(tmp, plain):
    workdir = tempfile.mkdtemp(dir=tmp)
    p = run(["profile", workdir], workdir, {"TICKTRACE_MODE": "stop"})
    if "profile perf" not in p.stdout:
        print("profile: not with perf here (%s): not checked" % p.stdout.strip())
        return
    check(p.returncode == 0 and "written" in p.stdout,
          "profile: the program's writes: exit %d: %s" % (p.returncode, p.stderr))
    got = own_files(workdir)
    check(got == plain, "profile: the program's files differ from a plain run's: %s"
          % [(name, got.get(name, b"")[:80], plain[name][:80]) for name in plain if got.get(name) != plain[name]][:1])
    print("profile: the program's files as in a plain run (%s)" % " ".join(p.stdout.split()))
    # Below a small limit (fds.c: 32) the profile's perf events would take the
    # program's numbers: it samples by its timers instead (before: tt_profile_create
    # failed, EMFILE).
    workdir = tempfile.mkdtemp(dir=tmp)
    p = run(["profile", workdir], workdir, {"TICKTRACE_MODE": "stop"}, limit=16)
    check(p.returncode == 0 and p.stdout.startswith("profile timer") and "written" in p.stdout and
          own_files(workdir) == plain,
          "profile at ulimit -n 16: by its timers, the program's files as in a plain run: exit %d, %r: %s"
          % (p.returncode, p.stdout, p.stderr))
    print("profile at ulimit -n 16: %s" % " ".join(p.stdout.split()))


def limit(tmp):
    workdir = tempfile.mkdtemp(dir=tmp)
    plain = run(["limit", workdir], workdir, {"TICKTRACE": "0"}, limit=64)
    check(plain.returncode == 0, "limit, plain: exit %d: %s" % (plain.returncode, plain.stderr))
    for what, settings in SETTINGS:
        workdir = tempfile.mkdtemp(dir=tmp)
        p = run(["limit", workdir], workdir, settings, limit=64)
        check(p.returncode == 0 and p.stdout == plain.stdout,
              "limit 64, %s: the program opened %r, %r in a plain run (exit %d): %s"
              % (what, p.stdout.strip(), plain.stdout.strip(), p.returncode, p.stderr))
        print("limit 64, %s: %s as in a plain run" % (what, p.stdout.strip()))
    if os.geteuid() != 0 or open("/proc/sys/kernel/perf_event_paranoid").read().strip() not in "-1 0 1 2":
        print("SKIP the threads refused states: not root, or no perf for nobody")
        return
    os.chmod(tmp, 0o755)  # (nobody reaches its directory)
    workdir = tempfile.mkdtemp(dir=tmp)
    os.chmod(workdir, 0o777)
    p = run(["limit", workdir], workdir, {"TICKTRACE_MODE": "stop"}, limit=64, nobody=True)
    # Every thread refused counted (16 at least: descriptors_prog's threads past the
    # rings), each for the reason the kernel gave (core/sched.c): the locked memory
    # gone (EPERM), or, where tt-sched asked, no descriptor left in its own table, which
    # the program's limit of 64 bounds too and its counters' files of the threads not
    # asked yet fill (EMFILE: at load 80 tt-sched asked late, 84 threads had it). (the
    # threads refused as they started are counted, not named: tids only of those
    # tt-sched asked)
    said = re.search(r"ticktrace: (\d+) threads had no thread states \((tid \d+(, \d+)*(, \.\.\.)?; )?"
                     r"perf_event_open:((?:,? \d+ for [^,)]+)+)\)", p.stderr)
    reasons = re.findall(r"(\d+) for ([^,)]+)", said.group(5) if said else "")
    check(p.returncode == 0 and said and p.stdout == plain.stdout and int(said.group(1)) >= 16 and
          sum(int(n) for n, _ in reasons) == int(said.group(1)) and
          all(why in ("Operation not permitted", "Too many open files") for _, why in reasons),
          "as nobody, no locked memory: exit %d, %r, the threads refused states said at exit: %s"
          % (p.returncode, p.stdout, p.stderr))
    print("as nobody, no locked memory: %s" % (said.group(0) if said else p.stderr))


def full(tmp):
    for what, settings in SETTINGS + [("ring, snapshots", {"TICKTRACE_MODE": "ring", "TICKTRACE_SNAPSHOTS":
                                                          "snaps", "TICKTRACE_SPIKE_THRESHOLD": "1ms"})]:
        workdir = tempfile.mkdtemp(dir=tmp)
        p = run(["full", workdir], workdir, settings, limit=64)
        traces = glob.glob(os.path.join(workdir, "run*.ttr"))
        scopes = ""
        if len(traces) == 1:
            scopes = subprocess.run([TOOL, "report", "-q", traces[0]], capture_output=True, text=True,
                                    timeout=60).stdout
        check(p.returncode == 0 and p.stdout.startswith("held ") and
              all(re.search(r"^ *%s " % name, scopes, re.M) for name in ("before", "after")),
              "full, %s: exit %d, %r, traces %s: %s; report: %s"
              % (what, p.returncode, p.stdout, traces, p.stderr, scopes))
        if settings and "TICKTRACE_SNAPSHOTS" in settings:
            snaps = glob.glob(os.path.join(workdir, "snaps", "*.ttr"))
            check(len(snaps) == 2 and "not written" not in p.stderr,
                  "full, %s: the snapshots of 'before' and 'after': %s: %s" % (what, snaps, p.stderr))
        print("full, %s: %s, its trace whole" % (what, p.stdout.strip()))


def few(tmp):
    """Below a small limit (src/base/fds.c: 32) ticktrace keeps none of the program's
    descriptors while it runs: a program that opens files up to its limit and returns
    from main holding them all gets as many as in a plain run, at ulimit -n 6 (xz -T2
    failed traced there, r43 R2: the copy of stderr ticktrace kept took the number its
    input needed), 7, 8, 12 and 16 (its trace lost: the files ticktrace kept used the
    share, and the write at exit found none), in every mode and under record, its
    stderr a file (which ticktrace keeps a copy of where it may); its trace is written,
    with both its scopes, and what ticktrace gave up is said once with the limit. At 64
    ticktrace keeps its files within its quarter: the program gets its three quarters
    at least, and its trace."""
    for limit in (6, 7, 8, 12, 16, 64):
        workdir = tempfile.mkdtemp(dir=tmp)
        plain = run(["full", workdir], workdir, {"TICKTRACE": "0"}, limit=limit,
                    err_file=os.path.join(workdir, "err"))
        check(plain.returncode == 0, "limit %d, plain: exit %d: %s" % (limit, plain.returncode, plain.stderr))
        held = int(plain.stdout.split()[1]) if plain.stdout.startswith("held ") else -1
        for what, settings in SETTINGS:
            workdir = tempfile.mkdtemp(dir=tmp)
            p = run(["full", workdir], workdir, settings, limit=limit, err_file=os.path.join(workdir, "err"))
            name = "ulimit -n %d, %s" % (limit, what)
            got = int(p.stdout.split()[1]) if p.stdout.startswith("held ") else -1
            check(p.returncode == 0 and (got == held if limit < 32 else got >= limit * 3 // 4 - 3),
                  "%s: the program held %d, %d in a plain run (exit %d): %s"
                  % (name, got, held, p.returncode, p.stderr))
            traces = glob.glob(os.path.join(workdir, "run*.ttr"))
            said = p.stderr + "".join(open(log).read() for log in glob.glob(os.path.join(workdir, "*.log")))
            scopes = ""
            if len(traces) == 1:
                scopes = subprocess.run([TOOL, "report", "-q", traces[0]], capture_output=True, text=True,
                                        timeout=60).stdout
            check(all(re.search(r"^ *%s " % scope, scopes, re.M) for scope in ("before", "after")) and
                  "could not write" not in said and "left by _exit" not in said,
                  "%s: the trace, with both scopes: %s: %s; report: %s" % (name, traces, said, scopes))
            # (the copy of stderr, and record's live file, given up: each said once)
            gave = re.findall(r"^ticktrace: no (copy of stderr kept|live file \S+) \(ulimit -n is %d: below "
                              r"32, ticktrace keeps no descriptor in the program's table while it runs\)"
                              % limit, said, re.M)
            wanted = ["copy of stderr kept"] + (["live"] if settings is None or "TICKTRACE_LIVE" in settings
                                                else [])
            check(limit >= 32 and not gave or
                  limit < 32 and [g.split()[0] for g in gave] == [w.split()[0] for w in wanted],
                  "%s: what ticktrace gave up, said once with the limit: %s: %s" % (name, gave, said))
            print("%s: held %d as in a plain run (%d), the trace whole%s"
                  % (name, got, held, "; gave up: %s" % ", ".join(gave) if gave else ""))


def few_threads(tmp):
    """Below a small limit a thread that starts takes no descriptor of the program's,
    even for a moment (its perf event for its states, its counters' file): tt-sched asks
    for its states at its first event, in its own table, and the exit counts them, with
    the limit (before: each asked in the program's table as it started, beside the
    program's own opens)."""
    workdir = tempfile.mkdtemp(dir=tmp)
    plain = run(["limit", workdir], workdir, {"TICKTRACE": "0"}, limit=12)
    workdir = tempfile.mkdtemp(dir=tmp)
    p = run(["limit", workdir], workdir, {"TICKTRACE_MODE": "stop"}, limit=12)
    said = re.search(r"ticktrace: (\d+) threads had their thread states asked for by tt-sched, in its own "
                     r"table, at their first event rather than as they started .*ulimit -n is 12: below 32",
                     p.stderr)
    # (each asked so has them: none said to have gone without, as before the ask was
    # counted as a refusal)
    check(p.returncode == 0 and p.stdout == plain.stdout and said and int(said.group(1)) >= 16 and
          "had no thread states" not in p.stderr,
          "ulimit -n 12, threads: %r as in a plain run (%r), the threads' states asked by tt-sched said: %s"
          % (p.stdout, plain.stdout, p.stderr))
    print("ulimit -n 12, threads: %s as in a plain run; %s" % (p.stdout.strip(), said.group(0) if said else ""))


def spike_log(tmp):
    workdir = tempfile.mkdtemp(dir=tmp)
    log = os.path.join(workdir, "spikes.jsonl")
    p = run(["closes", workdir], workdir, {"TICKTRACE_SPIKES": log, "TICKTRACE_SPIKE_THRESHOLD": "1ms"})
    text = open(log).read() if os.path.exists(log) else ""
    names = [s["name"] for s in live_log.spikes(map(json.loads, text.splitlines()))]
    check(p.returncode == 0 and names == ["before", "after"] and "lost" not in p.stderr,
          "spike log of a program that closes its descriptors: exit %d, %r: %s"
          % (p.returncode, text, p.stderr))
    print("spike log: both spikes whole across the program's close_range")
    # A daemon that dup2s its own file over every number too (outside test r49, F2):
    # the log, written from tt-spikes' table of its own, holds both in modes stop and
    # ring (the program waits until it does: it held the first alone, which tt-spikes
    # wrote before the program took the numbers, the second lost). The data file holds
    # nothing of ticktrace's.
    for mode in ("stop", "ring"):
        workdir = tempfile.mkdtemp(dir=tmp)
        log = os.path.join(workdir, "spikes.jsonl")
        p = run(["closes_dup2", workdir], workdir, {"TICKTRACE_SPIKES": log, "TICKTRACE_MODE": mode,
                                                    "TICKTRACE_SPIKE_THRESHOLD": "1ms"})
        text = open(log).read() if os.path.exists(log) else ""
        names = [s["name"] for s in live_log.spikes(map(json.loads, text.splitlines()))]
        check(p.returncode == 0 and names == ["before", "after"] and "lost" not in p.stderr and
              os.path.getsize(os.path.join(workdir, "data")) == 0,
              "%s: spike log of a program that dup2s its file over every number: exit %d, %r: %s"
              % (mode, p.returncode, text, p.stderr))
        print("%s: spike log across the program's dup2 over every number: %s" % (mode, names))
    # Below a small limit none is made (a descriptor kept all run): said with the limit.
    workdir = tempfile.mkdtemp(dir=tmp)
    log = os.path.join(workdir, "spikes.jsonl")
    p = run(["closes", workdir], workdir, {"TICKTRACE_SPIKES": log, "TICKTRACE_SPIKE_THRESHOLD": "1ms"}, limit=8)
    check(p.returncode == 0 and not os.path.exists(log) and
          "cannot log spikes to %s (TICKTRACE_SPIKES=%s): ulimit -n is 8: below 32" % (log, log) in p.stderr,
          "spike log at ulimit -n 8: none, said with the limit: exit %d: %s" % (p.returncode, p.stderr))
    print("spike log at ulimit -n 8: none, said")


def stdio(tmp):
    for what, settings in SETTINGS:
        if settings is not None:
            settings = dict(settings, TICKTRACE_BUFFER="10000")
        for how in ("data", "log"):
            workdir = tempfile.mkdtemp(dir=tmp)
            env = {k: v for k, v in os.environ.items() if not k.startswith("TICKTRACE")}
            env.update(settings or {}, TICKTRACE_OUT=os.path.join(workdir, "run-%p.ttr"))
            cmd = [STDIO_PROG, how, workdir]
            if settings is None:
                cmd = [TOOL, "record", "-o", os.path.join(workdir, "run.ttr"), "--"] + cmd
                env["TICKTRACE_BUFFER"] = "10000"
            p = subprocess.run(cmd, env=env, cwd=workdir, capture_output=True, timeout=120)
            files = {name: open(os.path.join(workdir, name), "rb").read()
                     for name in sorted(os.listdir(workdir)) if name[:4] in ("data", "log-")}
            name = "stdio %s, %s" % (how, what)
            check(p.returncode == 0, "%s: exit %d" % (name, p.returncode))
            line = b"the program's own line\n"
            data = {k: v for k, v in files.items() if k.startswith("data")}
            check(all(v == line for v in data.values()) and len(data) == (3 if how == "data" else 2),
                  "%s: ticktrace's lines in the program's data files: %s" % (name, data))
            if how == "log":
                log = files.get("log-2", b"")
                # (under record, whose program's stderr is no terminal, ticktrace's lines
                # go to the log beside its trace: the program's log is its own alone)
                beside = os.path.join(workdir, "run.ttr.log")
                ours = log
                if settings is None:
                    check(log == line, "%s: the program's log (its stderr) is not its own: %r" % (name, log))
                    ours = open(beside, "rb").read() if os.path.exists(beside) else b""
                # (a ring drops nothing: it has nothing to say)
                said = b"ticktrace: " in ours and b"events dropped" in ours
                check(log.startswith(line) and (said or "ring" in what),
                      "%s: ticktrace's lines in the program's log (its stderr)%s: %r"
                      % (name, ", or beside the trace under record" if settings is None else "", ours))
            print("%s: the program's files as it wrote them" % name)


def main():
    with tempfile.TemporaryDirectory(prefix="tt-descriptors-") as tmp:
        for how in ("closefrom", "close_range", "loop", "dup2"):
            workdir = tempfile.mkdtemp(dir=tmp)
            p = run([how, workdir], workdir, {"TICKTRACE": "0"})
            if not check(p.returncode == 0, "%s, plain: exit %d: %s" % (how, p.returncode, p.stderr)):
                continue
            taken(tmp, how, own_files(workdir))
            if how == "closefrom":
                profile(tmp, own_files(workdir))
        workdir = tempfile.mkdtemp(dir=tmp)
        p = run(["dup2_at_write", workdir], workdir, {"TICKTRACE": "0"})
        if check(p.returncode == 0, "dup2_at_write, plain: exit %d: %s" % (p.returncode, p.stderr)):
            taken(tmp, "dup2_at_write", own_files(workdir),
                  [s for s in SETTINGS if s[0] in ("stream", "stop, live", "ring, live", "record")],
                  loss_allowed=False)
            killed(tmp, own_files(workdir))
        limit(tmp)
        full(tmp)
        few(tmp)
        few_threads(tmp)
        spike_log(tmp)
        stdio(tmp)
    sys.exit(verdict())


main()
