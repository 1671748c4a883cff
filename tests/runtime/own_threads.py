#!/usr/bin/env python3
"""ticktrace's own threads, one job each, named for it: tt-prefault (memory ahead of
the writers) in every mode, tt-clean (the chunks a ring recycles) in mode ring only,
tt-live (a live file's descriptions) with TICKTRACE_LIVE=1 only, tt-drain in mode
stream only; each once, and no thread of ticktrace's with another name.
Usage: own_threads.py PROG (tt_longrun_prog)"""
import os
import select
import signal
import subprocess
import sys
import tempfile

PROG = sys.argv[1]
# The threads any mode may have besides: thread states, spikes, the service thread.
OTHERS = {"tt-sched", "tt-spikes", "tt-dump"}
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def thread_names(pid):
    names = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            pass  # (gone meanwhile)
    return names


def ours(settings, tmp):
    """The names of the threads of ticktrace's in a run of `scopes`, once ready."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TICKTRACE")}
    env.update(TICKTRACE_OUT=os.path.join(tmp, "run-%p.ttr"), **settings)
    p = subprocess.Popen([PROG, "scopes", "1000"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        ready, _, _ = select.select([p.stdout], [], [], 60)
        check(ready and p.stdout.readline().strip() == "ready", f"{settings}: not ready")
        return sorted(n for n in thread_names(p.pid) if n.startswith("tt-"))
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)


def main():
    with tempfile.TemporaryDirectory(prefix="tt-own-threads-") as tmp:
        for settings, expected in [
            ({"TICKTRACE_MODE": "stop"}, {"tt-prefault"}),
            ({"TICKTRACE_MODE": "ring"}, {"tt-prefault", "tt-clean"}),
            ({"TICKTRACE_MODE": "stop", "TICKTRACE_LIVE": "1"}, {"tt-prefault", "tt-live"}),
            ({"TICKTRACE_MODE": "ring", "TICKTRACE_LIVE": "1"}, {"tt-prefault", "tt-clean", "tt-live"}),
            ({"TICKTRACE_MODE": "stream"}, {"tt-prefault", "tt-drain"}),
        ]:
            names = ours(settings, tmp)
            print(settings, names)
            check(len(names) == len(set(names)), f"{settings}: a thread twice: {names}")
            check(set(names) - OTHERS == expected, f"{settings}: {names}, not {sorted(expected)} "
                  f"(and of {sorted(OTHERS)})")
    if failures:
        sys.exit(1)


main()
