#!/usr/bin/env python3
"""A library's functions named after it was unloaded (issue 34): unloaded.exe loads
plug.dll, calls tt_plug_work (ten calls of tt_plug_inner) and unloads it (FreeLibrary),
once and twice (the second load most likely where the first was), before the trace is
written. Each call is named in `ticktrace report`'s rows (they were left as bare
addresses: no module held them), as Linux names a library dlclose unloaded.

    unloaded.py WRAPPER UNLOADED.EXE

The Linux `ticktrace` as recorder.py finds it; without it, or Wine, exit 77."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, run, tool  # noqa: E402


def main():
    clean_on_term()
    wrapper, exe = sys.argv[1:3]
    ticktrace = tool()
    with tempfile.TemporaryDirectory(prefix="tt-win-unloaded-") as d:
        for rounds in (1, 2):
            ttr = os.path.join(d, f"unloaded-{rounds}.ttr")
            run([wrapper, os.path.abspath(exe), str(rounds)], env=dict(os.environ, TICKTRACE_OUT=ttr), cwd=d)
            report = run([ticktrace, "report", ttr]).stdout
            rows = {line.split()[0]: int(line.split()[1]) for line in report.splitlines()[2:]
                    if len(line.split()) > 1 and line.split()[1].isdigit()}
            want = {"main": 1, "tt_plug_work": rounds, "tt_plug_inner": 10 * rounds}
            if rows != want:
                fail(f"{ttr}: {rounds} loads and unloads: calls {rows}, not {want}\n{report}")
        print("an unloaded library's calls named, loaded once and twice")


if __name__ == "__main__":
    main()
