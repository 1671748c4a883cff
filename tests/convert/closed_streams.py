#!/usr/bin/env python3
"""The commands started with standard error closed (`2>&-`, as a hostile or careless
parent leaves it), or standard output: what they write to a file is what they write
with it open. Before, the output file took number 2 and the warnings said on stderr
went into it (a JSON trace that did not parse). And a command whose output goes to a
closed stdout fails saying so, before any work (before, `convert -o - >&-` exited 0,
its trace written to /dev/null, which the command had put in stdout's place).

  closed_streams.py PROG   (tt_longrun_prog; TT_TEST_TOOL: the command)"""
import os
import re
import subprocess
import sys
import tempfile

tool = os.environ['TT_TEST_TOOL']


def closed():
    os.close(2)


def stdout_closed():
    os.close(1)


def check_to_closed_stdout(d, ttr):
    """Each command whose output, or what it prints, goes to stdout, with stdout closed:
    status 1, 'stdout is closed' said, nothing left in the directory."""
    before = sorted(os.listdir(d))
    for args in (['convert', ttr, '-o', '-'], ['convert', ttr, '-o', '-', '--split', '1000'],
                 ['report', ttr], ['spikes', ttr], ['info', ttr], ['flame', ttr, '-o', '-'],
                 ['diff', ttr, ttr], ['open', '--port', '0', ttr], ['lines', ttr],
                 ['record', '--list', '-f', 'main', '--', sys.argv[1]], ['--help'], ['--version'],
                 ['help', 'convert'], ['report', '--help']):
        p = subprocess.run([tool] + args, timeout=120, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, preexec_fn=stdout_closed)
        if args[-1] == '1000':  # (--split writes files: refused as such first)
            assert p.returncode == 2 and '--split writes files' in p.stderr, (args, p.returncode, p.stderr)
            continue
        assert p.returncode == 1 and 'stdout is closed' in p.stderr, \
            f'{" ".join(args)} with stdout closed: status {p.returncode}, said {p.stderr!r}'
        assert sorted(os.listdir(d)) == before, f'{" ".join(args)} left {sorted(os.listdir(d))}'
    print('convert -o -, report, spikes, info, flame -o -, diff, open, lines, record --list and '
          'the help with stdout closed: status 1, "stdout is closed" said')


def main():
    with tempfile.TemporaryDirectory() as d:
        # A run that leaves a scope open: its warning is said while the output is open.
        ttr = os.path.join(d, 'run.ttr')
        subprocess.run([sys.argv[1], 'crash', 'none', '100'], stdout=subprocess.DEVNULL,
                       env=dict(os.environ, TICKTRACE_OUT=ttr))
        for cmd, ext in (('convert', 'json'), ('convert', 'pftrace'), ('report', 'txt'),
                         ('flame', 'svg')):
            outs = []
            for how in ('open', 'closed', 'no stdout'):
                out = os.path.join(d, f'{cmd}-{how}.{ext}')
                p = subprocess.run([tool, cmd, ttr, '-o', out], timeout=120,
                                   stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL if how == 'open' else None,
                                   stderr=None if how == 'closed' else subprocess.DEVNULL,
                                   preexec_fn={'closed': closed, 'no stdout': stdout_closed}.get(how))
                assert p.returncode == 0, f'{cmd} -o {out} ({how}): status {p.returncode}'
                with open(out, 'rb') as f:  # (report's cost of a call is measured as it runs)
                    outs.append(re.sub(rb'\(\d+ ns, measured now\)', b'', f.read()))
            for how, got in (('stderr', outs[1]), ('stdout', outs[2])):
                assert outs[0] == got, f'{cmd} .{ext} with {how} closed differs: {got[:200]!r}'
        check_to_closed_stdout(d, ttr)
    print('convert, report and flame with stderr or stdout closed write what they write with it open')


main()
