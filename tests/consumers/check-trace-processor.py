#!/usr/bin/env python3
"""Loads traces from `ticktrace convert` in Perfetto's own trace processor, both
formats of each, and requires:
  - no stat Perfetto counts as an error or a loss of data (severity 'error' or
    'data_loss', value > 0);
  - the same slices (thread, name, time from the first, duration, depth), arrows
    (slice to slice), counter samples and thread names from the JSON as from the
    protobuf, and as many arrows as expected;
  - the same thread states: the JSON's tracks "NAME (states)" (slices Running,
    Preempted, Blocked) against the protobuf's thread_state rows (Running, R, S),
    span by span, but for what the converter's synthetic switches change there
    (compare_states);
  - what the converter wrote: as many slices as the JSON has X and i events, and per
    name as many complete slices, with the same total time (its outermost slices',
    when it nests in itself), as `ticktrace report` counts calls (less the slices it
    says it left out as nested too deep).

    check-trace-processor.py TRACE_PROCESSOR DIR NAME:FLOWS...

For each NAME, DIR holds NAME.json, NAME.pftrace and NAME.report.json (report
--json); FLOWS is the number of arrows expected, or -1. Prints a table: trace,
format, slices, arrows, counter samples, threads, stats. Exit status: 0 all
good, 1 otherwise."""
import csv
import io
import json
import re
import subprocess
import sys
from collections import Counter

import thread_states

# Names go out in hexadecimal: the shell's CSV does not quote what they may hold.
QUERY = """
SELECT 'stat' AS k, name || COALESCE('[' || idx || ']', '') AS a, severity AS b, value AS c, NULL AS d, NULL AS e
  FROM stats WHERE value > 0 AND severity IN ('error', 'data_loss')
UNION ALL
SELECT 'slice', hex(s.name), t.tid, s.ts, s.dur, s.depth
  FROM slice s LEFT JOIN thread_track tt ON s.track_id = tt.id LEFT JOIN thread t USING (utid)
UNION ALL
SELECT 'flow', hex(so.name) || '|' || tso.tid || '|' || so.ts || '|' || so.depth,
       hex(si.name) || '|' || tsi.tid || '|' || si.ts || '|' || si.depth, NULL, NULL, NULL
  FROM flow f JOIN slice so ON f.slice_out = so.id JOIN slice si ON f.slice_in = si.id
  LEFT JOIN thread_track tto ON so.track_id = tto.id LEFT JOIN thread tso ON tto.utid = tso.utid
  LEFT JOIN thread_track tti ON si.track_id = tti.id LEFT JOIN thread tsi ON tti.utid = tsi.utid
UNION ALL
SELECT 'counter', hex(ct.name), NULL, c.ts, c.value, NULL
  FROM counter c JOIN counter_track ct ON c.track_id = ct.id
UNION ALL
SELECT 'thread', hex(t.name), t.tid, hex(p.name), p.pid, NULL
  FROM thread t LEFT JOIN process p USING (upid) WHERE t.tid != 0
UNION ALL
SELECT 'state', ts.state, t.tid, ts.ts, ts.dur, ts.cpu
  FROM thread_state ts JOIN thread t USING (utid) WHERE t.tid != 0
UNION ALL
SELECT 'cpu', NULL, t.tid, s.ts, NULL, a.int_value
  FROM slice s JOIN thread_track tt ON s.track_id = tt.id JOIN thread t USING (utid)
  JOIN args a ON a.arg_set_id = s.arg_set_id AND a.key = 'args.cpu' WHERE s.category = 'sched'
UNION ALL
SELECT 'flag', a.key, COUNT(*), NULL, NULL, NULL FROM slice s JOIN args a USING (arg_set_id)
  WHERE a.key GLOB '*.unterminated' OR a.key GLOB '*.unbegun' OR a.key GLOB '*.dropped'
  GROUP BY a.key
"""


def utf8(hexed):
    return bytes.fromhex(hexed).decode('utf-8') if hexed not in ('', '[NULL]') else None


def load(tp, path, query_file):
    out = subprocess.run([tp, 'query', '-f', query_file, path], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f'{tp} failed on {path}:\n{out.stderr[-2000:]}')
    text = out.stdout
    start = text.find('"k"')
    rows = list(csv.reader(io.StringIO(text[start:]))) if start >= 0 else []
    got = {'stat': [], 'slice': [], 'flow': [], 'counter': [], 'thread': {}, 'flag': Counter(),
           'state': [], 'cpu': {}, 'main': {}}
    for row in rows[1:]:
        if len(row) < 6:
            continue
        k, a, b, c, d, e = row
        if k == 'stat':
            got['stat'].append(f'{a}={c} ({b})')
        elif k == 'slice':
            got['slice'].append((b, utf8(a), int(c), int(d), int(e)))
        elif k == 'flow':
            got['flow'].append((a, b))
        elif k == 'counter':
            got['counter'].append((re.sub(r' value$', '', utf8(a)), int(c), float(d)))
        elif k == 'thread':
            got['thread'][b] = utf8(a)
            if b == d:
                got['main'][b] = utf8(c)  # its process's name
        elif k == 'state':
            got['state'].append((b, a, int(c), int(d), None if e == '[NULL]' else int(e)))
        elif k == 'cpu':
            got['cpu'][(b, int(c))] = int(e)
        elif k == 'flag':
            got['flag'][a.split('.')[-1]] += int(b)
    return got


def split_states(got):
    """The JSON's states tracks taken out of its slices and threads, into
    got['states']: {tid of the thread: [(ts, dur, name, cpu)]}."""
    tracks = {tid for tid, name in got['thread'].items() if thread_states.is_states_track(tid, name)}
    got['states'] = {}
    for tid, name, ts, dur, _ in got['slice']:
        if tid in tracks:
            got['states'].setdefault(str(int(tid) & ~thread_states.STATES_TID_BIT), []).append(
                (ts, dur, name, got['cpu'].get((tid, ts))))
    got['slice'] = [s for s in got['slice'] if s[0] not in tracks]
    got['thread'] = {tid: name for tid, name in got['thread'].items() if tid not in tracks}


def rebase(got):
    """Times from the first slice: the JSON is on its own clock from zero, the
    protobuf on BOOTTIME."""
    t0 = got['t0'] = min((s[2] for s in got['slice']), default=0)
    slices = Counter((s[0], s[1], s[2] - t0, s[3], s[4]) for s in got['slice'])

    def at(key):
        name, tid, ts, depth = key.split('|')
        return utf8(name), tid, int(ts) - t0, int(depth)
    flows = Counter((at(a), at(b)) for a, b in got['flow'])
    counters = Counter((n, ts - t0, v) for n, ts, v in got['counter'])
    return slices, flows, counters


def compare_states(name, js, pb, problems):
    """The JSON's states tracks against the protobuf's thread_state rows
    (thread_states.compare), each on its clock from its first slice."""
    said = {tid: [(ts - js['t0'], dur, n, cpu) for ts, dur, n, cpu in spans]
            for tid, spans in js['states'].items()}
    rows = {}
    for tid, state, ts, dur, cpu in pb['state']:
        rows.setdefault(tid, []).append((ts - pb['t0'], None if dur < 0 else ts - pb['t0'] + dur,
                                         state, cpu))
    problems.extend(f'{name}: {p}' for p in thread_states.compare(said, rows))


def check_converter(name, doc, report, got, problems):
    """The trace processor's slices (but the states tracks) against the converter's
    JSON and report."""
    # (the states tracks are compared with thread_state instead: compare_states)
    events = [e for e in doc['traceEvents']
              if not (e.get('cat') == 'sched' and e['tid'] & thread_states.STATES_TID_BIT)]
    written = sum(1 for e in events if e['ph'] in 'Xi')
    if len(got['slice']) != written:
        problems.append(f'{name}: {len(got["slice"])} slices in trace_processor, {written} '
                        f'X and i events in the JSON')
    folded = 0
    for w in doc['otherData'].get('warnings', []):
        m = re.match(r'(\d+) slices, \d+ instants and \d+ flow ends nested deeper', w)
        if m:
            folded += int(m.group(1))
    complete = Counter()
    total = Counter()
    by_thread = {}
    for e in events:
        if e['ph'] == 'X' and not e['name'].startswith('flow_'):
            complete[e['name']] += 1
            by_thread.setdefault((e['pid'], e['tid']), []).append(e)
    # a name's total is its outermost calls': one nested in a slice of its own name
    # (recursion) is inside that one's time already
    for slices in by_thread.values():
        stack = []  # (end, name) of the slices open around the next
        for e in sorted(slices, key=lambda e: (round(e['ts'] * 1000), -round(e['dur'] * 1000))):
            start = round(e['ts'] * 1000)
            end = start + round(e['dur'] * 1000)
            while stack and stack[-1][0] <= start and not (stack[-1][0] == start == end):
                stack.pop()
            if all(name != e['name'] for _, name in stack):
                total[e['name']] += end - start
            stack.append((end, e['name']))
    missing = 0
    for row in report['rows']:
        n = row['name']
        missing += row['calls'] - complete[n]
        if row['calls'] == complete[n] and row['total_ns'] != total[n]:
            problems.append(f'{name}: {n}: report total {row["total_ns"]} ns, the JSON '
                            f'slices {total[n]} ns')
    if missing != folded:
        problems.append(f'{name}: report counts {missing} calls more than the JSON has slices, '
                        f'the converter says it left out {folded}')


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    tp, directory = sys.argv[1:3]
    query_file = f'{directory}/tp-query.sql'
    with open(query_file, 'w') as f:
        f.write(QUERY)
    problems = []
    print(f'{"trace":18} {"format":8} {"slices":>8} {"arrows":>7} {"counters":>8} '
          f'{"threads":>7}  stats (error, data_loss)')
    for spec in sys.argv[3:]:
        name, want_flows = spec.rsplit(':', 1)
        want_flows = int(want_flows)
        loaded = {}
        for fmt in ('json', 'pftrace'):
            got = loaded[fmt] = load(tp, f'{directory}/{name}.{fmt}', query_file)
            print(f'{name:18} {fmt:8} {len(got["slice"]):>8} {len(got["flow"]):>7} '
                  f'{len(got["counter"]):>8} {len(got["thread"]):>7}  '
                  f'{", ".join(got["stat"]) or "none"}')
            for stat in got['stat']:
                problems.append(f'{name}.{fmt}: {stat}')
            if want_flows >= 0 and len(got['flow']) != want_flows:
                problems.append(f'{name}.{fmt}: {len(got["flow"])} arrows, expected {want_flows}')
        split_states(loaded['json'])
        js, pb = (rebase(loaded[f]) for f in ('json', 'pftrace'))
        compare_states(name, loaded['json'], loaded['pftrace'], problems)
        for what, i in (('slices', 0), ('arrows', 1), ('counter samples', 2)):
            if js[i] != pb[i]:
                problems.append(f'{name}: {what} differ:\n  json only     '
                                f'{sorted((js[i] - pb[i]).elements(), key=str)[:5]}\n  protobuf only '
                                f'{sorted((pb[i] - js[i]).elements(), key=str)[:5]}')
        # (a main thread that recorded nothing: the .pftrace names it after its process,
        # the JSON has no thread to name)
        pb_threads = {tid: None if loaded['json']['thread'].get(tid, 0) is None and
                      name == loaded['pftrace']['main'].get(tid) else name
                      for tid, name in loaded['pftrace']['thread'].items()}
        if loaded['json']['thread'] != pb_threads:
            problems.append(f'{name}: thread names differ: {loaded["json"]["thread"]} vs '
                            f'{loaded["pftrace"]["thread"]}')
        if loaded['json']['flag'] != loaded['pftrace']['flag']:
            problems.append(f'{name}: flags differ: {dict(loaded["json"]["flag"])} vs '
                            f'{dict(loaded["pftrace"]["flag"])}')
        with open(f'{directory}/{name}.json', encoding='utf-8') as f:
            doc = json.load(f)
        with open(f'{directory}/{name}.report.json', encoding='utf-8') as f:
            report = json.load(f)
        check_converter(name, doc, report, loaded['json'], problems)
    if problems:
        print('\n'.join(f'FAIL {p}' for p in problems))
        return 1
    print('ok: every trace loads in trace_processor without an error or a loss, the same '
          'from JSON as from protobuf and as the converter wrote and counted it')
    return 0


if __name__ == '__main__':
    sys.exit(main())
