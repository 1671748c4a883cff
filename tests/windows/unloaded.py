#!/usr/bin/env python3
"""A library's functions and call sites named after it was unloaded (issue 34):
unloaded.exe loads plug.dll, calls tt_plug_work (ten calls of tt_plug_inner, in a
TT_SCOPE: its descriptor in the library's memory) and unloads it (FreeLibrary),
once and twice (the second load most likely where the first was), before the trace is
written. Each call is named in `ticktrace report`'s rows (they were left as bare
addresses: no module held them; the scope's descriptor was read from the unloaded
image, an access violation in the writer: no file), as Linux names a library dlclose
unloaded.

    unloaded.py WRAPPER UNLOADED.EXE [exit|stream|live|deep]

stream: the same in mode stream, ended by its exit and by TerminateProcess, the last
load kept or unloaded too; live: a live file (mode stop) TerminateProcess left, the
same. Both described the modules only as they were at the start: plug.dll, loaded
after it, was not named. deep: plug.dll loaded from a directory deeper than MAX_PATH
(260), kept and unloaded: its path was described cut at MAX_PATH, its file not found, its
functions named by the cut path and an offset.

The Linux `ticktrace` as recorder.py finds it; without it, or Wine, exit 77."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, run, tool, wine_path  # noqa: E402


def rows_of(ticktrace, ttr):
    report = run([ticktrace, "report", ttr]).stdout
    return {line.split()[0]: int(line.split()[1]) for line in report.splitlines()[2:]
            if len(line.split()) > 1 and line.split()[1].isdigit()}, report


def main():
    clean_on_term()
    wrapper, exe = sys.argv[1:3]
    case = sys.argv[3] if len(sys.argv) > 3 else "exit"
    ticktrace = tool()
    runs = {"exit": [({}, "exit", "")],
            "stream": [({"TICKTRACE_MODE": "stream"}, how, keep)
                       for how in ("exit", "kill") for keep in ("", "keep")],
            "live": [({"TICKTRACE_LIVE": "1"}, "kill", keep) for keep in ("", "keep")],
            "deep": [({}, "exit", keep) for keep in ("", "keep")]}[case]
    with tempfile.TemporaryDirectory(prefix="tt-win-unloaded-") as d:
        if case == "deep":
            deep = os.path.join(d, *[c * 100 for c in "def"])
            os.makedirs(deep)
            shutil.copy(os.path.join(os.path.dirname(os.path.abspath(exe)), "plug.dll"), deep)
            plug = "\\\\?\\" + wine_path(os.path.join(deep, "plug.dll"))
            if len(plug) <= 260 + 4:
                fail(f"deep: {plug} is not longer than MAX_PATH: the test does not test")
            os.environ["TT_PLUG_DLL"] = plug
        for settings, how, keep in runs:
            for rounds in (1, 2):
                ttr = os.path.join(d, f"unloaded-{rounds}-{how}{keep}.ttr")
                env = dict(os.environ, TICKTRACE_OUT=wine_path(ttr), **settings)
                cmd = [wrapper, os.path.abspath(exe), str(rounds), how] + ([keep] if keep else [])
                p = subprocess.run(cmd, env=env, cwd=d, capture_output=True, text=True, timeout=300)
                if p.returncode == 77:
                    print(p.stderr, end="", file=sys.stderr)
                    sys.exit(77)
                if p.returncode != (9 if how == "kill" else 0):
                    fail(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
                read = ttr + ".live" if "TICKTRACE_LIVE" in settings else ttr
                rows, report = rows_of(ticktrace, read)
                want = {"main": 1, "tt_plug_work": rounds, "tt_plug_inner": 10 * rounds,
                        "tt_plug_scope": rounds}
                if how == "kill":
                    del want["main"]  # (not returned from)
                    rows = {k: v for k, v in rows.items() if k != "main"}
                if rows != want:
                    fail(f"{read} ({settings}, {how} {keep}): {rounds} loads: calls {rows}, "
                         f"not {want}\n{report}")
        print(f"{case}: a library's calls named, loaded mid-run once and twice, "
              f"{len(runs)} ways")


if __name__ == "__main__":
    main()
