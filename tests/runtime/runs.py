"""The ways the tests of programs nobody wrote for ticktrace run one: modes stop, ring
and stream, with the live file, and under `ticktrace record` (None: its own settings)."""
SETTINGS = [
    ("stop", {"TICKTRACE_MODE": "stop"}),
    ("ring", {"TICKTRACE_MODE": "ring"}),
    ("stream", {"TICKTRACE_MODE": "stream"}),
    ("stop, live", {"TICKTRACE_MODE": "stop", "TICKTRACE_LIVE": "1"}),
    ("ring, live", {"TICKTRACE_MODE": "ring", "TICKTRACE_LIVE": "1"}),
    ("record", None),
]
