#!/usr/bin/env python3
"""The README's demo built for Windows (ticktrace-demo.exe) under Wine, its file
converted on Linux to JSON and .pftrace: every thread named (consumer, producer,
worker-N), two arrows for each item (producer to worker, worker to consumer), the
slow items' descriptions (TT_DESCRIBE) in `ticktrace spikes`, nothing dropped; the
.pftrace the same as the JSON (check-perfetto.py); both loaded by Perfetto's own
trace_processor with no stat of severity error or data_loss and the same slices,
arrows, counters and thread names (consumers/check-trace-processor.py).

    demo.py WRAPPER DEMO.EXE LIBTICKTRACE.DLL CHECK_PERFETTO SCHEMA CHECK_TRACE_PROCESSOR

trace_processor_shell: $TICKTRACE_TRACE_PROCESSOR, or ~/.cache/ticktrace/ (from
build-trace-processor.sh); without it the rest is checked and the test exits 77. The
Linux `ticktrace` as recorder.py finds it; without it, or Wine, exit 77."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, run, tool, wine_path  # noqa: E402

ITEMS, WORKERS = 300, 3


def trace_processor():
    tp = os.environ.get("TICKTRACE_TRACE_PROCESSOR") or os.path.expanduser(
        "~/.cache/ticktrace/trace_processor_shell")
    return tp if os.access(tp, os.X_OK) else None


def main():
    clean_on_term()
    wrapper, exe, dll, check_perfetto, schema, check_tp = sys.argv[1:7]
    exe = os.path.abspath(exe)
    ticktrace = tool()
    os.environ["WINEPATH"] = wine_path(os.path.dirname(dll))
    with tempfile.TemporaryDirectory(prefix="tt-win-demo-") as d:
        run([wrapper, exe, "--items", str(ITEMS), "--workers", str(WORKERS), "--out", wine_path(d)],
            cwd=d)
        left = sorted(set(os.listdir(d)) - {"demo.ttr"})
        if left:
            fail(f"the demo left {left} beside demo.ttr (its exit's dump is to go nowhere)")
        ttr = os.path.join(d, "demo.ttr")
        conv = run([ticktrace, "convert", ttr, "-o", os.path.join(d, "demo.json")])
        if "0 dropped" not in conv.stderr or " 0 warnings" not in conv.stderr:
            fail(f"{ttr}: {conv.stderr}")
        run([ticktrace, "convert", ttr, "-o", os.path.join(d, "demo.pftrace")])
        report = run([ticktrace, "report", "--json", ttr]).stdout
        with open(os.path.join(d, "demo.report.json"), "w") as f:
            f.write(report)
        events = json.load(open(os.path.join(d, "demo.json")))["traceEvents"]
        names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
        want = {"consumer", "producer"} | {f"worker-{i}" for i in range(1, WORKERS + 1)}
        if not want <= names:
            fail(f"{ttr}: threads named {sorted(names)}, not all of {sorted(want)}")
        flows = 2 * ITEMS
        run([sys.executable, check_perfetto, os.path.join(d, "demo.pftrace"), schema,
             os.path.join(d, "demo.json"), "--flows", str(flows)])
        # every 97th item is slow, and described
        spikes = run([ticktrace, "spikes", ttr]).stdout
        if "description: item 97, one of the slow ones" not in spikes:
            fail(f"{ttr}: item 97's description not in its spikes:\n{spikes}")
        tp = trace_processor()
        if not tp:
            print("demo: no trace_processor_shell ($TICKTRACE_TRACE_PROCESSOR, "
                  "~/.cache/ticktrace/): the rest checked, trace_processor not run", file=sys.stderr)
            sys.exit(77)
        out = run([sys.executable, check_tp, tp, d, f"demo:{flows}"]).stdout
        print(out, end="")


if __name__ == "__main__":
    main()
