#!/usr/bin/env python3
"""convert's output and its inputs: an output that is one of the inputs, by any name (the
same path, ./path, a symbolic link, a hard link, stdout appended onto it, a --split
shard), is refused with the input named, status 1, the input untouched and nothing
written (before, `convert g2.ttr -o g2.ttr --force` replaced the recording with JSON).
An output named as a raw file (.ttr, .live) is refused unless -F says the format; a
name of no format (.txt) is written as JSON and that is said (before: silently). Out
of memory for the output's buffers, the output is named. diff's output likewise
(diff_onto_input).

  output_names.py PROG SANITIZE   (tt_longrun_prog; TT_TEST_TOOL: the command)"""
import hashlib
import os
import resource
import subprocess
import sys
import tempfile

tool = os.environ['TT_TEST_TOOL']
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def digest(path):
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def convert(d, *args, stdout=subprocess.DEVNULL):
    return subprocess.run([tool, 'convert', '-q', *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=120, cwd=d)


def out_of_memory(d, run):
    """Under an address-space limit too small for the output's buffers (ulimit -v), the
    error names the output (before: "out of memory for the output buffers" alone). The
    limits from 4 MiB up, until one converts: somewhere the buffers are what fails."""
    if len(sys.argv) > 2 and sys.argv[2] != 'none':
        return  # (a sanitizer's runtime reserves terabytes of address space)
    said = None
    for mib in range(4, 129, 2):
        limit = mib << 20
        p = subprocess.run([tool, 'convert', '-q', 'g2.ttr', '-o', 'oom.json'], cwd=d,
                           capture_output=True, text=True, timeout=120,
                           preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
        if p.returncode == 0:
            break
        check(not os.path.exists(os.path.join(d, 'oom.json')), f'{mib} MiB: oom.json left behind')
        if 'output buffers' in p.stderr:
            said = p.stderr
    check(said and 'oom.json: out of memory for its output buffers' in said,
          f'ulimit -v: the output buffers\' error: {said!r}')
    if os.path.exists(os.path.join(d, 'oom.json')):
        os.unlink(os.path.join(d, 'oom.json'))


def out_of_memory_named(d):
    """Every out-of-memory error names the file it is about, wherever the memory ran out
    (before, ~90 of them named none): convert to JSON and .pftrace, report, flame and
    info of g2.ttr under address-space limits from 4 MiB up, each error the input's or
    the output's (stdout's buffers, stdout)."""
    if len(sys.argv) > 2 and sys.argv[2] != 'none':
        return
    said = 0
    for args, out in ((['convert', 'g2.ttr', '-o', 'oom.json'], 'oom.json'),
                      (['convert', 'g2.ttr', '-o', 'oom.pftrace'], 'oom.pftrace'),
                      (['report', 'g2.ttr'], None), (['flame', 'g2.ttr', '-o', 'oom.svg'], 'oom.svg'),
                      (['info', 'g2.ttr'], None)):
        for mib in range(4, 129, 2):
            limit = mib << 20
            p = subprocess.run([tool, *args, *(['--force'] if out else [])],
                               cwd=d, capture_output=True, text=True, timeout=120,
                               preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
            for line in p.stderr.splitlines():
                if 'out of memory' in line:
                    said += 1
                    check(line.startswith(('ticktrace: error: g2.ttr: ', 'ticktrace: error: %s: ' % (out or 'stdout'))),
                          f'{" ".join(args)} in {mib} MiB: {line!r} names no file')
            if p.returncode == 0:
                break
        if out and os.path.exists(os.path.join(d, out)):
            os.unlink(os.path.join(d, out))
    check(said > 0, 'no out-of-memory error met under any limit')


def diff_onto_input(d, run, before):
    """diff's output onto one of its runs, a file of either side or one in a side's
    directory, by any name, or stdout appended onto it: refused alike (before, `diff
    g2.ttr other.ttr -o g2.ttr --force` replaced the recording with the report)."""
    other = os.path.join(d, 'other.ttr')
    subprocess.run([os.path.abspath(sys.argv[1]), 'seq', '2', '1000'],
                   stdout=subprocess.DEVNULL, env=dict(os.environ, TICKTRACE_OUT=other), timeout=120)
    os.mkdir(os.path.join(d, 'runs'))
    os.link(run, os.path.join(d, 'runs', 'a.ttr'))
    for args in (('g2.ttr', 'other.ttr', '-o', 'g2.ttr'), ('other.ttr', 'g2.ttr', '-o', 'hard.json'),
                 ('other.ttr', 'runs', '-o', 'link.json'), ('runs', 'other.ttr', '-o', run)):
        p = subprocess.run([tool, 'diff', '-q', *args, '--force'], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, timeout=120, cwd=d)
        check(p.returncode == 1 and 'the same file as the input ' in p.stderr and digest(run) == before,
              f'diff {" ".join(args)}: status {p.returncode}, {p.stderr!r}')
    with open(run, 'ab') as onto:
        p = subprocess.run([tool, 'diff', '-q', 'g2.ttr', 'other.ttr'], stdout=onto,
                           stderr=subprocess.PIPE, text=True, timeout=120, cwd=d)
    check(p.returncode == 1 and 'stdout: the same file as the input g2.ttr' in p.stderr,
          f'diff >>g2.ttr: status {p.returncode}, {p.stderr!r}')
    check(digest(run) == before, 'diff >>g2.ttr: the input changed')
    check(sorted(os.listdir(d)) == ['g2.ttr', 'hard.json', 'link.json', 'other.ttr', 'runs',
                                    'shard.0001.json'], f'left behind: {sorted(os.listdir(d))}')


def main():
    with tempfile.TemporaryDirectory() as d:
        run = os.path.join(d, 'g2.ttr')
        subprocess.run([os.path.abspath(sys.argv[1]), 'seq', '2', '1000'],
                       stdout=subprocess.DEVNULL, env=dict(os.environ, TICKTRACE_OUT=run), timeout=120)
        before = digest(run)
        os.symlink('g2.ttr', os.path.join(d, 'link.json'))
        os.link(run, os.path.join(d, 'hard.json'))
        os.link(run, os.path.join(d, 'shard.0001.json'))  # --split -o shard.json's first
        for out, extra in (('g2.ttr', []), ('./g2.ttr', []), (run, []), ('link.json', []),
                           ('hard.json', []), ('g2.ttr', ['-F', 'json']),
                           ('shard.json', ['--split', '100'])):
            p = convert(d, 'g2.ttr', '-o', out, '--force', *extra)
            check(p.returncode == 1 and 'the same file as the input g2.ttr' in p.stderr,
                  f'-o {out} {extra}: status {p.returncode}, {p.stderr!r}')
            check(digest(run) == before, f'-o {out} {extra}: the input changed')
        # stdout appended onto the input
        with open(run, 'ab') as onto:
            p = convert(d, 'g2.ttr', '-o', '-', stdout=onto)
        check(p.returncode == 1 and 'stdout: the same file as the input g2.ttr' in p.stderr,
              f'-o - >>g2.ttr: status {p.returncode}, {p.stderr!r}')
        check(digest(run) == before, '-o - >>g2.ttr: the input changed')
        check(sorted(os.listdir(d)) == ['g2.ttr', 'hard.json', 'link.json', 'shard.0001.json'],
              f'left behind: {sorted(os.listdir(d))}')
        diff_onto_input(d, run, before)
        # a raw file's name, refused unless -F chooses; a name of no format, said
        for name in ('out.ttr', 'out.live'):
            p = convert(d, 'g2.ttr', '-o', name)
            check(p.returncode == 1 and "a raw file's name" in p.stderr and
                  not os.path.exists(os.path.join(d, name)), f'-o {name}: {p.returncode}, {p.stderr!r}')
        p = convert(d, 'g2.ttr', '-o', 'out.ttr', '-F', 'json')
        check(p.returncode == 0 and p.stderr == '', f'-o out.ttr -F json: {p.returncode}, {p.stderr!r}')
        p = convert(d, 'g2.ttr', '-o', 'out.txt')
        check(p.returncode == 0 and 'out.txt: written as JSON' in p.stderr,
              f'-o out.txt: {p.returncode}, {p.stderr!r}')
        for name in ('out.json', 'out.pftrace'):
            p = convert(d, 'g2.ttr', '-o', name)
            check(p.returncode == 0 and p.stderr == '', f'-o {name}: {p.returncode}, {p.stderr!r}')
        out_of_memory(d, run)
        out_of_memory_named(d)
    for f in failures:
        print('FAIL:', f)
    sys.exit(1 if failures else 0)


main()
