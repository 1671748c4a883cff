#!/usr/bin/env python3
"""Every command whose output is stdout fails when stdout cannot be written
(`>/dev/full`): a non-zero status and the failed write said on stderr, naming stdout, not the status of
a command that succeeded (before, `info` and `record --list` exited 0 with nothing said;
report, diff, spikes and convert did fail, saying '-: write failed').

  stdout_full.py PROG   (tt_longrun_prog; TT_TEST_TOOL: the command)"""
import os
import re
import subprocess
import sys
import tempfile

tool = os.environ['TT_TEST_TOOL']
failures = []


def main():
    if not os.path.exists('/dev/full'):
        print('SKIP: no /dev/full')
        sys.exit(77)
    with tempfile.TemporaryDirectory() as d:
        ttr = os.path.join(d, 'run.ttr')
        prog = os.path.abspath(sys.argv[1])
        subprocess.run([prog, 'seq', '2', '1000'], stdout=subprocess.DEVNULL,
                       env=dict(os.environ, TICKTRACE_OUT=ttr), timeout=120)
        commands = (['info', ttr], ['report', ttr], ['spikes', ttr, '--threshold', '1ns'],
                    ['convert', ttr, '-o', '-'], ['diff', ttr, ttr],
                    ['help'], ['--help'], ['--version'], ['convert', '--help'],
                    ['record', '--list', '-f', 'main', '--', prog, 'crash', 'none', '1'])
        for args in commands:
            # each prints something where stdout is writable: else /dev/full tests nothing
            p = subprocess.run([tool, *args], capture_output=True, timeout=120, cwd=d,
                               env=dict(os.environ, TMPDIR=d))
            if p.returncode != 0 or not p.stdout:
                failures.append(f'{args[0]}: status {p.returncode} with stdout open, '
                                f'{len(p.stdout)} bytes: {p.stderr.decode()[-500:]}')
                continue
            with open('/dev/full', 'wb') as full:
                p = subprocess.run([tool, *args], stdout=full, stderr=subprocess.PIPE,
                                   timeout=120, cwd=d, env=dict(os.environ, TMPDIR=d))
            said = p.stderr.decode()
            # (an error of an earlier write than the last: its errno is gone; stdout named
            # so, not '-')
            if p.returncode == 0 or not re.search(r'stdout: write failed|not written to stdout', said):
                failures.append(f'{" ".join(args[:2])} >/dev/full: status {p.returncode}, '
                                f'stderr {said[-500:]!r}')
    for f in failures:
        print('FAIL:', f)
    sys.exit(1 if failures else 0)


main()
