#!/usr/bin/env python3
"""TICKTRACE_MIN_DUR on Windows (under Wine): short calls erased by their exit hook,
mingw's __cyg_profile_func_exit (instrumented.exe) and MSVC's _pexit through it
(hooked.exe), and counted per function in the thread's FILTERED section, read on
Linux by `ticktrace report` and `convert`.

    min_dur.py WRAPPER EXE NAME=CALLS...

NAME=CALLS: each function and its calls (as instrumented.py takes them). Checked:
  - 1s, modes stop and stream: every call is shorter with nothing recorded inside once
    its callees are erased, so none is in the trace, and each function's row counts
    all its calls as erased (its name read from the FUNCS the run wrote for it);
  - 1ns: every call is longer (two RDTSCs apart), so each is in the trace, none erased;
  - a value that is no duration: said, naming the variable, and every call kept.

The Linux `ticktrace` as recorder.py finds it; without it, or Wine, exit 77."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, json_events, run, tool  # noqa: E402


def report_rows(ticktrace, ttr):
    """{name: (calls, erased)} of report's flat profile (erased 0 without the column)."""
    lines = run([ticktrace, "report", ttr]).stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.split()[:2] == ["name", "calls"])
    columns = lines[head].split()
    rows = {}
    for line in lines[head + 1:]:
        cells = line.split()
        if len(cells) < 2 or not cells[1].isdigit():
            break
        # (a time is two cells, number and unit: erased is the third from the end, before
        # its time, and the "~" mark that may follow)
        if cells[-1] == "~":
            cells.pop()
        erased = int(cells[-3]) if "erased" in columns else 0
        rows[cells[0]] = (int(cells[1]), erased)
    return rows


def main():
    clean_on_term()
    wrapper, exe = sys.argv[1:3]
    want = {name: int(calls) for name, calls in (a.split("=") for a in sys.argv[3:])}
    exe = os.path.abspath(exe)
    ticktrace = tool()
    with tempfile.TemporaryDirectory(prefix="tt-win-min-dur-") as d:
        def recorded(name, min_dur, mode="stop"):
            env = dict(os.environ, TICKTRACE_OUT=name + ".ttr", TICKTRACE_MIN_DUR=min_dur, TICKTRACE_MODE=mode)
            p = run([wrapper, exe], env=env, cwd=d)
            ttr = os.path.join(d, name + ".ttr")
            slices = [e for e in json_events(ticktrace, ttr, os.path.join(d, name + ".json")) if e["ph"] == "X"]
            return ttr, slices, p.stderr

        for mode in ("stop", "stream"):
            ttr, slices, _ = recorded("erased-" + mode, "1s", mode)
            if slices:
                fail(f"{ttr}: TICKTRACE_MIN_DUR=1s, mode {mode}: calls in the trace: {slices}")
            rows = report_rows(ticktrace, ttr)
            if rows != {name: (calls, calls) for name, calls in want.items()}:
                fail(f"{ttr}: mode {mode}: report's (calls, erased) {rows}, not each function's all erased "
                     f"of {want}")
        ttr, slices, _ = recorded("kept", "1ns")
        names = {name: sum(e["name"] == name for e in slices) for name in want}
        if names != want or report_rows(ticktrace, ttr) != {n: (c, 0) for n, c in want.items()}:
            fail(f"{ttr}: TICKTRACE_MIN_DUR=1ns: calls {names} in the trace, not {want}, or some erased")
        ttr, slices, stderr = recorded("bad", "soon")
        if "TICKTRACE_MIN_DUR=soon" not in stderr or len(slices) != sum(want.values()):
            fail(f"{ttr}: TICKTRACE_MIN_DUR=soon: {len(slices)} calls kept (want all), stderr: {stderr!r}")
        print(f"{os.path.basename(exe)}: {want} erased at 1s (stop, stream), kept at 1ns and with a bad value")


if __name__ == "__main__":
    main()
