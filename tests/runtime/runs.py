"""What the tests of programs nobody wrote for ticktrace share: the ways they run one
(modes stop, ring and stream, with the live file, and under `ticktrace record`: None,
its own settings), and their checks, counted."""
import sys

SETTINGS = [
    ("stop", {"TICKTRACE_MODE": "stop"}),
    ("ring", {"TICKTRACE_MODE": "ring"}),
    ("stream", {"TICKTRACE_MODE": "stream"}),
    ("stop, live", {"TICKTRACE_MODE": "stop", "TICKTRACE_LIVE": "1"}),
    ("ring, live", {"TICKTRACE_MODE": "ring", "TICKTRACE_LIVE": "1"}),
    ("record", None),
]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def finish():
    """Exits 1 when a check failed."""
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)
