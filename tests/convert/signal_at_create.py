#!/usr/bin/env python3
"""A signal that ends the command the moment a file of its own is made: nothing left
behind. strace delivers SIGHUP as the system call that made it returns, before the
command could name it to its signal handler: the output's temporary file (convert),
a shard's (convert --split), `open`'s directory. Each was left behind before: the
signal came between the file's making and its naming (seen once in CI, split_shards:
'.out.0004.json.PID.XXXXXX' left by a SIGHUP). Without strace, exit 77 (after the
check below). And a pipe its reader closes: the command ends of SIGPIPE, silently.

  signal_at_create.py SHARDS_PROG   (TT_TEST_TOOL: the command)"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

tool = os.environ['TT_TEST_TOOL']
prog = sys.argv[1]


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def strace(args, syscall, log, inject=None):
    """The command under strace, following threads, `syscall` traced into `log` (with
    `inject`, strace's injection into it: 'signal=SIGHUP:when=3'); how it ended. (No
    leak check in a sanitizer build: LeakSanitizer cannot run under ptrace, and aborted
    the command that exits by itself.)"""
    cmd = ['strace', '-f', '-qq', '-o', log, '-e', 'trace=' + syscall]
    if inject:
        cmd += ['-e', 'inject=%s:%s' % (syscall, inject)]
    env = dict(os.environ, ASAN_OPTIONS=':'.join(filter(None, [os.environ.get('ASAN_OPTIONS'), 'detect_leaks=0'])))
    return subprocess.run(cmd + [tool] + args, capture_output=True, text=True, timeout=120, env=env)


def made_at(log, syscall, pattern):
    """The number of the traced call, among those of `syscall`, that made a path
    matching `pattern` (0: none)."""
    # (a call another thread interrupted is its first line, which holds the path; its
    # '<... resumed>' line does not match)
    calls = [line for line in open(log) if re.search(r'\b%s\(' % syscall, line)]
    for k, line in enumerate(calls, 1):
        if re.search(pattern, line):
            return k
    return 0


def injected_at(log, syscall):
    """The traced call the signal came at: the last before the signal's delivery, of
    the thread it came to (strace marks an injected signal no other way)."""
    lines = open(log).read().splitlines()
    for k, line in enumerate(lines):
        if '--- SIGHUP' in line:
            tid = line.split()[0]
            return next((l for l in reversed(lines[:k]) if l.startswith(tid + ' ') and syscall + '(' in l), '')
    return ''


def check(d, what, args, syscall, pattern, first=False):
    """SIGHUP at the call of `syscall` that makes the file (`first`: its first call, the
    command not run before to count them; else counted in a run before): the command
    dies of it, and the directory holds only what it held before. Tried up to 3 times
    where another thread's call came first."""
    before = set(os.listdir(d))
    log = os.path.join(d, '..', 'strace.log')
    for attempt in range(3):
        n = 1
        if not first:
            strace(args, syscall, log)
            n = made_at(log, syscall, pattern)
            for f in set(os.listdir(d)) - before:
                path = os.path.join(d, f)
                shutil.rmtree(path) if os.path.isdir(path) else os.unlink(path)
            if not n:
                fail('%s: no %s call made %s: %s' % (what, syscall, pattern, open(log).read()[-2000:]))
        rc = strace(args, syscall, log, inject='signal=SIGHUP:when=%d' % n).returncode
        if not re.search(pattern, injected_at(log, syscall)):
            continue  # another thread's call came first this time
        if rc != 128 + signal.SIGHUP and rc != -signal.SIGHUP:
            fail('%s: SIGHUP as the file was made: status %d, not the signal\'s' % (what, rc))
        left = sorted(set(os.listdir(d)) - before)
        if left:
            fail('%s: SIGHUP as %s was made left %s' % (what, pattern, left))
        print('%s: SIGHUP as it was made (%s call %d): the command died of it, nothing left' %
              (what, syscall, n))
        return
    fail('%s: the call SIGHUP came at was never the one that made the file: %s' %
         (what, open(log).read()[-2000:]))


def check_closed_pipe(ttr):
    """convert -o - into a pipe whose reader leaves after 100 bytes: the command dies
    of SIGPIPE, silently, as a shell's commands do (its writer thread, which holds off
    the signals the main thread takes, takes the SIGPIPE its own write raised: held off
    too, the command said 'write failed: Broken pipe' and exited 1)."""
    p = subprocess.Popen([tool, 'convert', '-q', ttr, '-o', '-'], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.read(100)
    p.stdout.close()
    err = p.stderr.read().decode()
    rc = p.wait(timeout=120)
    if rc != -signal.SIGPIPE or err:
        fail('convert -o - into a pipe closed after 100 bytes: status %d, said %r, not SIGPIPE\'s '
             'silent end' % (rc, err))
    print('convert -o - into a pipe closed after 100 bytes: ended by SIGPIPE, nothing said')


def shards_in(d):
    return sorted(n for n in os.listdir(d) if re.fullmatch(r'out\.\d{4}\.json', n))


def check_set_in_place(d, ttr):
    """--split --force over an earlier split into more shards, SIGHUP as its first shard
    is renamed into place (shard 1, the shards going in place in order): the signal waits until the set is whole (every shard in place,
    the earlier split's past them gone), then the command dies of it, nothing else left.
    (Before, each shard went in place as it finished and was the handler's from then:
    the handler removed it, leaving the earlier split's others, its first missing.) And
    a shard that cannot be put in place (a file of its name appeared meanwhile, without
    --force: strace fails that rename with EEXIST): the command fails naming it, and
    none of its shards is left."""
    out = os.path.join(d, 'out.json')
    for split in ('1000', '2000'):
        r = subprocess.run([tool, 'convert', '-q', ttr, '--split', split, '-f', '-o', out],
                           capture_output=True, text=True, timeout=120)
        if r.returncode:
            fail('convert --split %s: status %d: %s' % (split, r.returncode, r.stderr))
        want = shards_in(d)
    subprocess.run([tool, 'convert', '-q', ttr, '--split', '1000', '-f', '-o', out], check=True,
                   timeout=120)
    earlier = shards_in(d)
    log = os.path.join(d, '..', 'strace.log')
    # (--force's rename replaces: glibc's renameat2 without flags is renameat)
    rc = strace(['convert', '-q', ttr, '--split', '2000', '-f', '-o', out], 'renameat', log,
                inject='signal=SIGHUP:when=1').returncode
    renames = [line for line in open(log) if 'renameat(' in line]
    if not renames or not re.search(r'out\.\d{4}\.json"', renames[0]) or not injected_at(log, 'renameat'):
        fail('SIGHUP came at no rename of a shard: %s' % open(log).read()[-2000:])
    if rc != 128 + signal.SIGHUP and rc != -signal.SIGHUP:
        fail('SIGHUP as --split --force put its first shard in place: status %d, not the signal\'s' % rc)
    if shards_in(d) != want or len(os.listdir(d)) != len(want) or not re.search(r'out\.0001\.json"', renames[0]):
        fail('SIGHUP as --split --force put its first shard in place: left %s, the split\'s %d '
             'shards are %s (the earlier split had %d)' % (sorted(os.listdir(d)), len(want), want,
                                                          len(earlier)))
    print('SIGHUP as --split --force put its first shard in place: held until its %d shards were '
          'in place and the earlier split\'s other %d gone, then the command died of it' %
          (len(want), len(earlier) - len(want)))
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    r = strace(['convert', '-q', ttr, '--split', '1000', '-o', out], 'renameat2', log, inject='error=EEXIST:when=3')
    if r.returncode != 1 or not re.search(r'out\.0003\.json: File exists: none of the \d+ files of '
                                          r'its set left in place\n', r.stderr) or os.listdir(d):
        fail('--split whose shard 3 could not be put in place: status %d, left %s: %s' %
             (r.returncode, os.listdir(d), r.stderr))
    print('--split whose shard 3 could not be put in place: failed, naming it, no shard left')


def main():
    with tempfile.TemporaryDirectory(prefix='tt-signal-create-') as top:
        d = os.path.join(top, 'out')
        os.mkdir(d)
        ttr = os.path.join(top, 'run.ttr')
        subprocess.run([prog, '2', '3000'], check=True, timeout=120,
                       env=dict(os.environ, TICKTRACE_OUT=ttr, TICKTRACE_MODE='stop'))
        check_closed_pipe(ttr)
        if not shutil.which('strace'):
            print('SKIP: no strace to deliver the signals')
            sys.exit(77)
        out = os.path.join(d, 'out.json')
        check(d, 'convert', ['convert', '-q', ttr, '-o', out], 'openat', r'/\.out\.json\.\d+\.')
        check(d, 'convert --split', ['convert', '-q', ttr, '--split', '2000', '-o', out], 'openat',
              r'/\.out\.0002\.json\.\d+\.')
        check_set_in_place(d, ttr)
        os.environ['TMPDIR'] = d
        check(d, 'open', ['open', '--port', '0', ttr], 'mkdir', r'ticktrace-open\.', first=True)

main()
