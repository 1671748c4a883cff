#!/usr/bin/env python3
"""The commands started with standard error closed (`2>&-`, as a hostile or careless
parent leaves it; or stdout too): what they write is what they write with it open.
Before, the output file took number 2 and the warnings said on stderr went into it (a
JSON trace that did not parse).

  closed_streams.py PROG   (tt_longrun_prog; TT_TEST_TOOL: the command)"""
import os
import re
import subprocess
import sys
import tempfile

tool = os.environ['TT_TEST_TOOL']


def closed():
    os.close(2)


def main():
    with tempfile.TemporaryDirectory() as d:
        # A run that leaves a scope open: its warning is said while the output is open.
        ttr = os.path.join(d, 'run.ttr')
        subprocess.run([sys.argv[1], 'crash', 'none', '100'], stdout=subprocess.DEVNULL,
                       env=dict(os.environ, TICKTRACE_OUT=ttr))
        for cmd, ext in (('convert', 'json'), ('convert', 'pftrace'), ('report', 'txt'),
                         ('flame', 'svg')):
            outs = []
            for how in ('open', 'closed'):
                out = os.path.join(d, f'{cmd}-{how}.{ext}')
                p = subprocess.run([tool, cmd, ttr, '-o', out], timeout=120,
                                   stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL if how == 'open' else None,
                                   stderr=subprocess.DEVNULL if how == 'open' else None,
                                   preexec_fn=closed if how == 'closed' else None)
                assert p.returncode == 0, f'{cmd} -o {out} ({how}): status {p.returncode}'
                with open(out, 'rb') as f:  # (report's cost of a call is measured as it runs)
                    outs.append(re.sub(rb'\(\d+ ns, measured now\)', b'', f.read()))
            assert outs[0] == outs[1], \
                f'{cmd} .{ext} with stderr closed differs: {outs[1][:200]!r}'
    print('convert, report and flame with stderr closed write what they write with it open')


main()
