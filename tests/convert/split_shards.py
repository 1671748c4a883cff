#!/usr/bin/env python3
"""convert --split (issue 33 item 4): a run cut into time-contiguous shards of at most N
slices, each a whole trace that loads alone (check-perfetto.py: the .pftrace shard
against the JSON shard), every thread named in each, the shards' slices those of the
whole run, once each (a scope open across every boundary belongs to the first shard),
and the threads' states (a run whose threads sleep all along) cut at each shard's
edges, adding up to the whole run's, as --from/--to cut them to their window;
bad --split values refused; --force over an earlier split into more shards removes
those past the new last; a damaged input, or a shard that cannot be written, leaves
no shard behind; a trace past what the Perfetto UI loads, converted whole, says so,
and `open` serves its first shard, or the one named (--shard K), saying which.

Where Perfetto's trace_processor_shell is, tools/query_shards.py (the documented
example of one query over all shards) counts and times the slices of every name over
the shards as the whole run has them.

  split_shards.py SHARDS_PROG CHECK_PERFETTO SCHEMA QUERY_SHARDS SANITIZE   (TT_TEST_TOOL: the command;
  SANITIZE: meson's b_sanitize, none or a sanitizer: no memory bound under one)"""
import csv
import glob
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

tool = os.environ['TT_TEST_TOOL']
prog, check_perfetto, schema, query_shards, sanitize = sys.argv[1:6]
THREADS, SCOPES, SPLIT = 3, 10000, 2500  # (12 shards: the checks per shard, halved, as many)
UI_SLICES = 3000000  # what the converter warns above, without --split


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def run(args, **kw):
    return subprocess.run([tool] + args, capture_output=True, text=True, timeout=240, **kw)


def record(d, name, threads, scopes, nap=0, marks=1000, stagger=0):
    """All of it: each thread's buffer holds its records (a stream's writes may fall behind
    on a loaded machine, and drop). An instant every `marks` steps; a nap every `nap`;
    with `stagger`, worker-N takes scopes >> N steps (the threads exit one by one)."""
    ttr = os.path.join(d, name)
    subprocess.run([prog, str(threads), str(scopes), str(nap), str(marks), str(stagger)], check=True,
                   timeout=120,
                   env=dict(os.environ, TICKTRACE_OUT=ttr, TICKTRACE_MODE='stop',
                            TICKTRACE_BUFFER=str(2 * scopes + scopes // marks + 8192)))
    return ttr


def load_json(path):
    d = json.load(open(path))
    return d['traceEvents'] if isinstance(d, dict) else d


def scopes_of(events):
    """The run's scopes (not the thread states' slices, cat "sched"): (tid, name, ts, dur)."""
    return [(e['tid'], e['name'], e['ts'], e['dur']) for e in events
            if e.get('ph') == 'X' and e.get('cat') != 'sched']


def thread_names(events):
    return {e['args']['name'] for e in events if e.get('ph') == 'M' and e['name'] == 'thread_name'}


def shards_named(d, stem, ext='pftrace'):
    return sorted(glob.glob(os.path.join(d, stem + '.[0-9]*.' + ext)))  # (ticktrace(1)'s glob)


def shards(d, ext):
    return shards_named(d, 'out', ext)


def check_split(d, ttr):
    whole = os.path.join(d, 'whole.json')
    r = run(['convert', '-q', ttr, '-o', whole])
    if r.returncode != 0:
        fail('whole conversion: ' + r.stderr)
    whole_events = load_json(whole)
    whole_scopes = scopes_of(whole_events)
    names = thread_names(whole_events)
    want = {'main'} | {'worker-%d' % i for i in range(THREADS)}
    if not want <= names:
        fail('the whole run names %s, not %s' % (sorted(names), sorted(want)))

    for ext in ('pftrace', 'json'):
        r = run(['convert', ttr, '--split', str(SPLIT), '-o', os.path.join(d, 'out.' + ext)])
        if r.returncode != 0:
            fail('--split to %s: status %d: %s' % (ext, r.returncode, r.stderr))
        if 'shards' not in r.stderr:
            fail('--split: no summary of the shards: ' + r.stderr)
    pf, js = shards(d, 'pftrace'), shards(d, 'json')
    expect = (len(whole_scopes) + SPLIT - 1) // SPLIT
    if len(pf) != len(js) or len(js) < expect or len(js) < 10:
        fail('%d .pftrace and %d JSON shards for %d slices of at most %d (at least %d)' %
             (len(pf), len(js), len(whole_scopes), SPLIT, expect))

    all_scopes, last_begin, pf_slices = [], None, 0
    for p, j in zip(pf, js):
        events = load_json(j)
        mine = scopes_of(events)
        if not mine or len(tp_slices(events)) > SPLIT:
            fail('%s: %d slices as trace_processor counts them (%d scopes), not 1 to %d'
                 % (j, len(tp_slices(events)), len(mine), SPLIT))
        if not want <= thread_names(events):
            fail('%s: threads named %s, not all of %s' % (j, sorted(thread_names(events)), sorted(want)))
        first = min(s[2] for s in mine)
        if last_begin is not None and first <= last_begin:
            fail('%s: its first slice begins at %s us, not after the last of the shard before (%s us)'
                 % (j, first, last_begin))
        last_begin = max(s[2] for s in mine)
        all_scopes += mine
        c = subprocess.run([sys.executable, check_perfetto, p, schema, j], capture_output=True,
                           text=True, timeout=240)
        if c.returncode == 77:
            print('SKIP: ' + c.stdout + c.stderr)
            sys.exit(77)
        if c.returncode != 0:
            fail('%s does not load as its JSON shard does: %s%s' % (p, c.stdout[-2000:], c.stderr))
        m = re.search(r'(\d+) slices and instants', c.stdout)
        pf_slices += int(m.group(1)) if m else fail('check-perfetto: no count: ' + c.stdout)
    if sorted(all_scopes) != sorted(whole_scopes):
        fail('the shards hold %d slices (%d distinct), the whole run %d' %
             (len(all_scopes), len(set(all_scopes)), len(whole_scopes)))
    whole_points = sum(1 for e in whole_events if e.get('ph') == 'i' and e.get('cat') != 'sched')
    if pf_slices != len(whole_scopes) + whole_points:
        fail('the .pftrace shards hold %d slices and instants, the whole run %d' %
             (pf_slices, len(whole_scopes) + whole_points))
    print('%d shards of at most %d slices: each loads, names every thread, %d slices in all, once each'
          % (len(js), SPLIT, len(all_scopes)))
    check_query(pf, whole_events)


def tp_slices(events):
    """What trace_processor's slice table holds of a JSON trace: its complete slices
    (the thread states' too) and instants."""
    return [e for e in events if e.get('ph') in ('X', 'i')]


def trace_processor():
    tp = os.environ.get('TICKTRACE_TRACE_PROCESSOR') or \
        os.path.expanduser('~/.cache/ticktrace/trace_processor_shell')
    return tp if os.access(tp, os.X_OK) else None


def tp_counts(tp, files):
    """Each file's rows in trace_processor's slice table (query_shards.py, no --sum)."""
    c = subprocess.run([sys.executable, query_shards, '--trace-processor', tp,
                        'select count(*) as n from slice'] + files,
                       capture_output=True, text=True, timeout=600)
    rows = list(csv.reader(io.StringIO(c.stdout)))[1:]
    if c.returncode != 0 or len(rows) != len(files):
        fail('query_shards.py: status %d, %d rows for %d files: %s'
             % (c.returncode, len(rows), len(files), c.stderr))
    return [int(r[-1]) for r in rows]


def check_counted(d):
    """--split N counts slices as trace_processor does (instants are slices there, of no
    length): a run of as many instants as scopes, split, has shards of at most N rows
    in trace_processor's slice table, .pftrace and JSON alike (counted in the JSON
    where trace_processor_shell is not), as many shards as those rows need, and
    all the run's. Before, N counted scopes only: shards of twice N."""
    ttr = record(d, 'points.ttr', THREADS, SCOPES // 4, marks=1)
    sub = os.path.join(d, 'points')
    os.mkdir(sub)
    r = run(['convert', '-q', ttr, '-o', os.path.join(sub, 'whole.json')])
    r2 = run(['convert', '-q', ttr, '-o', os.path.join(sub, 'whole.pftrace')])
    if r.returncode or r2.returncode:
        fail('the run of instants: %s%s' % (r.stderr, r2.stderr))
    whole_events = load_json(os.path.join(sub, 'whole.json'))
    whole = len(tp_slices(whole_events))
    points = len(scopes_of(whole_events)) + sum(1 for e in whole_events if e.get('ph') == 'i')
    for ext in ('json', 'pftrace'):
        r = run(['convert', '-q', ttr, '--split', str(SPLIT), '-o', os.path.join(sub, 'p.' + ext)])
        if r.returncode:
            fail('--split of the run of instants to %s: %s' % (ext, r.stderr))
    js, pf = shards_named(sub, 'p', 'json'), shards_named(sub, 'p', 'pftrace')
    # (the thread states cut at a shard's start are a slice more there)
    counted = [len(tp_slices(load_json(j))) for j in js]
    if max(counted) > SPLIT or sum(counted) < whole or len(js) < (whole + SPLIT - 1) // SPLIT:
        fail('--split %d of %d slices, instants and states: JSON shards of %s'
             % (SPLIT, whole, counted))
    print('--split %d of a run of %d slices and instants: %d JSON shards of %d to %d'
          % (SPLIT, whole, len(js), min(counted), max(counted)))
    tp = trace_processor()
    if not tp:
        print('trace_processor\'s counts of the shards not checked: no trace_processor_shell')
        return
    got = tp_counts(tp, js)
    if got != counted:
        fail('trace_processor holds %s slices in the JSON shards, not %s' % (got, counted))
    got = tp_counts(tp, pf)
    want = tp_counts(tp, [os.path.join(sub, 'whole.pftrace')])[0]
    if max(got) > SPLIT or sum(got) != want or want != points:
        fail('--split %d: trace_processor holds %s slices in the .pftrace shards, %d in the '
             'whole .pftrace, which has %d slices and instants' % (SPLIT, got, want, points))
    print('trace_processor: the JSON shards\' slices as counted; %d .pftrace shards of %d to %d '
          'slices, %d in all, the whole run\'s' % (len(pf), min(got), max(got), want))


def check_query(pf, whole_events):
    """query_shards.py over the .pftrace shards: each name's slices (and instants, which
    trace_processor keeps as slices of no length), counted and timed, the whole run's."""
    tp = trace_processor()
    if not tp:
        print('query_shards.py not tried: no trace_processor_shell')
        return
    c = subprocess.run([sys.executable, query_shards, '--trace-processor', tp, '--sum', '1',
                        'select name, count(*) as calls, sum(dur) as total_ns from slice group by name']
                       + pf, capture_output=True, text=True, timeout=600)
    got = {r[0]: (int(r[1]), int(r[2])) for r in list(csv.reader(io.StringIO(c.stdout)))[1:]}
    want = {}
    for e in whole_events:
        if e.get('ph') in ('X', 'i') and e.get('cat') != 'sched':
            calls, total = want.get(e['name'], (0, 0))
            want[e['name']] = (calls + 1, total + round(e.get('dur', 0) * 1000))
    if c.returncode != 0 or got != want:
        fail('query_shards.py over %d shards: %s, the whole run %s: %s'
             % (len(pf), sorted(got.items()), sorted(want.items()), c.stderr))
    print('query_shards.py: one query over the %d shards, each name\'s calls and time the whole run\'s'
          % len(pf))


def states_of(events):
    """The thread states' slices (cat "sched"): [(tid, name, ts, dur)] in us."""
    return [(e['tid'], e['name'], e['ts'], e['dur']) for e in events
            if e.get('ph') == 'X' and e.get('cat') == 'sched']


def state_totals(states, lo=float('-inf'), hi=float('inf')):
    """Each (tid, state)'s time within [lo, hi), us."""
    totals = {}
    for tid, name, ts, dur in states:
        part = min(ts + dur, hi) - max(ts, lo)
        if part > 0:
            totals[(tid, name)] = totals.get((tid, name), 0) + part
    return totals


def same_totals(got, want, pieces, what):
    """Within the JSON's rounding: a thousandth of a us a piece."""
    worst = max(abs(got.get(k, 0) - want.get(k, 0)) for k in set(got) | set(want))
    if not want or worst > 0.002 * (pieces + 1):
        fail('%s: the states %s, the whole run\'s %s (off by up to %.3f us)' %
             (what, sorted(got.items())[:4], sorted(want.items())[:4], worst))


def check_states(d):
    """Threads that sleep every 200 steps: their states cross every shard's edge. Each
    shard holds the states of its own time only (cut at its edges: the next shard's
    states begin where its own end), and those of all shards add up to the whole run's;
    --from/--to cut them to the window, and --thread keeps its thread's only. Each
    carried every state of the run before."""
    ttr = record(d, 'naps.ttr', THREADS, SCOPES, nap=100)
    whole = os.path.join(d, 'naps.json')
    r = run(['convert', '-q', ttr, '-o', whole])
    if r.returncode != 0:
        fail('the run with naps: ' + r.stderr)
    all_states = states_of(load_json(whole))
    if len({s[0] for s in all_states}) < THREADS:
        skip = 'the kernel gave no thread states (perf_event_open refused?): %d states' % len(all_states)
        return skip
    for ext in ('json', 'pftrace'):
        r = run(['convert', '-q', ttr, '--split', str(SPLIT), '-o', os.path.join(d, 'naps.' + ext)])
        if r.returncode != 0:
            fail('--split of the run with naps: ' + r.stderr)
    js, pf = shards_named(d, 'naps', 'json'), shards_named(d, 'naps', 'pftrace')
    if len(js) < 10:
        fail('the run with naps in %d shards' % len(js))
    held, ends = [], {}
    for k, j in enumerate(js):
        events = load_json(j)
        mine = states_of(events)
        if len(tp_slices(events)) > SPLIT:
            fail('%s: %d slices as trace_processor counts them (%d thread states), more than %d'
                 % (j, len(tp_slices(events)), len(mine), SPLIT))
        for tid, name, ts, dur in mine:
            if ts < ends.get(tid, float('-inf')) - 0.001:
                fail('%s: a state of tid %d at %s us, before where the shard before\'s end (%s us)'
                     % (j, tid, ts, ends[tid]))
        for tid in {s[0] for s in mine}:
            ends[tid] = max(ts + dur for t, _, ts, dur in mine if t == tid)
        held += mine
        if k in (0, len(js) // 2, len(js) - 1):  # the .pftrace's states as the JSON's
            c = subprocess.run([sys.executable, check_perfetto, pf[k], schema, j], capture_output=True,
                               text=True, timeout=240)
            if c.returncode not in (0, 77):
                fail('%s does not load as its JSON shard does: %s%s' % (pf[k], c.stdout[-2000:], c.stderr))
    same_totals(state_totals(held), state_totals(all_states), len(js), 'the %d shards' % len(js))
    begin = min(s[2] for s in all_states)
    span = max(s[2] + s[3] for s in all_states) - begin
    lo, hi = int((begin + span * 0.3) * 1000), int((begin + span * 0.6) * 1000)
    window = os.path.join(d, 'window.json')
    r = run(['convert', '-q', ttr, '--from', '%dns' % lo, '--to', '%dns' % hi, '-o', window])
    if r.returncode != 0:
        fail('--from/--to: ' + r.stderr)
    kept = states_of(load_json(window))
    outside = [s for s in kept if s[2] < lo / 1000 - 0.001 or s[2] + s[3] > (hi + 1) / 1000 + 0.001]
    if outside:
        fail('--from %dns --to %dns: states outside the window: %s' % (lo, hi, outside[:4]))
    same_totals(state_totals(kept), state_totals(all_states, lo / 1000, (hi + 1) / 1000), 2,
                '--from/--to')
    one = os.path.join(d, 'one.json')
    r = run(['convert', '-q', ttr, '--thread', 'worker-1', '-o', one])
    events = load_json(one) if r.returncode == 0 else fail('--thread: ' + r.stderr)
    tid = {e['tid'] for e in events if e.get('ph') == 'X' and e.get('cat') != 'sched'}
    theirs = {s[0] for s in states_of(events)}
    if len(tid) != 1 or len(theirs) != 1 or 'worker-1 (states)' not in thread_names(events):
        fail('--thread worker-1: the states of tids %s, its slices\' %s' % (sorted(theirs), sorted(tid)))
    print('thread states: %d shards hold %d pieces of the run\'s %d, adding up to its; '
          '--from/--to keep %d, cut to the window; --thread those of its thread'
          % (len(js), len(held), len(all_states), len(kept)))
    return None


def tp_rows(tp, sql, files):
    """The query's rows on each file (query_shards.py, no --sum): [(file, row...)]."""
    c = subprocess.run([sys.executable, query_shards, '--trace-processor', tp, sql] + files,
                       capture_output=True, text=True, timeout=600)
    if c.returncode != 0:
        fail('query_shards.py: status %d: %s' % (c.returncode, c.stderr))
    return list(csv.reader(io.StringIO(c.stdout)))[1:]


def check_exited(d):
    """Threads that exit one after the other, their states split: in trace_processor, no
    shard shows a thread Running (or dying again) after it died, as the whole run has it
    (each shard showed every thread gone before its start Running from there until
    another came on its CPU, and dead again); and each shard holds at most N rows of
    slice and thread_state, the rows its edges add too (the run of no length before a
    state out of a CPU a shard begins with, a run cut at its end, a thread's last
    state and its death: before, every shard held a few more than N)."""
    tp = trace_processor()
    if not tp:
        print('the states of exited threads in shards not checked: no trace_processor_shell')
        return
    split = 2000
    ttr = record(d, 'exits.ttr', THREADS, 20000, nap=100, stagger=1)
    sub = os.path.join(d, 'exits')
    os.mkdir(sub)
    whole = os.path.join(sub, 'whole.pftrace')
    r = run(['convert', '-q', ttr, '-o', whole])
    r2 = run(['convert', '-q', ttr, '--split', str(split), '-o', os.path.join(sub, 'e.pftrace')])
    if r.returncode or r2.returncode:
        fail('the run whose threads exit one by one: %s%s' % (r.stderr, r2.stderr))
    pf = shards_named(sub, 'e')
    states = ('select t.name, s.ts, s.dur, s.state from thread_state s join thread t using(utid) '
              'where t.name like \'worker-%\' and s.state in (\'Running\', \'X\')')
    died = {row[1]: int(row[2]) for row in tp_rows(tp, states, [whole]) if row[4] == 'X'}
    if len(died) != THREADS:
        fail('the whole run: the deaths of %s, not of its %d workers' % (sorted(died), THREADS))
    deaths = {}
    for shard, name, ts, dur, state in tp_rows(tp, states, pf):
        if state == 'X':
            deaths[name] = deaths.get(name, []) + [(shard, int(ts))]
        elif int(ts) >= died[name]:
            fail('%s: %s Running at %s ns for %s ns, though it died at %d ns'
                 % (shard, name, ts, dur, died[name]))
    if sorted(deaths) != sorted(died) or any(len(deaths[n]) != 1 or deaths[n][0][1] != died[n]
                                             for n in died):
        fail('the shards\' deaths %s, the whole run\'s %s' % (deaths, died))
    rows = [int(row[1]) for row in tp_rows(tp, 'select (select count(*) from slice) + (select count(*) '
                                           'from thread_state join thread using(utid) where tid > 0) as n',
                                           pf)]
    if max(rows) > split or len(pf) < 10:
        fail('--split %d: %d shards holding %s rows of slice and thread_state' % (split, len(pf), rows))
    print('threads that exit one by one, split in %d shards: each dead once, where the whole run '
          'has it, never Running after; %d to %d rows of slice and thread_state a shard (of at most %d)'
          % (len(pf), min(rows), max(rows), split))


def check_resplit(d, ttr):
    """--force over an earlier split into more shards: the shards past the new last one
    go, or a glob of the shards reads the old run's tail as this one's."""
    before = shards(d, 'json')
    whole = len(scopes_of(load_json(os.path.join(d, 'whole.json'))))
    r = run(['convert', ttr, '--split', str(3 * SPLIT), '--force', '-o', os.path.join(d, 'out.json')])
    if r.returncode != 0:
        fail('--split again with --force: status %d: %s' % (r.returncode, r.stderr))
    after = shards(d, 'json')
    held = sum(len(scopes_of(load_json(j))) for j in after)
    if len(after) >= len(before) or held != whole:
        fail('a split into fewer shards over %d: %d shards holding %d slices, the run %d' %
             (len(before), len(after), held, whole))
    if 'removed %d shards' % (len(before) - len(after)) not in r.stderr:
        fail('the shards of the earlier split removed unsaid: ' + r.stderr)
    print('--force over a split into more shards: %d shards, the %d past them removed, said'
          % (len(after), len(before) - len(after)))


def in_time(named, what):
    """The shards named, in the order given, begin in time: each one's first row (of any
    trace_processor keeps: slices, instants, thread states) not before the one before's.
    Not its first scope: a shard may hold none (the states of the run's tail, after its
    last scope, in a shard of their own; 10-row shards at load held such)."""
    firsts = [min(e['ts'] for e in tp_slices(load_json(n))) for n in named]
    late = [k for k in range(1, len(firsts)) if firsts[k] < firsts[k - 1]]
    if late:
        k = late[0]
        fail('%s, sorted, is not in time: %s begins at %s us, %s before it at %s us'
             % (what, named[k], firsts[k], named[k - 1], firsts[k - 1]))


def check_names(d, ttr):
    """The shards' numbers have one width in a run, enough for the most shards it could
    make, so that a glob of them (ticktrace(1)'s OUT.[0-9]*.EXT) is the run's, sorted in
    time (past 9999 shards, they went from OUT.9999 to OUT.10000: the documented glob of
    four digits missed those, and sorted them among the others); the files of an
    earlier split of the same name that this one does not replace, holes between them
    too, are refused, or with --force removed (they were kept past a hole)."""
    sub = os.path.join(d, 'names')
    os.mkdir(sub)
    small = record(sub, 'small.ttr', 1, 2000, marks=1)  # ~6000 slices: 12000 shards of 10 at most
    r = run(['convert', '-q', small, '--split', '10', '-o', os.path.join(sub, 'n.json')])
    named = sorted(glob.glob(os.path.join(sub, 'n.[0-9]*.json')))
    widths = {len(os.path.basename(n)) - len('n..json') for n in named}
    if r.returncode or len(named) < 100 or widths != {5}:
        fail('--split 10 of a run that could make 12000 shards: status %d, %d shards, their numbers '
             'of %s digits (5 for all): %s' % (r.returncode, len(named), sorted(widths), r.stderr))
    in_time(named, 'the glob of the shards')
    for n in named:
        os.unlink(n)
    # One row a shard: those of the threads' states hold no scope, in time as the others.
    naps = record(sub, 'naps.ttr', 1, 200, nap=2, marks=1)
    r = run(['convert', '-q', naps, '--split', '1', '-o', os.path.join(sub, 'one.json')])
    ones = sorted(glob.glob(os.path.join(sub, 'one.[0-9]*.json')))
    if r.returncode or len(ones) < 400:
        fail('--split 1 of a run of 400 slices and instants: status %d, %d shards: %s'
             % (r.returncode, len(ones), r.stderr))
    in_time(ones, 'the glob of the one-row shards')
    states_alone = sum(1 for n in ones if not scopes_of(load_json(n)))
    for n in ones:
        os.unlink(n)
    earlier = [os.path.join(sub, 'e.%s.json' % k) for k in ('0099', '9999', '00001')]
    for n in earlier:
        open(n, 'w').write('an earlier split\n')
    out = os.path.join(sub, 'e.json')
    r = run(['convert', ttr, '--split', str(10 * SPLIT), '-o', out])
    if r.returncode != 1 or 'a shard of an earlier split' not in r.stderr or \
            sorted(glob.glob(os.path.join(sub, 'e.*'))) != sorted(earlier):
        fail('a split over an earlier one\'s shards with holes, no --force: status %d, left %s: %s'
             % (r.returncode, sorted(glob.glob(os.path.join(sub, 'e.*'))), r.stderr))
    r = run(['convert', ttr, '--split', str(10 * SPLIT), '--force', '-o', out])
    left = sorted(glob.glob(os.path.join(sub, 'e.*')))
    if r.returncode or any(n in left for n in earlier) or len(left) < 2 or \
            'removed 3 shards' not in r.stderr:
        fail('--force over an earlier split\'s shards with holes: status %d, left %s: %s'
             % (r.returncode, left, r.stderr))
    print('--split: the shards\' numbers of one width, enough for the run (5 digits where it '
          'could make 12000), in time, %d of one row holding a thread state alone among them; an '
          'earlier split\'s shards of the name refused, or removed with --force' % states_alone)


def check_refused(d, ttr):
    for bad in ('0', '-5', 'abc', '1.5', '', '12x', '99999999999999999999999'):
        r = run(['convert', ttr, '--split', bad, '-o', os.path.join(d, 'bad.pftrace')])
        if r.returncode != 2 or '--split is a number' not in r.stderr:
            fail('--split %r: status %d: %s' % (bad, r.returncode, r.stderr))
    r = run(['convert', ttr, '--split', '10', '-o', '-'])
    if r.returncode != 2 or '--split writes files' not in r.stderr or r.stdout:
        fail('--split to stdout: status %d: %s' % (r.returncode, r.stderr))
    if glob.glob(os.path.join(d, 'bad*')):
        fail('a refused --split left %s' % glob.glob(os.path.join(d, 'bad*')))
    print('bad --split values refused')


def check_nothing_left(d, ttr):
    # a record damaged in the middle of the run: the first pass fails, no shard written
    data = bytearray(open(ttr, 'rb').read())
    mid = len(data) // 2
    data[mid:mid + 4096] = b'\xff' * 4096
    damaged = os.path.join(d, 'damaged.ttr')
    open(damaged, 'wb').write(bytes(data))
    out = os.path.join(d, 'dmg', 'out.pftrace')
    os.mkdir(os.path.dirname(out))
    r = run(['convert', damaged, '--split', str(SPLIT), '-o', out])
    if r.returncode != 1 or 'damaged.ttr' not in r.stderr:
        fail('a damaged run split: status %d: %s' % (r.returncode, r.stderr))
    if os.listdir(os.path.dirname(out)):
        fail('a damaged run left %s' % os.listdir(os.path.dirname(out)))
    # the third shard's name taken: the two written before it are removed, it is not
    taken = os.path.join(d, 'dmg', 'out.0003.pftrace')
    open(taken, 'w').write('mine\n')
    r = run(['convert', ttr, '--split', str(SPLIT), '-o', out])
    if r.returncode != 1 or 'out.0003.pftrace: exists' not in r.stderr:
        fail('a shard that exists: status %d: %s' % (r.returncode, r.stderr))
    if os.listdir(os.path.dirname(out)) != ['out.0003.pftrace'] or open(taken).read() != 'mine\n':
        fail('a failed split left %s' % os.listdir(os.path.dirname(out)))
    print('a damaged run and a shard that cannot be written leave no shard behind')


def finished_shards(d, p, before):
    """How many shards the split running as `p` has finished: a temporary file of its own
    that it no longer has open (held until the set goes in place), or a shard's name in
    place that is not the file it was (`before`: name to inode; a split that put each
    shard in place as it finished). -1 while it has made no temporary file."""
    names = os.listdir(d)  # (before the descriptors: a file seen is open by then, or done)
    fds = set()
    for fd in os.listdir('/proc/%d/fd' % p.pid) if p.poll() is None else ():
        try:
            fds.add(os.readlink('/proc/%d/fd/%s' % (p.pid, fd)))
        except OSError:
            pass  # (closed meanwhile)
    n = 0
    for name in names:
        path = os.path.join(os.path.realpath(d), name)
        try:
            ino = os.stat(path).st_ino
        except OSError:
            continue  # (renamed or removed meanwhile)
        n += path not in fds if name.startswith('.') else before.get(name) != ino
    return n if [n for n in names if n.startswith('.')] else -1


def kill_when_finished(args, d, shards, sig):
    """Runs the command `args`, a split into `d`; sends `sig` once it has made a shard's
    temporary file and finished `shards` of its shards. Its exit status."""
    before = shards_in(d)
    p = subprocess.Popen([tool] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while p.poll() is None and time.monotonic() < deadline and finished_shards(d, p, before) < shards:
        time.sleep(0.005)
    if p.poll() is not None:
        fail('%s ended (status %d) before %d shards were finished: no signal sent' %
             (' '.join(args[2:]), p.returncode, shards))
    p.send_signal(sig)
    return p.wait(timeout=120)


def shards_in(d):
    """The files in d that are not temporary: name to inode."""
    return {n: os.stat(os.path.join(d, n)).st_ino for n in os.listdir(d) if not n.startswith('.')}


def check_killed(d):
    """SIGTERM, SIGINT or SIGHUP once shards are finished: the command dies of it and
    leaves no shard (a partial set would look whole) and no temporary file."""
    ttr = record(d, 'killed.ttr', 1, 1000000)
    # (a SIGHUP ignored where the test runs, as under nohup, is ignored by the command too,
    # as it should be: its default action is what is tested)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL):
        out = os.path.join(d, 'killed', 'out.json')
        os.makedirs(os.path.dirname(out), exist_ok=True)
        status = kill_when_finished(['convert', ttr, '--split', '20000', '-o', out], os.path.dirname(out),
                                    2, sig)
        left = os.listdir(os.path.dirname(out))
        if sig == signal.SIGKILL:
            # what no handler removes: the next split of the same output does (the temporaries
            # of a process no longer there), even into fewer shards (one: before, the
            # temporaries of the killed split's shards 2 and on stayed)
            if status != -sig or len([n for n in left if n.startswith('.')]) < 3:
                fail('SIGKILL during --split: status %d, left %s (not the temporary files of 3 '
                     'shards)' % (status, left))
            for split in ('2000000', '20000'):
                r = run(['convert', ttr, '--split', split, '--force', '-o', out])
                left = [n for n in os.listdir(os.path.dirname(out)) if n.startswith('.')]
                if r.returncode != 0 or left:
                    fail('the split (--split %s) after a SIGKILL: status %d, left %s: %s' %
                         (split, r.returncode, left, r.stderr))
                if split == '2000000' and ': 1 shard of at most' not in r.stderr:
                    fail('a split into one shard, not said as one: ' + r.stderr)
        elif status != -sig or left:
            fail('%s during --split: status %d, left %s' % (signal.Signals(sig).name, status, left))
    check_force_killed(ttr, out)
    os.unlink(ttr)
    print('SIGTERM, SIGINT and SIGHUP during --split leave no shard and no temporary file; the '
          'temporaries a SIGKILL leaves the next split of the output removes')


def check_force_killed(ttr, out):
    """--split --force over an earlier split of 50 shards, SIGTERM before its first shard
    is finished, and after two are (into as many shards, and into fewer): the earlier
    split's shards all there, each the same file, and no temporary file. (Before the
    first: its shard 1 went, the signal's handler had the name from the new shard's
    opening, outside recheck s29. After two: the new shards went in place one by one as
    each finished, and the handler removed those, leaving the earlier split's others,
    its first ones missing, review s29.)"""
    d = os.path.dirname(out)
    before = shards_in(d)
    for split, finished in (('2000000', 0), ('20000', 2), ('40000', 2)):
        status = kill_when_finished(['convert', ttr, '--split', split, '--force', '-o', out], d,
                                    finished, signal.SIGTERM)
        temps = [n for n in os.listdir(d) if n.startswith('.')]
        if status != -signal.SIGTERM or shards_in(d) != before or temps:
            fail('SIGTERM as --split %s --force had %d shards finished: status %d, the earlier '
                 'split\'s %d shards now %d (%s missing, %s another file), left %s' % (
                     split, finished, status, len(before), len(shards_in(d)),
                     sorted(set(before) - set(shards_in(d)))[:3],
                     sorted(n for n in shards_in(d) if before.get(n) != shards_in(d)[n])[:3], temps))
    print('SIGTERM before --split --force finished a shard, and after it finished two (into as '
          'many shards and into fewer): the earlier split\'s %d shards as they were' % len(before))


def serve(path, *args):
    """Runs `open` on path, fetches what it serves; (body, what it printed)."""
    p = subprocess.Popen([tool, 'open', '--port', '0', path] + list(args), stdout=subprocess.PIPE,
                         text=True)
    try:
        lines = []
        for line in p.stdout:
            lines.append(line)
            if '?url=' in line:
                break
        else:
            fail('open %s: ended (status %d) before serving' % (path, p.wait(timeout=30)))
        body = urllib.request.urlopen(lines[-1].split('?url=')[1].strip(), timeout=60).read()
        rest = p.stdout.read()
        if p.wait(timeout=60) != 0:
            fail('open %s: status %d' % (path, p.returncode))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return body, ''.join(lines) + rest


def check_huge(d):
    small = os.path.join(d, 'run.ttr')
    r = run(['convert', small, '-o', os.path.join(d, 'small.pftrace')])
    if r.returncode != 0 or '--split' in r.stderr:
        fail('a small run: status %d: %s' % (r.returncode, r.stderr))
    # half the UI's slices as scopes (and "setup" and "run"), half as instants: past them
    # as trace_processor counts (and the thread states); the scopes alone were not
    big = record(d, 'big.ttr', 1, UI_SLICES // 2, marks=1)
    for ext in ('pftrace', 'json'):
        r = run(['convert', big, '-o', os.path.join(d, 'big.' + ext)])
        said = re.search(r'big\.%s: (\d+) slices \(instants' % ext, r.stderr)
        counted = int(said.group(1)) if said else 0
        if r.returncode != 0 or '--split 3000000' not in r.stderr or counted < UI_SLICES + 2:
            fail('%d slices and instants converted whole to %s: status %d, no advice: %s' %
                 (UI_SLICES + 2, ext, r.returncode, r.stderr))
        os.unlink(os.path.join(d, 'big.' + ext))
    print('a trace past what the Perfetto UI loads (its instants too), converted whole, says so '
          'and suggests --split')

    r = run(['convert', '-q', big, '--split', str(UI_SLICES), '-o', os.path.join(d, 'big.pftrace')])
    if r.returncode != 0 or len(shards_named(d, 'big')) != 2:
        fail('%d slices split by %d: status %d, %s: %s' % (UI_SLICES + 2, UI_SLICES, r.returncode,
             shards_named(d, 'big'), r.stderr))
    for args, k in (([], 1), (['--shard', '2'], 2)):
        body, said = serve(big, *args)
        if body != open(shards_named(d, 'big')[k - 1], 'rb').read():
            fail('open %s: not the bytes of convert --split\'s shard %d' % (args, k))
        if 'serving shard %d of 2' % k not in said:
            fail('open %s: does not say which shard it serves: %s' % (args, said))
    r = run(['open', '--port', '0', big, '--shard', '3'])
    if r.returncode != 1 or 'there is no shard 3' not in r.stderr:
        fail('open --shard 3 of 2: status %d: %s' % (r.returncode, r.stderr))
    for bad in ('0', 'x', '-1'):
        r = run(['open', '--port', '0', big, '--shard', bad])
        if r.returncode != 2 or '--shard is a number' not in r.stderr:
            fail('open --shard %r: status %d: %s' % (bad, r.returncode, r.stderr))
    print('open serves the first shard of a huge run, or the one named, and says so')


def check_filtered(d, ttr):
    """--split after --thread and --from (the user's filter before the shards, once): the
    shards' slices are the filtered conversion's; a slice's begin the filter holds back
    until its thread's first event in the window still ends in the shard it went to."""
    events = load_json(os.path.join(d, 'whole.json'))
    times = sorted(s[2] for s in scopes_of(events))
    start = '%dus' % (times[len(times) // 3] - times[0])  # a third into the run
    sub = os.path.join(d, 'filtered')
    os.mkdir(sub)
    args = ['--thread', 'worker-1', '--from', start]
    r = run(['convert', '-q', ttr, '-o', os.path.join(sub, 'whole.json')] + args)
    r2 = run(['convert', '-q', ttr, '--split', str(SPLIT // 4), '-o', os.path.join(sub, 'f.json')] + args)
    if r.returncode or r2.returncode:
        fail('--split %s: status %d, %d: %s%s' % (' '.join(args), r.returncode, r2.returncode,
                                                    r.stderr, r2.stderr))
    want = sorted(scopes_of(load_json(os.path.join(sub, 'whole.json'))))
    got = sorted(sum((scopes_of(load_json(j)) for j in shards_named(sub, 'f', 'json')), []))
    if got != want or len(shards_named(sub, 'f', 'json')) < 2:
        fail('--split %s: %d slices in %d shards, the filtered run %d' % (
            ' '.join(args), len(got), len(shards_named(sub, 'f', 'json')), len(want)))
    print('--split after --thread and --from: %d shards holding the %d slices kept' % (
        len(shards_named(sub, 'f', 'json')), len(want)))


def peak_rss_mb(args):
    """The command's status and its peak memory (MB), run by a child of its own."""
    probe = ('import resource, subprocess, sys; '
             'r = subprocess.run(sys.argv[1:], capture_output=True, timeout=240); '
             'print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)')
    out = subprocess.run([sys.executable, '-c', probe, tool] + args, capture_output=True,
                         text=True, timeout=300, check=True).stdout.split()
    return int(out[0]), int(out[1]) / 1024


def check_memory(d):
    """--split writes the shards in one pass as the decoding goes: its memory is that of
    converting the run whole and of the shards open at a time, not a begin time kept
    for each of the run's slices (8 bytes a slice, and a pass over the run for each
    shard: a new user's 107 M events took 636 MB and 65 s)."""
    threads, scopes = 3, 2700000
    big = record(d, 'many.ttr', threads, scopes)
    slices = threads * (scopes + 1) + 1
    status, whole = peak_rss_mb(['convert', '-q', big, '-o', os.path.join(d, 'many.pftrace')])
    os.unlink(os.path.join(d, 'many.pftrace'))
    status2, split = peak_rss_mb(['convert', '-q', big, '--split', '1000000',
                                  '-o', os.path.join(d, 'many.pftrace')])
    if status or status2 or len(shards_named(d, 'many')) < 8:
        fail('%d slices split by 1000000: status %d, %d, shards %s' % (
            slices, status, status2, shards_named(d, 'many')))
    # (a begin time a slice would be 62 MB more; two shards open, the first's "run"
    # scopes open all along, about 20; and since the reader's page thread gives the
    # input's pages back as the decoding goes, the whole conversion peaks 30-40 MB
    # lower, the split 8 MB lower: 45-57 MB apart on this machine, where a table of
    # begin times would put them 110 MB apart)
    # (not under a sanitizer: AddressSanitizer keeps freed memory in quarantine, 110 MB
    # more here in CI's build, whatever the split holds)
    if split - whole > 75 and sanitize == 'none':
        fail('--split of %d slices: %.0f MB at its peak, %.0f MB more than converting the '
             'run whole (%.0f MB)' % (slices, split, split - whole, whole))
    for f in shards_named(d, 'many') + [big]:
        os.unlink(f)
    print('--split of %d slices: %.0f MB at its peak, converted whole %.0f MB' % (slices, split, whole))


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # the temporary directory goes too
    with tempfile.TemporaryDirectory() as d:
        ttr = record(d, 'run.ttr', THREADS, SCOPES)
        check_refused(d, ttr)
        check_names(d, ttr)
        check_counted(d)
        check_split(d, ttr)
        check_filtered(d, ttr)
        check_resplit(d, ttr)
        check_nothing_left(d, ttr)
        check_killed(d)
        skipped = check_states(d)
        check_exited(d)
        check_huge(d)
        check_memory(d)
    if skipped:
        print('SKIP: ' + skipped)
        sys.exit(77)


main()
