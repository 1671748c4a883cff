#!/usr/bin/env python3
"""convert --compress (issue 33.5): the .pftrace's packets deflated in bundles
(TracePacket.compressed_packets, field 50: what trace_processor's tokenizer inflates),
each bundle's packet below the 512 KB Perfetto's service keeps them under, and the
packets inflated, in order, the uncompressed conversion's bytes exactly; so a fifth of
the bytes or less. The same of every --split shard. JSON with --compress is refused,
nothing written.

  compressed.py SHARDS_PROG   (TT_TEST_TOOL: the command)"""
import glob
import os
import signal
import subprocess
import sys
import tempfile
import zlib

tool = os.environ['TT_TEST_TOOL']
prog = sys.argv[1]
COMPRESSED_PACKETS = 50 << 3 | 2
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL:', what)


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if c < 0x80:
            return v, i


def inflated(path):
    """The packets of a compressed .pftrace inflated, in order; the largest bundle's size."""
    data, out, at, largest = open(path, 'rb').read(), [], 0, 0
    while at < len(data):
        tag, at = varint(data, at)
        n, at = varint(data, at)
        packet, at = data[at:at + n], at + n
        field, i = varint(packet, 0)
        size, i = varint(packet, i)
        check(tag == 0x0a and field == COMPRESSED_PACKETS and i + size == n,
              '%s: a packet that is not one compressed_packets field (tag %#x, field %#x)'
              % (path, tag, field))
        out.append(zlib.decompress(packet[i:]))
        largest = max(largest, n)
    return b''.join(out), largest


def convert(*args):
    return subprocess.run([tool, 'convert', '-q', *args], capture_output=True, text=True, timeout=240)


def main(d):
    ttr = os.path.join(d, 'run.ttr')
    subprocess.run([prog, '3', '40000'], check=True, timeout=120,
                   env=dict(os.environ, TICKTRACE_OUT=ttr, TICKTRACE_MODE='stop',
                            TICKTRACE_BUFFER=str(2 * 40000 + 8192)))
    plain, packed = os.path.join(d, 'plain.pftrace'), os.path.join(d, 'packed.pftrace')
    for out, extra in ((plain, []), (packed, ['--compress'])):
        c = convert(ttr, '-o', out, *extra)
        check(c.returncode == 0, 'convert %s: %s' % (' '.join(extra), c.stderr))
    raw, largest = inflated(packed)
    size, whole = os.path.getsize(packed), os.path.getsize(plain)
    print('%d bytes, compressed %d (%.1f %%), the largest bundle %d bytes'
          % (whole, size, 100.0 * size / whole, largest))
    check(raw == open(plain, 'rb').read(), 'inflated, the packets are not the plain conversion')
    check(size * 5 < whole and largest < 512 << 10,
          'compressed %d bytes of %d, the largest bundle %d' % (size, whole, largest))
    for compress in ([], ['--compress']):
        c = convert(ttr, '-o', os.path.join(d, 'shard%s.pftrace' % len(compress)), '--split', '20000',
                    *compress)
        check(c.returncode == 0, '--split %s: %s' % (' '.join(compress), c.stderr))
    plain_shards = sorted(glob.glob(os.path.join(d, 'shard0.*.pftrace')))
    packed_shards = sorted(glob.glob(os.path.join(d, 'shard1.*.pftrace')))
    check(len(plain_shards) == len(packed_shards) >= 3,
          'shards: %d plain, %d compressed' % (len(plain_shards), len(packed_shards)))
    for a, b in zip(plain_shards, packed_shards):
        check(inflated(b)[0] == open(a, 'rb').read(), '%s inflated is not %s' % (b, a))
    out = os.path.join(d, 'x.json')
    c = convert(ttr, '-o', out, '--compress')
    check(c.returncode == 1 and '--compress works with Perfetto output only' in c.stderr
          and not os.path.exists(out), 'JSON --compress: %d %s' % (c.returncode, c.stderr))


signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit('killed by signal %d' % signum))
with tempfile.TemporaryDirectory() as tmp:
    main(tmp)
if failures:
    sys.exit('%d failures' % len(failures))
print('ok')
