#!/usr/bin/env python3
"""Many threads starting to record at once under Wine (threads.exe, DLL and static
library): 64 threads in batches of 8, each naming itself and recording 100 scopes, run
several times; each run must end within TIMEOUT seconds (it deadlocked in most runs:
registration under ticktrace's lock against a thread's exit under Windows' lock of
fiber local storage) and its file, converted on Linux, must hold every thread, named,
and every scope. And TICKTRACE_OUT's name as named, beyond the ANSI code page.

    threads.py WRAPPER THREADS_DLL.EXE THREADS_STATIC.EXE

The Linux `ticktrace` as recorder.py finds it; without it, or Wine, exit 77."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, json_events, run, tool, wine_path  # noqa: E402

THREADS, AT_ONCE, SCOPES = 64, 8, 100
RUNS = 4
TIMEOUT = 90  # a run takes a few seconds under Wine, on a loaded machine too


def main():
    clean_on_term()
    wrapper = sys.argv[1]
    ticktrace = tool()
    with tempfile.TemporaryDirectory(prefix="tt-win-threads-") as d:
        for exe in sys.argv[2:4]:
            exe = os.path.abspath(exe)
            for n in range(RUNS):
                ttr = os.path.join(d, f"run{n}.ttr")
                env = dict(os.environ, TICKTRACE_OUT=wine_path(ttr))
                try:
                    p = subprocess.run([wrapper, exe, str(THREADS), str(AT_ONCE), str(SCOPES)],
                                       env=env, cwd=d, capture_output=True, text=True,
                                       timeout=TIMEOUT)
                except subprocess.TimeoutExpired:
                    fail(f"{os.path.basename(exe)} run {n + 1}: not done in {TIMEOUT} s "
                         f"({THREADS} threads, {AT_ONCE} at once): a deadlock")
                if p.returncode == 77:
                    print(p.stderr, end="", file=sys.stderr)
                    sys.exit(77)
                if p.returncode != 0:
                    fail(f"{exe} run {n + 1}: exit {p.returncode}\n{p.stdout}{p.stderr}")
                out = os.path.join(d, f"run{n}.json")
                events = json_events(ticktrace, ttr, out)
                scopes = sum(1 for e in events if e["ph"] == "X" and e["name"] == "w")
                names = {e["args"]["name"] for e in events
                         if e["ph"] == "M" and e["name"] == "thread_name"}
                missing = {f"t{i}" for i in range(THREADS)} - names
                if scopes != THREADS * SCOPES or missing:
                    fail(f"{exe} run {n + 1}: {scopes} scopes (not {THREADS * SCOPES}), "
                         f"threads not named: {sorted(missing)}")
                os.remove(ttr)
                os.remove(out)
        print(f"{2 * RUNS} runs of {THREADS} threads, {AT_ONCE} at once, each done, "
              f"every thread and scope recorded")
        out_names(wrapper, os.path.abspath(sys.argv[2]), d)


def out_names(wrapper, exe, d):
    """TICKTRACE_OUT beyond the ANSI code page: the file by that very name (getenv's
    text wrote Omega.ttr for Ωmega.ttr, and refused trâce-ü.ttr with "Input/output
    error"); a file that cannot be written: said with its path, as on Linux."""
    for name in ("trâce-ü.ttr", "Ωmega.ttr"):
        ttr = os.path.join(d, name)
        run([wrapper, exe, "1", "1", "1"], env=dict(os.environ, TICKTRACE_OUT=wine_path(ttr)), cwd=d)
        if not os.path.exists(ttr):
            fail(f"TICKTRACE_OUT={name}: no such file; written: {sorted(os.listdir(d))}")
        os.remove(ttr)
    missing = wine_path(os.path.join(d, "no-such-dir", "x.ttr"))
    p = subprocess.run([wrapper, exe, "1", "1", "1"], env=dict(os.environ, TICKTRACE_OUT=missing),
                       cwd=d, capture_output=True, text=True, timeout=TIMEOUT)
    # (its directory not there: the default name in the start directory, said, as on
    # Linux: outside test ot30 F7, the trace was lost)
    went = [n for n in os.listdir(d) if n.startswith("ticktrace-") and n.endswith(".ttr")]
    if f"ticktrace: TICKTRACE_OUT={missing}: the trace cannot be made there (" not in p.stderr or \
            ", the default name, instead" not in p.stderr or len(went) != 1:
        fail(f"a file that cannot be written there not said with its path, nor at the default name: "
             f"{p.stderr} {sorted(os.listdir(d))}")
    # (said as the run starts too, its folder named with Windows' backslashes: before,
    # only '/' was a separator there, and the run said nothing until its exit: outside
    # test ot31w D2)
    if f"ticktrace: TICKTRACE_OUT={missing}: {missing.rsplit(chr(92), 1)[0]}: " not in p.stderr or \
            "the trace cannot be written there now" not in p.stderr:
        fail(f"a folder not there, named with backslashes, not said as the run starts: {p.stderr}")
    os.remove(os.path.join(d, went[0]))
    print("TICKTRACE_OUT: non-ASCII names written as named; one that cannot be, at the default name, said")


if __name__ == "__main__":
    main()
