"""The thread states of a trace from `ticktrace convert`, the JSON's against the
protobuf's, for the checkers beside it (check-perfetto.py, check-trace-processor.py).

The JSON shows each thread's states as the file holds them: slices Running (args:
cpu), Preempted and Blocked on a track "NAME (states)" (tid | 2^30), each from a
switch to the next, nothing where they were lost, the last one not at all. The
protobuf holds them as ftrace sched_switch events, which Perfetto makes thread_state
rows of (Running, R, S), and which the converter makes agree per CPU
(tools/sinks/perfetto_sched.c): a thread still on a CPU when another comes on it, or
whose run ends in lost switches, is taken off it by a synthetic switch, in the state
of its own switch out when that comes later (moved to that time), dead (X) when it
exited, else I (nothing known); one whose next state is on another CPU (switches lost)
1 ns before that state."""
import bisect

STATES_TID_BIT = 1 << 30
# The JSON's states as thread_state names them.
STATE_OF = {'Running': 'Running', 'Preempted': 'R', 'Blocked': 'S'}
# What a synthetic switch says of a thread whose own switches do not: dead, or not known.
SYNTHETIC = ('X', 'I')


def is_states_track(tid, name):
    """Whether JSON thread `tid` named `name` is a thread's states track."""
    return bool(int(tid) & STATES_TID_BIT) and (name == 'states' or name.endswith(' (states)'))


def compare(said_of, rows_of):
    """The JSON's states, {tid: [(ts, dur, name, cpu)]}, against the protobuf's rows,
    {tid: [(ts, end or None when open, state, cpu)]}, on one clock: the same spans in
    the same states but where
      - a row X or I is synthetic: it follows the Running row it cuts;
      - a Running row cut by another thread coming on its CPU is followed by the state
        of its own switch out (R or S), moved to that time;
      - a row R or S lasts over a gap of the JSON (switches lost: Perfetto keeps the
        state before), or on where the JSON has nothing after it;
      - a thread's last state, which the JSON does not show, is an open row, or a
        Running row a synthetic one cuts;
      - a switch out that no switch in comes before has a Running row of no length
        before its state (also when that switch out is the thread's last state).
    Returns what differs, one line each."""
    problems = []
    for tid in sorted(set(rows_of) | set(said_of), key=str):
        said = sorted((ts, ts + dur, STATE_OF.get(n, n), cpu) for ts, dur, n, cpu in said_of.get(tid, []))
        starts = [s[0] for s in said]
        rows = sorted(rows_of.get(tid, []), key=lambda r: r[0])
        at = {(s[0], s[2]): k for k, s in enumerate(said)}
        seen = set()

        def fail(what, row):
            problems.append(f'thread {tid}: {what}: {row}')

        def none_from(start):
            """No JSON state begins at start or after."""
            return bisect.bisect_left(starts, start) == len(starts)

        def moved(ts, state):
            """The JSON state a row (R or S) at ts stands for, moved earlier to where
            its run was cut: the one after the Running slice around ts."""
            k = bisect.bisect_right(starts, ts) - 1
            while k >= 0 and said[k][2] != 'Running':
                k -= 1
            if k >= 0 and said[k][0] <= ts < said[k][1] and k + 1 < len(said) and \
                    said[k + 1][0] == said[k][1] and said[k + 1][2] == state:
                return k + 1
            return None
        for i, (ts, end, state, cpu) in enumerate(rows):
            before = rows[i - 1] if i else None
            after = rows[i + 1] if i + 1 < len(rows) else None
            cuts = before is not None and before[2] == 'Running' and before[1] == ts
            if state in SYNTHETIC:
                if not cuts:
                    fail('a synthetic state not after a Running row it cuts', rows[i])
                continue
            k = at.get((ts, state))
            if k is None and state in ('R', 'S') and cuts:
                k = moved(ts, state)
            if k is None:
                last = (after is None and end is None) or \
                    (state == 'Running' and after is not None and after[2] in SYNTHETIC and
                     i + 2 == len(rows))
                # (its state the JSON's, or the last, open, which the JSON does not show)
                before_out = state == 'Running' and end == ts and after is not None and \
                    ((ts, after[2]) in at or (after[1] is None and i + 2 == len(rows) and none_from(ts)))
                if not (last and none_from(ts) or before_out):
                    fail('a thread_state row the JSON does not have', rows[i])
                continue
            seen.add(k)
            s = said[k]
            if state == 'Running' and cpu != s[3]:
                fail(f'Running on CPU {cpu}, the JSON says {s[3]}', rows[i])
            if end == s[1]:
                continue
            cut_short = state == 'Running' and end is not None and s[0] <= end < s[1] and \
                after is not None and after[0] == end and \
                (after[2] in SYNTHETIC or at.get((end, after[2])) is None)
            over_gap = state in ('R', 'S') and (end is None or end > s[1]) and \
                (k + 1 == len(said) or (end is not None and said[k + 1][0] >= end))
            if not (cut_short or over_gap):
                fail(f'ends at {end}, its JSON state at {s[1]}', rows[i])
        for k, s in enumerate(said):
            if k not in seen:
                fail('a JSON state no thread_state row has', s)
    return problems
