#!/usr/bin/env python3
"""TICKTRACE_MIN_DUR (issue 32): short calls erased by their exit hook, counted per
function and thread in the FILTERED section, and what must never be erased.

min_dur_prog plants each case with made-up function addresses (its comment lists
them). Checked, with TICKTRACE_MIN_DUR=1us: 1000 short calls erased and counted; a
short call around an erased one erased too; one with a signal handler's event inside
kept; calls across chunk boundaries (a begin in a chunk's last record, or its
first) erased, and the events between them kept; of nine functions that share a table entry, the
first eight erased (the entries probed), the ninth's calls kept; a long call kept; a kept call with nothing inside never shorter than
the threshold; every kept or erased call accounted for, and each
erased call's time under the threshold; `ticktrace report` counts them and says so;
convert says how many are not in the trace; the profile adds up: an erased call's time
is its caller's self (where the trace has it), never counted twice, and its function's
row says how many calls were erased and their time.
Without the setting, in mode stream, and with a bad value: every call recorded.
`ticktrace record --min-dur` sets it for the program it runs; a bad value is usage.
Usage: min_dur.py PROG TICKTRACE"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ttr  # noqa: E402

PROG, TOOL = sys.argv[1:3]
failures = []
A, B, C, D, E, LONG = 0x20010, 0x20020, 0x20030, 0x20040, 0x20050, 0x20060
# nine functions whose words hash to one home in the table (min_dur_prog's SHARED):
# the eight entries probed from there go to the first eight, the ninth's calls are kept
*XS, Y = 0x40000, 0x41430, 0x4a0f0, 0x4b520, 0x4c950, 0x55610, 0x56a40, 0x57e70, 0x60b30
CALLS = {A: 1000, B: 1, C: 1, D: 1, E: 3 * 4095, **{x: 100 for x in XS}, Y: 100, LONG: 1}


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(tmp, name, *args, **env):
    out = os.path.join(tmp, name + ".ttr")
    full = dict(os.environ, TICKTRACE_OUT=out, **env)
    for key in ("TICKTRACE_MIN_DUR", "TICKTRACE_SPIKES", "TICKTRACE_SNAPSHOTS"):
        if key not in env:
            full.pop(key, None)
    p = subprocess.run([PROG, *args], env=full, capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "%s: exits %d: %s" % (name, p.returncode, p.stderr))
    return out, p.stderr


def kept_calls(f, min_ns=0, table_full=()):
    """{address: calls recorded} of the main thread, checking each exit follows its
    own enter, and that each call with nothing recorded inside took min_ns or more
    (a call the machine held up that long is kept, rightly), but for the functions
    whose table entry another holds (`table_full`)"""
    index = f.index_of(f.pid)
    calls, stack = {}, []
    for i, e in enumerate(f.events[index]):
        if e.kind == ttr.REC_FUNC_ENTER:
            stack.append((e.payload, e.tsc, i))
        elif e.kind == ttr.REC_FUNC_EXIT:
            check(stack and stack[-1][0] == e.payload, "an exit of 0x%x without its enter" % e.payload)
            fn, tsc, at = stack.pop()
            calls[fn] = calls.get(fn, 0) + 1
            check(at + 1 < i or fn in table_full or f.ns(e.tsc) - f.ns(tsc) >= min_ns,
                  "a call of 0x%x that took %d ns, nothing inside, kept" % (fn, f.ns(e.tsc) - f.ns(tsc)))
    return index, calls


def kept_durations(f, index):
    """{function name: sorted ns of each call the trace kept}"""
    durations, stack = {}, []
    for e in f.events[index]:
        if e.kind == ttr.REC_FUNC_ENTER:
            stack.append((e.payload, e.tsc))
        elif e.kind == ttr.REC_FUNC_EXIT and stack:
            fn, tsc = stack.pop()
            durations.setdefault("0x%x" % fn, []).append(f.ns(e.tsc) - f.ns(tsc))
    return {name: sorted(ns) for name, ns in durations.items()}


def check_measured_columns(f, index, path, text):
    """min, max and the percentiles come from the kept calls only: a function whose
    every call was erased shows none (not INT64_MAX), the others the kept calls'"""
    p = subprocess.run([TOOL, "report", path, "--json"], capture_output=True, text=True, timeout=60)
    rows = {r["name"]: r for r in json.loads(p.stdout)["rows"]}
    kept, all_erased = kept_durations(f, index), 0
    for name, r in rows.items():
        ns = kept.get(name, [])
        if not ns and r["calls"]:
            all_erased += 1
            check(all(r[k] == 0 for k in ("min_ns", "max_ns", "p50_ns", "p95_ns", "p99_ns")),
                  "%s: every call erased, yet %s" % (name, r))
            line = next((l.split() for l in text.splitlines() if l.startswith(name + " ")), [])
            check(line[8:10] == ["-", "-"], "%s: every call erased, text row %s" % (name, line))  # min, max
            continue
        median = ns[(len(ns) + 1) // 2 - 1]  # nearest rank
        check(abs(r["p50_ns"] - median) <= median // 64 + 2,
              "%s: p50 %d ns, the %d kept calls' median %d ns" % (name, r["p50_ns"], len(ns), median))
    check(all_erased > 0, "no function had every call erased: the case is not tested")


with tempfile.TemporaryDirectory() as tmp:
    path, err = run(tmp, "filtered", TICKTRACE_MIN_DUR="1us")
    f = ttr.Ttr(path)
    # (calls the machine held up past 1 us are kept: kept_calls checks each)
    index, kept = kept_calls(f, 1000, (Y,))
    filtered = f.filtered.get(index, {"min_dur_ns": 0, "fns": {}})
    erased = {a: c for a, (c, _) in filtered["fns"].items()}
    check(filtered["min_dur_ns"] == 1000, "min_dur_ns %d, not 1000" % filtered["min_dur_ns"])
    for fn in (A, E, *XS):
        check(erased.get(fn, 0) >= CALLS[fn] * 9 // 10, "0x%x: erased %s of %d" % (fn, erased.get(fn), CALLS[fn]))
    check(erased.get(B, 0) + erased.get(C, 0) >= 1, "neither B nor C (inside B) erased")
    check(kept.get(D) == 1 and D not in erased, "D, a handler's event inside: kept %s, erased %s"
          % (kept.get(D), erased.get(D)))
    steps = sum(1 for e in f.events[index] if f.name(e) == "step")
    check(steps == 3 * 4095, "%d instants between E's calls, not %d" % (steps, 3 * 4095))
    check(kept.get(Y) == 100 and Y not in erased, "Y, whose eight entries XS hold: kept %s, erased %s"
          % (kept.get(Y), erased.get(Y)))
    check(kept.get(LONG) == 1 and LONG not in erased, "the long call: kept %s" % kept.get(LONG))
    for fn, calls in CALLS.items():
        check(kept.get(fn, 0) + erased.get(fn, 0) == calls, "0x%x: %d kept and %d erased, not %d calls"
              % (fn, kept.get(fn, 0), erased.get(fn, 0), calls))
    for fn, (calls, ticks) in filtered["fns"].items():
        check(ticks < calls * f.ticks(1000), "0x%x: %d erased calls took %d ticks, not each under 1 us"
              % (fn, calls, ticks))
    p = subprocess.run([TOOL, "report", path, "--csv"], capture_output=True, text=True, timeout=60)
    rows = [line.split(",") for line in p.stdout.splitlines()[1:] if line]
    total = sum(int(r[1]) for r in rows if r[0].strip('"').startswith("0x"))
    check(total == sum(CALLS.values()), "report --csv counts %d calls, not %d" % (total, sum(CALLS.values())))
    p = subprocess.run([TOOL, "report", path], capture_output=True, text=True, timeout=60)
    check("returned within TICKTRACE_MIN_DUR" in p.stdout, "report does not say calls were erased:\n" + p.stdout)
    check_measured_columns(f, index, path, p.stdout)
    p = subprocess.run([TOOL, "convert", path, "-o", os.path.join(tmp, "f.json")], capture_output=True,
                       text=True, timeout=60)
    said = "%d short calls erased as they returned" % sum(erased.values())
    check(said in p.stderr, "convert does not say \"%s\": %s" % (said, p.stderr))

    # 1000 short calls erased inside a 20 us call: the self times add up to its total
    path, err = run(tmp, "nested", "nested", TICKTRACE_MIN_DUR="1us")
    p = subprocess.run([TOOL, "report", path, "--json"], capture_output=True, text=True, timeout=60)
    rows = {r["name"]: r for r in json.loads(p.stdout)["rows"]}
    outer, short = rows.get("0x20000", {}), rows.get("0x20010", {})
    check(sum(r["self_ns"] for r in rows.values()) == outer.get("total_ns"),
          "nested: the self times add up to %d ns, the run's one root call took %s ns: %s"
          % (sum(r["self_ns"] for r in rows.values()), outer.get("total_ns"), rows))
    check(short.get("calls") == 1000 and short.get("erased_calls", 0) >= 900 and short.get("erased_ns", 0) > 0,
          "nested: 0x20010's row does not count its erased calls and their time: %s" % short)
    p = subprocess.run([TOOL, "report", path, "--csv"], capture_output=True, text=True, timeout=60)
    head, *lines = p.stdout.splitlines()
    csv = {line.split(",")[0].strip('"'): dict(zip(head.split(","), line.split(","))) for line in lines}
    check(csv.get("0x20010", {}).get("erased_calls") == str(short.get("erased_calls")),
          "nested: --csv's erased_calls %s, --json's %s" % (csv.get("0x20010"), short.get("erased_calls")))

    for name, env in (("plain", {}), ("stream", {"TICKTRACE_MIN_DUR": "1us", "TICKTRACE_MODE": "stream"}),
                      ("bad", {"TICKTRACE_MIN_DUR": "soon"})):
        path, err = run(tmp, name, **env)
        if name == "stream":  # packed: through the tools
            p = subprocess.run([TOOL, "report", path, "--csv"], capture_output=True, text=True, timeout=60)
            total = sum(int(r.split(",")[1]) for r in p.stdout.splitlines()[1:] if r.startswith('"0x'))
            check(total == sum(CALLS.values()), "stream: %d calls, not %d" % (total, sum(CALLS.values())))
            continue
        f = ttr.Ttr(path)
        index, kept = kept_calls(f)
        check(kept == CALLS and not f.filtered, "%s: calls %s, filtered %s" % (name, kept, f.filtered))
        if name == "bad":
            check("TICKTRACE_MIN_DUR=soon is not a duration" in err, "bad: said " + err)

    # record --min-dur: the same for a program it runs
    out = os.path.join(tmp, "record.ttr")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TICKTRACE")}
    p = subprocess.run([TOOL, "record", "--min-dur", "1us", "-o", out, "--", PROG], env=env,
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "record --min-dur: exits %d: %s" % (p.returncode, p.stderr))
    if p.returncode == 0:
        f = ttr.Ttr(out)
        index, kept = kept_calls(f, 1000, (Y,))
        erased = f.filtered.get(index, {"fns": {}})["fns"]
        check(erased.get(A, (0,))[0] >= 900, "record --min-dur: A erased %s" % (erased.get(A),))
    p = subprocess.run([TOOL, "record", "--min-dur", "soon", "--", PROG], env=env,
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "--min-dur takes a duration" in p.stderr,
          "record --min-dur soon: exits %d: %s" % (p.returncode, p.stderr))

if failures:
    sys.exit(1)
print("min_dur: every case erased or kept as it must")
