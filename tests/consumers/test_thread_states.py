#!/usr/bin/env python3
"""thread_states.compare on hand-made rows: what the converter's synthetic runs may
add beside the JSON's states, and what they may not."""
import sys
import thread_states as t

X = 1000
cases = [
    # A thread whose one state in the window is a switch out: a Running row of no
    # length, then that state, open; the JSON shows neither (it shows no last state).
    ('last switch out', {}, {'5': [(X, X, 'Running', 0), (X, None, 'S', None)]}, 0),
    # The same switch out with a state after it: the JSON has it.
    ('switch out, then more', {'5': [(X, 50, 'Blocked', None)]},
     {'5': [(X, X, 'Running', 0), (X, X + 50, 'S', None), (X + 50, None, 'Running', 1)]}, 0),
    # A closed state the JSON lacks is never accepted, zero-length run or not.
    ('closed state unsaid', {}, {'5': [(X, X, 'Running', 0), (X, X + 100, 'S', None)]}, 2),
    ('Running of length unsaid', {}, {'5': [(X, X + 5, 'Running', 0), (X + 5, None, 'S', None)]}, 1),
]
failed = 0
for name, said, rows, want in cases:
    got = t.compare(said, rows)
    if len(got) != want:
        print(f'FAIL {name}: {len(got)} problems, want {want}: {got}')
        failed += 1
print(f'{len(cases) - failed} of {len(cases)} cases as expected')
sys.exit(1 if failed else 0)
