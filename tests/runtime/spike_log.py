"""The live spike log in JSON lines (TICKTRACE_SPIKES=PATH.jsonl) as ticktrace(7) tells a
reader to take it: each line a spike, which has "name" and "dur_ns", or a note, which has
neither (a ring's events overwritten before the detector read them: "overwritten_events";
those it passed over, held to its share, to read the newest first for snapshots:
"skipped_events"; and "detector_share_pct" where the detector held the thread to its share
then)."""
import json
import os


def entries(path):
    """Every line of the log at `path` (none where there is no file)."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f]


def spikes(lines):
    """The spikes among the lines read."""
    return [e for e in lines if "dur_ns" in e]


def notes(lines):
    """The notes among them."""
    return [e for e in lines if "dur_ns" not in e]
