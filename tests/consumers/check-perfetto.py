#!/usr/bin/env python3
"""Checks a Perfetto protobuf trace from `ticktrace convert` against the JSON of the
same raw file: decodes it with protoc and the project's schema
(tools/perfetto_trace.proto), rebuilds what Perfetto's importer would (slices with
their depth, begin and end times per thread, counters, flows, process and thread
names) and requires exactly the same content as the JSON's X, C and s/f events.

    check-perfetto.py TRACE.pftrace SCHEMA.proto TRACE.json

Exit status: 0 same content, 1 a difference or a decoding error, 77 no protoc."""
import json
import shutil
import subprocess
import sys


def parse_text_format(text):
    """protoc's text format into nested dicts of lists: {field: [value, ...]}."""
    root = {}
    stack = [root]
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line == '}':
            stack.pop()
        elif line.endswith('{'):
            child = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(child)
            stack.append(child)
        else:
            key, value = line.split(':', 1)
            value = value.strip()
            if value.startswith('"'):
                value = value[1:-1].encode('latin-1').decode('unicode_escape').encode(
                    'latin-1').decode('utf-8')
            elif value in ('true', 'false'):
                value = value == 'true'
            elif value.lstrip('-').isdigit():
                value = int(value)
            stack[-1].setdefault(key, []).append(value)
    return root


def one(msg, key, default=None):
    return msg.get(key, [default])[0]


def rebuild(packets):
    """Slices, counters, flows and names, as Perfetto's importer sees them."""
    tracks = {}       # uuid -> ('thread', pid, tid, name) | ('process', pid, name) | ('counter', name)
    seq_state = {}    # sequence id -> {'track', 'delta', 'last', 'names', 'clock0'}
    slices, counters, flow_points, stacks = [], [], [], {}
    for pkt in packets:
        td = one(pkt, 'track_descriptor')
        if td:
            uuid = one(td, 'uuid')
            if 'thread' in td:
                th = one(td, 'thread')
                tracks[uuid] = ('thread', one(th, 'pid'), one(th, 'tid'), one(th, 'thread_name', ''))
            elif 'process' in td:
                pr = one(td, 'process')
                tracks[uuid] = ('process', one(pr, 'pid'), one(pr, 'process_name', ''))
            elif 'counter' in td:
                tracks[uuid] = ('counter', one(td, 'name'))
            continue
        seq = one(pkt, 'trusted_packet_sequence_id')
        if seq is None:
            continue
        st = seq_state.setdefault(seq, {'names': {}, 'track': None, 'delta': False, 'last': 0})
        if one(pkt, 'sequence_flags', 0) & 1:
            st['names'] = {}
        defaults = one(pkt, 'trace_packet_defaults')
        if defaults:
            clock = one(defaults, 'timestamp_clock_id')
            ted = one(defaults, 'track_event_defaults')
            st['track'] = one(ted, 'track_uuid') if ted else None
            st['delta'] = clock == 64
        snap = one(pkt, 'clock_snapshot')
        if snap:
            for clk in snap['clocks']:
                if one(clk, 'clock_id') == 64:
                    assert one(clk, 'is_incremental'), 'clock 64 must be incremental'
                    st['last'] = one(clk, 'timestamp')
        interned = one(pkt, 'interned_data')
        if interned:
            for n in interned.get('event_names', []):
                st['names'][one(n, 'iid')] = one(n, 'name')
        ev = one(pkt, 'track_event')
        if not ev:
            continue
        ts = one(pkt, 'timestamp')
        ts = st['last'] + ts if st['delta'] else ts
        st['last'] = ts
        track = one(ev, 'track_uuid', st['track'])
        kind = one(ev, 'type')
        name = one(ev, 'name') or st['names'].get(one(ev, 'name_iid'))
        if kind == 'TYPE_COUNTER':
            counters.append((track, ts, one(ev, 'counter_value')))
            continue
        tid = tracks[track][2]
        stack = stacks.setdefault(tid, [])
        if kind == 'TYPE_SLICE_BEGIN':
            stack.append((name, ts, len(stack)))
        elif kind == 'TYPE_SLICE_END':
            bname, bts, depth = stack.pop()
            slices.append((tid, bname, bts, ts - bts, depth))
        elif kind == 'TYPE_INSTANT':
            slices.append((tid, name, ts, 0, len(stack)))
            for fid in ev.get('flow_ids', []):
                flow_points.append(('out', fid, tid, ts))
            for fid in ev.get('terminating_flow_ids', []):
                flow_points.append(('in', fid, tid, ts))
    for tid, stack in stacks.items():
        assert not stack, f'tid {tid}: slices left open: {stack}'
    return tracks, slices, counters, flow_points


def from_json(events, base_ns):
    """The same content from the JSON (ts in us with three decimals, rebased)."""
    ns = lambda us: base_ns + round(us * 1000)
    slices, counters, flows = [], [], []
    threads = {}
    for e in events:
        if e['ph'] == 'X':
            slices.append((e['tid'], e['name'], ns(e['ts']), round(e['dur'] * 1000)))
        elif e['ph'] == 'i':
            slices.append((e['tid'], e['name'], ns(e['ts']), 0))
        elif e['ph'] == 'C':
            counters.append((e['name'], ns(e['ts']), e['args']['value']))
        elif e['ph'] in 'sf':
            flows.append(('out' if e['ph'] == 's' else 'in', int(e['id'], 16), e['tid'], ns(e['ts'])))
        elif e['ph'] == 'M' and e['name'] == 'thread_name':
            threads[e['tid']] = e['args']['name']
    return slices, counters, flows, threads


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    trace, schema, json_path = sys.argv[1:]
    protoc = shutil.which('protoc')
    if not protoc:
        print('skip: protoc is not installed (Debian: protobuf-compiler)')
        return 77
    with open(trace, 'rb') as f:
        out = subprocess.run([protoc, '--decode=perfetto.protos.Trace', '-I', schema.rsplit('/', 1)[0],
                              schema], stdin=f, capture_output=True)
    if out.returncode != 0 or out.stderr:
        print(f'FAIL protoc: {out.stderr.decode()}')
        return 1
    packets = parse_text_format(out.stdout.decode('utf-8'))['packet']
    tracks, slices, counters, flows = rebuild(packets)
    with open(json_path) as f:
        doc = json.load(f)
    j_slices, j_counters, j_flows, j_threads = from_json(doc['traceEvents'],
                                                         doc['otherData']['start_monotonic_ns'])
    problems = []
    got = sorted(s[:4] for s in slices)
    if got != sorted(j_slices):
        problems.append(f'slices differ:\n  perfetto {got}\n  json     {sorted(j_slices)}')
    counter_names = sorted(t[1] for t in tracks.values() if t[0] == 'counter')
    if sorted(c[1:] for c in counters) != sorted(c[1:] for c in j_counters) or \
            counter_names != sorted(set(c[0] for c in j_counters)):
        problems.append(f'counters differ: {counter_names} {counters} vs {j_counters}')
    if sorted(flows) != sorted(j_flows):
        problems.append(f'flows differ:\n  perfetto {sorted(flows)}\n  json     {sorted(j_flows)}')
    names = {t[2]: t[3] for t in tracks.values() if t[0] == 'thread'}
    if names != j_threads:
        problems.append(f'thread names differ: {names} vs {j_threads}')
    depth = {}
    for tid, name, _, _, d in slices:
        depth.setdefault(tid, []).append(f'{name} {d}')
    print(f'perfetto: {len(packets)} packets, {len(slices)} slices and instants on {len(names)} '
          f'threads, {len(counters)} counter samples, {len(flows)} flow ends')
    for tid, lst in sorted(depth.items()):
        print(f'  tid {tid}: ' + ', '.join(lst[:12]))
    if problems:
        print('\n'.join(f'FAIL {p}' for p in problems))
        return 1
    print('ok: the protobuf holds the same slices, counters, flows and names as the JSON')
    return 0


if __name__ == '__main__':
    sys.exit(main())
