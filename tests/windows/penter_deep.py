#!/usr/bin/env python3
"""MSVC's /Gh /GH hooks under calls nested deeper than _penter's first stack holds
(1,024): hooked.exe deep 5000, under Wine, records every call of tt_hooked_deep, each
named and nothing dropped (the calls past 1,024 were dropped, said as "no memory for a
buffer" with advice to set TICKTRACE_BUFFER, which changed nothing).

    penter_deep.py WRAPPER HOOKED.EXE

The Linux `ticktrace` as recorder.py finds it; without it, or Wine, exit 77."""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, run, tool  # noqa: E402

DEPTH = 5000


def main():
    clean_on_term()
    wrapper, exe = sys.argv[1:3]
    ticktrace = tool()
    with tempfile.TemporaryDirectory(prefix="tt-win-penter-deep-") as d:
        ttr = os.path.join(d, "deep.ttr")
        p = run([wrapper, os.path.abspath(exe), "deep", str(DEPTH)], env=dict(os.environ, TICKTRACE_OUT=ttr), cwd=d)
        if "dropped" in p.stderr:
            fail(f"{DEPTH} nested calls: the run said\n{p.stderr}")
        info = run([ticktrace, "info", ttr]).stdout
        if not re.search(r"records:\s+\d+, dropped 0,", info):
            fail(f"{DEPTH} nested calls: events dropped:\n{info}")
        report = run([ticktrace, "report", ttr]).stdout
        rows = {line.split()[0]: int(line.split()[1]) for line in report.splitlines()[2:]
                if len(line.split()) > 1 and line.split()[1].isdigit()}
        if rows != {"tt_hooked_deep": DEPTH}:
            fail(f"{DEPTH} nested calls: report's rows {rows}\n{report}")
        print(f"{DEPTH} nested calls of tt_hooked_deep recorded, none dropped")


if __name__ == "__main__":
    main()
