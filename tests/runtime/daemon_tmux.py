#!/usr/bin/env python3
"""A daemon nobody here wrote, under ticktrace (issue 30): Debian's tmux, whose server
daemonizes (daemon()) and closes every descriptor past stderr (closefrom), then opens
its socket and the panes' terminals at the numbers ticktrace's files had. With the
runtime preloaded in modes stop, ring and stream, with TICKTRACE_LIVE=1, and under
`ticktrace record`: the pane shows what it shows in a plain run (ticktrace's writes,
landing on the terminal, typed into the pane), and every trace file reads; `record`,
which ends with the tmux client, says the server's live file is of a process that
still runs (not one killed).
Skipped without tmux, and in a sanitizer build (its runtime would have to come first
in Debian's tmux). Usage: daemon_tmux.py LIBTICKTRACE TICKTRACE SANITIZE"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

from runs import SETTINGS as RUNTIME_SETTINGS
from verdict import check, verdict

LIB, TOOL = (os.path.abspath(p) for p in sys.argv[1:3])
SANITIZE = sys.argv[3]
TMUX = shutil.which("tmux")
SETTINGS = [("plain", {"TICKTRACE": "0"})] + RUNTIME_SETTINGS


def pane(workdir, settings):
    """The pane's text: lines 1..40, then (once told) 41..45."""
    sock = os.path.join(workdir, "sock")
    go = os.path.join(workdir, "go")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TICKTRACE") and k != "TMUX"}
    env["TICKTRACE_OUT"] = os.path.join(workdir, "run-%p.ttr")
    script = "seq 1 40; while [ ! -e %s ]; do sleep 0.05; done; seq 41 45; sleep 120" % go
    cmd = [TMUX, "-S", sock, "-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "50", script]
    if settings is None:
        cmd = [TOOL, "record", "-o", os.path.join(workdir, "run.ttr"), "--"] + cmd
    else:
        env.update(settings)
        env["LD_PRELOAD"] = LIB
    plain = {k: v for k, v in env.items() if k != "LD_PRELOAD"}
    started = subprocess.run(cmd, env=env, cwd=workdir, capture_output=True, text=True, timeout=60)
    text, server = "", None
    try:
        check(started.returncode == 0, "tmux started: %s" % started.stderr)
        server = subprocess.run([TMUX, "-S", sock, "display-message", "-p", "#{pid}"], env=plain,
                                capture_output=True, text=True, timeout=30).stdout.strip()
        # The stream's drain refreshes its header every 200 ms, the live file's thread
        # ticks as often: a second of the server's life after it closed its descriptors.
        time.sleep(1)
        open(go, "w").close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "\n45\n" not in text:
            text = subprocess.run([TMUX, "-S", sock, "capture-pane", "-p", "-S", "-"], env=plain,
                                  capture_output=True, text=True, timeout=30).stdout
            time.sleep(0.05)
    finally:
        subprocess.run([TMUX, "-S", sock, "kill-server"], env=plain, capture_output=True, timeout=30)
    # gone once it wrote its trace
    deadline = time.monotonic() + 30
    while server and time.monotonic() < deadline and os.path.exists("/proc/" + server):
        time.sleep(0.05)
    return text, started.stderr, server


def main():
    if not TMUX:
        print("SKIP: no tmux")
        sys.exit(77)
    if SANITIZE != "none":
        print("SKIP: a library built with -fsanitize=%s preloaded into Debian's tmux, which "
              "is not, would need the sanitizer's runtime loaded first" % SANITIZE)
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="tt-daemon-tmux-") as tmp:
        plain = None
        for what, settings in SETTINGS:
            workdir = tempfile.mkdtemp(dir=tmp)
            text, err, server = pane(workdir, settings)
            if plain is None:
                plain = text
                check("\n45\n" in plain, "plain: the pane shows 1..45: %r" % plain)
                continue
            check(text == plain, "%s: the pane differs from a plain run's: %r" % (what, text))
            if settings is None:  # record's summary, said when the tmux client ended
                check("killed, or it could not" not in err and
                      "of a process that still runs, having outlived" in err,
                      "record: the server, still running then, said to run on (not killed): %s" % err)
            # (the pane's shell and commands, traced too, wrote theirs)
            traces = [t for t in glob.glob(os.path.join(workdir, "run*.ttr*")) if not t.endswith(".live")]
            check(server and any(server in os.path.basename(t) for t in traces),
                  "%s: the server's (pid %s) trace among %s: %s" % (what, server, traces, err))
            for t in traces:
                p = subprocess.run([TOOL, "info", t], capture_output=True, text=True, timeout=60)
                check(p.returncode == 0, "%s: %s reads: %s" % (what, t, p.stderr))
            print("%s: the pane as in a plain run; %d traces read" % (what, len(traces)))
    sys.exit(verdict())


main()
