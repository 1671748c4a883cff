#!/usr/bin/env python3
"""Where tt-sched's number 2 leads. tt-sched has a table of descriptors of its own,
which lets every one of the program's files go (a pipe's reader, a daemon's starter,
would wait on a copy held there for its end), and says its lines through the
program's number 2 fetched for each (pidfd_getfd). A sanitizer writes its reports to
number 2 itself: a sanitizer build keeps the program's stderr there, so that what the
sanitizers find in tt-sched is seen. Checked from outside, in /proc/PID/task/TID/fd
(a thread's own table), with the counters as the source (their files in tt-sched's
table) and with the switches: in a sanitizer build tt-sched's number 2 is the
program's stderr, in any other it holds none of the program's files.

Usage: sched_stderr.py PROG SANITIZE (PROG: sched_causes_prog, whose `hang` sleeps
in a scope, says {"hung": 1} and waits to be killed)"""
import os
import signal
import subprocess
import sys
import tempfile
import time

from verdict import check, verdict

PROG, SANITIZE = sys.argv[1:3]


def tt_sched(pid):
    """tt-sched's tid in process pid, polled for up to a minute (a loaded machine)."""
    give_up = time.monotonic() + 60
    while time.monotonic() < give_up:
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                    if f.read().strip() == "tt-sched":
                        return int(tid)
            except FileNotFoundError:
                pass
        time.sleep(0.01)
    return None


def its_files(pid, tid):
    """{number: what it leads to} of the thread's table."""
    at = "/proc/%d/task/%d/fd" % (pid, tid)
    files = {}
    for fd in os.listdir(at):
        try:
            files[int(fd)] = os.readlink(os.path.join(at, fd))
        except FileNotFoundError:  # (closed meanwhile)
            pass
    return files


def one(tmp, source):
    err_path = os.path.join(tmp, "stderr-" + source)
    env = dict(os.environ, TICKTRACE_OUT=os.path.join(tmp, source + ".ttr"), TICKTRACE_SCHED=source)
    with open(err_path, "w") as err:
        p = subprocess.Popen([PROG, "hang"], env=env, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        hung = p.stdout.readline()
        while hung and "hung" not in hung:
            hung = p.stdout.readline()
        tid = tt_sched(p.pid)
        files = its_files(p.pid, tid) if tid else {}
    finally:
        p.kill()
        p.communicate(timeout=60)
    check(tid is not None, "%s: no thread tt-sched in the program" % source)
    program = [fd for fd, path in files.items() if path == err_path]
    if SANITIZE != "none":
        check(files.get(2) == err_path,
              "%s, -fsanitize=%s: tt-sched's number 2 is %s, not the program's stderr %s (its table: %s)"
              % (source, SANITIZE, files.get(2), err_path, files))
    else:
        check(not program, "%s: tt-sched holds the program's stderr at %s (its table: %s)"
              % (source, program, files))
    print("%s: tt-sched's table %s" % (source, files))


signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit("killed by signal %d" % signum))
with tempfile.TemporaryDirectory() as tmp:
    for source in ("schedstat", "switches"):
        one(tmp, source)
sys.exit(verdict())
