#!/usr/bin/env python3
"""A .pftrace's packets deflated in bundles (issue 33.5; TracePacket.compressed_packets,
field 50: what trace_processor's tokenizer inflates), each bundle's packet below the
512 KB Perfetto's service keeps them under, and the packets inflated, in order, the
plain conversion's (--no-compress) bytes exactly. By default a trace of a megabyte or
more is deflated: at most 6 bytes an event (perfetto_bytes_per_event's target) where
the plain packets take about 14; a smaller one stays plain. --compress deflates any
size. The same of every --split shard. JSON with --compress or --no-compress is
refused, nothing written.

  compressed.py SHARDS_PROG   (TT_TEST_TOOL: the command)"""
import glob
import os
import signal
import subprocess
import sys
import tempfile
import zlib

sys.dont_write_bytecode = True  # no caches in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'consumers'))
varint = __import__('check-perfetto').varint  # one reader of protobuf's framing

tool = os.environ['TT_TEST_TOOL']
prog = sys.argv[1]
COMPRESSED_PACKETS = 50 << 3 | 2
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL:', what)


def inflated(path):
    """The packets of a compressed .pftrace inflated, in order; the largest bundle's size."""
    data, out, at, largest = open(path, 'rb').read(), [], 0, 0
    while at < len(data):
        tag, at = varint(data, at)
        n, at = varint(data, at)
        packet, at = data[at:at + n], at + n
        field, i = varint(packet, 0)
        size, i = varint(packet, i)
        if not (tag == 0x0a and field == COMPRESSED_PACKETS and i + size == n):
            check(False, '%s: a packet that is not one compressed_packets field (tag %#x, field %#x)'
                  % (path, tag, field))
            return b'', 0
        out.append(zlib.decompress(packet[i:]))
        largest = max(largest, n)
    return b''.join(out), largest


def convert(*args):
    return subprocess.run([tool, 'convert', '-q', *args], capture_output=True, text=True, timeout=240)


def packets(path):
    """The fields of a .pftrace's packets (Trace.packet), in order."""
    data, fields, at = open(path, 'rb').read(), [], 0
    while at < len(data):
        tag, at = varint(data, at)
        n, at = varint(data, at)
        fields.append(varint(data[at:at + n], 0)[0])
        at += n
    return fields


def main(d):
    threads, scopes = 3, 40000
    # every step a begin and an end, a mark in every 1000th, "run" and "setup"
    events = threads * (2 * scopes + scopes // 1000 + 2) + 2
    ttr = os.path.join(d, 'run.ttr')
    subprocess.run([prog, str(threads), str(scopes)], check=True, timeout=120,
                   env=dict(os.environ, TICKTRACE_OUT=ttr, TICKTRACE_MODE='stop',
                            TICKTRACE_BUFFER=str(2 * scopes + 8192)))
    plain, default, packed = (os.path.join(d, n + '.pftrace') for n in ('plain', 'default', 'packed'))
    for out, extra in ((plain, ['--no-compress']), (default, []), (packed, ['--compress'])):
        c = convert(ttr, '-o', out, *extra)
        check(c.returncode == 0, 'convert %s: %s' % (' '.join(extra), c.stderr))
    whole = os.path.getsize(plain)
    check(COMPRESSED_PACKETS not in packets(plain), '--no-compress: a compressed_packets packet')
    for out in (default, packed):
        raw, largest = inflated(out)
        size = os.path.getsize(out)
        print('%s: %d bytes, plain %d (%.2f bytes an event, plain %.2f), the largest bundle %d bytes'
              % (os.path.basename(out), size, whole, size / events, whole / events, largest))
        check(raw == open(plain, 'rb').read(), '%s inflated: not the plain conversion' % out)
        check(size * 5 < whole and largest < 512 << 10,
              '%s: %d bytes of %d, the largest bundle %d' % (out, size, whole, largest))
    check(whole > 1 << 20 and os.path.getsize(default) <= 6 * events,
          'by default %d bytes for %d events, more than 6 an event (plain: %d)'
          % (os.path.getsize(default), events, whole))
    # a small run: plain by default, deflated with --compress
    small = os.path.join(d, 'small.ttr')
    subprocess.run([prog, '1', '1000'], check=True, timeout=120,
                   env=dict(os.environ, TICKTRACE_OUT=small, TICKTRACE_MODE='stop'))
    for extra in ([], ['--no-compress'], ['--compress']):
        out = os.path.join(d, 'small%d.pftrace' % len(extra[0] if extra else ''))
        c = convert(small, '-o', out, *extra)
        check(c.returncode == 0, 'small %s: %s' % (' '.join(extra), c.stderr))
    check(open(os.path.join(d, 'small0.pftrace'), 'rb').read() ==
          open(os.path.join(d, 'small13.pftrace'), 'rb').read(),
          'a small run by default: not its plain packets')
    check(inflated(os.path.join(d, 'small10.pftrace'))[0] ==
          open(os.path.join(d, 'small13.pftrace'), 'rb').read(),
          'a small run with --compress: not its plain packets deflated')
    for compress in (['--no-compress'], ['--compress']):
        c = convert(ttr, '-o', os.path.join(d, 'shard%s.pftrace' % compress[0][2:]), '--split', '20000',
                    *compress)
        check(c.returncode == 0, '--split %s: %s' % (' '.join(compress), c.stderr))
    plain_shards = sorted(glob.glob(os.path.join(d, 'shardno-compress.*.pftrace')))
    packed_shards = sorted(glob.glob(os.path.join(d, 'shardcompress.*.pftrace')))
    check(len(plain_shards) == len(packed_shards) >= 3,
          'shards: %d plain, %d compressed' % (len(plain_shards), len(packed_shards)))
    for a, b in zip(plain_shards, packed_shards):
        check(inflated(b)[0] == open(a, 'rb').read(), '%s inflated is not %s' % (b, a))
    out = os.path.join(d, 'x.json')
    for option in ('--compress', '--no-compress'):
        c = convert(ttr, '-o', out, option)
        check(c.returncode == 1 and option + ' works with Perfetto output only' in c.stderr
              and not os.path.exists(out), 'JSON %s: %d %s' % (option, c.returncode, c.stderr))


signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit('killed by signal %d' % signum))
with tempfile.TemporaryDirectory() as tmp:
    main(tmp)
if failures:
    sys.exit('%d failures' % len(failures))
print('ok')
