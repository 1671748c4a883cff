#!/usr/bin/env python3
"""How a Windows run ends and names its file (ends.exe, the static library, under
Wine; each file read on Linux by `ticktrace info`/`report`):

held_crash: a crash while another thread holds the runtime's lock a moment (as tt-live
        and tt-sched do) writes its trace, said as a crash, in modes stop and stream
        (the crash gave up: "Resource deadlock avoided", the trace lost).
spin_exit: mode stream, threads recording as main returns: the file ended (END, the
        threads' totals) in each of four runs (the exit lost every race for the
        stream's lock to tt-stream, and gave the end up).
uexit:  _exit() with the static library writes the trace (no atexit ran: no file).
parent: a child that records, under a fixed TICKTRACE_OUT, writes run.ttr.CHILDPID
        beside its parent's run.ttr (it replaced it, silently); each file holds its
        command line and its parent, the child's its parent's pid (both were
        empty), and `info` names no Linux clock (CLOCK_TAI, adjtimex) for them.
names:  thread names longer than the 63 bytes kept are cut where a UTF-8 character
        begins (tt_thread_name's and SetThreadDescription's: half a character kept).
chdir:  a relative TICKTRACE_OUT, and the default name, resolved where the program
        started, though it ended in another directory, as Linux and mode stream
        have it; a live file removed at its clean exit (the file went to `sub`, and
        a 32 MiB live file that looks like a crash was left where it started).
terminated: a thread TerminateThread ended keeps the name it gave itself with
        SetThreadDescription, as one that returns does, in modes stop and stream and
        with a live file (it had the program's name: the name was read at the thread's
        exit, which TerminateThread skips).
same:   two processes at once with one TICKTRACE_OUT, in modes stop, ring and stream
        and with a live file: both traces kept, the later one's beside the other's
        with its pid (same.PID.ttr), said, as on Linux; the live files too while both
        run (one was overwritten without a word; a stream's second recorded nothing,
        "Input/output error"; the second live file refused).
again:  the default name (ticktrace-PID.ttr: Wine gives each fresh wineserver's first
        process pid 32, the name again in the next run): a file there, from before the
        run began or written since, is another run's, kept: this one's beside it,
        ticktrace-PID-1.ttr, said (the older one was replaced without a word: r43 R5).
fresh:  two runs, each the first process of a new wineserver in a prefix of its own:
        the same pid, two traces, ticktrace-PID.ttr and ticktrace-PID-1.ttr, the
        second's name said (it replaced the first's; 77 where the pids differ); a
        third beside a killed run's ticktrace-PID.ttr.live alone names that file as
        the one there (it named ticktrace-PID.ttr, not there: r45 N2).
abort:  abort() (msvcrt's, as a failed assert calls it) writes a trace said as a crash,
        signal 6 (Aborted) as on Linux (it looked like a normal exit).
held_exit: _exit() and abort() while another thread holds the runtime's sched lock, as
        tt-sched does in its tick: ExitProcess ends the holder, and the run's end, which
        the exiting thread runs after, takes the lock over: the trace written, exit 3
        (the end waited for the lock for ever: every run hung; abort()'s after its dump,
        1 run in 8, tt-sched ended inside its tick).
deep:   a TICKTRACE_OUT in a directory whose path is longer than MAX_PATH (260), in
        modes stop and stream and with a live file: each trace written there, where
        the program itself can write (fixed buffers of MAX_PATH refused them: "File
        name too long", no trace: outside test r51, #1). (Wine starts no process in a
        working directory that deep: "could not open working directory".)
settings: a TICKTRACE_OUT longer than 1,023 bytes said, the trace at the default name
        instead, said (as any name its file cannot be made at: outside test ot30 F7);
        TICKTRACE and TICKTRACE_SCHED's bad values said; TICKTRACE_LOG, which Windows
        has not (the lines stay on stderr), said once, and no other: the report, the
        spike log and the snapshots' settings run as on Linux (the profile on stderr,
        the spike log made); a TICKTRACE_MODE that is none said and stop used, its
        file written, as on Linux (recording was off).

    ends.py WRAPPER ENDS.EXE CASE"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, run, tool, wine_path  # noqa: E402


def program(wrapper, exe, d, env, how, want_rc=0, timeout=120):
    env = dict(os.environ, WINEDLLOVERRIDES="winedbg.exe=d", **env)
    try:
        p = subprocess.run([wrapper, exe, how], env=env, cwd=d, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        fail(f"ends.exe {how}: still running after {timeout} s")
    if p.returncode == 77:
        print(p.stderr, end="", file=sys.stderr)
        sys.exit(77)
    if want_rc is not None and p.returncode != want_rc:
        fail(f"ends.exe {how}: exit {p.returncode}, not {want_rc}\n{p.stderr}")
    return p


def info(ticktrace, ttr):
    if not os.path.exists(ttr):
        fail(f"no {ttr}: {os.listdir(os.path.dirname(ttr))}")
    return run([ticktrace, "info", ttr]).stdout


def held_crash(ticktrace, wrapper, exe, d):
    for mode in ("stop", "stream"):
        ttr = os.path.join(d, f"held-{mode}.ttr")
        p = program(wrapper, exe, d, {"TICKTRACE_MODE": mode, "TICKTRACE_OUT": wine_path(ttr)},
                    "held-crash", want_rc=None)
        if "could not write" in p.stderr:
            fail(f"{mode}: the crash gave its trace up: {p.stderr}")
        text = info(ticktrace, ttr)
        if "the run crashed (exception 0xC0000005 (access violation))" not in text:
            fail(f"{mode}: the file does not say the crash:\n{text}")
        print(f"held_crash, {mode}: the trace written, said as a crash")


def spin_exit(ticktrace, wrapper, exe, d):
    for i in range(4):
        ttr = os.path.join(d, f"spin-{i}.ttr")
        p = program(wrapper, exe, d, {"TICKTRACE_MODE": "stream", "TICKTRACE_BUFFER": "300000",
                                      "TICKTRACE_OUT": wine_path(ttr)}, "spin-exit")
        if "could not write the trace" in p.stderr or "without its end" in p.stderr:
            fail(f"run {i}: the stream's end not written: {p.stderr}")
        text = info(ticktrace, ttr)
        if "no END section" in text or "still writing" in text:
            fail(f"run {i}: the file has no end:\n{text}")
    print("spin_exit: 4 of 4 streams ended at exit with threads recording")


def uexit(ticktrace, wrapper, exe, d):
    ttr = os.path.join(d, "uexit.ttr")
    program(wrapper, exe, d, {"TICKTRACE_OUT": wine_path(ttr)}, "uexit", want_rc=3)
    report = run([ticktrace, "report", ttr]).stdout
    if "before-exit" not in report:
        fail(f"uexit: no before-exit in the report:\n{report}")
    print("uexit: _exit() with the static library wrote the trace")


def parent(ticktrace, wrapper, exe, d):
    ttr = os.path.join(d, "run.ttr")
    p = program(wrapper, exe, d, {"TICKTRACE_OUT": wine_path(ttr)}, "parent")
    child = p.stdout.split()[-1]
    files = sorted(os.path.basename(f) for f in glob.glob(os.path.join(d, "run.ttr*")))
    if files != ["run.ttr", f"run.ttr.{child}"]:
        fail(f"parent: files {files}, not run.ttr and run.ttr.{child}\n{p.stderr}")
    mine = run([ticktrace, "report", ttr]).stdout
    theirs = run([ticktrace, "report", f"{ttr}.{child}"]).stdout
    if "parent-work" not in mine or "child-work" in mine or "child-work" not in theirs:
        fail(f"parent: run.ttr:\n{mine}\nrun.ttr.{child}:\n{theirs}")
    mine, theirs = info(ticktrace, ttr), info(ticktrace, f"{ttr}.{child}")
    process = r"process:\s+(\d+) \(ends\.exe\), parent ([^,]+), command line: (.*)"
    (pid, _, line), (child_pid, parent_pid, child_line) = (
        re.search(process, text).groups() for text in (mine, theirs))
    if child_pid != child or parent_pid != pid or \
            not line.endswith("ends.exe parent") or not child_line.endswith("ends.exe child"):
        fail(f"parent: the processes and command lines:\n{mine}\n{theirs}")
    linux = [w for w in ("CLOCK_TAI", "adjtimex", "clocksource", "machine id", "steal") if w in mine]
    if linux:
        fail(f"parent: a Windows run's info says {linux}:\n{mine}")
    print(f"parent: the child's run in run.ttr.{child}, the parent's in run.ttr")


def names(ticktrace, wrapper, exe, d):
    ttr = os.path.join(d, "names.ttr")
    program(wrapper, exe, d, {"TICKTRACE_OUT": wine_path(ttr)}, "names")
    raw = subprocess.run([ticktrace, "info", ttr], capture_output=True, timeout=120).stdout
    for letter in (b"x", b"y"):
        at = raw.find(letter * 61)
        if at < 0:
            fail(f"names: no thread named {letter.decode() * 61}...:\n{raw.decode(errors='replace')}")
        after = raw[at + 61:at + 64]
        if after[:1] in (b"\xe6",):
            fail(f"names: {letter.decode()}'s name cut inside a character: {raw[at + 55:at + 66]!r}")
    print("names: both cut where a character begins")


def chdir(ticktrace, wrapper, exe, d):
    for settings in ({"TICKTRACE_OUT": "rel.ttr"}, {}, {"TICKTRACE_OUT": "rel.ttr", "TICKTRACE_LIVE": "1"}):
        for f in glob.glob(os.path.join(d, "**", "*.ttr*"), recursive=True):
            os.remove(f)
        sub = os.path.join(d, "sub")
        if os.path.isdir(sub):
            os.rmdir(sub)
        env = dict(settings)
        if "TICKTRACE_OUT" not in env:
            env["TICKTRACE_OUT"] = ""  # (the default name, not the caller's)
        program(wrapper, exe, d, env, "chdir")
        # (the live file, removed at exit while the process still held it, goes as
        # wineserver closes the dead process's handles, a moment after its end: the CI
        # at load once listed it still there)
        deadline = time.monotonic() + 10
        while True:
            files = sorted(os.path.relpath(f, d) for f in glob.glob(os.path.join(d, "**", "*.ttr*"), recursive=True))
            if not any(f.endswith(".live") for f in files) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        want = ["rel.ttr"] if "TICKTRACE_OUT" in settings else [f for f in files if f.startswith("ticktrace-")]
        if files != want or len(want) != 1:
            fail(f"chdir {settings}: files {files}, not one in the start directory")
        report = run([ticktrace, "report", os.path.join(d, files[0])]).stdout
        if "before-chdir" not in report or "after-chdir" not in report:
            fail(f"chdir {settings}: the report:\n{report}")
    print("chdir: the file where the program started, by name and by default, no live file left")


def terminated(ticktrace, wrapper, exe, d):
    for mode, live in (("stop", "0"), ("stream", "0"), ("stop", "1")):
        ttr = os.path.join(d, f"term-{mode}-{live}.ttr")
        program(wrapper, exe, d, {"TICKTRACE_OUT": wine_path(ttr), "TICKTRACE_MODE": mode,
                                  "TICKTRACE_LIVE": live}, "terminated")
        text = info(ticktrace, ttr)
        named = re.findall(r"^\s*\d+\s+(\S+)\s+\d+", text, re.M)
        if "victim" not in named or "exiter" not in named:
            fail(f"terminated, {mode}{' live' if live == '1' else ''}: threads named {named}, "
                 f"not victim and exiter:\n{text}")
    print("terminated: the thread TerminateThread ended named victim, as the one that returned is exiter")


def waiting(wrapper, exe, d, env, n):
    """n ends.exe `wait`, started at once, each waited for until it made its ready
    file: the processes and their pids."""
    env = dict(os.environ, WINEDLLOVERRIDES="winedbg.exe=d", **env)
    procs = [subprocess.Popen([wrapper, exe, "wait"], env=env, cwd=d, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(n)]
    deadline = time.monotonic() + 120
    while len(glob.glob(os.path.join(d, "ready.*"))) < n:
        ended = [p for p in procs if p.poll() is not None]
        if ended or time.monotonic() > deadline:
            for p in procs:
                p.kill()
            if any(p.returncode == 77 for p in ended):
                sys.exit(77)
            fail(f"wait: {len(ended)} ended before go, or none ready in 120 s: "
                 f"{[p.communicate()[1] for p in procs]}")
        time.sleep(0.02)
    pids = sorted(int(f.split(".")[-1]) for f in glob.glob(os.path.join(d, "ready.*")))
    return procs, pids


def go(d, procs):
    """The waiting processes let go, each one's stderr once it exited 0."""
    open(os.path.join(d, "go"), "w").close()
    said = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        if p.returncode != 0:
            fail(f"ends.exe wait: exit {p.returncode}\n{err}")
        said.append(err)
    return said


def clear(d):
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))


def same(ticktrace, wrapper, exe, d):
    for mode in ("stop", "ring", "stream", "live"):
        clear(d)
        env = {"TICKTRACE_OUT": "same.ttr", "TICKTRACE_MODE": "stop" if mode == "live" else mode}
        if mode == "live":
            env["TICKTRACE_LIVE"] = "1"
        procs, pids = waiting(wrapper, exe, d, env, 2)
        lives = sorted(f for f in os.listdir(d) if f.endswith(".live"))
        if mode == "live" and (len(lives) != 2 or not any(f"same.{pid}.ttr.live" in lives for pid in pids)):
            fail(f"same, live: live files {lives} while both run, not same.ttr.live and same.PID.ttr.live")
        said = "".join(go(d, procs))
        files = sorted(f for f in os.listdir(d) if not f.startswith("ready.") and f != "go")
        beside = [pid for pid in pids if files == sorted(["same.ttr", f"same.{pid}.ttr"])]
        if len(beside) != 1:
            fail(f"same, {mode}: files {files}, not same.ttr and same.PID.ttr of pids {pids}\n{said}")
        theirs = f"same.{beside[0]}.ttr"
        if f"this one started (the same TICKTRACE_OUT, without %p): this one's is " not in said or theirs not in said:
            fail(f"same, {mode}: {theirs} not said:\n{said}")
        if mode == "live" and "another process's live file is there" not in said:
            fail(f"same, live: the second live file not said:\n{said}")
        for name in files:
            text = info(ticktrace, os.path.join(d, name))
            pid = re.search(r"process:\s+(\d+) \(ends\.exe\)", text)
            report = run([ticktrace, "report", os.path.join(d, name)]).stdout
            if not pid or (name == theirs) != (int(pid.group(1)) == beside[0]) or \
                    "before-go" not in report or "after-go" not in report:
                fail(f"same, {mode}: {name} is not its process's whole run:\n{text}\n{report}")
        print(f"same, {mode}: both kept, one beside the other as {theirs}, said")


def again(ticktrace, wrapper, exe, d):
    for older in (True, False):
        clear(d)
        procs, (pid,) = waiting(wrapper, exe, d, {"TICKTRACE_OUT": ""}, 1)
        name = os.path.join(d, f"ticktrace-{pid}.ttr")
        with open(name, "w") as f:
            f.write("another run's")
        # (a file of a run that ended an hour before; or one written since this began)
        now = time.time_ns() - (3600 * 10**9 if older else 0)
        os.utime(name, ns=(now, now))
        said = go(d, procs)[0]
        files = sorted(f for f in os.listdir(d) if f.startswith("ticktrace-"))
        mine = f"ticktrace-{pid}-1.ttr"
        why = "a file of a run before this one is there" if older else "put its trace there since this one started"
        if files != sorted([f"ticktrace-{pid}.ttr", mine]) or open(name).read() != "another run's" or \
                why not in said or f"kept: this one's is " not in said or mine not in said:
            fail(f"again, {'older' if older else 'newer'}: files {files}, not the other's kept and {mine} "
                 f"beside it, said:\n{said}")
        info(ticktrace, os.path.join(d, mine))
    print("again: the default name's file of another run kept (from before the run or since), "
          "this one's beside it numbered, said")


def fresh(ticktrace, wrapper, exe, d):
    """Two runs, each the first process of a new wineserver (a prefix of its own, made
    here, its server gone before the next run): Wine gives both the same pid."""
    wine = next((w for w in (os.environ.get("TICKTRACE_WINE"), "/usr/lib/wine/wine64", shutil.which("wine64"))
                 if w and os.access(w, os.X_OK)), None)
    server = wine and os.path.join(os.path.dirname(os.path.realpath(wine)), "wineserver")
    if not wine or not os.access(server, os.X_OK):
        print("fresh: no wine64 and wineserver here", file=sys.stderr)
        sys.exit(77)
    prefix = os.path.join(d, "prefix")
    env = dict(os.environ, WINEPREFIX=prefix, WINEDEBUG="-all", WINEDLLOVERRIDES="winedbg.exe=d")
    out = os.path.join(d, "out")
    os.mkdir(out)
    # (unrandomised, as wine-run runs it: the C library's heap over Wine's shared data)
    norandom = ["setarch", "-R"] if subprocess.run(["setarch", "-R", "true"], capture_output=True).returncode == 0 \
        else []
    try:
        subprocess.run(norandom + [wine, "wineboot", "-i"], env=env, capture_output=True, timeout=200)
        subprocess.run([server, "-w"], env=env, timeout=120)
        said, seen = [], []
        for _ in range(2):
            p = subprocess.run(norandom + [wine, exe, "plain"], env=env, cwd=out, capture_output=True, text=True,
                               timeout=120)
            subprocess.run([server, "-w"], env=env, timeout=120)
            if p.returncode != 0:
                fail(f"fresh: exit {p.returncode}: {p.stderr}")
            said.append(p.stderr)
            seen.append({f: open(os.path.join(out, f), "rb").read() for f in os.listdir(out)})
    finally:
        subprocess.run([server, "-k"], env=env, timeout=60)
    if len(seen[0]) != 1:
        fail(f"fresh: the first run left {sorted(seen[0])}")
    (name, data), = seen[0].items()
    files = sorted(seen[1])
    if seen[1].get(name) != data:
        fail(f"fresh: the first run's {name} replaced by the second's (files {files}):\n{said[1]}")
    pid = re.fullmatch(r"ticktrace-(\d+)\.ttr", name).group(1)
    if f"ticktrace-{pid}-1.ttr" not in files and len(files) == 2:
        print(f"fresh: pids not the same in two new wineservers ({files}): nothing to see", file=sys.stderr)
        sys.exit(77)
    if files != sorted([name, f"ticktrace-{pid}-1.ttr"]) or "a file of a run before this one is there" not in said[1]:
        fail(f"fresh: files {files}, the second run's name said:\n{said[1]}")
    for f in files:
        info(ticktrace, os.path.join(out, f))
    # A killed run's live file alone at the name: named as the file there (outside
    # recheck r45 N2: the line named ticktrace-PID.ttr, not there)
    os.rename(os.path.join(out, name), os.path.join(out, name + ".live"))
    os.rename(os.path.join(out, f"ticktrace-{pid}-1.ttr"), os.path.join(d, "second.ttr"))
    try:
        p = subprocess.run(norandom + [wine, exe, "plain"], env=env, cwd=out, capture_output=True, text=True,
                           timeout=120)
        subprocess.run([server, "-w"], env=env, timeout=120)
    finally:
        subprocess.run([server, "-k"], env=env, timeout=60)
    left = sorted(os.listdir(out))
    if p.returncode != 0 or left != sorted([name + ".live", f"ticktrace-{pid}-1.ttr"]) or \
            f"{name}.live: a file of a run before this one is there" not in p.stderr:
        fail(f"fresh, live: exit {p.returncode}, files {left}, the killed run's live file not named:\n{p.stderr}")
    print(f"fresh: two runs of pid {pid}, two traces: {files}, the second's name said; "
          f"a killed run's {name}.live named as the file there")


def aborted(ticktrace, wrapper, exe, d):
    ttr = os.path.join(d, "abort.ttr")
    program(wrapper, exe, d, {"TICKTRACE_OUT": wine_path(ttr)}, "abort", want_rc=3)
    text = info(ticktrace, ttr)
    if "the run crashed (signal 6 (Aborted))" not in text:
        fail(f"abort: not said as a crash:\n{text}")
    report = run([ticktrace, "report", ttr]).stdout
    if "before-abort" not in report:
        fail(f"abort: no before-abort in the report:\n{report}")
    print("abort: the trace written, said as a crash (signal 6)")


def held_exit(ticktrace, wrapper, exe, d):
    for how, said in (("held-exit", None), ("held-abort", "the run crashed (signal 6 (Aborted))")):
        ttr = os.path.join(d, f"{how}.ttr")
        program(wrapper, exe, d, {"TICKTRACE_OUT": wine_path(ttr)}, how, want_rc=3, timeout=60)
        text = info(ticktrace, ttr)
        if said and said not in text:
            fail(f"{how}: not said as a crash:\n{text}")
        report = run([ticktrace, "report", ttr]).stdout
        if "before-" not in report:
            fail(f"{how}: no scopes in the report:\n{report}")
        print(f"{how}: the process ended, its trace written, with the sched lock held by a thread "
              "ExitProcess ended")


def deep(ticktrace, wrapper, exe, d):
    where = os.path.join(d, *["d" * 50] * 5)
    os.makedirs(where)
    if len(wine_path(where)) <= 260:
        fail(f"deep: {wine_path(where)} is not longer than MAX_PATH: the test does not test")
    runs = [("stop", {"TICKTRACE_OUT": wine_path(os.path.join(where, "stop.ttr"))}, d, "stop.ttr"),
            ("stream", {"TICKTRACE_OUT": wine_path(os.path.join(where, "stream.ttr")), "TICKTRACE_MODE": "stream"},
             d, "stream.ttr"),
            ("live", {"TICKTRACE_OUT": wine_path(os.path.join(where, "live.ttr")), "TICKTRACE_LIVE": "1"}, d,
             "live.ttr")]
    for name, env, cwd, want in runs:
        before = set(os.listdir(where))
        p = program(wrapper, exe, cwd, env, "plain")
        made = sorted(set(os.listdir(where)) - before)
        if made != [want] or "could not" in p.stderr or "too long" in p.stderr:
            fail(f"deep, {name}: files made {made}, not {want}; said: {p.stderr!r}")
        text = info(ticktrace, os.path.join(where, made[0]))
        if "1 threads" not in text and "threads: 1" not in text:
            fail(f"deep, {name}: info of {made[0]}:\n{text}")
    print(f"deep: the trace written {len(wine_path(where))} characters deep in modes stop and stream and "
          "with a live file")


def settings(ticktrace, wrapper, exe, d):
    long_out = "x" * 1100 + ".ttr"
    p = program(wrapper, exe, d, {"TICKTRACE_OUT": long_out}, "plain")
    left = [f for f in os.listdir(d) if f.endswith(".ttr")]
    if "(File name too long): the trace goes to " not in p.stderr or ", the default name, instead" not in p.stderr \
            or len(left) != 1 or not left[0].startswith("ticktrace-"):
        fail(f"settings: a TICKTRACE_OUT of {len(long_out)} bytes: files {left}, said: {p.stderr!r}")
    os.remove(os.path.join(d, left[0]))
    ttr = os.path.join(d, "set.ttr")
    env = {"TICKTRACE_OUT": wine_path(ttr), "TICKTRACE": "no", "TICKTRACE_SCHED": "bogus",
           "TICKTRACE_SPIKES": "sp.jsonl", "TICKTRACE_REPORT": "stderr", "TICKTRACE_MODE": "RING",
           "TICKTRACE_LOG": "log-%p.txt", "TICKTRACE_SNAPSHOT_MAX": "4", "TICKTRACE_SPIKES_LOG_MAX": "1M",
           "TICKTRACE_LIVE": "yes"}
    p = program(wrapper, exe, d, env, "plain")
    for said in ("TICKTRACE=no is not 0 (off) or 1 (on); recording on",
                 "TICKTRACE_SCHED=bogus is not 0, 1, switches or schedstat",
                 "TICKTRACE_LOG=log-%p.txt: not on Windows",
                 "TICKTRACE_MODE=RING is not stop, stream or ring; using stop",
                 # (what loses a run on Windows is TerminateProcess, not Linux's SIGKILL: r50 #6)
                 "TICKTRACE_LIVE=yes is not 0 (off) or 1 (on); no live file (a TerminateProcess loses the run)"):
        if p.stderr.count(said) != 1:
            fail(f"settings: not said once: {said!r}:\n{p.stderr}")
    # (what runs on Windows as on Linux is not said to be missing)
    if p.stderr.count("not on Windows") != 1 or "flat profile: 1 names, 10 calls" not in p.stderr:
        fail(f"settings: a setting Windows runs said to be missing, or no profile:\n{p.stderr}")
    if not os.path.exists(os.path.join(d, "sp.jsonl")) or glob.glob(os.path.join(d, "log-*")):
        fail(f"settings: no spike log sp.jsonl, or a log file: {os.listdir(d)}")
    info(ticktrace, ttr)
    # a command line beyond ASCII, as the run kept it (UTF-8): `info` showed '?' for each byte
    ttr = os.path.join(d, "wide.ttr")
    p = subprocess.run([wrapper, exe, "plain", "dïr 日本"], env=dict(os.environ, TICKTRACE_OUT=wine_path(ttr)),
                       cwd=d, capture_output=True, text=True, timeout=120)
    text = info(ticktrace, ttr)
    if not re.search(r"command line: .*ends\.exe plain dïr 日本\n", text):
        fail(f"settings: the command line beyond ASCII:\n{text}")
    print("settings: a long TICKTRACE_OUT, bad values and TICKTRACE_LOG said, the report and the spike "
          "log run; the command line in UTF-8")


def main():
    clean_on_term()
    wrapper, exe, case = sys.argv[1:4]
    exe = os.path.abspath(exe)
    ticktrace = tool()
    with tempfile.TemporaryDirectory(prefix="tt-win-ends-") as d:
        {"held_crash": held_crash, "spin_exit": spin_exit, "uexit": uexit, "parent": parent,
         "names": names, "chdir": chdir, "abort": aborted, "held_exit": held_exit, "settings": settings,
         "same": same, "deep": deep,
         "terminated": terminated,
         "again": again, "fresh": fresh}[case](ticktrace, wrapper, exe, d)


if __name__ == "__main__":
    main()
