#!/usr/bin/env python3
"""Checks a Perfetto protobuf trace from `ticktrace convert` against the JSON of the
same raw file, offline: decodes the protobuf with protoc and the project's schema
(tools/perfetto_trace.proto), and loads both the way Perfetto's trace processor does
(src/trace_processor/importers/{proto,json}, common/slice_tracker.cc,
flow_tracker.cc, util/clock_synchronizer.cc): events sorted by time (JSON: at one
time, complete events longest first, then the rest in file order), slices nested on
a stack of at most 512, an instant and a slice that end where another event begins
closed before it, flows bound to the slice on top (JSON: by id, category and name
over the whole trace, never started twice; protobuf: flow_ids and
terminating_flow_ids), clock snapshots that must not go backwards. Machines
(TracePacket.machine_id; importers/proto/proto_trace_reader.cc, common/clock_tracker.cc):
each machine's sequences, tracks and snapshots its own, an event on a track its
machine did not describe an error, a machine's times brought onto the first's through
its REALTIME (BOOTTIME without one), one without a snapshot an error. It requires
what both give to be the same (slices with their depth and duration, their
arguments, arrows, counters, thread names) and neither to have anything Perfetto
counts as an error. Thread states: the protobuf's ftrace sched_switch events (BOOTTIME,
moved to MONOTONIC by the clock snapshot), each CPU's in an order Perfetto accepts,
as trace_processor's thread_state table holds them, against the JSON's states tracks
(slices "Running", "Preempted", "Blocked" on a track tid | 2^30): the same spans but
for what the converter's synthetic switches change (thread_states.py).

    check-perfetto.py TRACE.pftrace SCHEMA.proto TRACE.json [--flows N]

Packets deflated in compressed_packets (the default above 1 MiB) are inflated first.
--flows N: exactly N arrows. Exit status: 0 same content, 1 a difference, an error
or a decoding failure, 77 no protoc."""
import json
import shutil
import subprocess
import sys
import zlib
from collections import Counter

import thread_states

MAX_DEPTH = 512  # SliceTracker::kMaxDepth
# JSON arguments that the protobuf has no annotation for: the source location (its
# own field there), and the flow ids of the JSON's flow slices (flow_ids there).
JSON_ONLY_ARGS = ('src', 'id')
GLOBAL_CLOCKS = {1: 'REALTIME', 3: 'MONOTONIC', 6: 'BOOTTIME'}


def varint(data, at):
    """The varint at `at` and where it ends."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7f) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def fields(data):
    """A message's fields: (number, wire type, start of the field, its payload)."""
    at = 0
    while at < len(data):
        start = at
        key, at = varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, at = varint(data, at)
            yield number, wire, start, None, at
        elif wire == 1:
            at += 8
            yield number, wire, start, None, at
        elif wire == 5:
            at += 4
            yield number, wire, start, None, at
        elif wire == 2:
            size, at = varint(data, at)
            yield number, wire, start, data[at:at + size], at + size
            at += size
        else:
            raise ValueError(f'wire type {wire} at offset {start}')


def inflated(trace):
    """The trace with every TracePacket.compressed_packets (field 50: a Trace of packets,
    deflated in zlib's format, as trace_processor reads it) put in its packet's place."""
    out = bytearray()
    for number, _, start, payload, end in fields(trace):
        compressed = None
        if number == 1 and payload is not None:
            compressed = [p for n, w, _, p, _ in fields(payload) if n == 50 and w == 2]
        if compressed:
            for block in compressed:
                out += inflated(zlib.decompress(block))
        else:
            out += trace[start:end]
    return bytes(out)


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


class Importer:
    """What Perfetto's slice and flow trackers make of events, track by track."""

    def __init__(self):
        self.stacks = {}    # track -> open slices, innermost last
        self.slices = []    # [tid, name, ts, dur (None: open), depth]
        self.arrows = []    # (slice out, slice in)
        self.args = Counter()  # (tid, name, ts, key, value) of each slice's arguments
        self.errors = Counter()
        self.machines = {}  # protobuf: machine id -> its name

    def add_args(self, s, pairs):
        for key, value in pairs:
            if s is not None:
                self.args[(s[0], s[1], s[2], key, value)] += 1

    def close_stack(self, track, ts, dur):
        """SliceTracker::MaybeCloseStack: pops what ended before ts, or at ts unless
        both are instants; a complete slice that would straddle its parent's end is
        an error."""
        stack = self.stacks.setdefault(track, [])
        pending_inside = False
        for i in range(len(stack) - 1, -1, -1):
            s = stack[i]
            if s[3] is None:
                pending_inside = True
                continue
            end = s[2] + s[3]
            if pending_inside:
                if ts > end:
                    self.errors['misplaced_end_event'] += 1
                    del stack[i:]
                    pending_inside = False
                continue
            if end < ts or (end == ts and not (s[3] == 0 and dur == 0)):
                del stack[i:]
                continue
            if dur is not None and ts < end < ts + dur:
                self.errors['slice_overlapping_complete_event'] += 1

    def begin(self, track, tid, name, ts, dur):
        """A slice (dur None: open until end) or an instant (dur 0); it or None."""
        self.close_stack(track, ts, dur)
        stack = self.stacks[track]
        if len(stack) >= MAX_DEPTH:
            self.errors['slice_max_depth_exceeded'] += 1
            return None
        s = [tid, name, ts, dur, len(stack)]
        stack.append(s)
        self.slices.append(s)
        return s

    def end(self, track, ts):
        self.close_stack(track, ts, None)
        stack = self.stacks[track]
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][3] is None:
                s = stack[i]
                s[3] = ts - s[2]
                if i == len(stack) - 1:
                    stack.pop()
                return s
        self.errors['slice_end_without_begin'] += 1
        return None

    def top(self, track):
        stack = self.stacks.get(track)
        if not stack:
            self.errors['flow_no_enclosing_slice'] += 1
            return None
        return stack[-1]

    def summary(self):
        return (Counter(tuple(s) for s in self.slices),
                Counter((tuple(a[:3] + a[4:]), tuple(b[:3] + b[4:])) for a, b in self.arrows))


def load_protobuf(packets):
    """The protobuf as trace_processor's proto importer loads it."""
    tracks = {}      # (machine, uuid) -> ('thread', pid, tid, name) | ('process', ...) | ('counter', name)
    seqs = {}        # (machine, sequence id) -> {'track', 'delta', 'last', 'names'}
    snapshots = {}   # machine -> [{clock id: ts}] of global clocks, in file order
    events = []      # (ts, file order, (machine, track), event, names)
    switches = []    # (BOOTTIME ts, (machine, cpu), sched_switch)
    machines = {0: None}  # machine id -> its name (SystemInfo.machine_name)
    for order, pkt in enumerate(packets):
        machine = one(pkt, 'machine_id', 0)
        machines.setdefault(machine, None)
        info = one(pkt, 'system_info')
        if info:
            machines[machine] = one(info, 'machine_name')
        bundle = one(pkt, 'ftrace_events')
        if bundle:
            for fe in bundle.get('event', []):
                switches.append((one(fe, 'timestamp'), (machine, one(bundle, 'cpu')),
                                 one(fe, 'sched_switch')))
            continue
        td = one(pkt, 'track_descriptor')
        if td:
            uuid = (machine, one(td, 'uuid'))
            if 'thread' in td:
                th = one(td, 'thread')
                tracks[uuid] = ('thread', one(th, 'pid'), one(th, 'tid'), one(th, 'thread_name', ''))
            elif 'process' in td:
                pr = one(td, 'process')
                tracks[uuid] = ('process', one(pr, 'pid'), one(pr, 'process_name', ''))
            elif 'counter' in td:
                tracks[uuid] = ('counter', one(td, 'name'))
            continue
        snap = one(pkt, 'clock_snapshot')
        seq = one(pkt, 'trusted_packet_sequence_id')
        if snap and seq is None:
            snapshots.setdefault(machine, []).append(
                {one(c, 'clock_id'): one(c, 'timestamp') for c in snap['clocks']})
        if seq is None:
            continue
        st = seqs.setdefault((machine, seq), {'names': {}, 'track': None, 'delta': False, 'last': 0})
        if one(pkt, 'sequence_flags', 0) & 1:
            st['names'] = {}
        defaults = one(pkt, 'trace_packet_defaults')
        if defaults:
            ted = one(defaults, 'track_event_defaults')
            st['track'] = one(ted, 'track_uuid') if ted else None
            st['delta'] = one(defaults, 'timestamp_clock_id') == 64
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
        name = one(ev, 'name')
        if name is None:
            name = st['names'].get(one(ev, 'name_iid'))
        events.append((ts, order, (machine, one(ev, 'track_uuid', st['track'])), ev, name))
    errors = Counter()
    # ClockSynchronizer: a clock that goes backwards between snapshots of the same
    # clocks breaks conversions; snapshots with different offsets move events.
    for machine, snaps in snapshots.items():
        for a, b in zip(snaps, snaps[1:]):
            for clock in set(a) & set(b):
                if b[clock] < a[clock]:
                    errors[f'invalid_clock_snapshots ({GLOBAL_CLOCKS.get(clock, clock)} backwards)'] += 1
        offsets = {tuple(s[c] - s[3] for c in sorted(s)) for s in snaps if 3 in s}
        if len(offsets) > 1:
            errors[f'clock snapshots with {len(offsets)} different offsets (events move)'] += 1
    # Another machine's MONOTONIC reaches the first's through REALTIME, which
    # trace_processor takes as one clock on every machine (BOOTTIME without it).
    shift = {}
    for machine in set(machines) - {0}:
        own, first = (snapshots.get(m, [{}])[0] for m in (machine, 0))
        via = 1 if 1 in own and 1 in first else 6
        if 3 not in own or via not in own or 3 not in first or via not in first:
            errors[f'clock_sync_failure: machine {machine} has no snapshot relating it'] += 1
            continue
        shift[machine] = (own[via] - own[3]) - (first[via] - first[3])
    for i, (ts, order, track, ev, name) in enumerate(events):
        events[i] = (ts + shift.get(track[0], 0), order, track, ev, name)
    switches = [(ts + shift.get(cpu[0], 0), cpu, sw) for ts, cpu, sw in switches]
    # trace_processor drops events before 0 (trace_sorter_negative_timestamp_dropped)
    negative = sum(1 for ts, *_ in events if ts < 0) + sum(1 for ts, *_ in switches if ts < 0)
    if negative:
        errors['negative timestamps (trace_processor drops them)'] += negative
    imp = Importer()
    imp.machines = machines
    imp.errors.update(errors)
    counters = []
    active = {}  # flow id -> slice
    for ts, _, track, ev, name in sorted(events, key=lambda e: (e[0], e[1])):
        if track not in tracks:
            imp.errors[f'an event on track {track[1]}, which machine {track[0]} did not describe'] += 1
            continue
        kind = one(ev, 'type')
        if kind == 'TYPE_COUNTER':
            counters.append((tracks[track][1], ts, one(ev, 'counter_value')))
            continue
        tid = tracks[track][2]
        if kind == 'TYPE_SLICE_BEGIN':
            imp.add_args(imp.begin(track, tid, name, ts, None), annotations(ev))
        elif kind == 'TYPE_SLICE_END':
            # arguments at the end (a scope's description and value) join the slice
            imp.add_args(imp.end(track, ts), annotations(ev))
        elif kind == 'TYPE_INSTANT':
            s = imp.begin(track, tid, name, ts, 0)
            if s is None:
                continue
            imp.add_args(s, annotations(ev))
            for fid in ev.get('flow_ids', []):
                if fid in active:
                    imp.arrows.append((active[fid], s))
                active[fid] = s
            for fid in ev.get('terminating_flow_ids', []):
                if fid in active:
                    imp.arrows.append((active.pop(fid), s))
    # (a main thread that recorded nothing, named after its process: JSON has no such thread)
    processes = {t[1]: t[2] for t in tracks.values() if t[0] == 'process'}
    used = {e[2] for e in events}
    threads = {t[2]: t[3] for uuid, t in tracks.items() if t[0] == 'thread' and
               not (t[2] == t[1] and t[3] == processes.get(t[1]) and uuid not in used)}
    states = thread_state(imp, threads, switches, snapshots.get(0, []))
    return imp, counters, threads, states


# sched_switch's prev_state as Perfetto reads it of a trace that names no kernel (the
# bits before Linux 4.14): what the converter writes.
PREV_STATE = {0: 'R', 1: 'S', 0x10: 'X', 0x402: 'I'}


def thread_state(imp, threads, switches, snapshots):
    """The rows trace_processor's thread_state table makes of the sched_switch events
    (ThreadStateTracker), {tid: [(ts, end or None, state, cpu)]}, on MONOTONIC: after a
    switch in, Running on the bundle's CPU; after a switch out, prev_state's. A switch
    whose prev_pid is not the one before's next_pid on its CPU is an error for Perfetto
    (mismatched_sched_switch_tids), and so is, here, one that switches out a thread not
    running (Perfetto leaves the row before it unended)."""
    snap = snapshots[0] if snapshots else {}
    boot_to_mono = snap.get(6, 0) - snap.get(3, 0)
    rows, on = {}, {}
    for ts, (machine, cpu), sw in sorted(switches, key=lambda s: s[0]):
        ts -= boot_to_mono
        prev, nxt = one(sw, 'prev_pid'), one(sw, 'next_pid')
        if (machine, cpu) in on and on[(machine, cpu)] != prev:
            imp.errors['mismatched_sched_switch_tids'] += 1
        on[(machine, cpu)] = nxt
        for tid in (prev, nxt):
            if tid and tid not in threads:
                imp.errors[f'sched_switch of tid {tid}, a thread the trace does not have'] += 1
        if prev:
            state = PREV_STATE.get(one(sw, 'prev_state'))
            if state is None:
                imp.errors['task_state_invalid'] += 1
            mine = rows.setdefault(prev, [])
            if not mine or mine[-1][2] != 'Running':
                imp.errors[f'switch out of tid {prev}, which is not running'] += 1
            else:
                mine[-1][1] = ts
            mine.append([ts, None, state, None])
        if nxt:
            mine = rows.setdefault(nxt, [])
            if mine:
                mine[-1][1] = ts
            mine.append([ts, None, 'Running', cpu])
    return {tid: [tuple(r) for r in spans] for tid, spans in rows.items()}


def json_states(events, base_ns):
    """The JSON's states tracks, {tid of the thread: [(ts, dur, name, cpu)]} (ns)."""
    tracks = {e['tid'] for e in events if e['ph'] == 'M' and e['name'] == 'thread_name'
              and thread_states.is_states_track(e['tid'], e['args']['name'])}
    said = {}
    for e in events:
        if e['ph'] == 'X' and e['tid'] in tracks:
            said.setdefault(e['tid'] & ~thread_states.STATES_TID_BIT, []).append(
                (base_ns + round(e['ts'] * 1000), round(e['dur'] * 1000), e['name'],
                 e.get('args', {}).get('cpu')))
    return tracks, said


def annotations(ev):
    """A track event's debug annotations as (name, value) pairs."""
    pairs = []
    for da in ev.get('debug_annotations', []):
        for field in ('string_value', 'int_value', 'uint_value', 'bool_value'):
            if field in da:
                pairs.append((one(da, 'name'), one(da, field)))
    return pairs


def json_args(e):
    """An event's args as the protobuf's annotations would be (integers above 2^53
    are hexadecimal strings in JSON)."""
    pairs = []
    for key, value in e.get('args', {}).items():
        if key in JSON_ONLY_ARGS:
            continue
        if key != 'description' and isinstance(value, str) and value.startswith('0x'):
            value = int(value, 16)
        pairs.append((key, value))
    return pairs


def load_json(events, base_ns):
    """The JSON as trace_processor's JSON importer loads it (ts in us, rebased)."""
    ns = lambda us: base_ns + round(us * 1000)
    big = 1 << 62

    def key(item):
        order, e = item
        ts = ns(e['ts']) if 'ts' in e else 0
        return ts, (big - round(e['dur'] * 1000) if e['ph'] == 'X' else big), order

    imp = Importer()
    counters, threads, active = [], {}, {}
    for _, e in sorted(enumerate(events), key=key):
        ph = e['ph']
        track = (e.get('pid'), e.get('tid'))
        name = e.get('name') or '[No name]'
        if ph == 'X':
            imp.add_args(imp.begin(track, e['tid'], name, ns(e['ts']), round(e['dur'] * 1000)),
                         json_args(e))
        elif ph == 'i':
            imp.add_args(imp.begin(track, e['tid'], name, ns(e['ts']), 0), json_args(e))
        elif ph == 'C':
            counters.append((e['name'], ns(e['ts']), e['args']['value']))
        elif ph == 's':
            s = imp.top(track)
            flow = (int(e['id'], 16), e.get('cat'), e.get('name'))
            if s is not None and flow in active:
                imp.errors['flow_duplicate_id'] += 1
            elif s is not None:
                active[flow] = s
        elif ph == 'f':
            s = imp.top(track)
            flow = (int(e['id'], 16), e.get('cat'), e.get('name'))
            if s is not None and flow in active:
                imp.arrows.append((active[flow], s))
        elif ph == 'M' and e['name'] == 'thread_name':
            threads[e['tid']] = e['args']['name']
    return imp, counters, threads


def main():
    args = sys.argv[1:]
    want_flows = None
    if '--flows' in args:
        at = args.index('--flows')
        want_flows = int(args[at + 1])
        del args[at:at + 2]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    trace, schema, json_path = args
    protoc = shutil.which('protoc')
    if not protoc:
        print('skip: protoc is not installed (Debian: protobuf-compiler)')
        return 77
    with open(trace, 'rb') as f:
        data = inflated(f.read())
    out = subprocess.run([protoc, '--decode=perfetto.protos.Trace', '-I', schema.rsplit('/', 1)[0],
                          schema], input=data, capture_output=True)
    if out.returncode != 0 or out.stderr:
        print(f'FAIL protoc: {out.stderr.decode()}')
        return 1
    packets = parse_text_format(out.stdout.decode('utf-8'))['packet']
    pb, pb_counters, pb_threads, pb_states = load_protobuf(packets)
    with open(json_path, encoding='utf-8') as f:
        doc = json.load(f)
    # (negative where a machine is placed before the first's boot: the .pftrace's clock
    # is moved up to 0 then, no time below it)
    base_ns = max(doc['otherData']['start_monotonic_ns'], 0)
    states_tracks, js_states = json_states(doc['traceEvents'], base_ns)
    js, js_counters, js_threads = load_json(
        [e for e in doc['traceEvents'] if e.get('tid') not in states_tracks], base_ns)
    problems = [f'thread states: {p}' for p in thread_states.compare(js_states, pb_states)]
    for fmt, imp in (('protobuf', pb), ('json', js)):
        for what, n in sorted(imp.errors.items()):
            problems.append(f'{fmt}: {what}: {n}')
        open_slices = [s for s in imp.slices if s[3] is None]
        if open_slices:
            problems.append(f'{fmt}: {len(open_slices)} slices never end: {open_slices[:3]}')
    pb_slices, pb_arrows = pb.summary()
    js_slices, js_arrows = js.summary()
    if pb_slices != js_slices:
        problems.append('slices (tid, name, ts, dur, depth) differ:\n  protobuf only '
                        f'{sorted((pb_slices - js_slices).elements(), key=str)[:8]}\n  json only     '
                        f'{sorted((js_slices - pb_slices).elements(), key=str)[:8]}')
    if pb.args != js.args:
        problems.append('args (tid, name, ts, key, value) differ:\n  protobuf only '
                        f'{sorted((pb.args - js.args).elements(), key=str)[:8]}\n  json only     '
                        f'{sorted((js.args - pb.args).elements(), key=str)[:8]}')
    if pb_arrows != js_arrows:
        problems.append('arrows differ:\n  protobuf only '
                        f'{sorted((pb_arrows - js_arrows).elements())[:6]}\n  json only     '
                        f'{sorted((js_arrows - pb_arrows).elements())[:6]}')
    if want_flows is not None and sum(js_arrows.values()) != want_flows:
        problems.append(f'{sum(js_arrows.values())} arrows, expected {want_flows}')
    if sorted(pb_counters) != sorted(js_counters):
        problems.append(f'counters differ: {sorted(pb_counters)[:6]} vs {sorted(js_counters)[:6]}')
    if pb_threads != js_threads:
        problems.append(f'thread names differ: {pb_threads} vs {js_threads}')
    depth = {}
    for tid, name, _, _, d in sorted(pb.slices, key=lambda s: (s[0], s[2], s[4])):
        depth.setdefault(tid, []).append(f'{name} {d}')
    print(f'perfetto: {len(packets)} packets, {len(pb.slices)} slices and instants on '
          f'{len(pb_threads)} threads, {len(pb_counters)} counter samples, '
          f'{sum(pb_arrows.values())} arrows')
    if len(pb.machines) > 1:
        print('machines: ' + ', '.join(f'{k} {v}' for k, v in sorted(pb.machines.items())))
    for tid, lst in sorted(depth.items())[:8]:
        print(f'  tid {tid}: ' + ', '.join(lst[:12]))
    if problems:
        print('\n'.join(f'FAIL {p}' for p in problems))
        return 1
    print('ok: the protobuf holds the same slices, args, arrows, counters and names as the JSON')
    return 0


if __name__ == '__main__':
    sys.exit(main())
