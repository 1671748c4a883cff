#!/usr/bin/env python3
"""ticktrace's lines at exit from a program that lets its stderr go first (issue 35,
outside finding 5). gnulib's close_stdout (coreutils, xz, ...: atexit, registered after
ticktrace's and so run before it) closes stderr, and ticktrace's report, its drops and
the rest went nowhere, unsaid. closes_stderr_prog `close` (close(2) at exit) and
`fclose` (fclose(stdout), fclose(stderr), as close_stdout), in modes stop and ring,
with drops and a report (TICKTRACE_REPORT=stderr) to say:
  - stderr a file: the lines are in it (ticktrace keeps a copy of it from the start);
  - stderr a terminal (script's): the lines are on it;
  - stderr a pipe, which ticktrace never holds open: the lines are in the log beside the
    trace, whose first line says why, and `info` names it.
`daemon`: a program that closes 0..2 to let its reader go on, as daemons do: the reader
of its stdout and stderr (pipes: `$(daemon)`) sees their end while it runs (not held
open by ticktrace), and its lines at exit are in the log beside its trace. (A sanitizer
build's tt-sched keeps the program's stderr, where the sanitizers' reports go, by
design: there only its stdout's end is waited for.)

Usage: closed_stderr.py PROG TICKTRACE SANITIZE"""
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

from verdict import check, verdict

PROG, TOOL = (os.path.abspath(p) for p in sys.argv[1:3])
SANITIZED = sys.argv[3] != "none"
# the report's line; the drops' (a ring drops nothing)
SAID = {"stop": ("flat profile", "events dropped"), "ring": ("flat profile",)}


def env_for(out, mode):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TICKTRACE")}
    env.update(TICKTRACE_OUT=out, TICKTRACE_MODE=mode, TICKTRACE_BUFFER="10000",
               TICKTRACE_REPORT="stderr")
    return env


def lines_in(name, text, mode, where):
    missing = [s for s in SAID[mode] if s not in text]
    check(not missing, "%s: ticktrace's lines at exit (%s) are not in %s: %r"
          % (name, ", ".join(missing), where, text))


def at_exit(tmp, how, mode):
    name = "%s, mode %s" % (how, mode)
    # stderr a file
    out = os.path.join(tmp, "%s-%s-file.ttr" % (how, mode))
    with open(os.path.join(tmp, "err"), "w+") as err:
        p = subprocess.run([PROG, how], env=env_for(out, mode), stdout=subprocess.DEVNULL,
                           stderr=err, timeout=120)
        err.seek(0)
        text = err.read()
    check(p.returncode == 0, "%s: exit %d" % (name, p.returncode))
    lines_in(name + ", stderr a file", text, mode, "the file")
    check(not os.path.exists(out + ".log"), "%s, stderr a file: a log beside the trace" % name)
    # stderr a terminal
    if shutil.which("script"):
        out = os.path.join(tmp, "%s-%s-tty.ttr" % (how, mode))
        p = subprocess.run(["script", "-qec", "%s %s" % (PROG, how), "/dev/null"],
                           env=env_for(out, mode), capture_output=True, text=True, timeout=120)
        lines_in(name + ", stderr a terminal", p.stdout, mode, "the terminal")
    else:
        print("%s: no `script`: the terminal not tried" % name)
    # stderr a pipe
    out = os.path.join(tmp, "%s-%s-pipe.ttr" % (how, mode))
    p = subprocess.run([PROG, how], env=env_for(out, mode), capture_output=True, text=True,
                       timeout=120)
    check(p.returncode == 0 and p.stderr == "", "%s, stderr a pipe: exit %d, %r"
          % (name, p.returncode, p.stderr))
    log = open(out + ".log").read() if os.path.exists(out + ".log") else ""
    lines_in(name + ", stderr a pipe", log, mode, out + ".log")
    check(log.startswith("ticktrace: the program closed its stderr"),
          "%s, stderr a pipe: the log does not say first why it holds the lines: %r" % (name, log))
    info = subprocess.run([TOOL, "info", out], capture_output=True, text=True, timeout=60)
    check(out + ".log" in info.stdout, "%s, stderr a pipe: info does not name the log: %s"
          % (name, info.stdout))
    print("%s: its lines at exit said" % name)


def daemon(tmp):
    out = os.path.join(tmp, "daemon.ttr")
    go = os.path.join(tmp, "daemon-go")
    p = subprocess.Popen([PROG, "daemon", go], env=env_for(out, "stop"), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ends, got = {p.stdout.fileno(): False}, b""
    if not SANITIZED:
        ends[p.stderr.fileno()] = False
    give_up = time.monotonic() + 60
    while not all(ends.values()) and time.monotonic() < give_up and p.poll() is None:
        ready, _, _ = select.select([fd for fd, end in ends.items() if not end], [], [], 0.1)
        for fd in ready:
            chunk = os.read(fd, 4096)
            got += chunk
            ends[fd] = not chunk
    running = p.poll() is None
    check(all(ends.values()) and running,
          "daemon: its reader did not see the end of its %s while it ran (held open?): %r"
          % ("stdout" if SANITIZED else "stdout and stderr", got))
    open(go, "w").close()
    check(p.wait(timeout=60) == 0, "daemon: exit %d" % p.returncode)
    p.stdout.close()
    p.stderr.close()
    log = open(out + ".log").read() if os.path.exists(out + ".log") else ""
    lines_in("daemon", log, "stop", out + ".log")
    print("daemon: its pipes ended as it closed them; its lines at exit in its log")


def main():
    with tempfile.TemporaryDirectory(prefix="tt-closed-stderr-") as tmp:
        for how in ("close", "fclose"):
            for mode in ("stop", "ring"):
                at_exit(tmp, how, mode)
        daemon(tmp)
    sys.exit(verdict())


main()
