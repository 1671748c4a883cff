#!/usr/bin/env python3
"""The README's demo, run as a new user runs it, leaves its two files and nothing else.

The demo writes demo.ttr with tt_dump, then sets TICKTRACE_OUT=/dev/null itself
(bench/run_tool.c) so that neither its exit nor the child it forks to run the
converter writes a trace of its own. A TICKTRACE_OUT the program sets after start is
its choice (src/writer/output.c): before, the value read at start won and a new user's
directory got ticktrace-PID.ttr twice over (the demo's exit and its child's exec).
The same holds with TICKTRACE_OUT given in the environment.
Usage: demo_files.py DEMO"""
import os
import subprocess
import sys
import tempfile

from verdict import check, verdict

DEMO = os.path.abspath(sys.argv[1])
for given in (None, "given-%p.ttr"):
    with tempfile.TemporaryDirectory() as work:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TICKTRACE")}
        if given:
            env["TICKTRACE_OUT"] = given
        run = subprocess.run([DEMO], cwd=work, env=env, capture_output=True, text=True, timeout=120)
        what = f"the demo with TICKTRACE_OUT={given}" if given else "the demo"
        if check(run.returncode == 0, f"{what} exits {run.returncode}: {run.stderr[-2000:]}"):
            files = sorted(os.listdir(work))
            check(files == ["demo.json", "demo.ttr"], f"{what} leaves {files}, not demo.json and demo.ttr")
sys.exit(verdict())
