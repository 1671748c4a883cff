#!/usr/bin/env python3
"""The Windows runtime at its limits (limits.exe under Wine, converted on Linux): with
TICKTRACE_BUFFER=5000 a thread keeps two chunks of 4,095 records, its first events,
and the rest of a flood is counted as dropped (by the file and the converter); events
while paused are neither; with TICKTRACE=0 tt_dump says -ECANCELED and writes nothing.
A TICKTRACE_BUFFER not from 1 to 2^36 is refused in Linux's words, the default taken.

    limits.py WRAPPER LIMITS.EXE LIBTICKTRACE_DIR_FILE

The Linux `ticktrace` as recorder.py finds it; without it, or Wine, exit 77."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, json_events, run, tool, wine_path  # noqa: E402

FLOOD = 20000
KEPT = 2 * 4095  # two 64 KiB chunks of records
# records before the flood: the scope's begin and end, the function's begin and end
BEFORE = 4
# refused as Linux refuses them (not from 1 to 2^36), the default taken
BAD_BUFFERS = ("-5", "99999999999999999999", "1000000000000")


def main():
    clean_on_term()
    wrapper, exe = sys.argv[1:3]
    exe = os.path.abspath(exe)
    ticktrace = tool()
    with tempfile.TemporaryDirectory(prefix="tt-win-limits-") as d:
        ttr = os.path.join(d, "limits.ttr")
        env = dict(os.environ, TICKTRACE_BUFFER="5000", TICKTRACE_OUT="NUL")
        run([wrapper, exe, wine_path(ttr), str(FLOOD)], env=env, cwd=d)
        out = os.path.join(d, "limits.json")
        conv = run([ticktrace, "convert", ttr, "-o", out])
        dropped = FLOOD - (KEPT - BEFORE)
        if f"{dropped} dropped" not in conv.stderr:
            fail(f"{ttr}: {dropped} dropped expected: {conv.stderr}")
        events = json.load(open(out))
        events = events["traceEvents"] if isinstance(events, dict) else events
        names = [e["name"] for e in events if e["ph"] in ("X", "i")]
        if names.count("flood") != KEPT - BEFORE or "paused" in names:
            fail(f"{ttr}: {names.count('flood')} flood events kept (not {KEPT - BEFORE}), "
                 f"{names.count('paused')} paused")
        if "tt_worker::work" not in names or "kept" not in names:
            fail(f"{ttr}: no tt_worker::work or kept slice: {sorted(set(names))}")
        off = os.path.join(d, "off.ttr")
        env = dict(os.environ, TICKTRACE="0")
        p = subprocess.run([wrapper, exe, wine_path(off), "10"], env=env, cwd=d,
                           capture_output=True, text=True, timeout=300)
        if p.returncode != 3 or os.path.exists(off):
            fail(f"TICKTRACE=0: exit {p.returncode} (not 3), file {os.path.exists(off)}")
        for bad in BAD_BUFFERS:
            ttr = os.path.join(d, f"bad{BAD_BUFFERS.index(bad)}.ttr")
            env = dict(os.environ, TICKTRACE_BUFFER=bad, TICKTRACE_OUT="NUL")
            p = run([wrapper, exe, wine_path(ttr), str(FLOOD)], env=env, cwd=d)
            said = (f"ticktrace: TICKTRACE_BUFFER={bad} is not a number of events from 1 to "
                    f"2^36; using 1048576")
            if said not in p.stderr:
                fail(f"TICKTRACE_BUFFER={bad}: not refused as on Linux ({said}): {p.stderr}")
            out = os.path.join(d, f"bad{BAD_BUFFERS.index(bad)}.json")
            events = json_events(ticktrace, ttr, out)
            kept = sum(1 for e in events if e["ph"] == "i" and e["name"] == "flood")
            if kept != FLOOD:
                fail(f"TICKTRACE_BUFFER={bad}: {kept} of {FLOOD} flood events kept with the "
                     f"default buffer: {conv.stderr}")
        print(f"{FLOOD - dropped} of {FLOOD} kept, {dropped} dropped and said; paused not "
              f"recorded; TICKTRACE=0 wrote nothing")


if __name__ == "__main__":
    main()
