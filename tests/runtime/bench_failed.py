#!/usr/bin/env python3
"""ticktrace-bench when one part fails (outside recheck r37 N6: its snapshot child,
under load, made it exit with no key written, every one measured before lost).

One child fails on purpose (TICKTRACE_BENCH_FAIL=--thread-start-child, the benchmark's
test-only setting), in a run of the hot path's figures (--hot --repeats 1): the JSON
is written all the same, with every key by its name, each a number but the failed
part's (thread_start_us), which is null, and "failed" says what failed and why; its
row in the table says FAILED; the exit status is 1.

    bench_failed.py TICKTRACE_BENCH"""
import json
import os
import subprocess
import sys
import tempfile

from verdict import check, verdict

BENCH = sys.argv[1]
if os.environ.get("TT_SANITIZE", "none") != "none":
    # (its detour child, the detour library preloaded, aborts under the sanitizers: one
    # more part failed than the one this test fails, every time)
    print("SKIP: a sanitizer build: the benchmark's detour child aborts there")
    sys.exit(77)
# The --hot run's keys (bench/README.md: names and meanings kept from one version to
# the next).
HOT_KEYS = ["rdtsc_ns", "floor_ns", "event_warm_ns", "event_cold_ns", "first_event_us", "thread_start_us",
            "event_dynamic_name_ns", "endbegin_ns", "event_2threads_ns", "cyg_call_overhead_ns",
            "detour_call_overhead_ns", "patchable_call_overhead_ns", "event_dropped_ns",
            "event_dropped_no_memory_ns", "event_off_ns", "min_dur_filtered_call_ns", "cyg_off_ns",
            "bytes_per_event", "file_bytes_per_event"]


def main():
    with tempfile.TemporaryDirectory(prefix="tt-bench-failed-") as tmp:
        out = os.path.join(tmp, "bench.json")
        env = {k: v for k, v in os.environ.items() if not k.startswith("TICKTRACE")}
        env.update(TICKTRACE_BENCH_FAIL="--thread-start-child", TICKTRACE_BENCH_DIR=tmp)
        p = subprocess.run([BENCH, "--hot", "--repeats", "1", "--json", out], env=env,
                           capture_output=True, text=True, timeout=600)
        print(p.stdout)
        print(p.stderr[-3000:])
        check(p.returncode == 1, f"exit status 1 (a part failed), not {p.returncode}")
        try:
            with open(out) as f:
                got = json.load(f)
        except (OSError, ValueError) as e:
            check(False, f"the JSON, written all the same: {e}")
            return verdict()
        check(list(got) == HOT_KEYS + ["failed"], f"every key by its name, then failed: {list(got)}")
        numbers = [k for k in HOT_KEYS if k != "thread_start_us"]
        check(all(isinstance(got.get(k), (int, float)) for k in numbers),
              f"every key but the failed part's a number: {got}")
        check("thread_start_us" in got and got["thread_start_us"] is None,
              f"the failed part's key null: {got.get('thread_start_us', 'absent')}")
        why = got.get("failed", {})
        check(list(why) == ["thread_start_us"] and
              why["thread_start_us"].startswith("the child --thread-start-child") and
              why["thread_start_us"].endswith("failed on purpose (TICKTRACE_BENCH_FAIL)"),
              f"failed: what failed and why: {why}")
        rows = [line.split() for line in p.stdout.splitlines()]
        check(["thread_start_us", "FAILED"] in [r[:2] for r in rows],
              f"the table's row says FAILED: {p.stdout}")
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
