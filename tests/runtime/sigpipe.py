#!/usr/bin/env python3
"""SIGPIPE, the way every filter in a pipeline ends early (`prog | head`), and
ticktrace's own lines into a pipe whose reader left (outside recheck r39 F5).
  - `lines`: the program writes to its stdout until the reader leaves; SIGPIPE's
    default action ends it. Its trace is written first, as on SIGTERM, and says the
    run was ended by signal 13; the program still dies of it (wait status).
    Before, nothing was written and nothing said.
  - `ignored`: the program ignores SIGPIPE (set after ticktrace started): its failed
    write ends it (exit 3), the trace written at exit, not said ended by a signal.
  - `keep`: stderr a pipe whose reader left before the program started, ticktrace
    with lines to say at exit (drops): the program exits 0 as it would untraced, its
    trace written. Before, ticktrace's first line raised SIGPIPE and the program died
    of it, its trace not written.
  - `gzip`: the program's own handlers, gzip's (and many GNU tools'): clean up, set
    the default back, raise the signal again; for SIGPIPE and for SIGTERM (`kill`).
    The trace is written and says the signal, the program dies of it, its handler
    ran and was shown its handler, then the default (outside recheck r44 Z1: before,
    no trace, nothing said).
  - `resethand`: a handler installed with SA_RESETHAND that raises the signal again
    (the kernel reset it to the default): the same (before, no trace).
In modes stop, ring and stream.

Usage: sigpipe.py PROG TICKTRACE (PROG: closes_stderr_prog)"""
import os
import signal
import subprocess
import sys
import tempfile

from verdict import check, verdict

PROG, TOOL = (os.path.abspath(p) for p in sys.argv[1:3])


def env_for(out, mode):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TICKTRACE")}
    env.update(TICKTRACE_OUT=out, TICKTRACE_MODE=mode, TICKTRACE_BUFFER="10000")
    return env


def info(name, out):
    """`ticktrace info` of the trace, or "" (said) where there is none to read."""
    if not check(os.path.exists(out), f"{name}: no trace written at {out}"):
        return ""
    p = subprocess.run([TOOL, "info", out], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"{name}: info: exit {p.returncode}: {p.stderr}")
    return p.stdout


def reader_leaves(tmp, how, mode, kill=False):
    """The reader leaves (SIGPIPE), or with `kill` the program is sent SIGTERM."""
    sig = signal.SIGTERM if kill else signal.SIGPIPE
    name = f"{how}, mode {mode}" + (", SIGTERM" if kill else "")
    out = os.path.join(tmp, f"{how}-{mode}-{int(sig)}.ttr")
    with tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen([PROG, how], env=env_for(out, mode), stdout=subprocess.PIPE,
                             stderr=err)
        try:
            first = p.stdout.readline()
            if kill:
                p.send_signal(signal.SIGTERM)
                code = p.wait(timeout=120)
            p.stdout.close()  # (the reader leaves: `| head -1`)
            code = p.wait(timeout=120)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        err.seek(0)
        said = err.read()
    check(first == b"line\n", f"{name}: its first line was {first!r}")
    text = info(name, out)
    if how != "ignored":
        check(code == -sig, f"{name}: ended by {code}, not by signal {int(sig)}: {said}")
        check(f"ended:    by signal {int(sig)} " in text,
              f"{name}: the trace does not say the run was ended by signal {int(sig)}: {text}")
        check(how != "gzip" or said.startswith("cleaned\n"),
              f"{name}: its handler did not run, or said: {said}")
    else:
        check(code == 3, f"{name}: exit {code}, not 3 (its failed write): {said}")
        check("ended:" not in text, f"{name}: the trace says the run ended by a signal: {text}")
    print(f"{name}: exit {code}; the trace written")


def stderr_gone(tmp, mode):
    name = f"keep, mode {mode}, stderr a pipe whose reader left"
    out = os.path.join(tmp, f"keep-{mode}.ttr")
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([PROG, "keep"], env=env_for(out, mode), stdout=subprocess.DEVNULL,
                           stderr=w, timeout=120)
    finally:
        os.close(w)
    check(p.returncode == 0, f"{name}: exit {p.returncode}, untraced it exits 0")
    info(name, out)
    print(f"{name}: exit {p.returncode}; the trace written")


def main():
    with tempfile.TemporaryDirectory(prefix="tt-sigpipe-") as tmp:
        for mode in ("stop", "ring", "stream"):
            reader_leaves(tmp, "lines", mode)
            reader_leaves(tmp, "ignored", mode)
            for how in ("gzip", "resethand"):
                reader_leaves(tmp, how, mode)
                reader_leaves(tmp, how, mode, kill=True)
            stderr_gone(tmp, mode)
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
