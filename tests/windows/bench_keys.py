#!/usr/bin/env python3
"""ticktrace-bench.exe under Wine, one repeat (its figures are not checked here: 51 s
quiet against two repeats' 71, 130 in CI at load): a JSON object of numbers whose every key
is one of the Linux benchmark's (bench/README.md's table of keys), holding at least
those Windows' runtime has (WANT), each a finite number, bytes_per_event 16.

    bench_keys.py WRAPPER BENCH.EXE LIBTICKTRACE.DLL BENCH_README

Without Wine, exit 77."""
import json
import math
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, run, wine_path  # noqa: E402

WANT = {"rdtsc_ns", "floor_ns", "event_warm_ns", "event_cold_ns", "first_event_us", "thread_start_us",
        "endbegin_ns", "event_2threads_ns", "event_dynamic_name_ns", "cyg_call_overhead_ns", "event_dropped_ns", "event_off_ns",
        "cyg_off_ns", "min_dur_filtered_call_ns", "bytes_per_event", "file_bytes_per_event", "sample_overhead_pct"}


def main():
    clean_on_term()
    wrapper, exe, dll, readme = sys.argv[1:5]
    linux_keys = set(re.findall(r"^\| `([a-z0-9_]+)` \|", open(readme).read(), re.M))
    os.environ["WINEPATH"] = wine_path(os.path.dirname(dll))
    with tempfile.TemporaryDirectory(prefix="tt-win-bench-") as d:
        out = os.path.join(d, "bench.json")
        run([wrapper, os.path.abspath(exe), "--repeats", "1", "--json", wine_path(out)], cwd=d)
        figures = json.load(open(out))
        left = sorted(set(os.listdir(d)) - {"bench.json"})
        if left:
            fail(f"the benchmark left {left} behind")
    unknown = sorted(set(figures) - linux_keys)
    if unknown:
        fail(f"keys the Linux benchmark does not have: {unknown}")
    missing = sorted(WANT - set(figures))
    if missing:
        fail(f"keys missing: {missing}")
    bad = {k: v for k, v in figures.items() if not isinstance(v, (int, float)) or not math.isfinite(v)}
    if bad:
        fail(f"not finite numbers: {bad}")
    if figures["bytes_per_event"] != 16:
        fail(f"bytes_per_event {figures['bytes_per_event']}, not 16")
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
