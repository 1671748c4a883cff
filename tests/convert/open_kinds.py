#!/usr/bin/env python3
"""ticktrace open by what the file is: a raw file is converted to Perfetto's format on
the fly (served as NAME.pftrace, the same bytes `convert --split` writes as its first
shard, its temporary directory gone afterwards); a JSON trace is served as it is; a
file that is not a trace is refused with status 1, before any port is opened. Stopped by Ctrl-C
(SIGINT), SIGTERM, SIGHUP or any signal whose default ends a process (SIGQUIT, SIGUSR1,
SIGALRM, a real-time one...) while it serves, or by SIGPIPE as it prints to a pipe
whose reader left, it dies of the signal and leaves no temporary directory (issue 30
item 12 and round 4: it left the converted trace); a signal it was started ignoring
(nohup's SIGHUP) stays ignored.

  open_kinds.py PROGRAM   (PROGRAM records a trace; TT_TEST_TOOL: the command)"""
import os
import signal
import subprocess
import sys
import tempfile
import urllib.request

tool = os.environ['TT_TEST_TOOL']


def serve(path, tmpdir):
    """Runs `open`, fetches the URL it prints; (served name, body, its stdout)."""
    env = dict(os.environ, TMPDIR=tmpdir)
    p = subprocess.Popen([tool, 'open', '--port', '0', path], stdout=subprocess.PIPE, text=True,
                         env=env)
    lines = []
    for line in p.stdout:
        lines.append(line)
        if '?url=' in line:
            break
    url = lines[-1].split('?url=')[1].strip()
    body = urllib.request.urlopen(url, timeout=30).read()
    rest = p.stdout.read()
    assert p.wait(timeout=30) == 0, f'open {path}: status {p.returncode}'
    return url.rsplit('/', 1)[1], body, ''.join(lines) + rest


def stopped(path, tmpdir, sig, ignored=False):
    """Runs `open` on a raw file until it serves, then sends it `sig`; what it left in
    tmpdir. `ignored`: started with `sig` ignored, it goes on serving (fetched, it
    ends as usual)."""
    env = dict(os.environ, TMPDIR=tmpdir)
    # (its default otherwise, whatever the test inherited: under nohup SIGHUP came
    # ignored, open rightly kept it so, and went on serving)
    disposition = signal.SIG_IGN if ignored else signal.SIG_DFL
    ignore = lambda: signal.signal(sig, disposition)
    p = subprocess.Popen([tool, 'open', '--port', '0', path], stdout=subprocess.PIPE, text=True,
                         env=env, preexec_fn=ignore)
    try:
        # ready when it printed the URL (after converting, with its socket listening)
        for line in p.stdout:
            if '?url=' in line:
                break
        else:
            raise AssertionError(f'open ended (status {p.wait(timeout=30)}) before serving')
        p.send_signal(sig)
        if ignored:  # (one that ended it fails the fetch, or its status)
            urllib.request.urlopen(line.split('?url=')[1].strip(), timeout=30).read()
            sig = 0
        status = p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert status == -sig, f'open stopped by signal {sig}: status {status}, not killed by it'
    return os.listdir(tmpdir)


def reader_left(path, tmpdir):
    """Runs `open` with its standard output a pipe whose reader left: SIGPIPE as it says
    what it serves. What it left in tmpdir."""
    env = dict(os.environ, TMPDIR=tmpdir)
    read_end, write_end = os.pipe()
    os.close(read_end)
    restore = lambda: signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # (python ignores it)
    p = subprocess.Popen([tool, 'open', '--port', '0', path], stdout=write_end, env=env,
                         preexec_fn=restore)
    os.close(write_end)
    status = p.wait(timeout=60)
    assert status == -signal.SIGPIPE, f'open printing into a closed pipe: status {status}'
    return os.listdir(tmpdir)


def main():
    with tempfile.TemporaryDirectory() as d:
        ttr = os.path.join(d, 'run.ttr')
        subprocess.run([sys.argv[1]], check=True, env=dict(os.environ, TICKTRACE_OUT=ttr))
        # open serves the first shard of what the Perfetto UI loads (the whole of a run
        # this small): what convert --split writes
        subprocess.run([tool, 'convert', '-q', ttr, '--split', '3000000', '-o',
                        os.path.join(d, 'run.pftrace')], check=True)
        pftrace = os.path.join(d, 'run.0001.pftrace')
        scratch = os.path.join(d, 'tmp')
        os.mkdir(scratch)

        name, body, out = serve(ttr, scratch)
        assert name == 'run.pftrace', name
        assert body == open(pftrace, 'rb').read(), 'the served trace is not what convert writes'
        assert 'converted to Perfetto' in out, out
        assert os.listdir(scratch) == [], f'left behind: {os.listdir(scratch)}'

        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
                    signal.SIGUSR2, signal.SIGALRM, signal.SIGVTALRM, signal.SIGPROF,
                    signal.SIGXCPU, signal.SIGRTMIN + 3):
            left = stopped(ttr, scratch, sig)
            assert left == [], f'stopped by signal {sig}, open left {left} in TMPDIR'
        left = reader_left(ttr, scratch)
        assert left == [], f'stopped by SIGPIPE, open left {left} in TMPDIR'
        left = stopped(ttr, scratch, signal.SIGHUP, ignored=True)
        assert left == [], f'served with SIGHUP ignored, open left {left} in TMPDIR'

        json = os.path.join(d, 'run.json')
        subprocess.run([tool, 'convert', '-q', ttr, '-o', json], check=True)
        name, body, out = serve(json, scratch)
        assert name == 'run.json' and body == open(json, 'rb').read()
        assert 'converted' not in out

        not_traces = {'notes.txt': b'hello, world\n', 'config.json': b'{"name": "x"}\n',
                      'empty.pftrace': b'', 'short.pftrace': b'\x0a\x7f\x01\x02'}
        for base, data in not_traces.items():
            path = os.path.join(d, base)
            with open(path, 'wb') as f:
                f.write(data)
            r = subprocess.run([tool, 'open', '--port', '0', path], capture_output=True, text=True,
                               timeout=30)
            assert r.returncode == 1, f'{base}: status {r.returncode}'
            assert f'{path}: offset 0: not a trace' in r.stderr, r.stderr
            assert 'http' not in r.stdout, f'{base}: served: {r.stdout}'
        r = subprocess.run([tool, 'open', '--port', '0', d], capture_output=True, text=True)
        assert r.returncode == 1 and 'not a regular file' in r.stderr, r.stderr
    print('open: a raw file converted and served, JSON served as it is, non-traces refused, nothing left when stopped')


main()
